package io.devalloc.api;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.stats.PoolUsage;
import java.util.List;
import java.util.Optional;

/**
 * What applications call to get device memory: a pool over one {@link DeviceMemory}. Implementations are the
 * {@code direct} baseline (in this module), {@code bfc} and {@code caching}.
 *
 * <p>Two ways in. {@link #allocate(long)} returns an {@link Allocation} handle that try-with-resources frees.
 * {@link #malloc(long, DeviceStream)} and {@link #free(long)} work on raw {@code long} addresses and create no Java
 * objects, for hot loops.
 *
 * <p><b>Sizes.</b> A size of 0 returns address 0 and changes no stats (as PyTorch returns a null allocation);
 * {@code free(0)} does nothing. A negative size is an {@link IllegalArgumentException}. A size the device can
 * never serve, up to {@link Long#MAX_VALUE}, is an {@link io.devalloc.api.error.OutOfMemoryException} with reason
 * {@code REQUEST_TOO_LARGE} or {@code LIMIT_REACHED}; rounding never overflows.
 *
 * <p><b>What a refusal changes.</b> A refused call leaves the allocator usable and never changes what callers
 * hold: the live allocations, their addresses and sizes, and the figures about them (live, allocated and requested
 * bytes and counts, their peaks, the allocation and free counts, the largest allocation) stay exactly as they were.
 * Refusals of frees, of {@code recordStream}, of bad sizes and of settings change nothing at all. A refused
 * allocation ({@link io.devalloc.api.error.OutOfMemoryException}) may, before giving up, work on the cache as the
 * upstream allocators do: return cached, unused memory to the device (PyTorch's retry ladder releases oversize
 * cached blocks, then waits for pending events and empties the cache; BFC's garbage collection frees unused
 * regions), which lowers the reserved bytes and counts device frees; with PyTorch's expandable segments the pages
 * mapped on the way stay mapped and cached, as upstream (reserved bytes and their peak may grow, counting device
 * maps); and it counts itself (out-of-memory errors, retries, and each allocator's own counters of syncs and
 * rejections). A device failure ({@link io.devalloc.api.error.DeviceException}) is reported as it comes, with the
 * allocator's books still equal to the device's state.
 *
 * <p><b>Threads.</b> Every implementation is safe for concurrent use by any number of threads.
 *
 * <p><b>Lifecycle.</b> {@link #close()} returns all memory, cached or live, to the device; later allocations,
 * frees and cache operations throw {@link IllegalStateException}, while {@link #name()}, {@link #device()},
 * {@link #stats()}, {@link #snapshot()} and {@link #isClosed()} keep answering (for final reports) and describe
 * what the allocator then holds: nothing (no live allocation, no reserved, allocated or cached byte, no segment),
 * with the peaks and the counts of the calls made kept. If the
 * allocator was opened through {@link io.devalloc.api.DeviceAllocators} it owns its device and closes it
 * too.
 */
public interface DeviceAllocator extends AutoCloseable {

    /** The algorithm's name: {@code direct}, {@code bfc}, {@code caching}. */
    String name();

    /** The device this allocator allocates from. */
    DeviceMemory device();

    /**
     * Allocates {@code bytes} for use on {@code stream}, returning the raw address (0 when {@code bytes == 0}).
     * The allocator's own bookkeeping creates no Java objects; a call that reaches the device (a cache miss, or
     * every call of {@code direct}) costs whatever the device's malloc costs.
     *
     * @throws IllegalArgumentException                  if {@code bytes < 0}
     * @throws io.devalloc.api.error.OutOfMemoryException if it cannot be served
     */
    long malloc(long bytes, DeviceStream stream);

    /** {@link #malloc(long, DeviceStream)} on the default stream. */
    default long malloc(long bytes) {
        return malloc(bytes, DeviceStream.DEFAULT);
    }

    /**
     * Frees an address returned by {@link #malloc}. Freeing 0 does nothing.
     *
     * @throws InvalidFreeException with {@code UNKNOWN_ADDRESS} if it is not a live allocation of this allocator
     */
    void free(long address);

    /** Allocates on the default stream and returns a handle that frees on close. */
    default Allocation allocate(long bytes) {
        return allocate(bytes, DeviceStream.DEFAULT);
    }

    /**
     * Allocates on {@code stream} and returns a handle that frees on close.
     *
     * @throws IllegalStateException if the allocator is closed, also when {@link #close()} runs between the
     *                               allocation and the handle's creation (the memory went back with the close)
     */
    default Allocation allocate(long bytes, DeviceStream stream) {
        long address = malloc(bytes, stream);
        if (address == 0) {
            return new Allocation(this, 0, bytes, stream, 0);
        }
        long id;
        try {
            id = allocationId(address);
        } catch (InvalidFreeException e) {
            // A close() between malloc and allocationId returned the block with everything else: the caller sees
            // what a call on a closed allocator throws, not a free error about an address it never saw.
            if (isClosed()) {
                throw new IllegalStateException(this + " was closed while allocating " + bytes + " bytes", e);
            }
            throw e;
        }
        return new Allocation(this, address, bytes, stream, id);
    }

    /**
     * The id of the live allocation at {@code address}: unique among this allocator's allocations and increasing,
     * so that a handle can tell its own allocation from a later one that reuses the address.
     *
     * @throws InvalidFreeException with {@code UNKNOWN_ADDRESS} if it is not a live allocation
     */
    long allocationId(long address);

    /**
     * Frees the allocation at {@code address} only if it is still the one with id {@code allocationId}: what a
     * handle calls, so that a stale handle can never free somebody else's memory.
     *
     * @throws InvalidFreeException with {@code DOUBLE_FREE} if that allocation was already freed (the address is
     *                              free, or now holds a newer allocation, which is left alone)
     */
    void free(long address, long allocationId);

    /**
     * Frees through a handle, checking that this allocator made it.
     *
     * @throws InvalidFreeException {@code WRONG_ALLOCATOR} for another allocator's handle, {@code DOUBLE_FREE}
     *                              for a handle already freed
     */
    @SuppressWarnings("ReferenceEquality") // an allocation belongs to one allocator instance, not to an equal one
    default void free(Allocation allocation) {
        if (allocation.allocator() != this) {
            throw new InvalidFreeException(InvalidFreeException.Reason.WRONG_ALLOCATOR, allocation.address(),
                    allocation.allocator().toString());
        }
        allocation.close();
    }

    /**
     * Records that the live allocation at {@code address} is used on {@code stream} as well as the one it was
     * allocated on (PyTorch's {@code recordStream}). Allocators that reuse freed memory wait for that stream's
     * work before reusing it. Address 0 (a zero-byte allocation) is accepted and ignored.
     *
     * <p><b>Streams that die.</b> {@code stream} must be a live stream of this allocator's device
     * ({@link DeviceMemory#hasStream}); any other (another device's, a made-up handle, one already destroyed) is
     * refused here, since no event could ever be recorded on it. A stream destroyed later, after this call or after
     * an allocation on it, never makes the allocation unfreeable: where the free would record an event on it, the
     * allocator synchronises the device instead (once per free), which waits for whatever work the stream queued
     * before it was destroyed (CUDA finishes that work after {@code cudaStreamDestroy} returns, so treating the
     * stream as complete would not be safe). PyTorch records the events on the stream at free time and leaves a
     * destroyed stream to the driver's error; upstream's pool streams are never destroyed.
     *
     * @throws InvalidFreeException with {@code UNKNOWN_ADDRESS} if it is not a live allocation
     * @throws io.devalloc.api.error.UnknownStreamException if {@code stream} is not a live stream of the device
     *                                                      (nothing changes)
     */
    void recordStream(long address, DeviceStream stream);

    /** A consistent copy of the current figures. */
    AllocatorStats stats();

    /** Resets peak figures to the current values. */
    void resetPeakStats();

    /**
     * The gauges metrics read: the whole allocator's first (pool {@link PoolUsage#ALL}), then one per pool when the
     * allocator has pools ({@code caching}: {@code small}, {@code large}). A consistent copy, taken under the
     * allocator's lock like {@link #stats()}; meant to be read when a registry scrapes, not per call.
     *
     * <p>The default is right for an allocator that never splits a block and frees at once; allocators that split or
     * defer frees override it.
     */
    default List<PoolUsage> memoryUsage() {
        return List.of(PoolUsage.ofUnsplit(stats()));
    }

    /** Returns cached, unused memory to the device (PyTorch's {@code empty_cache}). Live allocations stay. */
    void releaseCachedMemory();

    /** The segments and blocks this allocator holds now. */
    MemorySnapshot snapshot();

    /** Whether {@link #close()} was called. */
    boolean isClosed();

    /**
     * This allocator, or the one a decorator wraps, as {@code type}: its own interface (e.g. the caching allocator's
     * {@code CachingAllocator}) or a capability (e.g. {@link io.devalloc.api.spi.PyTorchStateRestore}), when it is
     * one. Decorators forward the question to what they wrap, so that a recorded or observed allocator still offers
     * everything it is.
     *
     * @return the allocator as {@code type}, or empty when neither it nor anything it wraps is one
     */
    default <T> Optional<T> unwrap(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
    }

    /** Returns all memory to the device; idempotent. */
    @Override
    void close();
}
