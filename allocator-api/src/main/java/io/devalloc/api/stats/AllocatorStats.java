package io.devalloc.api.stats;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The figures every allocator reports, in the same units, so that algorithms can be compared on one workload.
 * Algorithm-specific detail (bins, pools, per-stream figures) lives in each algorithm's own stats object.
 *
 * <p>"Allocated" counts bytes as the allocator sized them (after rounding) and "requested" as callers asked;
 * the difference is internal fragmentation. "Reserved" is what the allocator holds from the device; reserved
 * minus allocated is cached (free) memory.
 *
 * @param allocationCount       successful non-zero allocations since creation or the last counter reset
 * @param freeCount             frees since creation or the last counter reset
 * @param activeAllocations     live allocations now
 * @param peakActiveAllocations most live allocations at once
 * @param allocatedBytes        bytes in live allocations, as sized by the allocator
 * @param peakAllocatedBytes    highest {@code allocatedBytes}
 * @param requestedBytes        bytes in live allocations, as requested by callers
 * @param peakRequestedBytes    highest {@code requestedBytes}
 * @param reservedBytes         bytes held from the device
 * @param peakReservedBytes     highest {@code reservedBytes}
 * @param largestAllocation     the largest single request served
 * @param largestFreeBlock      the largest free cached block (0 when nothing is cached)
 * @param deviceMallocs         calls to the device's malloc (and virtual-memory maps) that succeeded
 * @param deviceFrees           calls to the device's free (and unmaps; a range mapped in one call may be unmapped in
 *                              several, so with virtual memory frees can outnumber mallocs)
 * @param allocationRetries     allocations that needed a retry (after freeing cache, waiting, ...)
 * @param outOfMemoryErrors     allocations that failed with out-of-memory
 * @param limitBytes            the allocator's byte limit, or {@link Long#MAX_VALUE} when it has none
 */
public record AllocatorStats(
        long allocationCount,
        long freeCount,
        long activeAllocations,
        long peakActiveAllocations,
        long allocatedBytes,
        long peakAllocatedBytes,
        long requestedBytes,
        long peakRequestedBytes,
        long reservedBytes,
        long peakReservedBytes,
        long largestAllocation,
        long largestFreeBlock,
        long deviceMallocs,
        long deviceFrees,
        long allocationRetries,
        long outOfMemoryErrors,
        long limitBytes) {

    /** Bytes held from the device but not handed out: the cache. */
    public long cachedBytes() {
        return reservedBytes - allocatedBytes;
    }

    /**
     * External fragmentation of the cache: 1 − largest free block / cached bytes (0 when nothing is cached).
     * 0 means all cached memory is one block; near 1 means it is in many small pieces.
     */
    public double externalFragmentation() {
        long cached = cachedBytes();
        return cached <= 0 ? 0.0 : 1.0 - (double) largestFreeBlock / cached;
    }

    /** Bytes lost to rounding in live allocations. */
    public long internalFragmentationBytes() {
        return allocatedBytes - requestedBytes;
    }

    /** The figures as an ordered name → value map, for tables and metrics exporters. */
    public Map<String, Long> asMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("allocation_count", allocationCount);
        m.put("free_count", freeCount);
        m.put("active_allocations", activeAllocations);
        m.put("peak_active_allocations", peakActiveAllocations);
        m.put("allocated_bytes", allocatedBytes);
        m.put("peak_allocated_bytes", peakAllocatedBytes);
        m.put("requested_bytes", requestedBytes);
        m.put("peak_requested_bytes", peakRequestedBytes);
        m.put("reserved_bytes", reservedBytes);
        m.put("peak_reserved_bytes", peakReservedBytes);
        m.put("cached_bytes", cachedBytes());
        m.put("largest_allocation", largestAllocation);
        m.put("largest_free_block", largestFreeBlock);
        m.put("device_mallocs", deviceMallocs);
        m.put("device_frees", deviceFrees);
        m.put("allocation_retries", allocationRetries);
        m.put("out_of_memory_errors", outOfMemoryErrors);
        m.put("limit_bytes", limitBytes);
        return m;
    }
}
