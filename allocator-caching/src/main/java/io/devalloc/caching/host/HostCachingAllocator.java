package io.devalloc.caching.host;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import java.util.Map;

/**
 * PyTorch's pinned-host caching allocator ({@code at::CachingHostAllocator}, what {@code tensor.pin_memory()} and
 * {@code torch.empty(..., pin_memory=True)} allocate from): a {@link DeviceAllocator} with PyTorch's host statistics
 * and controls. Create one with {@link CachingHostAllocatorProvider} (or as allocator {@code caching-host} through
 * {@code DeviceAllocators}, Guice or the launcher). It is meant for page-locked host memory (devices
 * {@code pinned-host} and {@code cuda-host}) but works over any device.
 *
 * <p>Requests are rounded up to a power of two (or, with {@code pinned_round_threshold_mb}, to 2 MiB multiples
 * above a threshold; with PyTorch 2.10's {@code pinned_max_round_threshold_mb} or {@code pinned_max_cached_size_mb},
 * not at all above them), served last-in-first-out from free lists by the most recently freed block that is large
 * enough, never split, and taken from the device on a miss. A freed block whose memory streams may still read (see
 * {@link #recordEvent}) is reused only after the events recorded on those streams at the free have completed; a
 * freed block above {@code pinned_max_cached_size_mb} goes back to the device at that point instead of being cached.
 * See the package documentation for the design and every difference from PyTorch.
 *
 * <p><b>Streams.</b> A pinned block belongs to no stream: the {@code stream} argument of {@code malloc} and
 * {@code allocate} is accepted and ignored, as PyTorch's host allocator has none. The streams that use the memory
 * are named with {@link #recordEvent} (PyTorch's {@code CachingHostAllocator_recordEvent}, called by every
 * non-blocking copy) or {@link #recordStream}.
 *
 * <p>Thread-safe: one lock guards the allocator.
 */
public interface HostCachingAllocator extends DeviceAllocator {

    /**
     * {@code torch.cuda.host_memory_stats()}: a sorted map with PyTorch's keys.
     * <ul>
     *   <li>{@code allocations.{current,peak,allocated,freed}}, {@code allocated_bytes.*}: blocks this allocator
     *       owns (live, waiting for events, or cached) and their sizes. {@code allocated} grows with every block
     *       created on a miss, {@code freed} with every block returned to the device by {@link #emptyCache()}, by a
     *       free above {@code pinned_max_cached_size_mb} (or once its events completed), or by {@code close}.</li>
     *   <li>{@code active_requests.*}, {@code active_bytes.*}: blocks handed out and not yet reusable (live, or freed
     *       with events pending), and their sizes (a block's size, not the request's, when a larger cached block
     *       serves a request). As upstream these are kept per size class and summed, so
     *       the {@code peak} figures are the sum of each class's peak: an upper bound of the true peak, not the
     *       true peak.</li>
     *   <li>{@code num_host_alloc}, {@code num_host_free}: as upstream, equal to {@code allocations.allocated} and
     *       {@code allocations.freed}.</li>
     *   <li>{@code host_alloc_time.{total,max,min,count,avg}}, {@code host_free_time.*}: microseconds spent in the
     *       device's malloc and free ({@code cudaHostAlloc}, {@code cudaFreeHost}); {@code count} is the number of
     *       calls, {@code avg} = total / count (0 when there were none), {@code min} 0 until the first call.</li>
     * </ul>
     */
    Map<String, Long> hostMemoryStats();

    /**
     * {@code torch._C._host_emptyCache()}: processes completed events, then returns every cached block to the
     * device. Live blocks, blocks still waiting for events and blocks carved from the reserve segment stay.
     * The same as {@link #releaseCachedMemory()}.
     */
    void emptyCache();

    /**
     * {@code CachingHostAllocator_recordEvent}: records that the live allocation at {@code address} is used by work
     * queued on {@code stream}, so that after it is freed its memory is not reused until that work is done (one
     * event per recorded stream is recorded at the free). Unlike {@link #recordStream} it never throws for an
     * address it does not know: PyTorch calls it on every pinned tensor a copy touches, whether it came from this
     * allocator or not.
     *
     * @return true if {@code address} is a live allocation of this allocator (the stream was recorded, or already
     *         was), false otherwise (address 0, an interior or unknown address, or a block already freed)
     * @throws io.devalloc.api.error.UnknownStreamException if {@code address} is a live allocation but
     *                               {@code stream} is not a live stream of the device (nothing is recorded)
     * @throws IllegalStateException if the allocator is closed
     */
    boolean recordEvent(long address, DeviceStream stream);

    /**
     * {@code reset_accumulated_host_memory_stats()}: the {@code allocated} and {@code freed} totals and the timing
     * totals and counts go to 0 (so do {@code allocationCount} and {@code freeCount} of {@link #stats()}).
     */
    void resetAccumulatedStats();

    /**
     * {@code reset_peak_host_memory_stats()} together with the common peaks: every peak becomes the current value
     * and the timing minimum and maximum go to 0.
     */
    @Override
    void resetPeakStats();

    /** The options in force. */
    CachingHostOptions options();
}
