package io.devalloc.caching;

import static io.devalloc.caching.BlockTable.NONE;

import io.devalloc.caching.DeviceStats.Metric;

/**
 * The structural invariants of a {@link CachingArena}, checked from outside for tests: segments tiled exactly by
 * their blocks, no two adjacent free blocks that could have merged, free mapped blocks in their pool and ordered,
 * allocated blocks registered, and the stats equal to what the blocks say. Runs under the arena's lock.
 */
final class CachingInvariants {

    private CachingInvariants() {
    }

    /**
     * Checks every invariant of {@code arena}.
     *
     * @throws IllegalStateException naming the first violation
     */
    static void check(CachingArena arena) {
        arena.inspect(() -> checkLocked(arena));
    }

    private static void checkLocked(CachingArena arena) {
        BlockTable blocks = arena.blocks();
        DeviceStats stats = arena.deviceStats();
        long[] reserved = new long[2];
        long[] allocated = new long[2];
        long[] active = new long[2];
        long[] segmentsCount = new long[2];
        long[] allocationCount = new long[2];
        long[] inactiveSplit = new long[2];
        long[] inactiveSplitBytes = new long[2];
        long total = 0;
        for (int head : arena.segmentHeads()) {
            int k = blocks.small[head] ? 0 : 1;
            boolean isExpandable = blocks.expandable[head] != NONE;
            if (!isExpandable) {
                segmentsCount[k]++;
            }
            int prev = NONE;
            for (int b = head; b != NONE; b = blocks.next[b]) {
                expect(blocks.prev[b] == prev, "block " + b + " prev link");
                if (prev != NONE) {
                    expect(blocks.ptr[prev] + blocks.size[prev] == blocks.ptr[b], "gap or overlap before block " + b);
                    expect(blocks.small[prev] == blocks.small[b], "pool changes inside a segment at block " + b);
                    expect(blocks.stream[prev] == blocks.stream[b], "stream changes inside a segment at block " + b);
                    boolean bothMergeable = blocks.isAllocatable(prev) && blocks.isAllocatable(b)
                            && blocks.mapped[prev] == blocks.mapped[b];
                    expect(!bothMergeable, "adjacent free blocks " + prev + " and " + b + " were not merged");
                }
                expect(blocks.size[b] > 0, "block " + b + " has size " + blocks.size[b]);
                BlockPool pool = arena.poolOf(b);
                if (blocks.mapped[b]) {
                    reserved[k] += blocks.size[b];
                    total += blocks.size[b];
                }
                if (blocks.allocated[b]) {
                    allocated[k] += blocks.size[b];
                    allocationCount[k]++;
                    expect(arena.allocatedBlockAt(blocks.ptr[b]) == b, "allocated block " + b + " not registered");
                } else if (blocks.isAllocatable(b) && blocks.mapped[b]) {
                    expect(pool.contains(b), "free block " + b + " is not in its pool");
                }
                if (blocks.allocated[b] || blocks.eventCount[b] > 0 || blocks.hasStreamUses[b]) {
                    active[k] += blocks.size[b];
                } else if (!isExpandable && blocks.isSplit(b)) {
                    inactiveSplit[k]++;
                    inactiveSplitBytes[k] += blocks.size[b];
                }
                prev = b;
            }
        }
        for (int k = 0; k < 2; k++) {
            int t = k == 0 ? DeviceStats.SMALL : DeviceStats.LARGE;
            String pool = k == 0 ? "small" : "large";
            expect(stats.get(Metric.RESERVED_BYTES, t, DeviceStats.CURRENT) == reserved[k], pool + " reserved_bytes "
                    + stats.get(Metric.RESERVED_BYTES, t, DeviceStats.CURRENT) + " but segments hold " + reserved[k]);
            expect(stats.get(Metric.ALLOCATED_BYTES, t, DeviceStats.CURRENT) == allocated[k],
                    pool + " allocated_bytes");
            expect(stats.get(Metric.ACTIVE_BYTES, t, DeviceStats.CURRENT) == active[k], pool + " active_bytes "
                    + stats.get(Metric.ACTIVE_BYTES, t, DeviceStats.CURRENT) + " but blocks say " + active[k]);
            expect(stats.get(Metric.ALLOCATION, t, DeviceStats.CURRENT) == allocationCount[k], pool + " allocation");
            expect(stats.get(Metric.SEGMENT, t, DeviceStats.CURRENT) == segmentsCount[k], pool + " segment "
                    + stats.get(Metric.SEGMENT, t, DeviceStats.CURRENT) + " but " + segmentsCount[k] + " found");
            expect(stats.get(Metric.INACTIVE_SPLIT, t, DeviceStats.CURRENT) == inactiveSplit[k], pool
                    + " inactive_split " + stats.get(Metric.INACTIVE_SPLIT, t, DeviceStats.CURRENT) + " but blocks say "
                    + inactiveSplit[k]);
            expect(stats.get(Metric.INACTIVE_SPLIT_BYTES, t, DeviceStats.CURRENT) == inactiveSplitBytes[k], pool
                    + " inactive_split_bytes " + stats.get(Metric.INACTIVE_SPLIT_BYTES, t, DeviceStats.CURRENT)
                    + " but blocks say " + inactiveSplitBytes[k]);
        }
        expect(total == arena.totalAllocatedMemory(), "total_allocated_memory " + arena.totalAllocatedMemory()
                + " but mapped " + total);
        for (BlockPool pool : new BlockPool[] {arena.smallPool(), arena.largePool()}) {
            int count = 0;
            for (int n = pool.firstFree(); n != BlockPool.NO_NODE; n = pool.nextFree(n)) {
                count++;
                int b = pool.blockAt(n);
                // The key the set holds is the block's current (stream, size, address): contains() finds it.
                expect(pool.contains(b), "pooled block " + b + " is not found under its current key");
                expect(!blocks.allocated[b] && blocks.mapped[b], "pooled block " + b + " is allocated or unmapped");
                int p = pool.prevFree(n);
                if (p == BlockPool.NO_NODE) {
                    continue;
                }
                int a = pool.blockAt(p);
                int i = count - 1;
                int c = Long.compare(blocks.stream[a], blocks.stream[b]);
                if (c == 0) {
                    c = Long.compare(blocks.size[a], blocks.size[b]);
                }
                if (c == 0) {
                    c = Long.compare(blocks.ptr[a], blocks.ptr[b]);
                }
                expect(c < 0, "pool order broken at " + i);
            }
            expect(count == pool.freeCount(), "walked " + count + " pooled blocks of " + pool.freeCount());
        }
    }

    private static void expect(boolean ok, String message) {
        if (!ok) {
            throw new IllegalStateException(message);
        }
    }
}
