package io.devalloc.caching;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.spi.MemorySummary;
import io.devalloc.api.spi.PyTorchMemoryHistory;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * PyTorch's CUDA caching allocator: a {@link DeviceAllocator} with PyTorch's own statistics, history, snapshot and
 * controls. Create one with {@link CachingAllocatorProvider} (or as allocator {@code caching} through
 * {@code DeviceAllocators}, Guice or the launcher). Thread-safe: one lock guards the allocator, as upstream's
 * per-device mutex.
 */
public interface CachingAllocator extends DeviceAllocator, MemorySummary, PyTorchMemoryHistory {

    /** {@code torch.cuda.memory_stats()}: a sorted flat map with PyTorch's key names. */
    Map<String, Long> memoryStats();

    /** {@code torch.cuda.memory_summary()}: PyTorch's table, 75 characters wide. */
    @Override
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
     * Either way the history is cleared. As PyTorch's ring buffer, the history starts small and grows as entries
     * arrive, up to {@code maxEntries}, then drops the oldest: {@code Integer.MAX_VALUE} (PyTorch's default,
     * {@code max_entries=sys.maxsize}) means "keep everything, growing as needed" (up to
     * {@code Integer.MAX_VALUE - 8} entries, or fewer when the Java heap cannot hold more: the history then keeps
     * the size it reached and logs a warning).
     *
     * @throws IllegalArgumentException {@code maxEntries < 0}; the history is then left as it was
     */
    @Override
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
    @Override
    Map<String, Object> snapshotDict();

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

    /** Observer of allocations refused by {@code throw_on_cudamalloc_oom}. */
    @FunctionalInterface
    interface OomRejectionObserver {
        /**
         * Called for each refused segment request.
         *
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
         * Called for each out-of-memory error, after the allocator's lock is released.
         *
         * @param device         the device index
         * @param allocationSize the segment size that could not be obtained
         * @param deviceAllowed  the allowed maximum, or the device's total when no fraction is set
         * @param deviceFree     the device's free bytes
         */
        void onOutOfMemory(int device, long allocationSize, long deviceAllowed, long deviceFree);
    }
}
