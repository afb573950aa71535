package io.devalloc.api.direct;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.ConfigOption;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.units.ByteSize;
import java.util.List;

/**
 * The {@code direct} allocator: every allocate is a device malloc and every free a device free, with no cache.
 * It is the baseline that PyTorch offers as {@code PYTORCH_NO_CUDA_MEMORY_CACHING=1}: the slowest and the least
 * fragmented, used to measure what caching buys and as a reference in tests.
 *
 * <p>Stateless and thread-safe; the allocators it creates are thread-safe.
 *
 * <p>Configuration keys:
 * <ul>
 *   <li>{@code memory_limit_mb}: refuse allocations that would take the live total above this many MiB
 *       (default: no limit besides the device).</li>
 * </ul>
 */
public final class DirectAllocatorProvider implements AllocatorProvider {

    public static final String NAME = "direct";

    public static final ConfigOption<Long> MEMORY_LIMIT_MB = ConfigOption.integer("memory_limit_mb", 1,
            Long.MAX_VALUE / ByteSize.MiB, null,
            "refuse allocations that would take live bytes above this many MiB (default: the device's capacity)");

    private static final ConfigSchema SCHEMA = ConfigSchema.of("allocator 'direct'", List.of(MEMORY_LIMIT_MB));

    /** Creates the provider; {@link java.util.ServiceLoader} calls this. */
    public DirectAllocatorProvider() {
        // Stateless.
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "no caching: every allocate calls the device's malloc, every free its free"
                + " (PYTORCH_NO_CUDA_MEMORY_CACHING)";
    }

    @Override
    public ConfigSchema configSchema() {
        return SCHEMA;
    }

    @Override
    public DeviceAllocator create(AllocatorSetup setup) {
        Long limitMb = setup.config().get(MEMORY_LIMIT_MB);
        long limit = limitMb == null ? Long.MAX_VALUE : limitMb * ByteSize.MiB;
        return new DirectAllocator(setup.device(), setup.ownsDevice(), limit);
    }
}
