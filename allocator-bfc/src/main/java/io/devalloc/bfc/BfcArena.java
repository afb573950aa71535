package io.devalloc.bfc;

import static io.devalloc.bfc.ChunkTable.NONE;

import io.devalloc.api.collect.HandleStreams;
import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.internal.AlignedSizes;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.spi.AbstractDeviceAllocator;
import io.devalloc.api.spi.LiveBytes;
import io.devalloc.api.spi.SizeRounding;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.stats.PoolUsage;
import io.devalloc.api.units.ByteSize;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The BFC arena. The algorithm follows TensorFlow's {@code BFCAllocator} step for step (see the module's
 * package documentation for the deliberate deviations). One lock guards all state and the device calls run under
 * it, as upstream; retry waits happen outside it on a separate condition signalled by every free.
 *
 * <p>What every allocator repeats (the argument checks, size 0, the check that it is open, and the close that
 * returns everything once, then closes an owned device, throwing the first failure) comes from
 * {@link AbstractDeviceAllocator}, whose {@link AbstractDeviceAllocator#lock lock} is the arena's one lock; the
 * dumps, the out-of-memory log and the out-of-memory error are {@link BfcArenaDumps}'s. The fields those read are
 * package-private (as Netty's pool internals are), read only with the lock held, and written only here; the tests'
 * invariant checker reads them too.
 *
 * <p>Capabilities for replays (reached with {@code unwrap}): {@link LiveBytes} reads the pool, in-use and requested
 * counters without the lock (plain reads of fields only the lock holder writes: exact on the thread that made the
 * last call, which is all a single-threaded replay asks, at no cost on its hot loop); {@link SizeRounding} is
 * {@code RoundedBytes} (a multiple of 256 B).
 *
 * <p><b>What the listener is told</b> (the {@link AllocatorListener} of the setup; device calls are seen by the
 * device wrapper the builder hands in): {@code allocationRetried(request, 1, FREES_AWAITED)} once per request that
 * enters TensorFlow's retry-on-failure loop ({@code allow_retry_on_failure}), where {@code allocationRetries} counts
 * it, before it waits for frees (the attempts inside the loop, one after each free, are not told one by one); and
 * {@code cacheReleased(bytes, nanos)} where free regions go back to the device: every explicit
 * {@code deallocateFreeRegions}/{@code releaseCachedMemory} (even one that found nothing), and the
 * {@code garbage_collection} step of the out-of-memory path when it freed regions. With no listener set nothing
 * is timed, and allocate and free never touch it.
 */
final class BfcArena extends AbstractDeviceAllocator implements BfcAllocator, LiveBytes, SizeRounding {

    private static final Logger LOG = LoggerFactory.getLogger(BfcArena.class);
    static final long MIN = Bins.MIN_ALLOCATION_SIZE;
    private static final long DEFAULT_MAX_INTERNAL_FRAGMENTATION = 128L * ByteSize.MiB;
    private static final double BACKPEDAL_FACTOR = 0.9;

    final BfcOptions options;
    private final String name;
    final long memoryLimit;
    private final long maxInternalFragmentation;
    private final RegionSource source;
    /** The options in effect, as a snapshot's settings (see {@link #snapshot()}). */
    final Map<String, Object> snapshotSettings;

    final ChunkTable chunks = new ChunkTable(1024);
    final Bins bins = new Bins(chunks);
    /** Chunk start address → handle. Interior addresses are absent. */
    final LongLongHashMap handles = new LongLongHashMap(1024);

    /** Regions in address order. */
    long[] regionBase = new long[8];
    long[] regionSize = new long[8];
    int regionCount;

    long currRegionAllocationBytes;
    long poolBytes;
    long peakPoolBytes;
    private long nextAllocationId = 1;

    long numAllocs;
    private long frees;
    long bytesInUse;
    long peakBytesInUse;
    long largestAllocSize;
    private long largestRequest;
    private long requestedInUse;
    private long peakRequested;
    private long active;
    private long peakActive;
    private long deviceMallocs;
    private long deviceFrees;
    private long retries;
    private long ooms;
    /** Set by {@link #extend} when the device refused memory within the limit. */
    boolean deviceRefused;

    // Timestamped mode.
    private long timingCounter;
    long safeFrontier;
    /** Freed chunks not yet merged: pairs (handle, freedAtCount). */
    private long[] timestampQueue = new long[64];
    private int timestampQueueSize;
    /** Events recorded at frees, in free order: the free count each stands for, and the event. */
    private final ArrayDeque<PendingFree> pendingFrees = new ArrayDeque<>();
    private final ArrayDeque<DeviceEvent> eventPool = new ArrayDeque<>();
    /** Streams other than its own that a live chunk was used on (recordStream), by handle. */
    private final HandleStreams crossStreams = new HandleStreams();

    // Retry waits.
    private final ReentrantLock retryLock = new ReentrantLock();
    private final Condition freed = retryLock.newCondition();
    private final AtomicInteger waiters = new AtomicInteger();
    private final AtomicLong freeGeneration = new AtomicLong();

    private record PendingFree(long count, DeviceEvent event) {
    }

    BfcArena(DeviceMemory device, boolean ownsDevice, BfcOptions options) {
        this(device, ownsDevice, options, AllocatorListener.NONE);
    }

    BfcArena(DeviceMemory device, boolean ownsDevice, BfcOptions options, AllocatorListener listener) {
        // Told of retries after waiting for frees and of regions given back (see the class documentation).
        super(device, ownsDevice, listener);
        this.options = Objects.requireNonNull(options, "options");
        this.name = "bfc";
        long total = device.descriptor().totalBytes();
        this.memoryLimit = options.memoryLimitBytes() == 0 ? total : options.memoryLimitBytes();
        this.maxInternalFragmentation = options.fragmentationFraction() > 0
                ? (long) (options.fragmentationFraction() * memoryLimit) : DEFAULT_MAX_INTERNAL_FRAGMENTATION;
        this.currRegionAllocationBytes = roundedBytes(options.allowGrowth()
                ? Math.min(memoryLimit, 2 * ByteSize.MiB) : memoryLimit);
        long granule = device.virtualMemory().map(v -> v.granularity()).orElse(Long.MAX_VALUE);
        boolean useVm = switch (options.virtualMemory()) {
            case ON -> true;
            case OFF -> false;
            // A limit below one granule could never be mapped without exceeding it.
            case AUTO -> device.virtualMemory().isPresent() && memoryLimit >= granule;
        };
        if (useVm && device.virtualMemory().isEmpty()) {
            throw new InvalidConfigurationException("virtual_memory", "true", "virtual_memory:true, but "
                    + device.descriptor().id() + " has no virtual memory; use virtual_memory:auto or false");
        }
        if (useVm && memoryLimit < granule) {
            throw new InvalidConfigurationException("memory_limit_mb", limitText(memoryLimit),
                    "virtual_memory:true needs a memory limit of at least one " + ByteSize.format(granule)
                    + " granule, got " + ByteSize.format(memoryLimit)
                    + "; raise memory_limit_mb or use virtual_memory:false");
        }
        if (useVm) {
            this.source = reserveAddressSpace(device, options, memoryLimit);
        } else {
            this.source = new RegionSource.Malloc(device);
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("allow_growth", options.allowGrowth());
        settings.put("garbage_collection", options.garbageCollection());
        settings.put("memory_limit_bytes", memoryLimit);
        settings.put("fragmentation_fraction", options.fragmentationFraction());
        settings.put("allow_retry_on_failure", options.allowRetryOnFailure());
        settings.put("retry_timeout_ms", options.retryTimeoutMillis());
        settings.put("timestamped", options.timestamped());
        settings.put("virtual_memory", switch (options.virtualMemory()) {
            case AUTO -> "auto";
            case ON -> "true";
            case OFF -> "false";
        });
        settings.put("uses_virtual_memory", useVm);
        this.snapshotSettings = Collections.unmodifiableMap(settings);
    }

    /**
     * The virtual-memory region source, with its whole reservation made now: as TensorFlow's
     * {@code GpuVirtualMemAllocator::Create} reserves its address range when the allocator is created, so a limit
     * larger than the address space the device can reserve is refused here, as a configuration error, rather than
     * accepted and then blamed on the device at every allocation. (Reserving what can be reserved instead would
     * silently run with a lower limit than the one asked for.)
     */
    private static RegionSource.Virtual reserveAddressSpace(DeviceMemory device, BfcOptions options, long limit) {
        RegionSource.Virtual virtual = new RegionSource.Virtual(device.virtualMemory().orElseThrow(), limit);
        if (!virtual.reserve()) {
            boolean limitGiven = options.memoryLimitBytes() != 0;
            throw new InvalidConfigurationException(limitGiven ? "memory_limit_mb" : "virtual_memory",
                    limitGiven ? limitText(limit) : options.virtualMemory().name().toLowerCase(Locale.ROOT),
                    "virtual memory for bfc needs its whole memory limit as one reserved address range, and "
                    + device.descriptor().id() + " cannot reserve " + ByteSize.format(virtual.reservationSize())
                    + (limitGiven ? " (memory_limit_mb:" + limitText(limit) + ")" : " (the device's total)")
                    + "; lower memory_limit_mb (the device has " + ByteSize.format(device.descriptor().totalBytes())
                    + ") or use virtual_memory:false");
        }
        return virtual;
    }

    /** A limit as {@code memory_limit_mb} spells it (whole MiB), or in bytes when it is no whole number of MiB. */
    private static String limitText(long limit) {
        return limit % ByteSize.MiB == 0 ? Long.toString(limit / ByteSize.MiB) : limit + " bytes";
    }

    /** TensorFlow's {@code RoundedBytes}: up to a multiple of 256, or -1 on overflow. */
    static long roundedBytes(long bytes) {
        return ByteSize.roundUp(bytes, MIN);
    }

    // ------------------------------------------------------------------------------------------------ allocate

    @Override
    public String name() {
        return name;
    }

    @Override
    public BfcOptions options() {
        return options;
    }

    @Override
    public long malloc(long bytes, DeviceStream stream) {
        return malloc(bytes, MIN, stream);
    }

    @Override
    public long malloc(long bytes, long alignment, DeviceStream stream) {
        boolean retry = options.allowRetryOnFailure();
        // Without retry TensorFlow makes exactly one attempt, which logs the dump and fails.
        long address = attempt(bytes, alignment, stream, true, !retry);
        if (address != 0 || bytes == 0) {
            return address;
        }
        address = retry(bytes, alignment, stream);
        if (address != 0) {
            return address;
        }
        // One final attempt that logs the dump and, if it fails too, throws.
        return attempt(bytes, alignment, stream, true, true);
    }

    @Override
    public long tryMalloc(long bytes, long alignment, DeviceStream stream) {
        return attempt(bytes, alignment, stream, false, false);
    }

    /** What a request needs from a region at most: its rounded size plus room to align it, saturated. */
    static long neededBytes(long rounded, long align) {
        long needed = rounded + (align - MIN);
        return rounded < 0 || needed < rounded ? Long.MAX_VALUE : needed;
    }

    /** Waits for frees (or frontier advances) and retries each time, until the timeout. */
    private long retry(long bytes, long alignment, DeviceStream stream) {
        long timeout = options.retryTimeoutMillis();
        if (timeout == 0) {
            return 0;
        }
        lock.lock();
        try {
            retries++;
        } finally {
            lock.unlock();
        }
        // Once per request, as allocationRetries counts it: the request now waits for frees and tries again.
        tellRetried(bytes, RetryCause.FREES_AWAITED);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeout);
        waiters.incrementAndGet();
        try {
            while (true) {
                long seen = freeGeneration.get();
                long address = attempt(bytes, alignment, stream, true, false);
                if (address != 0) {
                    return address;
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return 0;
                }
                retryLock.lock();
                try {
                    while (freeGeneration.get() == seen && remaining > 0) {
                        remaining = freed.awaitNanos(remaining);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return 0;
                } finally {
                    retryLock.unlock();
                }
            }
        } finally {
            waiters.decrementAndGet();
        }
    }

    /**
     * Wakes the threads waiting to retry, if any. With none (the common case) it is one volatile read: no atomic
     * update on every free. That is safe because {@link #retry} counts itself in {@link #waiters} before it reads
     * the generation and makes its next attempt under the lock: a free that read no waiter released the lock
     * before that count (volatile accesses are totally ordered), so the waiter's attempt sees the freed memory; a
     * free that read a waiter bumps the generation and signals, which the waiter checks under the retry lock before
     * it sleeps.
     */
    private void notifyFreed() {
        if (waiters.get() > 0) {
            freeGeneration.incrementAndGet();
            retryLock.lock();
            try {
                freed.signalAll();
            } finally {
                retryLock.unlock();
            }
        }
    }

    /**
     * One allocation attempt: TensorFlow's {@code AllocateRawInternal}. Returns 0 on failure, unless {@code last}:
     * then it logs the dump and throws the out-of-memory error, built under the same lock so that its figures and
     * its reason describe this very attempt. A request that no wait could ever serve (above the limit) throws at
     * once, whatever {@code last} says, except for {@code tryMalloc} ({@code mayWait} false), which never throws.
     *
     * @param mayWait whether, in timestamped mode, it may wait for pending frees' events
     */
    private long attempt(long bytes, long alignment, DeviceStream stream, boolean mayWait, boolean last) {
        boolean nullRequest = isNullRequest(bytes, stream);
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two, got " + alignment);
        }
        if (nullRequest) {
            return 0;
        }
        long rounded = roundedBytes(bytes);
        long align = Math.max(alignment, MIN);
        long needed = neededBytes(rounded, align);
        lock.lock();
        try {
            ensureOpen();
            if (needed > memoryLimit || needed > REGION_TARGET_CAP) {
                // No wait can help a request above the limit (TensorFlow waits its 10 s anyway).
                if (!mayWait) {
                    return 0;
                }
                throw outOfMemoryLocked(bytes, align);
            }
            if (options.timestamped()) {
                advanceFrontierLocked();
            }
            int bin = Bins.binFor(rounded);
            long streamHandle = stream.handle();
            deviceRefused = false;
            long p = findChunk(bin, rounded, align, bytes, streamHandle);
            if (p != 0) {
                return p;
            }
            if (extend(needed)) {
                p = findChunk(bin, rounded, align, bytes, streamHandle);
                if (p != 0) {
                    return p;
                }
            }
            if (options.timestamped() && mayWait) {
                // Where TensorFlow would force-merge chunks a stream may still read, wait for their events instead.
                while (!pendingFrees.isEmpty()) {
                    device().synchronizeEvent(pendingFrees.peekFirst().event());
                    advanceFrontierLocked();
                    p = findChunk(bin, rounded, align, bytes, streamHandle);
                    if (p != 0) {
                        return p;
                    }
                }
            }
            if (options.garbageCollection() && deallocateFreeRegionsLocked(rounded, true) && extend(needed)) {
                p = findChunk(bin, rounded, align, bytes, streamHandle);
                if (p != 0) {
                    return p;
                }
            }
            if (last) {
                BfcArenaDumps.logOutOfMemory(this, bytes, rounded);
                throw outOfMemoryLocked(bytes, align);
            }
            return 0;
        } finally {
            lock.unlock();
        }
    }

    /** TensorFlow's {@code FindChunkPtr}: best fit from {@code bin} up, split, mark used. */
    private long findChunk(int startBin, long rounded, long align, long requested, long stream) {
        long[] size = chunks.size;
        long[] ptr = chunks.ptr;
        for (int b = bins.nextNonEmpty(startBin); b >= 0; b = bins.nextNonEmpty(b + 1)) {
            for (int i = b == startBin ? bins.lowerBound(b, rounded, 0) : bins.first(b); i != Bins.NO_NODE;
                    i = bins.next(b, i)) {
                int h = bins.chunkAt(b, i);
                if (!reusableBy(h, stream)) {
                    continue;
                }
                long pad = align > MIN ? roundedBytes(((ptr[h] + align - 1) & -align) - ptr[h]) : 0;
                if (pad < 0 || size[h] - pad < rounded) {
                    continue;
                }
                // By the node in hand: no second search of the bin.
                bins.removeAt(b, i);
                // Splits may grow the chunk table, so read its columns afresh from here on.
                if (pad > 0) {
                    // The bytes before the aligned start stay a free chunk (TensorFlow's current behaviour).
                    int aligned = split(h, pad);
                    bins.insert(h);
                    h = aligned;
                }
                long chunkSize = chunks.size[h];
                if (chunkSize - rounded >= rounded || chunkSize - rounded >= maxInternalFragmentation) {
                    int tail = split(h, rounded);
                    bins.insert(tail);
                }
                markUsed(h, requested, stream);
                return chunks.ptr[h];
            }
        }
        return 0;
    }

    private boolean reusableBy(int h, long stream) {
        long count = chunks.freedAtCount[h];
        return count == 0 || count <= safeFrontier || (chunks.stream[h] == stream && !chunks.crossStream[h]);
    }

    private void markUsed(int h, long requested, long stream) {
        long size = chunks.size[h];
        chunks.requested[h] = requested;
        chunks.allocationId[h] = nextAllocationId++;
        chunks.freedAtCount[h] = 0;
        chunks.stream[h] = stream;
        chunks.crossStream[h] = false;
        numAllocs++;
        bytesInUse += size;
        peakBytesInUse = Math.max(peakBytesInUse, bytesInUse);
        largestAllocSize = Math.max(largestAllocSize, size);
        largestRequest = Math.max(largestRequest, requested);
        requestedInUse += requested;
        peakRequested = Math.max(peakRequested, requestedInUse);
        active++;
        peakActive = Math.max(peakActive, active);
    }

    /**
     * TensorFlow's {@code SplitChunk}: {@code h} keeps its first {@code bytes}; the rest becomes a new free,
     * unbinned chunk that inherits the free count and stream. Returns the new chunk.
     */
    private int split(int h, long bytes) {
        int t = chunks.allocate();
        chunks.ptr[t] = chunks.ptr[h] + bytes;
        chunks.size[t] = chunks.size[h] - bytes;
        chunks.size[h] = bytes;
        chunks.freedAtCount[t] = chunks.freedAtCount[h];
        chunks.stream[t] = chunks.stream[h];
        int after = chunks.next[h];
        chunks.next[t] = after;
        chunks.prev[t] = h;
        chunks.next[h] = t;
        if (after != NONE) {
            chunks.prev[after] = t;
        }
        handles.put(chunks.ptr[t], t, -1);
        if (chunks.freedAtCount[t] > 0) {
            // The new chunk carries a pending free too: queue it so that it merges once the free is safe.
            enqueueTimestamped(t, chunks.freedAtCount[t]);
        }
        return t;
    }

    /**
     * The region target saturates here so that its doubling cannot overflow when regions are released and
     * re-extended many times (TensorFlow never releases, so it never meets this); below 4 EiB the figures are
     * upstream's.
     */
    static final long REGION_TARGET_CAP = 1L << 62;

    /** TensorFlow's {@code Extend}. {@code rounded} includes room for alignment padding. */
    private boolean extend(long rounded) {
        // Rounded down to the source's unit, so that what the source rounds up never exceeds the limit.
        long available = (memoryLimit - poolBytes) & -source.granularity();
        long cap = REGION_TARGET_CAP;
        if (rounded > available || rounded > cap) {
            return false;
        }
        boolean increased = false;
        while (rounded > currRegionAllocationBytes && currRegionAllocationBytes < cap) {
            currRegionAllocationBytes = Math.min(cap, currRegionAllocationBytes * 2);
            increased = true;
        }
        long bytes = Math.min(currRegionAllocationBytes, available);
        long base = source.alloc(bytes);
        while (base == 0) {
            deviceRefused = true;
            long smaller = roundedBytes((long) (bytes * BACKPEDAL_FACTOR));
            // Rounding can undo the 10%; step down by at least one unit so that the loop ends.
            bytes = smaller < bytes ? smaller : bytes - MIN;
            if (bytes < rounded) {
                return false;
            }
            base = source.alloc(bytes);
        }
        deviceRefused = false;
        if (!increased && currRegionAllocationBytes < cap) {
            currRegionAllocationBytes = Math.min(cap, currRegionAllocationBytes * 2);
        }
        long received = source.received();
        poolBytes += received;
        peakPoolBytes = Math.max(peakPoolBytes, poolBytes);
        deviceMallocs++;
        int h = chunks.allocate();
        chunks.ptr[h] = base;
        chunks.size[h] = received;
        handles.put(base, h, -1);
        int extended = source.supportsCoalescing() ? regionEndingAt(base) : -1;
        if (extended >= 0) {
            int last = lastChunkOf(extended);
            chunks.next[last] = h;
            chunks.prev[h] = last;
            regionSize[extended] += received;
        } else {
            addRegion(base, received);
        }
        h = coalesce(h, false);
        bins.insert(h);
        return true;
    }

    // ------------------------------------------------------------------------------------------------ free

    /** The chunk handed out at {@code address}, as {@code DeallocateRawInternal} looks it up. */
    @Override
    protected long liveAllocation(long address) {
        int h = (int) handles.get(address, -1);
        return h < 0 || !chunks.inUse(h) ? NOT_LIVE : h;
    }

    @Override
    protected long allocationIdOf(long allocation) {
        return chunks.allocationId[(int) allocation];
    }

    @Override
    protected void releaseAllocation(long address, long allocation) {
        freeLocked((int) allocation);
    }

    /** Wakes the allocations that wait for frees: after every free, the null one too. */
    @Override
    protected void afterFree() {
        notifyFreed();
    }

    /** TensorFlow's {@code DeallocateRawInternal} after the lookup: mark free, then bin (merged or queued). */
    private void freeLocked(int h) {
        long count = 0;
        if (options.timestamped()) {
            // The device calls come first: if recording an event fails, the allocation stays live and nothing changed.
            count = timingCounter + 1;
            recordFreeEvents(h, count);
            timingCounter = count;
        }
        chunks.allocationId[h] = -1;
        bytesInUse -= chunks.size[h];
        requestedInUse -= chunks.requested[h];
        active--;
        frees++;
        if (options.timestamped()) {
            chunks.freedAtCount[h] = count;
            bins.insert(h);
            enqueueTimestamped(h, count);
        } else {
            bins.insert(coalesce(h, false));
        }
    }

    /**
     * TensorFlow's {@code TryToCoalesce}: merge with a free next chunk, then with a free previous one. Chunks that
     * carry a free count are left alone unless {@code force}. The chunk must be unbinned; the result is unbinned.
     */
    private int coalesce(int h, boolean force) {
        if (!force && chunks.freedAtCount[h] > 0) {
            return h;
        }
        int n = chunks.next[h];
        if (n != NONE && !chunks.inUse(n) && (force || chunks.freedAtCount[n] == 0)) {
            bins.remove(n);
            merge(h, n);
        }
        int p = chunks.prev[h];
        if (p != NONE && !chunks.inUse(p) && (force || chunks.freedAtCount[p] == 0)) {
            bins.remove(p);
            merge(p, h);
            h = p;
        }
        return h;
    }

    /** Absorbs {@code second} (the chunk right after {@code first}) into {@code first}. */
    private void merge(int first, int second) {
        chunks.size[first] += chunks.size[second];
        int after = chunks.next[second];
        chunks.next[first] = after;
        if (after != NONE) {
            chunks.prev[after] = first;
        }
        chunks.freedAtCount[first] = Math.max(chunks.freedAtCount[first], chunks.freedAtCount[second]);
        handles.remove(chunks.ptr[second], -1);
        chunks.release(second);
    }

    @Override
    protected void recordStreamLocked(long allocation, DeviceStream stream) {
        int h = (int) allocation;
        if (!options.timestamped() || stream.handle() == chunks.stream[h]) {
            // Outside timestamped mode every free is immediate and reuse is ordered by the device: nothing to do.
            return;
        }
        chunks.crossStream[h] = true;
        crossStreams.add(h, stream.handle());
    }

    // ------------------------------------------------------------------------------------------------ timestamps

    /**
     * Records one event per stream that used the chunk, all or nothing: if the device refuses one, the events
     * already recorded for this free go back to the pool and the error propagates with nothing changed. A stream
     * the device no longer has (destroyed since the allocation or its {@code recordStream}) gets no event: the
     * device is synchronised instead, once, which waits for whatever work it had queued (see the package
     * documentation).
     */
    private void recordFreeEvents(int h, long count) {
        long[] others = crossStreams.get(h);
        int recorded = 0;
        boolean waitForDevice = false;
        try {
            if (recordEventFor(count, chunks.stream[h])) {
                recorded++;
            } else {
                waitForDevice = true;
            }
            if (others != null) {
                for (long s : others) {
                    if (recordEventFor(count, s)) {
                        recorded++;
                    } else {
                        waitForDevice = true;
                    }
                }
            }
            if (waitForDevice) {
                device().synchronize();
            }
        } catch (RuntimeException e) {
            for (int i = 0; i < recorded; i++) {
                eventPool.addLast(pendingFrees.pollLast().event());
            }
            throw e;
        }
        crossStreams.remove(h);
    }

    /**
     * Records an event for free {@code count} on {@code stream}. Returns false, with nothing recorded, when the
     * recording failed because the device no longer has the stream; any other failure propagates.
     */
    private boolean recordEventFor(long count, long stream) {
        DeviceEvent e = eventPool.isEmpty() ? device().createEvent() : eventPool.pollFirst();
        try {
            device().recordEvent(e, new DeviceStream(stream));
        } catch (RuntimeException ex) {
            eventPool.addLast(e);
            if (!device().hasStream(new DeviceStream(stream))) {
                return false;
            }
            throw ex;
        }
        pendingFrees.addLast(new PendingFree(count, e));
        return true;
    }

    private void enqueueTimestamped(int h, long count) {
        if (timestampQueueSize + 2 > timestampQueue.length) {
            timestampQueue = Arrays.copyOf(timestampQueue, timestampQueue.length * 2);
        }
        timestampQueue[timestampQueueSize++] = h;
        timestampQueue[timestampQueueSize++] = count;
    }

    @Override
    public long advanceSafeFrontier() {
        lock.lock();
        try {
            ensureOpen();
            advanceFrontierLocked();
            return safeFrontier;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves the frontier past every free whose events completed, in free order (a free is safe only when it and
     * every earlier free are), then merges the chunks that became safe: TensorFlow's {@code SetSafeFrontier} and
     * {@code MergeTimestampedChunks(0)}.
     */
    private void advanceFrontierLocked() {
        long frontier = safeFrontier;
        while (!pendingFrees.isEmpty()) {
            PendingFree head = pendingFrees.peekFirst();
            if (!device().isEventComplete(head.event())) {
                break;
            }
            pendingFrees.pollFirst();
            eventPool.addLast(head.event());
            // Every event of this count must complete before the count is safe.
            if (pendingFrees.isEmpty() || pendingFrees.peekFirst().count() != head.count()) {
                frontier = head.count();
            }
        }
        if (pendingFrees.isEmpty()) {
            frontier = timingCounter;
        }
        if (frontier > safeFrontier) {
            safeFrontier = frontier;
            mergeSafeTimestamped();
            // Waiters only ever hold the retry lock, never this one, so signalling under this lock cannot deadlock.
            notifyFreed();
        }
    }

    private void mergeSafeTimestamped() {
        int kept = 0;
        for (int i = 0; i < timestampQueueSize; i += 2) {
            int h = (int) timestampQueue[i];
            long count = timestampQueue[i + 1];
            if (chunks.inUse(h) || chunks.bin[h] == NONE || chunks.freedAtCount[h] != count) {
                continue; // reused by its own stream, or absorbed by a merge: stale entry
            }
            if (count <= safeFrontier) {
                bins.remove(h);
                chunks.freedAtCount[h] = 0;
                bins.insert(coalesce(h, false));
            } else {
                timestampQueue[kept++] = h;
                timestampQueue[kept++] = count;
            }
        }
        timestampQueueSize = kept;
    }

    // ------------------------------------------------------------------------------------------------ regions

    private int regionEndingAt(long address) {
        for (int i = 0; i < regionCount; i++) {
            if (regionBase[i] + regionSize[i] == address) {
                return i;
            }
        }
        return -1;
    }

    private int lastChunkOf(int region) {
        int h = (int) handles.get(regionBase[region], -1);
        while (chunks.next[h] != NONE) {
            h = chunks.next[h];
        }
        return h;
    }

    private void addRegion(long base, long size) {
        if (regionCount == regionBase.length) {
            regionBase = Arrays.copyOf(regionBase, regionCount * 2);
            regionSize = Arrays.copyOf(regionSize, regionCount * 2);
        }
        int i = regionCount;
        while (i > 0 && regionBase[i - 1] > base) {
            regionBase[i] = regionBase[i - 1];
            regionSize[i] = regionSize[i - 1];
            i--;
        }
        regionBase[i] = base;
        regionSize[i] = size;
        regionCount++;
    }

    private void removeRegion(int i) {
        System.arraycopy(regionBase, i + 1, regionBase, i, regionCount - i - 1);
        System.arraycopy(regionSize, i + 1, regionSize, i, regionCount - i - 1);
        regionCount--;
    }

    /** Whether region {@code i} is one free chunk that no stream may still be using. */
    private boolean regionIsFree(int i) {
        int h = (int) handles.get(regionBase[i], -1);
        return !chunks.inUse(h) && chunks.size[h] == regionSize[i] && chunks.freedAtCount[h] == 0;
    }

    /**
     * TensorFlow's {@code DeallocateFreeRegions(rounded)}, without the garbage-collection switch. Only the
     * out-of-memory path logs TensorFlow's warning; an explicit release is what the caller asked for.
     */
    private boolean deallocateFreeRegionsLocked(long rounded, boolean onOutOfMemory) {
        long poolBefore = poolBytes;
        long start = startRelease();
        try {
            return deallocateFreeRegionsUntold(rounded, onOutOfMemory);
        } finally {
            // An explicit release is told even when it found nothing; the out-of-memory path only when it freed.
            endRelease(start, poolBefore - poolBytes, !onOutOfMemory);
        }
    }

    private boolean deallocateFreeRegionsUntold(long rounded, boolean onOutOfMemory) {
        long freeRegionBytes = 0;
        for (int i = 0; i < regionCount; i++) {
            if (regionIsFree(i)) {
                freeRegionBytes += regionSize[i];
            }
        }
        if (freeRegionBytes == 0 || rounded > memoryLimit - poolBytes + freeRegionBytes) {
            return false;
        }
        if (onOutOfMemory) {
            LOG.warn("Garbage collection: deallocate free memory regions (i.e., allocations) so that we can"
                + " re-allocate a larger region to avoid OOM due to memory fragmentation. If you see this message"
                + " frequently, you are running near the threshold of the available device memory and re-allocation"
                + " may incur great performance overhead. You may try smaller batch sizes to observe the performance"
                + " impact. Set garbage_collection:false (or TF_ENABLE_GPU_GARBAGE_COLLECTION=false) to disable this"
                + " feature.");
        }
        for (int i = regionCount - 1; i >= 0; i--) {
            if (regionIsFree(i)) {
                // The device call first: if it fails, the region is still whole and the arena consistent, unless the
                // failure took the region away all the same (a failed unmap): then it is forgotten and reported.
                RuntimeException failure = null;
                try {
                    source.free(regionBase[i], regionSize[i]);
                } catch (RuntimeException e) {
                    if (!source.goneAfter(e)) {
                        throw e;
                    }
                    failure = e;
                }
                int h = (int) handles.get(regionBase[i], -1);
                bins.remove(h);
                handles.remove(regionBase[i], -1);
                chunks.release(h);
                poolBytes -= regionSize[i];
                deviceFrees++;
                removeRegion(i);
                if (failure != null) {
                    throw failure;
                }
            }
        }
        return true;
    }

    @Override
    public boolean deallocateFreeRegions() {
        lock.lock();
        try {
            ensureOpen();
            if (options.timestamped()) {
                advanceFrontierLocked();
            }
            return deallocateFreeRegionsLocked(0, false);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void releaseCachedMemory() {
        deallocateFreeRegions();
    }

    @Override
    public long currentRegionAllocationBytes() {
        return readLocked(() -> currRegionAllocationBytes);
    }

    @Override
    public int regionCount() {
        return (int) readLocked(() -> regionCount);
    }

    // ------------------------------------------------------------------------------------------------ queries

    private int liveHandle(long address) {
        int h = (int) handles.get(address, -1);
        if (h < 0 || !chunks.inUse(h)) {
            throw new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, address, toString());
        }
        return h;
    }

    @Override
    public long requestedSize(long address) {
        return readLocked(() -> chunks.requested[liveHandle(address)]);
    }

    @Override
    public long allocatedSize(long address) {
        return readLocked(() -> chunks.size[liveHandle(address)]);
    }

    long largestFreeLocked() {
        if (isClosed()) {
            return 0;
        }
        int h = bins.largest();
        return h < 0 ? 0 : chunks.size[h];
    }

    /**
     * The largest free chunk every stream may reuse now: the same as {@link #largestFreeLocked()} outside
     * timestamped mode; in it, chunks whose frees are still pending are skipped.
     */
    private long largestReusableLocked() {
        if (!options.timestamped() || isClosed()) {
            return largestFreeLocked();   // 0 once closed: the bins are not emptied at close, the regions are gone
        }
        for (int b = Bins.NUM_BINS - 1; b >= 0; b--) {
            for (int i = bins.last(b); i != Bins.NO_NODE; i = bins.prev(b, i)) {
                int h = bins.chunkAt(b, i);
                long count = chunks.freedAtCount[h];
                if (count == 0 || count <= safeFrontier) {
                    return chunks.size[h];
                }
            }
        }
        return 0;
    }

    double fragmentationLocked() {
        long free = poolBytes - bytesInUse;
        return free == 0 ? Double.NaN : (double) (free - largestFreeLocked()) / free;
    }

    @Override
    public BfcStats bfcStats() {
        return copyLocked(() -> new BfcStats(numAllocs, bytesInUse, peakBytesInUse, largestAllocSize, memoryLimit,
                poolBytes, peakPoolBytes, largestFreeLocked(), fragmentationLocked()));
    }

    @Override
    public AllocatorStats stats() {
        return copyLocked(() -> AllocatorStats.builder()
                .allocationCount(numAllocs).freeCount(frees)
                .activeAllocations(active).peakActiveAllocations(peakActive)
                .allocatedBytes(bytesInUse).peakAllocatedBytes(peakBytesInUse)
                .requestedBytes(requestedInUse).peakRequestedBytes(peakRequested)
                .reservedBytes(poolBytes).peakReservedBytes(peakPoolBytes)
                .largestAllocation(largestRequest).largestFreeBlock(largestReusableLocked())
                .deviceMallocs(deviceMallocs).deviceFrees(deviceFrees)
                .allocationRetries(retries).outOfMemoryErrors(ooms).limitBytes(memoryLimit)
                .build());
    }

    /**
     * The gauges of the one pool, "all": reserved is {@code pool_bytes}, allocated and active {@code bytes_in_use}
     * (a freed chunk is reusable at once, by its own stream in timestamped mode, so none stays active as PyTorch's
     * event-waiting blocks do), requested the in-use chunks' requests, and inactive-split the bytes of free chunks
     * in a region that holds more than one chunk: PyTorch's {@code inactive_split_bytes} (free blocks of a split
     * segment) with BFC's region as the segment and its chunk as the block. It is worked out by a walk of the
     * regions' chunks on each read (linear in the chunks, under the lock): keeping it incrementally would add
     * work to every split, merge, allocation and free for a figure read only when a registry scrapes.
     */
    @Override
    public List<PoolUsage> memoryUsage() {
        return copyLocked(() -> List.of(new PoolUsage(PoolUsage.ALL, poolBytes, bytesInUse, bytesInUse,
                requestedInUse, inactiveSplitBytesLocked())));
    }

    /** Free chunks' bytes in regions of more than one chunk; 0 once closed. */
    long inactiveSplitBytesLocked() {
        long bytes = 0;
        for (int r = 0; r < regionCount; r++) {
            int h = (int) handles.get(regionBase[r], -1);
            if (h < 0 || chunks.next[h] == NONE) {
                continue; // one chunk: the region is whole
            }
            for (; h != NONE; h = chunks.next[h]) {
                if (!chunks.inUse(h)) {
                    bytes += chunks.size[h];
                }
            }
        }
        return bytes;
    }

    /** The regions' bytes ({@code pool_bytes}), read without the lock. */
    @Override
    public long reservedBytes() {
        return poolBytes;
    }

    /** The in-use chunks' bytes ({@code bytes_in_use}), read without the lock. */
    @Override
    public long allocatedBytes() {
        return bytesInUse;
    }

    /** The in-use chunks' requests, read without the lock. */
    @Override
    public long requestedBytes() {
        return requestedInUse;
    }

    /** {@code RoundedBytes}: up to a multiple of 256 B. */
    @Override
    public long roundedSize(long requested) {
        return AlignedSizes.roundedSize(requested, MIN);
    }

    @Override
    public void clearStats() {
        runLocked(() -> {
            numAllocs = 0;
            peakBytesInUse = bytesInUse;
            largestAllocSize = 0;
        });
    }

    @Override
    public void resetPeakStats() {
        runLocked(() -> {
            peakBytesInUse = bytesInUse;
            peakPoolBytes = poolBytes;
            peakRequested = requestedInUse;
            peakActive = active;
            largestAllocSize = 0;
            largestRequest = 0;
        });
    }

    // ------------------------------------------------------------------------------------------------ dumps

    /**
     * One segment per region (pool {@code "region"}). A pending-free chunk (timestamped mode: freed, not yet safe
     * for other streams) has requested size 0: it may already have been split or merged with its free neighbours,
     * so it no longer stands for one request. Settings, the options in effect: {@code allow_growth},
     * {@code garbage_collection}, {@code memory_limit_bytes} (the arena's limit: the configured one, or the
     * device's total), {@code fragmentation_fraction}, {@code allow_retry_on_failure}, {@code retry_timeout_ms},
     * {@code timestamped}, {@code virtual_memory} ({@code auto}, {@code true} or {@code false}, as configured) and
     * {@code uses_virtual_memory} (what it resolved to on this device).
     */
    @Override
    public MemorySnapshot snapshot() {
        return copyLocked(() -> BfcArenaDumps.snapshot(this));
    }

    @Override
    public BfcMemoryDump memoryDump() {
        return copyLocked(() -> BfcArenaDumps.memoryDump(this));
    }

    @Override
    public List<String> memoryLog(long forRequest) {
        return copyLocked(() -> BfcArenaDumps.memoryLog(this, forRequest));
    }

    @Override
    public String renderOccupancy() {
        return copyLocked(() -> BfcArenaDumps.renderOccupancy(this));
    }

    /** Counts and builds the out-of-memory error (the lock is held). */
    private OutOfMemoryException outOfMemoryLocked(long bytes, long align) {
        ooms++;
        return BfcArenaDumps.outOfMemory(this, bytes, align);
    }

    /**
     * Runs {@code reader} with the lock held: for test fixtures that read the arena's fields (the invariant
     * checker), which cannot take the lock themselves.
     */
    void whileLocked(Runnable reader) {
        lock.lock();
        try {
            reader.run();
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------------ lifecycle

    /**
     * Returns every region, newest first, even if some device frees fail (each one returned counts as a device
     * free), then closes the region source and destroys the pooled and pending events, carrying on past failures.
     * Wakes the threads waiting to retry, which then find the arena closed.
     */
    @Override
    protected void releaseAll(CloseFailures failures) {
        for (int r = regionCount - 1; r >= 0; r--) {
            try {
                source.free(regionBase[r], regionSize[r]);
                deviceFrees++;
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        regionCount = 0;
        poolBytes = 0;
        bytesInUse = 0;
        requestedInUse = 0;
        active = 0;
        handles.clear();
        try {
            source.close();
        } catch (RuntimeException e) {
            failures.add(e);
        }
        for (PendingFree p : pendingFrees) {
            eventPool.addLast(p.event());
        }
        pendingFrees.clear();
        destroyEvents(eventPool, failures);
        // Waiters only ever hold the retry lock, never this one, so signalling under this lock cannot deadlock.
        notifyFreed();
    }

    @Override
    public String toString() {
        return "allocator 'bfc' on " + device().descriptor().id();
    }
}
