package io.devalloc.api;

import io.devalloc.api.internal.DeviceSpec;
import java.util.Map;
import java.util.Objects;

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
 * @param device    the device spec
 * @param allocator the allocator name
 * @param config    the allocator configuration text
 */
public record DevallocSettings(String device, String allocator, String config) {

    public static final String DEFAULT_ALLOCATOR = "direct";

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
                pick(properties, environment, "devalloc.device", "DEVALLOC_DEVICE", DeviceSpec.AUTO),
                pick(properties, environment, "devalloc.allocator", "DEVALLOC_ALLOCATOR", DEFAULT_ALLOCATOR),
                pick(properties, environment, "devalloc.config", "DEVALLOC_CONFIG", ""));
    }

    private static String pick(Map<?, ?> properties, Map<String, String> env, String property, String variable,
                               String fallback) {
        Object p = properties.get(property);
        if (p != null) {
            return p.toString();
        }
        String e = env.get(variable);
        return e != null ? e : fallback;
    }
}
