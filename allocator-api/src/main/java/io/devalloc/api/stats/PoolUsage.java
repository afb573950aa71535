package io.devalloc.api.stats;

import java.util.Objects;

/**
 * The gauges of one pool of an allocator (or of the whole allocator, pool {@link #ALL}), read when a metrics registry
 * asks: PyTorch's {@code memory_stats()} current figures, for every devalloc allocator.
 *
 * @param pool               {@link #ALL} for the whole allocator, else the pool's name ({@code small} and
 *                           {@code large} for {@code caching}, PyTorch's {@code small_pool}/{@code large_pool})
 * @param reservedBytes      bytes held from the device
 * @param allocatedBytes     bytes in live allocations as the allocator sized them
 * @param activeBytes        bytes of blocks in use: allocated, plus freed blocks still waiting on a stream's event
 * @param requestedBytes     bytes of live allocations as callers asked them
 * @param inactiveSplitBytes bytes of free blocks that are pieces of a split segment (they can serve only requests
 *                           that fit beside their neighbours: PyTorch's {@code inactive_split_bytes}); 0 for
 *                           allocators that never split
 */
public record PoolUsage(String pool, long reservedBytes, long allocatedBytes, long activeBytes, long requestedBytes,
                        long inactiveSplitBytes) {

    /** The pool name of the whole allocator's figures. */
    public static final String ALL = "all";

    public PoolUsage {
        Objects.requireNonNull(pool, "pool");
    }

    /**
     * The whole allocator's figures from {@code stats}, for an allocator that never splits a block and frees at once:
     * active is allocated and nothing is inactive-split.
     */
    public static PoolUsage ofUnsplit(AllocatorStats stats) {
        return new PoolUsage(ALL, stats.reservedBytes(), stats.allocatedBytes(), stats.allocatedBytes(),
                stats.requestedBytes(), 0);
    }
}
