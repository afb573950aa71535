package io.devalloc.api.spi;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.device.DeviceMemory;

/**
 * A plug-in allocation algorithm ({@code direct}, {@code bfc}, {@code caching}). Found with
 * {@link java.util.ServiceLoader}: list the implementation in
 * {@code META-INF/services/io.devalloc.api.spi.AllocatorProvider}. Thread-safe, with a cheap no-argument
 * constructor.
 */
public interface AllocatorProvider {

    /** The name used to select it, e.g. {@code bfc}. */
    String name();

    /** One line saying what it is. */
    String description();

    /** The configuration keys it accepts. */
    ConfigSchema configSchema();

    /** Builds an allocator. The configuration must have been parsed against {@link #configSchema()}. */
    DeviceAllocator create(AllocatorSetup setup);

    /**
     * Parses {@code configText} and builds an allocator over {@code device}; the caller keeps ownership of the
     * device.
     *
     * @throws io.devalloc.api.error.InvalidConfigurationException if the configuration is refused
     */
    default DeviceAllocator create(DeviceMemory device, String configText) {
        return create(new AllocatorSetup(device, AllocatorConfig.parse(configText, configSchema()), false));
    }
}
