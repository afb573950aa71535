package io.devalloc.api.observe;

/**
 * Asked when an allocation is about to fail for want of memory: it may free memory (spill to host, drop a cache,
 * free a live allocation it owns) and ask for another attempt. RMM's {@code failure_callback_resource_adaptor} and
 * cuDF's {@code RmmEventHandler.onAllocFailure}, which Spark-RAPIDS spills with, are the models.
 *
 * <p><b>When.</b> After the allocator's own ladder has failed and before the error reaches the caller: for
 * {@code caching} that is after PyTorch's whole ladder (cache lookup, free-memory callbacks, device malloc, release of
 * the cached blocks and one more malloc), and a retry runs the whole ladder again from the top, so memory the handler
 * freed is found first in the cache, at PyTorch's free-memory-callback step, before anything new is asked of the
 * device; for {@code bfc}, {@code caching-host} and {@code direct}, when the error is about to be thrown. A handler
 * called on every cache miss, as PyTorch's {@code FreeMemoryCallback}s are, would spill on every {@code cudaMalloc};
 * that exact hook is there for who wants it ({@code CachingAllocator.registerFreeMemoryCallback}).
 *
 * <p><b>Threads and locks.</b> Called on the allocating thread with no allocator lock held, so it may free through
 * the allocator (or wait for another thread to) without deadlock. Retries are bounded: after the handler's
 * {@code maxRetries}-th retry the error is thrown whatever it answers. A handler that throws does not break the
 * allocator: its exception is added to the out-of-memory error as suppressed, the error is thrown, and the
 * allocator's state is what the failed attempt left.
 *
 * <p>Set one with {@code DeviceAllocators.builder().outOfMemoryHandler(...)}.
 */
@FunctionalInterface
public interface OutOfMemoryHandler {

    /** How many retries one request gets when the builder is not told otherwise. */
    int DEFAULT_MAX_RETRIES = 8;

    /**
     * An allocation failed.
     *
     * @param failure the request, how many times it was retried already, the allocator's stats and the error
     * @return true to try the allocation again (within the bound), false to let the error reach the caller
     */
    boolean onOutOfMemory(AllocationFailure failure);
}
