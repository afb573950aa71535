package io.devalloc.caching;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * PyTorch's CUDA caching allocator: a {@link DeviceAllocator} with PyTorch's own statistics, history, snapshot and
 * controls. Create one with {@link CachingAllocatorProvider} (or as allocator {@code caching} through
 * {@code DeviceAllocators}, Guice or the launcher). Thread-safe: one lock guards the allocator, as upstream's
 * per-device mutex.
 */
public interface CachingAllocator extends DeviceAllocator {

    /** {@code torch.cuda.memory_stats()}: a sorted flat map with PyTorch's key names. */
    Map<String, Long> memoryStats();

    /** {@code torch.cuda.memory_summary()}: PyTorch's table, 75 characters wide. */
    String memorySummary(boolean abbreviated);

    /** {@code reset_accumulated_memory_stats}: allocated and freed totals and the counters go to 0. */
    void resetAccumulatedStats();

    /**
     * {@code set_per_process_memory_fraction}: cap the memory this allocator may hold at {@code fraction} of the
     * device's total.
     *
     * @throws IllegalArgumentException {@code Invalid fraction value: f. Allowed range: 0~1} outside [0, 1]
     */
    void setPerProcessMemoryFraction(double fraction);

    /** The fraction set, or 1.0 when none is. */
    double perProcessMemoryFraction();

    /** {@code empty_cache()}: waits for outstanding events, then returns every segment with no live block. */
    void emptyCache();

    /**
     * {@code _record_memory_history}: keep the last {@code maxEntries} trace entries (0 turns recording off).
     * Either way the history is cleared.
     */
    void recordHistory(int maxEntries);

    /** The recorded history, oldest first. */
    List<TraceEntry> history();

    /**
     * {@code torch.cuda.memory._snapshot()}: {@code segments}, {@code device_traces}, {@code allocator_settings}
     * and {@code external_annotations} as plain maps, lists and tuples, ready for the pickle or JSON writers.
     * As PyTorch's: {@code device_traces[i]} is device i's history (the lists before this allocator's device are
     * empty), {@code segment_pool_id} and each trace entry's {@code pool_id} are the tuple {@code (0, 0)}, an
     * {@code active_pending_free} block keeps its {@code requested_size} and its segment's
     * {@code requested_size} counts it, and {@code allocator_settings} is {@link CachingOptions#allocatorSettings()}.
     */
    Map<String, Object> snapshotDict();

    /**
     * Writes {@link #snapshotDict()} as a Python pickle (protocol 2) of plain dicts, lists and tuples, the format of
     * {@code torch.cuda.memory._dump_snapshot()}: PyTorch's memory visualiser (https://pytorch.org/memory_viz)
     * loads it.
     */
    default void writeSnapshotPickle(java.io.OutputStream out) throws java.io.IOException {
        io.devalloc.api.snapshot.export.PickleWriter.write(snapshotDict(), out);
    }

    /** {@link #snapshotDict()} as JSON (pretty-printed when {@code pretty}). */
    default String snapshotJson(boolean pretty) {
        return io.devalloc.api.snapshot.export.JsonWriter.toString(snapshotDict(), pretty);
    }

    /** PyTorch's {@code FreeCudaMemoryCallback}: asked on a miss; returns true if it freed something. */
    void registerFreeMemoryCallback(BooleanSupplier callback);

    /** Called on every out-of-memory error, before the exception is thrown (PyTorch's OOM observers). */
    void registerOutOfMemoryObserver(OutOfMemoryObserver observer);

    /**
     * Called when {@code throw_on_cudamalloc_oom} refuses an allocation (PyTorch's {@code OomRejectionObserver}),
     * on a thread of its own after the allocator's lock is released, as upstream dispatches them; an observer that
     * throws is logged and, as upstream, the observers after it are not called.
     */
    void registerOomRejectionObserver(OomRejectionObserver observer);

    /**
     * Tags {@code stream} with a reserve class for {@code expandable_segments_reserve_by_class} (PyTorch's
     * {@code setExpandableSegmentReserveClassForStream}); {@code ""} removes the tag. Applies to expandable
     * segments created afterwards.
     */
    void setExpandableSegmentReserveClass(DeviceStream stream, String reserveClass);

    /** The reserve class of {@code stream}, {@code ""} when untagged. */
    String expandableSegmentReserveClass(DeviceStream stream);

    /** The options in force. */
    CachingOptions options();

    /**
     * Restores a segment that existed before recording began (a trace's {@code presegment} row): a device malloc
     * of exactly {@code bytes}, kept as one free block. Point the device at the segment's address first (the
     * simulator's scripted addresses) to rebuild the recorded layout. A trace recorded with expandable segments is
     * restored with {@link #restoreExpandableSegment} and {@link #restoreExpandableRange} instead.
     *
     * @return the segment's address
     */
    long restoreSegment(long bytes, DeviceStream stream);

    /**
     * The address space a new expandable segment of {@code stream} in the small or large pool reserves: whole pages
     * (2 MiB in the small pool, {@code large_segment_size} in the large one) covering 9/8 of the device's memory, or
     * the stream's configured reserve ({@code expandable_segments_reserve[_by_class]}) clamped to that, as
     * upstream's {@code ExpandableSegment} sizes itself. 0 when this allocator runs without expandable segments.
     */
    long expandableSegmentSize(DeviceStream stream, boolean smallPool);

    /**
     * Restores an expandable segment that existed before recording began, with nothing mapped yet: reserves its
     * address space as a new segment of {@code stream}'s small or large pool would ({@link #expandableSegmentSize}),
     * but at most {@code maxReserveBytes} (whole pages, rounded to the device's granularity) when that is positive,
     * so that segments recorded closer together than a full reserve fit where they were. Point the device at the
     * segment's recorded base first (the simulator's scripted addresses apply to reservations too), then restore
     * its mapped ranges with {@link #restoreExpandableRange} at their recorded offsets from the base. Reserving
     * makes no device allocation, as upstream's {@code cuMemAddressReserve} counts none.
     *
     * @return the segment's base address
     * @throws IllegalStateException    if this allocator runs without expandable segments (restore with
     *                                  {@link #restoreSegment}), or the device refuses the reservation
     * @throws IllegalArgumentException if {@code maxReserveBytes} is positive but holds no whole page
     */
    long restoreExpandableSegment(DeviceStream stream, boolean smallPool, long maxReserveBytes);

    /**
     * Restores a range that was mapped before recording began (a trace's {@code presegment} row of an expandable
     * segment): maps {@code [address, address + bytes)}, whole pages of a segment restored with
     * {@link #restoreExpandableSegment}, in one device call, as one free block merged with free mapped neighbours
     * (as PyTorch keeps free mapped memory). Counted as upstream's {@code map_block} counts a map: one device
     * allocation, the reserved bytes, and a {@code segment_map} history entry (a replay counts the device calls
     * made after its restore). Live blocks inside it are then restored with {@link #restoreAllocation}.
     *
     * @throws IllegalArgumentException if the range is not whole pages inside one unmapped range of an expandable
     *                                  segment of this allocator
     * @throws IllegalStateException    if the device refuses the map (nothing changes)
     */
    void restoreExpandableRange(long address, long bytes);

    /**
     * Restores a block that was live before recording began (a trace's {@code prealloc} row): marks
     * {@code [address, address + blockSize)} inside a free block of a restored segment as allocated, with
     * {@code requested} bytes asked for, splitting the free block around it. Inside an expandable segment the
     * pieces cut off stay mapped free blocks of that segment (and, as upstream, expandable segments count no
     * inactive splits).
     *
     * @throws IllegalArgumentException if the range is not inside one free block of this allocator
     */
    void restoreAllocation(long address, long blockSize, long requested, DeviceStream stream);

    /** Observer of allocations refused by {@code throw_on_cudamalloc_oom}. */
    @FunctionalInterface
    interface OomRejectionObserver {
        /**
         * @param device         the device index
         * @param allocationSize the segment size that was refused
         * @param totalAllocated the bytes the allocator held from the device before the request
         * @param deviceTotal    the device's total memory
         */
        void onRejection(int device, long allocationSize, long totalAllocated, long deviceTotal);
    }

    /** Observer of out-of-memory errors. */
    @FunctionalInterface
    interface OutOfMemoryObserver {
        /**
         * @param device         the device index
         * @param allocationSize the segment size that could not be obtained
         * @param deviceAllowed  the allowed maximum, or the device's total when no fraction is set
         * @param deviceFree     the device's free bytes
         */
        void onOutOfMemory(int device, long allocationSize, long deviceAllowed, long deviceFree);
    }
}
