package io.devalloc.caching;

import static io.devalloc.caching.BlockTable.NONE;
import static io.devalloc.caching.SizeRules.MAX_REQUEST;
import static io.devalloc.caching.SizeRules.MIN_BLOCK_SIZE;
import static io.devalloc.caching.SizeRules.SMALL_BUFFER;
import static io.devalloc.caching.SizeRules.SMALL_SIZE;

import io.devalloc.api.collect.HandleStreams;
import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.spi.AbstractDeviceAllocator;
import io.devalloc.api.spi.LiveBytes;
import io.devalloc.api.spi.MappedPages;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.api.spi.SizeRounding;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.stats.PoolUsage;
import io.devalloc.caching.DeviceStats.Metric;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The caching allocator of one device: PyTorch's {@code DeviceCachingAllocator}, step for step (see the package
 * documentation for what is left out). One lock guards all state, and device calls run under it (PyTorch's default,
 * {@code release_lock_on_cudamalloc:False}).
 *
 * <p>What upstream keeps apart is apart here too: the pages of an expandable segment and their device calls are
 * {@link ExpandableSegment}'s, the size arithmetic {@link SizeRules}', the snapshot structures
 * {@link SnapshotBuilder}'s; the lock, the argument checks, {@code ensureOpen} and the close template are
 * {@link AbstractDeviceAllocator}'s ({@link #releaseAll} gives everything back). The invariant checks of the tests
 * read the state through the package-private accessors at the end.
 *
 * <p><b>Restoring a recorded state</b> (warm trace replays; PyTorch has no such calls) is
 * {@link CachingArenaRestore}'s, which the arena hands out as its {@link PyTorchStateRestore}; it works under the
 * arena's lock with the bookkeeping of the malloc path ({@code mallocSegment}, {@code addExpandableSegment},
 * {@code addMapped}, {@code countAllocation}), which is package-private for it.
 *
 * <p><b>Capabilities for replays</b> (reached with {@code unwrap}): {@link LiveBytes} reads the reserved, allocated
 * and requested counters without the lock (plain reads of fields that only the lock holder writes: exact on the
 * thread that made the last call, which is all a single-threaded replay asks, and no cost on its hot loop);
 * {@link SizeRounding} is {@code round_size}; {@link MappedPages} gives the page of an expandable segment (2 MiB
 * in the small pool, {@code large_segment_size} in the large one).
 *
 * <p>What it says when an allocation fails (upstream's out-of-memory error and its hints, the rejection of
 * {@code throw_on_cudamalloc_oom} and its observers, {@code format_size}) is {@link CachingArenaReports}'s; the fields
 * that reads are package-private for it.
 *
 * <p><b>What the listener is told</b> (the {@link AllocatorListener} of the setup; its device calls are seen by the
 * device wrapper the builder hands in, not here): {@code allocationRetried(request, 1, CACHE_RELEASED)} where PyTorch
 * counts {@code num_alloc_retries} (the {@code alloc_block} after {@code release_cached_blocks}, once per request at
 * most), and {@code cacheReleased(bytes, nanos)} for every run of {@code release_cached_blocks}
 * ({@code empty_cache}, and the out-of-memory ladder; told even when it gave nothing back, since it waited for
 * every pending event) and for each run of {@code release_available_cached_blocks} and
 * {@code garbage_collect_cached_blocks} that gave something back, with the bytes returned to the device in that
 * run (segments freed and pages unmapped, as the reserved bytes fell). All with the lock held, as the listener's
 * contract says. With no listener set, none of this is timed or counted: the cached allocate and free never
 * touch it.
 */
final class CachingArena extends AbstractDeviceAllocator
        implements CachingAllocator, LiveBytes, SizeRounding, MappedPages {

    private static final Logger LOG = LoggerFactory.getLogger(CachingArena.class);

    final CachingOptions options;
    private final SizeRules sizes;
    final long maxSplitSize;
    final long deviceTotal;

    final BlockTable blocks = new BlockTable(1024);
    private final BlockPool smallPool = new BlockPool(true, blocks);
    private final BlockPool largePool = new BlockPool(false, blocks);
    /** Allocated block address → handle (PyTorch's active block map). */
    final LongLongHashMap allocatedBlocks = new LongLongHashMap(1024);
    final DeviceStats stats = new DeviceStats();
    final TraceRing trace = new TraceRing();

    /** Streams recorded with recordStream, by block handle. */
    private final HandleStreams streamUses = new HandleStreams();
    /** Per stream, the (event, block) pairs of deferred frees, oldest first (PyTorch's {@code cuda_events}). */
    private final Map<Long, ArrayDeque<PendingEvent>> pendingEvents = new LinkedHashMap<>();
    private final ArrayDeque<DeviceEvent> eventPool = new ArrayDeque<>();
    final List<ExpandableSegment> expandableSegments = new ArrayList<>();
    private final List<BooleanSupplier> freeMemoryCallbacks = new CopyOnWriteArrayList<>();
    private final List<OutOfMemoryObserver> oomObservers = new CopyOnWriteArrayList<>();
    final List<OomRejectionObserver> oomRejectionObservers = new CopyOnWriteArrayList<>();
    /** Reserve classes of tagged streams (PyTorch's per-stream map); untagged streams have class "". */
    final Map<Long, String> reserveClasses = new HashMap<>();
    /** Reserve classes already warned about (no entry of their own in the by-class list), as upstream warns once. */
    private final Set<String> warnedReserveClasses = new HashSet<>();
    /** The request a malloc carries through the search and alloc_block, reused (PyTorch's AllocParams). */
    private final AllocParams allocParams = new AllocParams();

    long totalAllocatedMemory;
    /**
     * Device-level calls for the common stats: every malloc and every map call, every free and every unmap call,
     * as PyTorch's {@code num_device_alloc}/{@code num_device_free} count them (a map of several pages is one call),
     * plus the frees and unmaps made by {@code close()}, which PyTorch never makes.
     */
    long deviceCalls;
    private long deviceReleases;
    boolean setFraction;
    long allowedMemoryMaximum;
    private int nextExpandableId;

    // Figures the common stats need beyond PyTorch's (requested bytes of allocated blocks, not of active ones).
    private long requestedAllocated;
    private long peakRequestedAllocated;
    private long largestRequest;

    private record PendingEvent(DeviceEvent event, int block) {
    }

    /** The warm-start restore of replays, handed out by {@link #unwrap}. */
    private final CachingArenaRestore restore = new CachingArenaRestore(this);

    CachingArena(DeviceMemory device, boolean ownsDevice, CachingOptions options) {
        this(device, ownsDevice, options, AllocatorListener.NONE);
    }

    CachingArena(DeviceMemory device, boolean ownsDevice, CachingOptions options, AllocatorListener listener) {
        // Told of the retries PyTorch counts and of every release of cached memory (see the class documentation).
        super(device, ownsDevice, listener);
        this.options = CachingConfig.forDevice(Objects.requireNonNull(options, "options"), device);
        this.sizes = new SizeRules(this.options);
        this.maxSplitSize = this.options.maxSplitSize();
        this.deviceTotal = device.descriptor().totalBytes();
        if (this.options.perProcessMemoryFraction() < 1.0) {
            setFraction = true;
            allowedMemoryMaximum = Math.round(this.options.perProcessMemoryFraction() * deviceTotal);
        }
    }

    /**
     * This allocator as {@code type}; as a {@link PyTorchStateRestore}, its {@link CachingArenaRestore}, so that a
     * replay reaches it through any decorator as before.
     */
    @Override
    public <T> Optional<T> unwrap(Class<T> type) {
        if (type == PyTorchStateRestore.class) {
            return Optional.of(type.cast(restore));
        }
        return super.unwrap(type);
    }

    /**
     * Takes the lock for a call of {@link CachingArenaRestore}, which works under it as the arena's own calls do: a
     * new call in the history when {@code beginsCall}, then the closed check. If the check throws, the lock is
     * released again; otherwise the caller releases it with {@link #unlockCall()}.
     */
    void lockCall(boolean beginsCall) {
        lock.lock();
        try {
            if (beginsCall) {
                trace.beginCall();
            }
            ensureOpen();
        } catch (RuntimeException e) {
            lock.unlock();
            throw e;
        }
    }

    /** Releases the lock {@link #lockCall} took. */
    void unlockCall() {
        lock.unlock();
    }

    BlockPool poolOf(int h) {
        return blocks.small[h] ? smallPool : largePool;
    }

    // ================================================================================================ malloc

    @Override
    public String name() {
        return CachingAllocatorProvider.NAME;
    }

    @Override
    public CachingOptions options() {
        return options;
    }

    @Override
    public long malloc(long size, DeviceStream stream) {
        if (isNullRequest(size, stream)) {
            return 0;
        }
        if (size >= MAX_REQUEST) {
            // PyTorch checks this before anything else, and counts nothing.
            MemoryInfo info = device().memoryInfo();
            throw new OutOfMemoryException(OutOfMemoryException.Reason.REQUEST_TOO_LARGE, device().descriptor().id(),
                    size, info.freeBytes(), info.totalBytes(), lockedReservedBytes(), lockedAllocatedBytes(), limit(),
                    "CUDA out of memory. Tried to allocate more than 1EB memory. (requested " + size + " bytes)");
        }
        OutOfMemoryException oom = null;
        long oomSegmentSize = 0;
        long[] rejection = null;
        lock.lock();
        try {
            trace.beginCall();
            ensureOpen();
            processEvents();
            long s = sizes.roundSize(size);
            BlockPool pool = SizeRules.isSmall(s) ? smallPool : largePool;
            long a = sizes.allocationSize(s);
            long st = stream.handle();
            AllocParams params = allocParams.reset(pool, st, s, a);

            int block = getFreeBlock(params);
            if (block == NONE && triggerFreeMemoryCallbacks()) {
                // A callback runs with the lock held and may have closed the allocator, or allocated with the params.
                ensureOpen();
                params.reset(pool, st, s, a);
                block = getFreeBlock(params);
            }
            ensureOpen();
            if (block == NONE) {
                if (setFraction && options.garbageCollectionThreshold() > 0.0) {
                    garbageCollectCachedBlocks();
                }
                block = allocBlock(params, false);
                // A refusal by throw_on_cudamalloc_oom skips the rest of the ladder, as upstream.
                if (block == NONE && !params.rejected && releaseAvailableCachedBlocks(params)) {
                    block = allocBlock(params, false);
                }
                if (block == NONE && !params.rejected) {
                    releaseCachedBlocks();
                    if (options.searchPoolAfterRelease()) {
                        // pytorch#191302: blocks whose frees waited on events are back in the pool now.
                        block = getFreeBlock(params);
                    }
                    if (block == NONE) {
                        // Once per request at most, as num_alloc_retries counts: after release_cached_blocks.
                        tellRetried(size, RetryCause.CACHE_RELEASED);
                        block = allocBlock(params, true);
                    }
                }
            }
            if (block != NONE) {
                return allocFoundBlock(block, pool, st, s, size);
            }
            if (params.rejected) {
                oom = CachingArenaReports.rejection(this, size);
                rejection = new long[] {a, params.totalAtRejection};
            } else {
                oom = CachingArenaReports.outOfMemory(this, size, s, a, st);
                oomSegmentSize = a;
            }
        } finally {
            lock.unlock();
        }
        if (rejection != null) {
            CachingArenaReports.notifyRejection(this, rejection[0], rejection[1]);
            throw oom;
        }
        // As upstream, observers run after the lock is released: they may use the allocator.
        long allowed = oom.limitBytes() == Long.MAX_VALUE ? oom.deviceTotalBytes() : oom.limitBytes();
        for (OutOfMemoryObserver o : oomObservers) {
            o.onOutOfMemory(device().descriptor().index(), oomSegmentSize, allowed, oom.deviceFreeBytes());
        }
        throw oom;
    }


    /** PyTorch's {@code get_free_block}: best fit on the same stream, with the oversize rules. */
    private int getFreeBlock(AllocParams params) {
        BlockPool pool = params.pool;
        long stream = params.stream;
        long size = params.size;
        if (setFraction && options.garbageCollectionThreshold() > 0.0) {
            pool.freeBlocksCallCount++;
        }
        int i = pool.lowerBound(stream, size, 0);
        if (i == BlockPool.NO_NODE || blocks.stream[pool.blockAt(i)] != stream) {
            return NONE;
        }
        if (blocks.expandable[pool.blockAt(i)] != NONE) {
            if (options.expandableSegments()) {
                // A block followed by unmapped space can grow, so compare blocks by the size they can reach.
                int j = pool.nextFree(i);
                while (blocks.expandable[pool.blockAt(i)] != NONE && j != BlockPool.NO_NODE
                        && blocks.stream[pool.blockAt(j)] == stream
                        && expandableSize(pool.blockAt(j)) < expandableSize(pool.blockAt(i))) {
                    i = j;
                    j = pool.nextFree(j);
                }
            } else {
                do {
                    i = pool.nextFree(i);
                } while (i != BlockPool.NO_NODE && blocks.expandable[pool.blockAt(i)] != NONE
                        && blocks.stream[pool.blockAt(i)] == stream);
                if (i == BlockPool.NO_NODE || blocks.stream[pool.blockAt(i)] != stream) {
                    return NONE;
                }
            }
        }
        int h = pool.blockAt(i);
        long blockSize = blocks.size[h];
        if (size < maxSplitSize && blockSize >= maxSplitSize) {
            return NONE;
        }
        if (size >= maxSplitSize && blockSize >= size + options.maxNonSplitRounding()) {
            return NONE;
        }
        pool.removeNode(i);
        return h;
    }

    private long expandableSize(int h) {
        int n = blocks.next[h];
        return blocks.size[h] + (n != NONE && !blocks.mapped[n] ? blocks.size[n] : 0);
    }

    private boolean triggerFreeMemoryCallbacks() {
        boolean freed = false;
        for (BooleanSupplier callback : freeMemoryCallbacks) {
            freed |= callback.getAsBoolean();
        }
        return freed;
    }

    /** PyTorch's {@code alloc_block}: a new segment (or expandable mapping) of {@code a} bytes. */
    private int allocBlock(AllocParams params, boolean isRetry) {
        long a = params.allocSize;
        if (isRetry) {
            stats.numAllocRetries++;
        }
        if (setFraction && totalAllocatedMemory + a > allowedMemoryMaximum) {
            return NONE;
        }
        if (options.throwOnCudamallocOom()) {
            // Upstream reads the configured fraction here (1.0 when none), not the runtime limit, and truncates
            // where setMemoryFraction rounds; with a configured fraction below 1 the check above answers first.
            long maxAllowed = (long) (options.perProcessMemoryFraction() * (double) deviceTotal);
            if (totalAllocatedMemory + a > maxAllowed) {
                stats.numOomRejections++;
                params.reject(totalAllocatedMemory);
                CachingArenaReports.warnRejection(this, a, maxAllowed);
                return NONE;
            }
        }
        if (options.expandableSegments()) {
            return tryAllocateExpandableBlock(params.pool, params.stream, params.size);
        }
        return mallocSegment(params.pool, params.stream, a);
    }

    /**
     * The device malloc of {@code alloc_block} and its bookkeeping (total, stats, history): a new segment of
     * {@code bytes} as one free block, not yet in the pool. Also how a restored segment is made.
     *
     * @return the block, or {@link BlockTable#NONE} when the device has no memory
     */
    int mallocSegment(BlockPool pool, long stream, long bytes) {
        long ptr = device().malloc(bytes);
        if (ptr == DeviceMemory.NULL) {
            return NONE;
        }
        totalAllocatedMemory += bytes;
        deviceCalls++;
        int h = blocks.create(ptr, bytes, stream, pool.small);
        stats.increase(Metric.SEGMENT, pool.small, 1);
        stats.increase(Metric.RESERVED_BYTES, pool.small, bytes);
        if (bytes >= maxSplitSize) {
            DeviceStats.increase(stats.oversizeSegments, 0, 1);
        }
        stats.numDeviceAlloc++;
        trace.record(TraceAction.SEGMENT_ALLOC, ptr, bytes, stream);
        return h;
    }

    /**
     * PyTorch's {@code release_available_cached_blocks}: free oversize cached blocks on this stream. The listener is
     * told when it gave something back (it runs on cache misses: a release of nothing would be noise).
     */
    private boolean releaseAvailableCachedBlocks(AllocParams params) {
        if (maxSplitSize == Long.MAX_VALUE) {
            return false;
        }
        long reservedBefore = totalAllocatedMemory;
        long start = startRelease();
        try {
            return releaseOversizeBlocks(params.pool, params.stream, params.size);
        } finally {
            endRelease(start, reservedBefore - totalAllocatedMemory, false);
        }
    }

    private boolean releaseOversizeBlocks(BlockPool pool, long stream, long s) {
        long key = Math.max(s, maxSplitSize);
        int i = pool.lowerBound(stream, key, 0);
        if (i == BlockPool.NO_NODE || blocks.stream[pool.blockAt(i)] != stream
                || blocks.expandable[pool.blockAt(i)] != NONE) {
            // No single block is large enough: free oversize blocks from the largest down.
            i = i == BlockPool.NO_NODE ? pool.lastFree() : pool.prevFree(i);
            if (i == BlockPool.NO_NODE) {
                return false;
            }
            long released = 0;
            while (released < key && i != BlockPool.NO_NODE && blocks.size[pool.blockAt(i)] >= maxSplitSize
                    && blocks.stream[pool.blockAt(i)] == stream) {
                int h = pool.blockAt(i);
                // Step before releasing: the node leaves the pool with its block.
                i = pool.prevFree(i);
                if (blocks.expandable[h] == NONE) {
                    released += blocks.size[h];
                    releaseBlock(h);
                }
            }
            return released >= key;
        }
        releaseBlock(pool.blockAt(i));
        return true;
    }

    /**
     * PyTorch's {@code release_cached_blocks}: sync every event, then free every unsplit cached block. Every run is
     * told to the listener, a release of nothing too (it waited for every pending event, which is what it costs).
     */
    private void releaseCachedBlocks() {
        // What the listener is told is what the device got back (whole segments freed, pages unmapped).
        long reservedBefore = totalAllocatedMemory;
        long start = startRelease();
        try {
            synchronizeAndFreeEvents();
            releaseBlocks(largePool);
            releaseBlocks(smallPool);
        } finally {
            endRelease(start, reservedBefore - totalAllocatedMemory, true);
        }
    }

    private void releaseBlocks(BlockPool pool) {
        List<Integer> toUnmap = null;
        int i = pool.firstFree();
        while (i != BlockPool.NO_NODE) {
            int h = pool.blockAt(i);
            // Step before releasing: the node leaves the pool with its block.
            i = pool.nextFree(i);
            if (blocks.expandable[h] != NONE) {
                if (toUnmap == null) {
                    toUnmap = new ArrayList<>();
                }
                toUnmap.add(h);
            } else if (!blocks.isSplit(h)) {
                releaseBlock(h);
            }
        }
        if (toUnmap != null) {
            for (int h : toUnmap) {
                unmapBlock(h);
                if (!blocks.isSplit(h)) {
                    releaseExpandableSegment(h);
                }
            }
        }
    }

    /** PyTorch's {@code release_block}: cudaFree a whole cached segment. */
    private void releaseBlock(int h) {
        BlockPool pool = poolOf(h);
        long size = blocks.size[h];
        // The device call first, as upstream: if it fails, the segment is still whole and cached.
        device().free(blocks.ptr[h]);
        deviceReleases++;
        stats.numDeviceFree++;
        trace.record(TraceAction.SEGMENT_FREE, blocks.ptr[h], size, blocks.stream[h]);
        pool.remove(h);
        totalAllocatedMemory -= size;
        stats.decrease(Metric.SEGMENT, pool.small, 1);
        stats.decrease(Metric.RESERVED_BYTES, pool.small, size);
        if (size >= maxSplitSize) {
            DeviceStats.decrease(stats.oversizeSegments, 0, 1);
        }
        blocks.delete(h);
    }

    /**
     * PyTorch's {@code garbage_collect_cached_blocks}: free old unsplit large blocks down to the threshold. Told to
     * the listener when it gave something back (it runs on every cache miss with a threshold set).
     */
    private void garbageCollectCachedBlocks() {
        long reservedBefore = totalAllocatedMemory;
        long start = startRelease();
        try {
            releaseOldBlocks();
        } finally {
            endRelease(start, reservedBefore - totalAllocatedMemory, false);
        }
    }

    private void releaseOldBlocks() {
        long threshold = (long) (options.garbageCollectionThreshold() * allowedMemoryMaximum);
        if (totalAllocatedMemory <= threshold) {
            return;
        }
        long target = totalAllocatedMemory - threshold;
        long reclaimed = 0;
        long totalAge = 0;
        int freeable = 0;
        for (int i = largePool.firstFree(); i != BlockPool.NO_NODE; i = largePool.nextFree(i)) {
            int h = largePool.blockAt(i);
            if (!blocks.isSplit(h)) {
                totalAge += largePool.freeBlocksCallCount - blocks.gcCountBase[h];
                freeable++;
            }
        }
        if (freeable == 0) {
            return;
        }
        boolean freed = true;
        while (reclaimed < target && freed && freeable > 0) {
            double ageThreshold = (double) totalAge / freeable;
            freed = false;
            int i = largePool.firstFree();
            while (i != BlockPool.NO_NODE) {
                int h = largePool.blockAt(i);
                // Step before releasing: the node leaves the pool with its block.
                i = largePool.nextFree(i);
                long age = largePool.freeBlocksCallCount - blocks.gcCountBase[h];
                if (!blocks.isSplit(h) && blocks.expandable[h] == NONE && age >= ageThreshold) {
                    freed = true;
                    reclaimed += blocks.size[h];
                    totalAge -= age;
                    freeable--;
                    releaseBlock(h);
                }
            }
        }
    }

    /** PyTorch's {@code should_split}. */
    private boolean shouldSplit(int h, long size) {
        long remaining = blocks.size[h] - size;
        if (blocks.small[h] || options.expandableSegments()) {
            return remaining >= MIN_BLOCK_SIZE;
        }
        return size < maxSplitSize && remaining > SMALL_SIZE;
    }

    /** PyTorch's {@code alloc_found_block}: split off the low part if worth it, and account. */
    private long allocFoundBlock(int h, BlockPool pool, long stream, long size, long requested) {
        boolean alreadySplit = blocks.isSplit(h);
        boolean expandable = blocks.expandable[h] != NONE;
        int block = h;
        if (shouldSplit(h, size)) {
            int remaining = h;
            block = blocks.create(blocks.ptr[remaining], size, stream, pool.small);
            blocks.expandable[block] = blocks.expandable[remaining];
            int before = blocks.prev[remaining];
            blocks.prev[block] = before;
            if (before != NONE) {
                blocks.next[before] = block;
            }
            blocks.next[block] = remaining;
            blocks.prev[remaining] = block;
            blocks.ptr[remaining] += size;
            blocks.size[remaining] -= size;
            pool.insert(remaining);
            if (alreadySplit && !expandable) {
                stats.decrease(Metric.INACTIVE_SPLIT_BYTES, pool.small, size);
            } else if (!expandable) {
                stats.increase(Metric.INACTIVE_SPLIT_BYTES, pool.small, blocks.size[remaining]);
                stats.increase(Metric.INACTIVE_SPLIT, pool.small, 1);
            }
        } else if (alreadySplit && !expandable) {
            stats.decrease(Metric.INACTIVE_SPLIT_BYTES, pool.small, blocks.size[block]);
            stats.decrease(Metric.INACTIVE_SPLIT, pool.small, 1);
        }
        blocks.allocated[block] = true;
        blocks.requested[block] = requested;
        long ptr = blocks.ptr[block];
        trace.record(TraceAction.ALLOC, ptr, requested, stream);
        allocatedBlocks.put(ptr, block, -1);
        countAllocation(pool.small, blocks.size[block], requested);
        return ptr;
    }

    /** The stats of a block handed out (or restored as allocated): PyTorch's and the common ones. */
    void countAllocation(boolean small, long blockSize, long requested) {
        stats.increase(Metric.ALLOCATION, small, 1);
        stats.increase(Metric.ALLOCATED_BYTES, small, blockSize);
        stats.increase(Metric.ACTIVE, small, 1);
        stats.increase(Metric.ACTIVE_BYTES, small, blockSize);
        stats.increase(Metric.REQUESTED_BYTES, small, requested);
        if (blockSize >= maxSplitSize) {
            DeviceStats.increase(stats.oversizeAllocations, 0, 1);
        }
        requestedAllocated += requested;
        peakRequestedAllocated = Math.max(peakRequestedAllocated, requestedAllocated);
        largestRequest = Math.max(largestRequest, requested);
    }

    // ================================================================================================ free

    /** Every free is a call of the history, begun before the open check. */
    @Override
    protected void beginFreeLocked() {
        trace.beginCall();
    }

    /** The allocated block's handle (PyTorch's active block map). */
    @Override
    protected long liveAllocation(long address) {
        return allocatedBlocks.get(address, NOT_LIVE);
    }

    /** Allocation ids are the handle and a per-handle generation, packed: unique while the block lives. */
    private final LongLongHashMap allocationIds = new LongLongHashMap(1024);
    private long nextAllocationId = 1;

    /** The id issued for the block, or -1 when none was asked for (ids are issued on first request). */
    @Override
    protected long allocationIdOf(long allocation) {
        return allocationIds.get(allocation + 1, -1);
    }

    @Override
    protected long issueAllocationId(long allocation) {
        long id = allocationIdOf(allocation);
        if (id < 0) {
            id = nextAllocationId++;
            allocationIds.put(allocation + 1, id, -1);
        }
        return id;
    }

    @Override
    protected void releaseAllocation(long address, long allocation) {
        freeAllocated((int) allocation);
    }

    /** PyTorch's {@code free}: account, then free now or after the recorded streams' events. */
    private void freeAllocated(int h) {
        if (blocks.hasStreamUses[h]) {
            // Before any state changes, so that a device failure leaves the allocation live.
            insertEvents(h);
        }
        long ptr = blocks.ptr[h];
        allocatedBlocks.remove(ptr, -1);
        allocationIds.remove(h + 1L, -1);
        boolean small = blocks.small[h];
        long size = blocks.size[h];
        blocks.allocated[h] = false;
        stats.decrease(Metric.ALLOCATION, small, 1);
        stats.decrease(Metric.ALLOCATED_BYTES, small, size);
        trace.record(TraceAction.FREE_REQUESTED, ptr, blocks.requested[h], blocks.stream[h]);
        if (size >= maxSplitSize) {
            DeviceStats.decrease(stats.oversizeAllocations, 0, 1);
        }
        requestedAllocated -= blocks.requested[h];
        if (blocks.eventCount[h] == 0) {
            freeBlock(h);
        }
    }

    /** PyTorch's {@code free_block}: merge with free neighbours and return to the pool. */
    private void freeBlock(int h) {
        trace.record(TraceAction.FREE_COMPLETED, blocks.ptr[h], blocks.requested[h], blocks.stream[h]);
        BlockPool pool = poolOf(h);
        long originalSize = blocks.size[h];
        long requested = blocks.requested[h];
        long netBlocks = 0;
        long netBytes = 0;
        long subsumed = tryMergeBlocks(h, blocks.prev[h], pool);
        if (subsumed > 0) {
            netBlocks--;
            netBytes -= subsumed;
        }
        subsumed = tryMergeBlocks(h, blocks.next[h], pool);
        if (subsumed > 0) {
            netBlocks--;
            netBytes -= subsumed;
        }
        pool.insert(h);
        if (blocks.isSplit(h)) {
            netBlocks++;
            netBytes += blocks.size[h];
        }
        boolean small = pool.small;
        if (blocks.expandable[h] == NONE) {
            if (netBlocks > 0) {
                stats.increase(Metric.INACTIVE_SPLIT, small, netBlocks);
            } else if (netBlocks < 0) {
                stats.decrease(Metric.INACTIVE_SPLIT, small, -netBlocks);
            }
            if (netBytes > 0) {
                stats.increase(Metric.INACTIVE_SPLIT_BYTES, small, netBytes);
            } else if (netBytes < 0) {
                stats.decrease(Metric.INACTIVE_SPLIT_BYTES, small, -netBytes);
            }
        }
        stats.decrease(Metric.ACTIVE, small, 1);
        stats.decrease(Metric.ACTIVE_BYTES, small, originalSize);
        stats.decrease(Metric.REQUESTED_BYTES, small, requested);
    }

    /**
     * PyTorch's {@code try_merge_blocks}: absorb {@code src} into {@code dst} if it is free, has no pending events
     * or stream uses, and has the same mapped state. Returns the bytes absorbed.
     */
    private long tryMergeBlocks(int dst, int src, BlockPool pool) {
        if (src == NONE || blocks.allocated[src] || blocks.eventCount[src] > 0 || blocks.hasStreamUses[src]
                || blocks.mapped[dst] != blocks.mapped[src]) {
            return 0;
        }
        // Remove from its set before its key (size, address) changes.
        if (blocks.mapped[src]) {
            pool.remove(src);
        } else {
            pool.removeUnmapped(src);
        }
        if (blocks.prev[dst] == src) {
            blocks.ptr[dst] = blocks.ptr[src];
            int before = blocks.prev[src];
            blocks.prev[dst] = before;
            if (before != NONE) {
                blocks.next[before] = dst;
            }
        } else {
            int after = blocks.next[src];
            blocks.next[dst] = after;
            if (after != NONE) {
                blocks.prev[after] = dst;
            }
        }
        long subsumed = blocks.size[src];
        blocks.size[dst] += subsumed;
        blocks.delete(src);
        return subsumed;
    }

    @Override
    protected void recordStreamLocked(long allocation, DeviceStream stream) {
        int h = (int) allocation;
        long s = stream.handle();
        if (s == blocks.stream[h]) {
            return;
        }
        streamUses.add(h, s);
        blocks.hasStreamUses[h] = true;
    }

    /**
     * PyTorch's {@code insert_events}: one event per stream that used the block. A stream the device no longer has
     * (destroyed since {@code recordStream}) gets no event, which could never be recorded on it: the device is
     * synchronised instead, once, which waits for the work it had queued (see the package documentation).
     */
    private void insertEvents(int h) {
        long[] uses = streamUses.get(h);
        // Record every event first: if the device refuses one, the events go back to the pool and the caller's
        // free fails with nothing changed.
        DeviceEvent[] recorded = new DeviceEvent[uses.length];
        long[] recordedOn = new long[uses.length];
        int n = 0;
        boolean waitForDevice = false;
        try {
            for (long s : uses) {
                DeviceEvent e = eventPool.isEmpty() ? device().createEvent() : eventPool.pollFirst();
                recorded[n] = e;
                recordedOn[n++] = s;
                DeviceStream stream = new DeviceStream(s);
                try {
                    device().recordEvent(e, stream);
                } catch (RuntimeException ex) {
                    if (device().hasStream(stream)) {
                        throw ex;
                    }
                    eventPool.addLast(recorded[--n]);
                    waitForDevice = true;
                }
            }
            if (waitForDevice) {
                device().synchronize();
            }
        } catch (RuntimeException ex) {
            for (int i = 0; i < n; i++) {
                eventPool.addLast(recorded[i]);
            }
            throw ex;
        }
        streamUses.remove(h);
        blocks.hasStreamUses[h] = false;
        for (int i = 0; i < n; i++) {
            blocks.eventCount[h]++;
            pendingEvents.computeIfAbsent(recordedOn[i], k -> new ArrayDeque<>())
                    .addLast(new PendingEvent(recorded[i], h));
        }
    }

    /** PyTorch's {@code process_events}: complete the deferred frees whose events are done, per stream in order. */
    private void processEvents() {
        if (pendingEvents.isEmpty()) {
            return;
        }
        Iterator<Map.Entry<Long, ArrayDeque<PendingEvent>>> it = pendingEvents.entrySet().iterator();
        while (it.hasNext()) {
            ArrayDeque<PendingEvent> queue = it.next().getValue();
            while (!queue.isEmpty()) {
                PendingEvent p = queue.peekFirst();
                if (!device().isEventComplete(p.event())) {
                    break;
                }
                queue.pollFirst();
                eventPool.addLast(p.event());
                if (--blocks.eventCount[p.block()] == 0) {
                    freeBlock(p.block());
                }
            }
            if (queue.isEmpty()) {
                it.remove();
            }
        }
    }

    /** PyTorch's {@code synchronize_and_free_events}. */
    private void synchronizeAndFreeEvents() {
        stats.numSyncAllStreams++;
        Iterator<Map.Entry<Long, ArrayDeque<PendingEvent>>> it = pendingEvents.entrySet().iterator();
        while (it.hasNext()) {
            ArrayDeque<PendingEvent> queue = it.next().getValue();
            while (!queue.isEmpty()) {
                PendingEvent p = queue.peekFirst();
                // Only once the wait succeeded is the entry taken off: a failure leaves it queued, once.
                device().synchronizeEvent(p.event());
                queue.pollFirst();
                eventPool.addLast(p.event());
                if (--blocks.eventCount[p.block()] == 0) {
                    freeBlock(p.block());
                }
            }
            it.remove();
        }
    }

    // ================================================================================================ expandable

    private ExpandableSegment segment(int id) {
        for (ExpandableSegment es : expandableSegments) {
            if (es.id == id) {
                return es;
            }
        }
        throw new IllegalStateException("no expandable segment " + id);
    }

    /** PyTorch's {@code find_expandable_block}. */
    private int findExpandableBlock(BlockPool pool, long stream, long size) {
        for (int i = pool.firstUnmapped(stream, Long.MIN_VALUE); i != BlockPool.NO_NODE
                && blocks.stream[pool.unmappedAt(i)] == stream; i = pool.nextUnmapped(i)) {
            int c = pool.unmappedAt(i);
            if (blocks.isAllocatable(blocks.prev[c])) {
                c = blocks.prev[c];
            }
            long bytes = 0;
            for (int b = c; bytes < size && blocks.isAllocatable(b); b = blocks.next[b]) {
                bytes += blocks.size[b];
            }
            if (bytes >= size) {
                return c;
            }
        }
        long pageSize = pool.small ? SMALL_BUFFER : options.largeSegmentSize();
        long pagesNeeded = (segmentReserve(stream) + pageSize - 1) / pageSize;
        if (pagesNeeded * pageSize < size) {
            // One allocation cannot span segments. Upstream creates the segment and deletes it at once; devalloc
            // does not reserve the address space it would give back (nothing else observable differs).
            return NONE;
        }
        long reservation = pagesNeeded * pageSize;
        long granule = device().virtualMemory().orElseThrow().granularity();
        reservation = (reservation + granule - 1) / granule * granule;
        long base = device().virtualMemory().orElseThrow().reserve(reservation);
        if (base == 0) {
            return NONE;
        }
        return addExpandableSegment(pool, stream, base, pageSize, pagesNeeded * pageSize);
    }

    /**
     * A segment over the address range reserved at {@code base}, nothing mapped yet: one unmapped block of
     * {@code size} bytes in {@code pool}'s unmapped ranges. Also how a restored expandable segment is made.
     */
    int addExpandableSegment(BlockPool pool, long stream, long base, long pageSize, long size) {
        ExpandableSegment es = new ExpandableSegment(nextExpandableId++, device(), stream, pool.small, base, pageSize,
                size);
        expandableSegments.add(es);
        int h = blocks.create(base, es.size, stream, pool.small);
        blocks.mapped[h] = false;
        blocks.expandable[h] = es.id;
        pool.insertUnmapped(h);
        return h;
    }

    /**
     * The address space a new expandable segment of {@code stream} reserves: 9/8 of the device's memory, or the
     * configured reserve of the stream's class, clamped to that (upstream's {@code ExpandableSegment} constructor).
     * At least one byte, so that a reserve that resolves to 0 still gives one page.
     */
    long segmentReserve(long stream) {
        long full = deviceTotal + deviceTotal / 8;
        String reserveClass = reserveClasses.getOrDefault(stream, "");
        ExpandableSegmentReserve.Decision d = options.expandableSegmentsReserve().decision(reserveClass, deviceTotal);
        if (d.reserveBytes() >= 0 && !reserveClass.isEmpty() && !d.classKnown()
                && warnedReserveClasses.add(reserveClass)) {
            LOG.warn("expandable_segments reserve class '{}' has no configured reserve in"
                    + " expandable_segments_reserve_by_class; using the default reserve.", reserveClass);
        }
        return Math.max(1, ExpandableSegmentReserve.clamp(d, full));
    }

    /** PyTorch's {@code try_allocate_expandable_block}. */
    private int tryAllocateExpandableBlock(BlockPool pool, long stream, long size) {
        int candidate = findExpandableBlock(pool, stream, size);
        if (candidate == NONE) {
            return NONE;
        }
        if (!blocks.mapped[candidate] && !mapBlock(candidate, Math.min(blocks.size[candidate], size))) {
            return NONE;
        }
        while (blocks.size[candidate] < size) {
            long remaining = size - blocks.size[candidate];
            int next = blocks.next[candidate];
            if (!mapBlock(next, Math.min(remaining, blocks.size[next]))) {
                return NONE;
            }
            candidate = next;
        }
        pool.remove(candidate);
        return candidate;
    }

    /** PyTorch's {@code map_block}: map pages at the start of an unmapped range and merge with free neighbours. */
    private boolean mapBlock(int h, long size) {
        ExpandableSegment es = segment(blocks.expandable[h]);
        long mapped = es.map(blocks.ptr[h], size);
        if (mapped == 0) {
            return false;
        }
        deviceCalls++;
        BlockPool pool = poolOf(h);
        pool.removeUnmapped(h);
        blocks.mapped[h] = true;
        long start = blocks.ptr[h];
        if (mapped < blocks.size[h]) {
            int rest = blocks.create(start + mapped, blocks.size[h] - mapped, blocks.stream[h], blocks.small[h]);
            blocks.mapped[rest] = false;
            blocks.expandable[rest] = blocks.expandable[h];
            splice(rest, h, blocks.next[h]);
            pool.insertUnmapped(rest);
            blocks.size[h] = mapped;
        }
        addMapped(h, pool, start, mapped);
        return true;
    }

    /**
     * The end of {@code map_block}, once block {@code h} covers the {@code mapped} bytes just mapped at
     * {@code start}: merged with free mapped neighbours, back in the pool, and counted (reserved bytes, one
     * {@code num_device_alloc}, one history entry). Also how a restored mapped range is counted.
     */
    void addMapped(int h, BlockPool pool, long start, long mapped) {
        tryMergeBlocks(h, blocks.prev[h], pool);
        tryMergeBlocks(h, blocks.next[h], pool);
        pool.insert(h);
        totalAllocatedMemory += mapped;
        stats.increase(Metric.RESERVED_BYTES, pool.small, mapped);
        stats.numDeviceAlloc++;
        trace.record(TraceAction.SEGMENT_MAP, start, mapped, blocks.stream[h]);
    }

    /** Links {@code h} between {@code before} and {@code after}. */
    void splice(int h, int before, int after) {
        blocks.prev[h] = before;
        blocks.next[h] = after;
        if (before != NONE) {
            blocks.next[before] = h;
        }
        if (after != NONE) {
            blocks.prev[after] = h;
        }
    }

    /** PyTorch's {@code unmap_block}: unmap the whole pages inside a free expandable block. */
    private void unmapBlock(int h) {
        ExpandableSegment es = segment(blocks.expandable[h]);
        long[] range = es.pagesInside(blocks.ptr[h], blocks.size[h]);
        long unmappedStart = range[0];
        long unmappedSize = range[1];
        if (unmappedSize == 0) {
            return;
        }
        // The wait first: if it fails, nothing was unmapped, so nothing changes and the failure is reported.
        es.synchronizeStream();
        RuntimeException failure = null;
        try {
            es.unmap(unmappedStart, unmappedSize);
        } catch (IllegalArgumentException refused) {
            // Refused arguments change nothing (the port's rule).
            throw refused;
        } catch (RuntimeException e) {
            // Any other failure leaves the range unmapped (the port's rule: its memory may be lost): account it so,
            // so that the books keep equalling the device and the pages are never handed out unmapped, then report it.
            failure = e;
        }
        deviceReleases++;
        BlockPool pool = poolOf(h);
        pool.remove(h);
        long beforeSize = unmappedStart - blocks.ptr[h];
        if (beforeSize > 0) {
            int before = blocks.create(blocks.ptr[h], beforeSize, blocks.stream[h], blocks.small[h]);
            blocks.expandable[before] = blocks.expandable[h];
            splice(before, blocks.prev[h], h);
            pool.insert(before);
        }
        long afterSize = blocks.size[h] - (beforeSize + unmappedSize);
        if (afterSize > 0) {
            int after = blocks.create(unmappedStart + unmappedSize, afterSize, blocks.stream[h], blocks.small[h]);
            blocks.expandable[after] = blocks.expandable[h];
            splice(after, h, blocks.next[h]);
            pool.insert(after);
        }
        blocks.ptr[h] = unmappedStart;
        blocks.size[h] = unmappedSize;
        blocks.mapped[h] = false;
        tryMergeBlocks(h, blocks.prev[h], pool);
        tryMergeBlocks(h, blocks.next[h], pool);
        pool.insertUnmapped(h);
        totalAllocatedMemory -= unmappedSize;
        stats.decrease(Metric.RESERVED_BYTES, pool.small, unmappedSize);
        stats.numDeviceFree++;
        trace.record(TraceAction.SEGMENT_UNMAP, unmappedStart, unmappedSize, blocks.stream[h]);
        if (failure != null) {
            throw failure;
        }
    }

    /** PyTorch's {@code release_expandable_segment}: the whole range is unmapped again; give it back. */
    private void releaseExpandableSegment(int h) {
        ExpandableSegment es = segment(blocks.expandable[h]);
        // The device call first: if it fails, the segment stays as it was (whole and unmapped) for a later release.
        device().virtualMemory().orElseThrow().release(es.base);
        poolOf(h).removeUnmapped(h);
        expandableSegments.remove(es);
        blocks.delete(h);
    }

    // ================================================================================================ controls

    @Override
    public void releaseCachedMemory() {
        emptyCache();
    }

    @Override
    public void emptyCache() {
        lock.lock();
        try {
            trace.beginCall();
            ensureOpen();
            releaseCachedBlocks();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setPerProcessMemoryFraction(double fraction) {
        if (!(fraction >= 0.0 && fraction <= 1.0)) {
            throw new IllegalArgumentException("Invalid fraction value: " + fraction + ". Allowed range: 0~1");
        }
        lock.lock();
        try {
            ensureOpen();
            // Upstream's setMemoryFraction: rounded, and a fraction of 1 means no limit.
            allowedMemoryMaximum = Math.round(fraction * deviceTotal);
            setFraction = fraction < 1.0;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public double perProcessMemoryFraction() {
        lock.lock();
        try {
            return setFraction ? (double) allowedMemoryMaximum / deviceTotal : 1.0;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void registerFreeMemoryCallback(BooleanSupplier callback) {
        freeMemoryCallbacks.add(Objects.requireNonNull(callback, "callback"));
    }

    @Override
    public void registerOutOfMemoryObserver(OutOfMemoryObserver observer) {
        oomObservers.add(Objects.requireNonNull(observer, "observer"));
    }

    @Override
    public void registerOomRejectionObserver(OomRejectionObserver observer) {
        oomRejectionObservers.add(Objects.requireNonNull(observer, "observer"));
    }

    @Override
    public void setExpandableSegmentReserveClass(DeviceStream stream, String reserveClass) {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(reserveClass, "reserveClass");
        lock.lock();
        try {
            ensureOpen();
            if (reserveClass.isEmpty()) {
                reserveClasses.remove(stream.handle());
            } else {
                reserveClasses.put(stream.handle(), reserveClass);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String expandableSegmentReserveClass(DeviceStream stream) {
        return copyLocked(() -> reserveClasses.getOrDefault(stream.handle(), ""));
    }

    @Override
    public void recordHistory(int maxEntries) {
        runLocked(() -> trace.configure(maxEntries));
    }

    @Override
    public List<TraceEntry> history() {
        return copyLocked(trace::entries);
    }

    // ================================================================================================ stats

    private long lockedAllocatedBytes() {
        return readLocked(() -> stats.get(Metric.ALLOCATED_BYTES, DeviceStats.ALL, DeviceStats.CURRENT));
    }

    private long lockedReservedBytes() {
        return readLocked(() -> stats.get(Metric.RESERVED_BYTES, DeviceStats.ALL, DeviceStats.CURRENT));
    }

    /** {@code reserved_bytes.all.current}, read without the lock (see the class documentation). */
    @Override
    public long reservedBytes() {
        return stats.get(Metric.RESERVED_BYTES, DeviceStats.ALL, DeviceStats.CURRENT);
    }

    /** {@code allocated_bytes.all.current}, read without the lock (see the class documentation). */
    @Override
    public long allocatedBytes() {
        return stats.get(Metric.ALLOCATED_BYTES, DeviceStats.ALL, DeviceStats.CURRENT);
    }

    /** The requested bytes of allocated blocks, as {@link #stats()} reports them, read without the lock. */
    @Override
    public long requestedBytes() {
        return requestedAllocated;
    }

    /** {@code round_size}. */
    @Override
    public long roundedSize(long requested) {
        return sizes.roundSize(requested);
    }

    /** The page of the expandable segment holding {@code address}: 2 MiB or {@code large_segment_size}; else 0. */
    @Override
    public long mappedPageBytes(long address) {
        lock.lock();
        try {
            for (ExpandableSegment e : expandableSegments) {
                if (e.holds(address)) {
                    return e.pageSize;
                }
            }
            return 0;
        } finally {
            lock.unlock();
        }
    }

    long limit() {
        return setFraction ? allowedMemoryMaximum : Long.MAX_VALUE;
    }

    @Override
    public Map<String, Long> memoryStats() {
        return copyLocked(() -> stats.memoryStats(maxSplitSize));
    }

    @Override
    public String memorySummary(boolean abbreviated) {
        Map<String, Long> m = memoryStats();
        return MemorySummaryFormat.format(m, device().descriptor().index(), abbreviated);
    }

    @Override
    public void resetAccumulatedStats() {
        runLocked(stats::resetAccumulated);
    }

    @Override
    public void resetPeakStats() {
        runLocked(() -> {
            stats.resetPeaks();
            peakRequestedAllocated = requestedAllocated;
            largestRequest = 0;
        });
    }

    private long largestFreeLocked() {
        long largest = 0;
        for (BlockPool pool : new BlockPool[] {smallPool, largePool}) {
            for (int i = pool.firstFree(); i != BlockPool.NO_NODE; i = pool.nextFree(i)) {
                largest = Math.max(largest, blocks.size[pool.blockAt(i)]);
            }
        }
        return largest;
    }

    @Override
    public AllocatorStats stats() {
        lock.lock();
        try {
            int all = DeviceStats.ALL;
            return AllocatorStats.builder()
                    .allocationCount(stats.get(Metric.ALLOCATION, all, DeviceStats.ALLOCATED))
                    .freeCount(stats.get(Metric.ALLOCATION, all, DeviceStats.FREED))
                    .activeAllocations(stats.get(Metric.ALLOCATION, all, DeviceStats.CURRENT))
                    .peakActiveAllocations(stats.get(Metric.ALLOCATION, all, DeviceStats.PEAK))
                    .allocatedBytes(stats.get(Metric.ALLOCATED_BYTES, all, DeviceStats.CURRENT))
                    .peakAllocatedBytes(stats.get(Metric.ALLOCATED_BYTES, all, DeviceStats.PEAK))
                    .requestedBytes(requestedAllocated).peakRequestedBytes(peakRequestedAllocated)
                    .reservedBytes(stats.get(Metric.RESERVED_BYTES, all, DeviceStats.CURRENT))
                    .peakReservedBytes(stats.get(Metric.RESERVED_BYTES, all, DeviceStats.PEAK))
                    .largestAllocation(largestRequest).largestFreeBlock(largestFreeLocked())
                    .deviceMallocs(deviceCalls).deviceFrees(deviceReleases)
                    .allocationRetries(stats.numAllocRetries)
                    .outOfMemoryErrors(stats.numOoms + stats.numOomRejections)
                    .limitBytes(limit())
                    .build();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The gauges: "all", then {@code small} and {@code large}, each PyTorch's {@code memory_stats()} current
     * figures for that pool ({@code reserved_bytes}, {@code allocated_bytes}, {@code active_bytes},
     * {@code requested_bytes}, {@code inactive_split_bytes}), read together under the lock. PyTorch's
     * {@code requested_bytes} is that of active blocks, so it includes blocks whose free waits on events, where
     * {@link #stats()}'s {@code requestedBytes} counts allocated blocks only.
     */
    @Override
    public List<PoolUsage> memoryUsage() {
        return copyLocked(() -> List.of(poolUsage(PoolUsage.ALL, DeviceStats.ALL),
                poolUsage("small", DeviceStats.SMALL), poolUsage("large", DeviceStats.LARGE)));
    }

    private PoolUsage poolUsage(String name, int type) {
        return new PoolUsage(name, stats.get(Metric.RESERVED_BYTES, type, DeviceStats.CURRENT),
                stats.get(Metric.ALLOCATED_BYTES, type, DeviceStats.CURRENT),
                stats.get(Metric.ACTIVE_BYTES, type, DeviceStats.CURRENT),
                stats.get(Metric.REQUESTED_BYTES, type, DeviceStats.CURRENT),
                stats.get(Metric.INACTIVE_SPLIT_BYTES, type, DeviceStats.CURRENT));
    }

    // ================================================================================================ snapshots

    /** Segment heads: every block with no previous block, in address order. */
    List<Integer> segmentHeads() {
        List<Integer> heads = new ArrayList<>();
        collectHeads(smallPool, heads);
        collectHeads(largePool, heads);
        for (long ptr : allocatedBlocks.sortedKeys()) {
            int h = (int) allocatedBlocks.get(ptr, -1);
            heads.add(h);
        }
        for (ArrayDeque<PendingEvent> q : pendingEvents.values()) {
            for (PendingEvent p : q) {
                heads.add(p.block());
            }
        }
        for (int h : streamUses.handles()) {
            heads.add(h);
        }
        // Every block is a candidate above (free, unmapped, allocated or waiting on events), so the heads are simply
        // the candidates with no previous block: linear, where walking back from each block would be quadratic.
        List<Integer> out = new ArrayList<>();
        BitSet seen = new BitSet();
        for (int h : heads) {
            if (blocks.prev[h] == NONE && !seen.get(h)) {
                seen.set(h);
                out.add(h);
            }
        }
        out.sort((a, b) -> Long.compare(blocks.ptr[a], blocks.ptr[b]));
        return out;
    }

    private static void collectHeads(BlockPool pool, List<Integer> heads) {
        for (int i = pool.firstFree(); i != BlockPool.NO_NODE; i = pool.nextFree(i)) {
            heads.add(pool.blockAt(i));
        }
        for (int i = pool.firstUnmappedNode(); i != BlockPool.NO_NODE; i = pool.nextUnmapped(i)) {
            heads.add(pool.unmappedAt(i));
        }
    }

    @Override
    public MemorySnapshot snapshot() {
        return copyLocked(() -> new MemorySnapshot(name(), device().descriptor(),
                SnapshotBuilder.segments(blocks, segmentHeads()), stats(), options.allocatorSettings()));
    }

    @Override
    public Map<String, Object> snapshotDict() {
        lock.lock();
        try {
            trace.beginCall();
            Map<String, Object> snapshot = SnapshotBuilder.dict(blocks, segmentHeads(), device().descriptor().index(),
                    trace.entries(), options.allocatorSettings());
            // PyTorch records a snapshot action (address 0, total active bytes) when history is on; it shows in the
            // history from the next snapshot on, so this one ends with the last real event.
            trace.record(TraceAction.SNAPSHOT, 0, stats.get(Metric.ACTIVE_BYTES, DeviceStats.ALL, DeviceStats.CURRENT),
                    0);
            return snapshot;
        } finally {
            lock.unlock();
        }
    }

    // ================================================================================================ inspection

    // Read access for the invariant checks of the tests (CachingInvariants), which run under the lock.

    /** Runs {@code inspection} with the lock held, so that it sees a consistent state. */
    void inspect(Runnable inspection) {
        lock.lock();
        try {
            inspection.run();
        } finally {
            lock.unlock();
        }
    }

    BlockTable blocks() {
        return blocks;
    }

    BlockPool smallPool() {
        return smallPool;
    }

    BlockPool largePool() {
        return largePool;
    }

    /** The handle of the allocated block at {@code address}, or -1. */
    int allocatedBlockAt(long address) {
        return (int) allocatedBlocks.get(address, -1);
    }

    DeviceStats deviceStats() {
        return stats;
    }

    /** PyTorch's {@code total_allocated_memory}: the bytes held from the device, mapped or malloc'ed. */
    long totalAllocatedMemory() {
        return totalAllocatedMemory;
    }

    // ================================================================================================ lifecycle

    /**
     * Gives every segment back (the blocks waiting on events included, found through the pending queues), unmaps
     * and releases every expandable segment and destroys the pooled events, counting each device free and unmap in
     * the common stats ({@code num_device_free} counts the frees, as PyTorch would, which never closes).
     */
    @Override
    protected void releaseAll(CloseFailures failures) {
        // The heads first: blocks waiting on events are found through the pending queues.
        List<Integer> heads = segmentHeads();
        for (ArrayDeque<PendingEvent> q : pendingEvents.values()) {
            for (PendingEvent p : q) {
                eventPool.addLast(p.event());
            }
        }
        pendingEvents.clear();
        for (int head : heads) {
            try {
                if (blocks.expandable[head] == NONE) {
                    device().free(blocks.ptr[head]);
                    stats.numDeviceFree++;
                    deviceReleases++;
                }
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        VirtualMemory vm = device().virtualMemory().orElse(null);
        for (ExpandableSegment es : expandableSegments) {
            int page = 0;
            while (page >= 0) {
                try {
                    page = es.unmapNextRun(vm, page);
                    if (page >= 0) {
                        deviceReleases++;
                    }
                } catch (RuntimeException e) {
                    // The run counts as unmapped (the port's rule); carry on with the next one.
                    failures.add(e);
                }
            }
            try {
                vm.release(es.base);
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        expandableSegments.clear();
        destroyEvents(eventPool, failures);
        allocatedBlocks.clear();
        // The books describe what is held, which is now nothing: stats() and snapshots after close say so (as bfc,
        // direct and caching-host do), keeping peaks and cumulative figures.
        smallPool.clear();
        largePool.clear();
        streamUses.clear();
        blocks.clear();
        stats.releasedAll();
        totalAllocatedMemory = 0;
        requestedAllocated = 0;
    }
}
