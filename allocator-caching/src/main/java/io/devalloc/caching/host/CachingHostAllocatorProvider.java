package io.devalloc.caching.host;

import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorSetup;
import java.util.Objects;

/**
 * Allocator {@code caching-host}: PyTorch's pinned-host caching allocator ({@code CachingHostAllocator}), meant for
 * the {@code pinned-host} and {@code cuda-host} devices (it works over any device). The configuration uses PyTorch's
 * {@code pinned_*} keys plus {@code pinned_round_threshold_mb} (see {@link CachingHostOptions}). Registered for
 * {@link java.util.ServiceLoader}. Immutable and thread-safe.
 */
public final class CachingHostAllocatorProvider implements AllocatorProvider {

    public static final String NAME = "caching-host";

    /** The provider that {@link java.util.ServiceLoader} creates. */
    public CachingHostAllocatorProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "PyTorch's pinned-host caching allocator (for pinned-host, cuda-host): power-of-two sizes, LIFO"
                + " free lists, no split, reuse after recorded stream events";
    }

    @Override
    public ConfigSchema configSchema() {
        return CachingHostOptions.SCHEMA;
    }

    @Override
    public HostCachingAllocator create(AllocatorSetup setup) {
        return new HostCachingArena(setup.device(), setup.ownsDevice(), CachingHostOptions.from(setup.config()));
    }

    @Override
    public HostCachingAllocator create(DeviceMemory device, String configText) {
        return new HostCachingArena(device, false, CachingHostOptions.parse(configText));
    }

    /** A pinned-host caching allocator over {@code device} with explicit options; the caller owns the device. */
    public static HostCachingAllocator create(DeviceMemory device, CachingHostOptions options) {
        return new HostCachingArena(Objects.requireNonNull(device, "device"), false, options);
    }

    /** {@link #create(DeviceMemory, CachingHostOptions)} with PyTorch's defaults. */
    public static HostCachingAllocator create(DeviceMemory device) {
        return create(device, CachingHostOptions.defaults());
    }
}
