package io.devalloc.benchmarks;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.units.ByteSize;
import io.devalloc.bfc.BfcAllocatorProvider;
import io.devalloc.bfc.BfcOptions;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.caching.CachingOptions;
import io.devalloc.sim.SimulatedDevice;

/** The devices and allocators the benchmarks measure, built the same way by every benchmark. */
final class BenchmarkAllocators {

    /** The simulated device's capacity: an 80 GiB GPU (A100/H100 class), as RMM's and PyTorch's numbers assume. */
    static final long DEVICE_CAPACITY = 80 * ByteSize.GiB;

    private BenchmarkAllocators() {
    }

    /** A simulated 80 GiB device with every other setting at its default (virtual memory on, no history). */
    static SimulatedDevice device() {
        return SimulatedDevice.ofCapacity(DEVICE_CAPACITY);
    }

    /**
     * Allocator {@code name} over {@code device}, which the caller keeps and closes:
     * <ul>
     *   <li>{@code bfc}: GPUBFCAllocator's defaults (no growth: one region of the whole device, reserved at the
     *       first allocation; garbage collection on) with retry on failure off, so that a failure shows at once
     *       instead of waiting 10 s;</li>
     *   <li>{@code caching}: PyTorch's caching allocator with its default settings;</li>
     *   <li>{@code direct}: no caching, every allocate and free goes to the device.</li>
     * </ul>
     */
    static DeviceAllocator create(String name, DeviceMemory device) {
        return switch (name) {
            case "bfc" -> BfcAllocatorProvider.create(device, BfcOptions.defaults().withRetry(false, 0));
            case "caching" -> CachingAllocatorProvider.create(device, CachingOptions.defaults());
            case "direct" -> new DirectAllocatorProvider().create(device, "");
            default -> throw new IllegalArgumentException("unknown allocator '" + name + "' (bfc, caching, direct)");
        };
    }
}
