package io.devalloc.api.spi;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.device.DeviceMemory;
import java.util.Objects;

/**
 * What an {@link AllocatorProvider} needs to build an allocator.
 *
 * @param device      the device to allocate from
 * @param config      the configuration, already validated against the provider's schema
 * @param ownsDevice  whether closing the allocator should also close the device
 */
public record AllocatorSetup(DeviceMemory device, AllocatorConfig config, boolean ownsDevice) {

    public AllocatorSetup {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(config, "config");
    }
}
