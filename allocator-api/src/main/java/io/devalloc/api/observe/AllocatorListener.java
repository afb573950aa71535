package io.devalloc.api.observe;

import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.internal.GuardedListener;
import java.util.List;

/**
 * Told what an allocator does that costs or fails: device calls, out-of-memory errors, retries and releases of cached
 * memory. The metrics SPI: devalloc's Micrometer binder, its JFR events and a user's own tracker implement it, as
 * HikariCP's {@code IMetricsTracker} and Caffeine's {@code StatsCounter} are implemented.
 *
 * <p>What it is <em>not</em> told: the cached allocate and free of every tensor. Those are the hot path (tens of
 * nanoseconds), and their totals are gauges read from {@link io.devalloc.api.DeviceAllocator#stats()} and
 * {@link io.devalloc.api.DeviceAllocator#memoryUsage()} when a registry asks, not pushed per call.
 *
 * <p>Set one with {@code DeviceAllocators.builder().listener(...)}; with none set, nothing is wrapped and nothing is
 * called. Every method has an empty default. Methods are called on the allocating thread, some with the allocator's
 * lock held ({@link #allocationRetried} with cause {@link RetryCause#CACHE_RELEASED}, {@link #cacheReleased} and the
 * device calls made inside an allocation): keep them short, and never call the allocator from them. A listener that
 * throws is logged and otherwise ignored: it never breaks an allocation (devalloc wraps every listener in a guard).
 *
 * <p>Implementations must be thread-safe: allocators are.
 */
public interface AllocatorListener {

    /** A listener that does nothing. */
    AllocatorListener NONE = new AllocatorListener() {
        @Override
        public String toString() {
            return "AllocatorListener.NONE";
        }
    };

    /**
     * One listener that tells each of {@code listeners} in turn, as {@link io.devalloc.api.DeviceAllocators.Builder}
     * does for those given to it: one that throws is logged and ignored, and the others are still told.
     * {@link #NONE} when the list is empty.
     */
    static AllocatorListener all(List<? extends AllocatorListener> listeners) {
        return GuardedListener.of(listeners);
    }

    /**
     * The allocator called the device.
     *
     * @param call      which call
     * @param address   the address given or returned ({@link io.devalloc.api.device.DeviceMemory#NULL} for a
     *                  {@link DeviceCall#MALLOC} that found no memory)
     * @param bytes     the bytes it concerned (for {@link DeviceCall#FREE} the size of the allocation freed)
     * @param nanos     how long the call took, wall-clock
     * @param succeeded false when a {@code MALLOC} or {@code MAP} found no memory, or a call threw
     */
    default void deviceCall(DeviceCall call, long address, long bytes, long nanos, boolean succeeded) {
    }

    /**
     * An allocation failed for want of memory; called before the error reaches the caller (and before an
     * {@link OutOfMemoryHandler} is asked whether to retry, so a retried failure is counted too).
     *
     * @param requestedBytes the bytes the caller asked for
     * @param error          the error the caller gets unless a handler turns it into a retry
     */
    default void outOfMemory(long requestedBytes, OutOfMemoryException error) {
    }

    /**
     * The allocator tries an allocation again.
     *
     * @param requestedBytes the bytes the caller asked for
     * @param attempt        1 for the first retry of this request, 2 for the second, ...
     * @param cause          why
     */
    default void allocationRetried(long requestedBytes, int attempt, RetryCause cause) {
    }

    /**
     * The allocator gave cached (unused) memory back to the device: {@code empty_cache}, a release before a retry,
     * garbage collection of the cache.
     *
     * @param bytes the bytes given back in this release (0 when there was nothing to give)
     * @param nanos how long the release took, wall-clock
     */
    default void cacheReleased(long bytes, long nanos) {
    }

    /** Why an allocator tried an allocation again, as {@link AllocatorListener#allocationRetried} is told. */
    enum RetryCause {
        /**
         * The allocator returned cached memory to the device and asked the device again: PyTorch's caching allocator
         * after {@code release_cached_blocks} (the attempts its {@code num_alloc_retries} counts).
         */
        CACHE_RELEASED,
        /**
         * The allocator waited for other threads to free memory: TensorFlow's BFC allocator with
         * {@code allow_retry}.
         */
        FREES_AWAITED,
        /** An {@link OutOfMemoryHandler} asked for another attempt after an out-of-memory error. */
        HANDLER
    }
}
