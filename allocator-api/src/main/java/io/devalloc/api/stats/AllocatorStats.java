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
 * @see #builder()
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

    /**
     * A builder with every figure 0 and no limit ({@code limitBytes} {@link Long#MAX_VALUE}): allocators name each
     * figure they set, where the canonical constructor takes 17 longs by position.
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Sets the figures of an {@link AllocatorStats} by name. Not thread-safe; build under the allocator's lock. */
    public static final class Builder {
        private long allocationCount;
        private long freeCount;
        private long activeAllocations;
        private long peakActiveAllocations;
        private long allocatedBytes;
        private long peakAllocatedBytes;
        private long requestedBytes;
        private long peakRequestedBytes;
        private long reservedBytes;
        private long peakReservedBytes;
        private long largestAllocation;
        private long largestFreeBlock;
        private long deviceMallocs;
        private long deviceFrees;
        private long allocationRetries;
        private long outOfMemoryErrors;
        private long limitBytes = Long.MAX_VALUE;

        private Builder() {
        }

        /** Sets {@code allocationCount} (0 unless set). */
        public Builder allocationCount(long value) {
            this.allocationCount = value;
            return this;
        }

        /** Sets {@code freeCount} (0 unless set). */
        public Builder freeCount(long value) {
            this.freeCount = value;
            return this;
        }

        /** Sets {@code activeAllocations} (0 unless set). */
        public Builder activeAllocations(long value) {
            this.activeAllocations = value;
            return this;
        }

        /** Sets {@code peakActiveAllocations} (0 unless set). */
        public Builder peakActiveAllocations(long value) {
            this.peakActiveAllocations = value;
            return this;
        }

        /** Sets {@code allocatedBytes} (0 unless set). */
        public Builder allocatedBytes(long value) {
            this.allocatedBytes = value;
            return this;
        }

        /** Sets {@code peakAllocatedBytes} (0 unless set). */
        public Builder peakAllocatedBytes(long value) {
            this.peakAllocatedBytes = value;
            return this;
        }

        /** Sets {@code requestedBytes} (0 unless set). */
        public Builder requestedBytes(long value) {
            this.requestedBytes = value;
            return this;
        }

        /** Sets {@code peakRequestedBytes} (0 unless set). */
        public Builder peakRequestedBytes(long value) {
            this.peakRequestedBytes = value;
            return this;
        }

        /** Sets {@code reservedBytes} (0 unless set). */
        public Builder reservedBytes(long value) {
            this.reservedBytes = value;
            return this;
        }

        /** Sets {@code peakReservedBytes} (0 unless set). */
        public Builder peakReservedBytes(long value) {
            this.peakReservedBytes = value;
            return this;
        }

        /** Sets {@code largestAllocation} (0 unless set). */
        public Builder largestAllocation(long value) {
            this.largestAllocation = value;
            return this;
        }

        /** Sets {@code largestFreeBlock} (0 unless set). */
        public Builder largestFreeBlock(long value) {
            this.largestFreeBlock = value;
            return this;
        }

        /** Sets {@code deviceMallocs} (0 unless set). */
        public Builder deviceMallocs(long value) {
            this.deviceMallocs = value;
            return this;
        }

        /** Sets {@code deviceFrees} (0 unless set). */
        public Builder deviceFrees(long value) {
            this.deviceFrees = value;
            return this;
        }

        /** Sets {@code allocationRetries} (0 unless set). */
        public Builder allocationRetries(long value) {
            this.allocationRetries = value;
            return this;
        }

        /** Sets {@code outOfMemoryErrors} (0 unless set). */
        public Builder outOfMemoryErrors(long value) {
            this.outOfMemoryErrors = value;
            return this;
        }

        /** Sets {@code limitBytes} ({@link Long#MAX_VALUE}, no limit, unless set). */
        public Builder limitBytes(long value) {
            this.limitBytes = value;
            return this;
        }

        /** The figures set so far. */
        public AllocatorStats build() {
            return new AllocatorStats(allocationCount, freeCount, activeAllocations, peakActiveAllocations,
                    allocatedBytes, peakAllocatedBytes, requestedBytes, peakRequestedBytes, reservedBytes,
                    peakReservedBytes, largestAllocation, largestFreeBlock, deviceMallocs, deviceFrees,
                    allocationRetries, outOfMemoryErrors, limitBytes);
        }
    }
}
