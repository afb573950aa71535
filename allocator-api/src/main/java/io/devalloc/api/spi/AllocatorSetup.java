package io.devalloc.api.spi;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.observe.AllocatorListener;
import java.util.Objects;

/**
 * What an {@link AllocatorProvider} needs to build an allocator.
 *
 * @param device      the device to allocate from (when a listener is set, a wrapper that tells it of every device
 *                    call: the allocator needs no hook of its own for those)
 * @param config      the configuration, already validated against the provider's schema
 * @param ownsDevice  whether closing the allocator should also close the device
 * @param listener    told of what only the allocator sees: its retries
 *                    ({@link AllocatorListener#allocationRetried}) and its releases of cached memory
 *                    ({@link AllocatorListener#cacheReleased}); already guarded (it never throws);
 *                    {@link AllocatorListener#NONE} when none is set, which an allocator may test to skip the work of
 *                    telling it
 */
public record AllocatorSetup(DeviceMemory device, AllocatorConfig config, boolean ownsDevice,
                             AllocatorListener listener) {

    public AllocatorSetup {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(listener, "listener");
    }

    /** A setup with no listener. */
    public AllocatorSetup(DeviceMemory device, AllocatorConfig config, boolean ownsDevice) {
        this(device, config, ownsDevice, AllocatorListener.NONE);
    }
}
