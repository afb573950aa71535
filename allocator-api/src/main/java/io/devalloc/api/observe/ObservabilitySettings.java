package io.devalloc.api.observe;

import io.devalloc.api.DevallocSettings;
import io.devalloc.api.error.InvalidConfigurationException;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Which of devalloc's monitoring an allocator gets without code: its name, its JFR events and its JMX bean, for
 * {@link io.devalloc.api.DeviceAllocators.Builder#observability}. {@link #fromEnvironment()} reads, each from a
 * system property first and an environment variable second (as {@link DevallocSettings#lookup} does):
 * <ul>
 *   <li>{@code devalloc.name} / {@code DEVALLOC_NAME}: the allocator's name in events, the bean's ObjectName and
 *       metrics; default the allocator's kind ({@code caching});</li>
 *   <li>{@code devalloc.jfr} / {@code DEVALLOC_JFR}: {@code true} for JFR events ({@code io.devalloc.api.jfr});
 *       default {@code false};</li>
 *   <li>{@code devalloc.jmx} / {@code DEVALLOC_JMX}: {@code true} to register the allocator's MXBean
 *       ({@code io.devalloc.api.jmx}); default {@code false}.</li>
 * </ul>
 *
 * @param name           the allocator's name, or empty for its kind
 * @param jfrEvents      whether to write JFR events
 * @param registerMXBean whether to register the allocator's MXBean
 */
public record ObservabilitySettings(String name, boolean jfrEvents, boolean registerMXBean) {

    /** No name, no JFR events, no bean. */
    public static final ObservabilitySettings NONE = new ObservabilitySettings("", false, false);

    /** The system property of the allocator's name. */
    public static final String NAME_PROPERTY = "devalloc.name";
    /** The environment variable of the allocator's name. */
    public static final String NAME_VARIABLE = "DEVALLOC_NAME";
    /** The system property that turns JFR events on. */
    public static final String JFR_PROPERTY = "devalloc.jfr";
    /** The environment variable that turns JFR events on. */
    public static final String JFR_VARIABLE = "DEVALLOC_JFR";
    /** The system property that registers the MXBean. */
    public static final String JMX_PROPERTY = "devalloc.jmx";
    /** The environment variable that registers the MXBean. */
    public static final String JMX_VARIABLE = "DEVALLOC_JMX";

    public ObservabilitySettings {
        Objects.requireNonNull(name, "name");
        name = name.strip();
    }

    /** The settings from system properties and the environment, with defaults. */
    public static ObservabilitySettings fromEnvironment() {
        return from(System.getProperties(), System.getenv());
    }

    /**
     * The settings from the given properties and environment (for tests).
     *
     * @throws InvalidConfigurationException a switch that is neither {@code true} nor {@code false}
     */
    public static ObservabilitySettings from(Map<?, ?> properties, Map<String, String> environment) {
        return new ObservabilitySettings(
                DevallocSettings.lookup(properties, environment, NAME_PROPERTY, NAME_VARIABLE).orElse(""),
                flag(DevallocSettings.lookup(properties, environment, JFR_PROPERTY, JFR_VARIABLE), JFR_PROPERTY),
                flag(DevallocSettings.lookup(properties, environment, JMX_PROPERTY, JMX_VARIABLE), JMX_PROPERTY));
    }

    private static boolean flag(Optional<String> value, String key) {
        if (value.isEmpty()) {
            return false;
        }
        return switch (value.get().strip().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false", "" -> false;
            default -> throw new InvalidConfigurationException(key, value.get(),
                    key + " must be true or false, got '" + value.get() + "'");
        };
    }
}
