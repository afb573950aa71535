/**
 * Watching an allocator in production: the metrics SPI ({@link io.devalloc.api.observe.AllocatorListener}, told of
 * device calls, out-of-memory errors, retries and cache releases), the out-of-memory handler
 * ({@link io.devalloc.api.observe.OutOfMemoryHandler}, which may free memory and ask for a retry) and threshold
 * callbacks ({@link io.devalloc.api.observe.ThresholdListener}). All three are set on
 * {@code DeviceAllocators.builder()}.
 *
 * <p><b>Design.</b> Nothing here touches the cached allocate/free path. Device calls are seen by a wrapper around the
 * device port (the allocator is handed the wrapper instead of the device); out-of-memory errors, the handler's
 * retries and the thresholds by a decorator around the allocator; only what the allocator alone sees (its own
 * retries, its releases of cached memory) is told by the allocator, through the listener in its
 * {@link io.devalloc.api.spi.AllocatorSetup}. Built with none of them, an allocator is exactly what it was: no
 * wrapper, no decorator, no call. Gauges (reserved, allocated, active, requested, inactive-split bytes, per pool) are
 * read from {@link io.devalloc.api.DeviceAllocator#memoryUsage()} when a registry asks, never pushed.
 *
 * <p><b>Where the handler runs, and why.</b> RMM's {@code failure_callback_resource_adaptor} and cuDF's
 * {@code RmmEventHandler} call their callback after the pool below has failed, with no lock of theirs held, and
 * retry the whole allocation when it says so; devalloc does the same for every allocator. For {@code caching} this
 * means the handler is asked after PyTorch's ladder has run out (cache, free-memory callbacks, device malloc,
 * release of cached blocks, malloc again), and a retry starts the ladder again from the top: memory the handler freed
 * is first looked for in the cache, at PyTorch's free-memory-callback step. PyTorch's own {@code FreeMemoryCallback}
 * (asked on every cache miss, with the allocator's lock held) stays available as
 * {@code CachingAllocator.registerFreeMemoryCallback}. Each failed attempt is an out-of-memory error the allocator
 * counts ({@code num_ooms}, the listener's {@code outOfMemory}), as each is in RMM.
 */
package io.devalloc.api.observe;
