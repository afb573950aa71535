package io.devalloc.caching;

import static io.devalloc.caching.BlockTable.NONE;
import static io.devalloc.caching.SizeRules.MIN_BLOCK_SIZE;
import static io.devalloc.caching.SizeRules.SMALL_BUFFER;
import static io.devalloc.caching.SizeRules.SMALL_SIZE;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.caching.DeviceStats.Metric;
import java.util.Objects;

/**
 * Restoring a recorded state into a {@link CachingArena} (warm trace replays; PyTorch has no such calls), apart
 * from the port of {@code DeviceCachingAllocator} itself. The arena hands it out as its {@link PyTorchStateRestore}
 * through {@code unwrap}; there is one per arena.
 *
 * <p>{@code restoreSegment} is a device malloc kept as one free block. With expandable segments,
 * {@code restoreExpandableSegment} reserves a segment as {@code find_expandable_block} would (whole pages of the
 * stream's reserve, at most the cap given, so that segments recorded side by side fit where they were) with nothing
 * mapped, and {@code restoreExpandableRange} maps whole pages of it in one device call with {@code map_block}'s
 * bookkeeping (reserved bytes, one {@code num_device_alloc}, one {@code segment_map} entry), merged with free mapped
 * neighbours, so the free mapped memory is one block per run as PyTorch keeps it. {@code restoreAllocation} then
 * carves a live block out of a free block of either kind; in an expandable segment the pieces stay mapped blocks of
 * that segment and no inactive split is counted (PyTorch counts none for expandable segments). What PyTorch had but
 * a restore cannot know is the caller's: a segment's base below its lowest mapped range, its true reserve, the order
 * in which its blocks were made (the warm start of the {@code replay} module works these out).
 *
 * <p>Every restore runs under the arena's lock and does its bookkeeping with the methods the malloc path uses
 * ({@code mallocSegment}, {@code addExpandableSegment}, {@code addMapped}, {@code countAllocation}), so that the two
 * cannot count differently. The sizing questions are answered by the arena's own rules ({@code round_size},
 * {@code should_split}, the pools' page sizes).
 */
final class CachingArenaRestore implements PyTorchStateRestore {

    private final CachingArena arena;
    private final BlockTable blocks;

    CachingArenaRestore(CachingArena arena) {
        this.arena = arena;
        this.blocks = arena.blocks();
    }

    @Override
    public long roundSize(long requested) {
        return arena.roundedSize(requested);
    }

    @Override
    public boolean isSmallRequest(long rounded) {
        return SizeRules.isSmall(rounded);
    }

    @Override
    public long smallSegmentSize() {
        return SMALL_BUFFER;
    }

    @Override
    public long largeSegmentSize() {
        return arena.options.largeSegmentSize();
    }

    @Override
    public boolean expandableSegments() {
        return arena.options.expandableSegments();
    }

    @Override
    public boolean shouldSplit(long rounded, long remainder, boolean smallPool, boolean expandable) {
        // PyTorch's should_split, as the arena applies it to a block.
        if (smallPool || expandable) {
            return remainder >= MIN_BLOCK_SIZE;
        }
        return rounded < arena.maxSplitSize && remainder > SMALL_SIZE;
    }

    @Override
    public boolean mayKeepTail(long rounded, long tail) {
        return tail > 0 && tail <= SMALL_SIZE && rounded < arena.maxSplitSize;
    }

    @Override
    public long restoreSegment(long bytes, DeviceStream stream) {
        if (bytes <= 0 || bytes % MIN_BLOCK_SIZE != 0) {
            throw new IllegalArgumentException("a segment size must be a positive multiple of 512, got " + bytes);
        }
        arena.lockCall(true);
        try {
            // PyTorch's small pool only ever holds 2 MiB segments.
            BlockPool pool = bytes == SMALL_BUFFER ? arena.smallPool() : arena.largePool();
            int h = arena.mallocSegment(pool, stream.handle(), bytes);
            if (h == NONE) {
                throw new IllegalStateException("the device refused a restored segment of " + bytes + " bytes");
            }
            pool.insert(h);
            return blocks.ptr[h];
        } finally {
            arena.unlockCall();
        }
    }

    @Override
    public long expandableSegmentSize(DeviceStream stream, boolean small) {
        Objects.requireNonNull(stream, "stream");
        arena.lockCall(false);
        try {
            if (!arena.options.expandableSegments()) {
                return 0;
            }
            long pageSize = small ? SMALL_BUFFER : arena.options.largeSegmentSize();
            return (arena.segmentReserve(stream.handle()) + pageSize - 1) / pageSize * pageSize;
        } finally {
            arena.unlockCall();
        }
    }

    @Override
    public long restoreExpandableSegment(DeviceStream stream, boolean small, long maxReserveBytes) {
        Objects.requireNonNull(stream, "stream");
        arena.lockCall(true);
        try {
            if (!arena.options.expandableSegments()) {
                throw new IllegalStateException(arena + " runs without expandable segments; restore the segment with"
                        + " restoreSegment");
            }
            long st = stream.handle();
            long pageSize = small ? SMALL_BUFFER : arena.options.largeSegmentSize();
            VirtualMemory vm = arena.device().virtualMemory().orElseThrow();
            long granule = vm.granularity();
            // As findExpandableBlock sizes a new segment: whole pages of the stream's reserve, reserved in granules.
            long pages = (arena.segmentReserve(st) + pageSize - 1) / pageSize;
            if (maxReserveBytes > 0) {
                long cap = Math.min(pages, maxReserveBytes / pageSize);
                while (cap > 0 && roundUp(cap * pageSize, granule) > maxReserveBytes) {
                    cap--;
                }
                if (cap == 0) {
                    throw new IllegalArgumentException("maxReserveBytes " + maxReserveBytes + " holds no whole page"
                            + " of " + pageSize + " B (reserved in granules of " + granule + " B); pass at least one"
                            + " page, or 0 for the full reserve");
                }
                pages = cap;
            }
            long base = vm.reserve(roundUp(pages * pageSize, granule));
            if (base == DeviceMemory.NULL) {
                throw new IllegalStateException("the device refused to reserve a restored expandable segment of "
                        + pages * pageSize + " bytes");
            }
            arena.addExpandableSegment(small ? arena.smallPool() : arena.largePool(), st, base, pageSize,
                    pages * pageSize);
            return base;
        } finally {
            arena.unlockCall();
        }
    }

    @Override
    public void restoreExpandableRange(long address, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("a restored mapped range must have a positive size, got " + bytes);
        }
        arena.lockCall(true);
        try {
            ExpandableSegment es = null;
            for (ExpandableSegment candidate : arena.expandableSegments) {
                if (candidate.holds(address)) {
                    es = candidate;
                }
            }
            if (es == null) {
                throw new IllegalArgumentException("no expandable segment of " + arena + " holds 0x"
                        + Long.toHexString(address) + "; restore its segment first with restoreExpandableSegment");
            }
            if ((address - es.base) % es.pageSize != 0 || bytes % es.pageSize != 0
                    || bytes > es.base + es.size - address) {
                throw new IllegalArgumentException("[0x" + Long.toHexString(address) + ", +" + bytes + ") is not whole"
                        + " pages of " + es.pageSize + " B inside the expandable segment at 0x"
                        + Long.toHexString(es.base) + " (" + es.size + " B)");
            }
            BlockPool pool = es.small ? arena.smallPool() : arena.largePool();
            int h = unmappedRangeContaining(pool, es, address, bytes);
            // The device call first: a refusal leaves everything as it was.
            long mapped = es.map(address, bytes);
            if (mapped == 0) {
                throw new IllegalStateException("the device refused to map a restored range of " + bytes + " bytes at"
                        + " 0x" + Long.toHexString(address));
            }
            arena.deviceCalls++;
            pool.removeUnmapped(h);
            if (blocks.ptr[h] < address) {
                int front = blocks.create(blocks.ptr[h], address - blocks.ptr[h], es.stream, es.small);
                blocks.mapped[front] = false;
                blocks.expandable[front] = es.id;
                arena.splice(front, blocks.prev[h], h);
                pool.insertUnmapped(front);
            }
            if (blocks.ptr[h] + blocks.size[h] > address + bytes) {
                int back = blocks.create(address + bytes, blocks.ptr[h] + blocks.size[h] - (address + bytes),
                        es.stream, es.small);
                blocks.mapped[back] = false;
                blocks.expandable[back] = es.id;
                arena.splice(back, h, blocks.next[h]);
                pool.insertUnmapped(back);
            }
            blocks.ptr[h] = address;
            blocks.size[h] = bytes;
            blocks.mapped[h] = true;
            // As map_block: merged with free mapped neighbours, counted as one map.
            arena.addMapped(h, pool, address, mapped);
        } finally {
            arena.unlockCall();
        }
    }

    /** The unmapped block of {@code es} that holds {@code [address, address + bytes)}. */
    private int unmappedRangeContaining(BlockPool pool, ExpandableSegment es, long address, long bytes) {
        for (int i = pool.firstUnmapped(es.stream, Long.MIN_VALUE); i != BlockPool.NO_NODE
                && blocks.stream[pool.unmappedAt(i)] == es.stream; i = pool.nextUnmapped(i)) {
            int u = pool.unmappedAt(i);
            if (blocks.expandable[u] == es.id && blocks.ptr[u] <= address
                    && address + bytes <= blocks.ptr[u] + blocks.size[u]) {
                return u;
            }
        }
        throw new IllegalArgumentException("[0x" + Long.toHexString(address) + ", +" + bytes + ") is not"
                + " inside one unmapped range of the expandable segment at 0x" + Long.toHexString(es.base)
                + ": part of it is mapped already");
    }

    @Override
    public void restoreAllocation(long address, long blockSize, long requested, DeviceStream stream) {
        if (blockSize <= 0 || blockSize % MIN_BLOCK_SIZE != 0 || requested <= 0 || requested > blockSize) {
            throw new IllegalArgumentException("bad restored block: size " + blockSize + ", requested " + requested);
        }
        arena.lockCall(true);
        try {
            int h = findFreeBlockContaining(address, blockSize, stream.handle());
            BlockPool pool = arena.poolOf(h);
            long[] before = inactiveSplitOfSegment(h);
            pool.remove(h);
            if (blocks.ptr[h] < address) {
                // The part before stays a free block of its own (of the same expandable segment, if any: mapped).
                int front = blocks.create(blocks.ptr[h], address - blocks.ptr[h], blocks.stream[h], blocks.small[h]);
                blocks.expandable[front] = blocks.expandable[h];
                arena.splice(front, blocks.prev[h], h);
                blocks.size[h] -= address - blocks.ptr[h];
                blocks.ptr[h] = address;
                pool.insert(front);
            }
            if (blocks.size[h] > blockSize) {
                int back = blocks.create(address + blockSize, blocks.size[h] - blockSize, blocks.stream[h],
                        blocks.small[h]);
                blocks.expandable[back] = blocks.expandable[h];
                arena.splice(back, h, blocks.next[h]);
                blocks.size[h] = blockSize;
                pool.insert(back);
            }
            blocks.allocated[h] = true;
            blocks.requested[h] = requested;
            arena.allocatedBlocks.put(address, h, -1);
            // Inactive splits are the free blocks of split segments: account the difference the carve made.
            long[] after = inactiveSplitOfSegment(h);
            adjust(Metric.INACTIVE_SPLIT, pool.small, after[0] - before[0]);
            adjust(Metric.INACTIVE_SPLIT_BYTES, pool.small, after[1] - before[1]);
            arena.countAllocation(pool.small, blockSize, requested);
        } finally {
            arena.unlockCall();
        }
    }

    private static long roundUp(long bytes, long alignment) {
        return (bytes + alignment - 1) / alignment * alignment;
    }

    private void adjust(Metric metric, boolean small, long delta) {
        if (delta > 0) {
            arena.stats.increase(metric, small, delta);
        } else if (delta < 0) {
            arena.stats.decrease(metric, small, -delta);
        }
    }

    /** {count, bytes} of the inactive (free, unpended) blocks of {@code h}'s segment if it is split. */
    private long[] inactiveSplitOfSegment(int h) {
        int head = h;
        while (blocks.prev[head] != NONE) {
            head = blocks.prev[head];
        }
        long[] out = new long[2];
        if (blocks.expandable[head] != NONE) {
            return out;
        }
        for (int b = head; b != NONE; b = blocks.next[b]) {
            if (!blocks.allocated[b] && blocks.eventCount[b] == 0 && !blocks.hasStreamUses[b] && blocks.isSplit(b)) {
                out[0]++;
                out[1] += blocks.size[b];
            }
        }
        return out;
    }

    private int findFreeBlockContaining(long address, long size, long stream) {
        for (BlockPool pool : new BlockPool[] {arena.largePool(), arena.smallPool()}) {
            for (int i = pool.firstFree(); i != BlockPool.NO_NODE; i = pool.nextFree(i)) {
                int h = pool.blockAt(i);
                if (blocks.stream[h] == stream && blocks.ptr[h] <= address
                        && address + size <= blocks.ptr[h] + blocks.size[h]) {
                    return h;
                }
            }
        }
        throw new IllegalArgumentException("no free block of stream " + stream + " contains [0x"
                + Long.toHexString(address) + ", +" + size + "); restore its segment first");
    }
}
