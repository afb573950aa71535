package io.devalloc.api.spi;

/**
 * An allocator capability for trace replay: the three byte figures of {@link io.devalloc.api.stats.AllocatorStats}
 * that change with every call, read without building a stats record. A replay reads them after every event to find
 * the exact moment of the reserved peak, which {@link io.devalloc.api.DeviceAllocator#stats()} (a consistent copy
 * under the allocator's lock, a new record each time) would make costly. Reached with
 * {@code allocator.unwrap(LiveBytes.class)}, through any decorator.
 *
 * <p>Each method returns what {@code stats()} would return in the same field at the same moment:
 * {@link #reservedBytes()} is {@code reservedBytes}, {@link #allocatedBytes()} is {@code allocatedBytes},
 * {@link #requestedBytes()} is {@code requestedBytes}.
 *
 * <p><b>Threads.</b> Implementations may read their fields without the allocator's lock (a plain field read, no
 * allocation): the values are exact on the thread that made the allocator's last call, which is how a replay (one
 * thread) uses them. Another thread may see a stale value, and the three values need not be from the same moment;
 * use {@code stats()} for a consistent copy.
 */
public interface LiveBytes {

    /** Bytes held from the device now ({@link io.devalloc.api.stats.AllocatorStats#reservedBytes()}). */
    long reservedBytes();

    /**
     * Bytes in live allocations as the allocator sized them
     * ({@link io.devalloc.api.stats.AllocatorStats#allocatedBytes()}).
     */
    long allocatedBytes();

    /**
     * Bytes in live allocations as callers asked them ({@link io.devalloc.api.stats.AllocatorStats#requestedBytes()}).
     */
    long requestedBytes();
}
