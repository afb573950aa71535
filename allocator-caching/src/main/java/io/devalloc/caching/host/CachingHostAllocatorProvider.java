package io.devalloc.caching.host;

import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.PyTorchAllocatorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Allocator {@code caching-host}: PyTorch's pinned-host caching allocator ({@code CachingHostAllocator}), meant for
 * the {@code pinned-host} and {@code cuda-host} devices (it works over any device). The configuration uses PyTorch's
 * {@code pinned_*} keys plus {@code pinned_round_threshold_mb} (see {@link CachingHostOptions}). Registered for
 * {@link java.util.ServiceLoader}. Immutable and thread-safe.
 */
public final class CachingHostAllocatorProvider implements PyTorchAllocatorProvider {

    public static final String NAME = "caching-host";

    /** The provider that {@link java.util.ServiceLoader} creates. */
    public CachingHostAllocatorProvider() {
    }

    /**
     * The settings the advisor sweeps for the pinned-host allocator: the defaults (every request rounded to a power
     * of two and every freed block cached), PyTorch's {@code pinned_max_round_threshold_mb} and
     * {@code pinned_max_cached_size_mb} at 4, 16, 64, ... MiB up to the first value above the largest request, and
     * both at once at each of those values (pytorch#150517: power-of-two rounding of large requests can use up to
     * twice the memory). devalloc's own {@code pinned_round_threshold_mb} is left out: it has no PyTorch form.
     */
    @Override
    public List<String> defaultGrid(long largestRequestBytes) {
        if (largestRequestBytes < 0) {
            throw new IllegalArgumentException("largest request must be >= 0 bytes, got " + largestRequestBytes);
        }
        long largestMb = Math.max(Math.ceilDiv(largestRequestBytes, ByteSize.MiB), largestRequestBytes == 0 ? 64 : 0);
        List<Long> thresholds = new ArrayList<>();
        for (long mb = 4; ; mb *= 4) {
            thresholds.add(mb);
            if (mb > largestMb || mb > Long.MAX_VALUE / 8 / ByteSize.MiB) {
                break;
            }
        }
        List<String> grid = new ArrayList<>();
        grid.add("");
        for (long mb : thresholds) {
            grid.add("pinned_max_round_threshold_mb:" + mb);
        }
        for (long mb : thresholds) {
            grid.add("pinned_max_cached_size_mb:" + mb);
        }
        for (long mb : thresholds) {
            grid.add("pinned_max_round_threshold_mb:" + mb + ",pinned_max_cached_size_mb:" + mb);
        }
        return List.copyOf(grid);
    }

    @Override
    public Set<String> devallocKeys() {
        return Set.of("pinned_round_threshold_mb");
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
        return new HostCachingArena(setup.device(), setup.ownsDevice(), CachingHostOptions.from(setup.config()),
                setup.listener());
    }

    @Override
    public HostCachingAllocator create(DeviceMemory device, String configText) {
        return create(device, configText, AllocatorListener.NONE);
    }

    @Override
    public HostCachingAllocator create(DeviceMemory device, String configText, AllocatorListener listener) {
        return new HostCachingArena(device, false, CachingHostOptions.parse(configText), listener);
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
