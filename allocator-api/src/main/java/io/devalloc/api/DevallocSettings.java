package io.devalloc.api;

import io.devalloc.api.spi.DeviceSpec;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Which device, which allocator and which configuration to use: the three strings every way into devalloc
 * (builder, Guice module, launcher) takes.
 *
 * <p>{@link #fromEnvironment()} reads, each from a system property first and an environment variable second:
 * <ul>
 *   <li>{@code devalloc.device} / {@code DEVALLOC_DEVICE}: device spec, default {@code auto};</li>
 *   <li>{@code devalloc.allocator} / {@code DEVALLOC_ALLOCATOR}: allocator name, default {@code direct};</li>
 *   <li>{@code devalloc.config} / {@code DEVALLOC_CONFIG}: the allocator's {@code key:value,...} configuration,
 *       default empty.</li>
 * </ul>
 *
 * <p>A tool with defaults of its own (the launcher's {@code replay} runs on {@code sim:80GiB} with {@code caching})
 * reads each setting with {@link #lookup}, which tells a setting given from one left out.
 *
 * @param device    the device spec
 * @param allocator the allocator name
 * @param config    the allocator configuration text
 */
public record DevallocSettings(String device, String allocator, String config) {

    public static final String DEFAULT_ALLOCATOR = "direct";

    /** The system property of the device spec. */
    public static final String DEVICE_PROPERTY = "devalloc.device";
    /** The environment variable of the device spec. */
    public static final String DEVICE_VARIABLE = "DEVALLOC_DEVICE";
    /** The system property of the allocator name. */
    public static final String ALLOCATOR_PROPERTY = "devalloc.allocator";
    /** The environment variable of the allocator name. */
    public static final String ALLOCATOR_VARIABLE = "DEVALLOC_ALLOCATOR";
    /** The system property of the allocator configuration. */
    public static final String CONFIG_PROPERTY = "devalloc.config";
    /** The environment variable of the allocator configuration. */
    public static final String CONFIG_VARIABLE = "DEVALLOC_CONFIG";

    public DevallocSettings {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(config, "config");
    }

    /** The settings from system properties and the environment, with defaults. */
    public static DevallocSettings fromEnvironment() {
        return from(System.getProperties(), System.getenv());
    }

    /** The settings from the given properties and environment (for tests). */
    public static DevallocSettings from(Map<?, ?> properties, Map<String, String> environment) {
        return new DevallocSettings(
                lookup(properties, environment, DEVICE_PROPERTY, DEVICE_VARIABLE).orElse(DeviceSpec.AUTO),
                lookup(properties, environment, ALLOCATOR_PROPERTY, ALLOCATOR_VARIABLE).orElse(DEFAULT_ALLOCATOR),
                lookup(properties, environment, CONFIG_PROPERTY, CONFIG_VARIABLE).orElse(""));
    }

    /**
     * One setting as {@link #from} reads it, without its default: the system property {@code property} when it is
     * set, else the environment variable {@code variable} when it is set, else empty.
     *
     * @param properties  the system properties (or a stand-in, for tests)
     * @param environment the environment (or a stand-in, for tests)
     * @param property    e.g. {@link #DEVICE_PROPERTY}
     * @param variable    e.g. {@link #DEVICE_VARIABLE}
     */
    public static Optional<String> lookup(Map<?, ?> properties, Map<String, String> environment, String property,
                                          String variable) {
        Object p = properties.get(property);
        if (p != null) {
            return Optional.of(p.toString());
        }
        return Optional.ofNullable(environment.get(variable));
    }
}
