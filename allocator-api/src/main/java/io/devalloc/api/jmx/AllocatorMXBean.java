package io.devalloc.api.jmx;

/**
 * One allocator as JMX shows it: point-in-time figures (each read from
 * {@link io.devalloc.api.DeviceAllocator#stats()} or {@link io.devalloc.api.DeviceAllocator#memoryUsage()} when the
 * attribute is read) and three operations. Registered as {@code io.devalloc:type=Allocator,name=NAME} by
 * {@code DeviceAllocators.builder().name(NAME).registerMXBean(true)} (or {@code -Ddevalloc.jmx=true}), and
 * unregistered when the allocator is closed.
 *
 * <p>Each getter is a separate read: two attributes read one after the other may come from two moments. The
 * operations run on the JMX client's thread through the allocator's public, thread-safe API.
 */
public interface AllocatorMXBean {

    /** The name the allocator was registered under (the {@code name} key of its ObjectName). */
    String getName();

    /** The allocator's kind: {@code direct}, {@code bfc}, {@code caching}, {@code caching-host}. */
    String getAllocatorKind();

    /** The device's id, e.g. {@code cuda:0}. */
    String getDeviceId();

    /** Whether the allocator was closed (a closed allocator's bean is unregistered, so this is seen only in a race). */
    boolean isClosed();

    /** Bytes held from the device. */
    long getReservedBytes();

    /** Bytes in live allocations as the allocator sized them. */
    long getAllocatedBytes();

    /** Bytes of blocks in use: allocated, plus freed blocks still waiting on a stream's event. */
    long getActiveBytes();

    /** Bytes of live allocations as callers asked them. */
    long getRequestedBytes();

    /** Bytes of free blocks that are pieces of a split segment (0 for allocators that never split). */
    long getInactiveSplitBytes();

    /** Bytes held from the device but not handed out: reserved minus allocated. */
    long getCachedBytes();

    /** Highest reserved bytes since creation or the last {@link #resetPeakStats()}. */
    long getPeakReservedBytes();

    /** Highest allocated bytes since creation or the last {@link #resetPeakStats()}. */
    long getPeakAllocatedBytes();

    /** Highest requested bytes since creation or the last {@link #resetPeakStats()}. */
    long getPeakRequestedBytes();

    /** Live allocations now. */
    long getActiveAllocations();

    /** Most live allocations at once since creation or the last {@link #resetPeakStats()}. */
    long getPeakActiveAllocations();

    /** Successful non-zero allocations. */
    long getAllocationCount();

    /** Frees. */
    long getFreeCount();

    /** Successful device mallocs (and virtual-memory maps). */
    long getDeviceMallocs();

    /** Device frees (and unmaps). */
    long getDeviceFrees();

    /** Allocations that failed with out-of-memory. */
    long getOutOfMemoryErrors();

    /** Allocations that needed a retry. */
    long getAllocationRetries();

    /** The allocator's byte limit, or {@link Long#MAX_VALUE} when it has none. */
    long getLimitBytes();

    /**
     * Returns cached, unused memory to the device ({@link io.devalloc.api.DeviceAllocator#releaseCachedMemory()},
     * PyTorch's {@code empty_cache}). Live allocations stay.
     */
    void emptyCache();

    /** Resets the peak figures to the current values ({@link io.devalloc.api.DeviceAllocator#resetPeakStats()}). */
    void resetPeakStats();

    /**
     * A text table of the allocator's memory: the allocator's own when it has one
     * ({@link io.devalloc.api.spi.MemorySummary}: PyTorch's {@code memory_summary()} for {@code caching}), else the
     * figures of {@code stats()} and the per-pool gauges of {@code memoryUsage()}.
     */
    String memorySummary();
}
