package io.devalloc.caching;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorSetup;

/**
 * Allocator {@code caching}: PyTorch's CUDA caching allocator. The configuration uses {@code PYTORCH_CUDA_ALLOC_CONF}'s
 * keys (see {@link CachingOptions}); the configuration string given to the provider is used as it is, and
 * {@link CachingOptions#fromEnvironment} reads PyTorch's variables for callers that want them.
 * Stateless and thread-safe.
 */
public final class CachingAllocatorProvider implements AllocatorProvider {

    public static final String NAME = "caching";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "PyTorch's CUDA caching allocator: small and large pools per stream, 512 B rounding, 2/20 MiB segments";
    }

    @Override
    public ConfigSchema configSchema() {
        return CachingOptions.SCHEMA;
    }

    @Override
    public CachingAllocator create(AllocatorSetup setup) {
        return new CachingArena(setup.device(), setup.ownsDevice(), CachingOptions.from(setup.config()));
    }

    @Override
    public CachingAllocator create(DeviceMemory device, String configText) {
        return new CachingArena(device, false, CachingOptions.parse(configText));
    }

    /** A caching allocator over {@code device} with explicit options; the caller owns the device. */
    public static CachingAllocator create(DeviceMemory device, CachingOptions options) {
        return new CachingArena(device, false, options);
    }
}
