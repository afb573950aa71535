package io.devalloc.api.observe;

/** The byte figures a {@link ThresholdListener} can watch. */
public enum MemoryGauge {
    /** Bytes held from the device ({@link io.devalloc.api.stats.AllocatorStats#reservedBytes()}). */
    RESERVED,
    /**
     * Bytes in live allocations as the allocator sized them
     * ({@link io.devalloc.api.stats.AllocatorStats#allocatedBytes()}).
     */
    ALLOCATED
}
