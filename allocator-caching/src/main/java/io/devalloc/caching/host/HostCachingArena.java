package io.devalloc.caching.host;

import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.error.UnknownStreamException;
import io.devalloc.api.internal.Failures;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.AbstractDeviceAllocator;
import io.devalloc.api.spi.LiveBytes;
import io.devalloc.api.spi.SizeRounding;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.stats.PoolUsage;
import io.devalloc.api.units.ByteSize;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pinned-host cache: PyTorch's {@code CachingHostAllocatorImpl} (with the CUDA specialisation's reserve segment
 * and timing), function for function: {@code allocate} ({@link #malloc}), {@code get_free_block}
 * ({@link #takeFree}), {@code allocate_host_memory} ({@link #createBlock}), {@code add_allocated_block}
 * ({@link #register}), {@code free} ({@link #release}), {@code process_events}, {@code record_event},
 * {@code empty_cache} ({@link #releaseCached}) and {@code free_block} ({@link #freeToDevice}). See the package
 * documentation for the design and the differences.
 *
 * <p>Its parts: the blocks ({@link Block}), their free lists ({@link BlockStack} per log2 bucket, {@link SizeLists} by
 * exact size), PyTorch's {@code host_memory_stats} ({@link HostStats}) next to the common stats, which are kept
 * here. What every allocator repeats (argument checks, the null allocation, the lock, {@code ensureOpen}, closing
 * once with the first failure thrown) is {@link AbstractDeviceAllocator}'s: its one lock guards all state, and device
 * calls run under it.
 *
 * <p>Capabilities for replays (reached with {@code unwrap}): {@link LiveBytes} reads the reserved, allocated and
 * requested counters without the lock (plain reads of fields only the lock holder writes: exact on the thread that
 * made the last call, as a single-threaded replay asks); {@link SizeRounding} is the power-of-two rounding with its
 * thresholds ({@link CachingHostOptions#roundSize}). A block taken from the reserve segment occupies its 4 KiB-rounded
 * extent: the bytes past the rounded size show as the block's unsplit remainder.
 *
 * <p><b>What the listener is told</b> (the {@link AllocatorListener} of the setup; device calls are seen by the
 * device wrapper the builder hands in): {@code allocationRetried(request, 1, CACHE_RELEASED)} when a refused device
 * malloc is retried after the cache was returned (where {@code allocationRetries} counts it), and
 * {@code cacheReleased(bytes, nanos)} for every return of the cache ({@code empty_cache}, and that retry), with the
 * bytes the device got back. A freed block above {@code pinned_max_cached_size_mb} that goes straight back to the
 * device never was cached: only its device free is told. With no listener set nothing is timed.
 */
final class HostCachingArena extends AbstractDeviceAllocator
        implements HostCachingAllocator, LiveBytes, SizeRounding {

    private static final Logger LOG = LoggerFactory.getLogger(HostCachingArena.class);

    /** PyTorch's {@code MAX_SIZE_INDEX}: free lists and stat buckets by ceil(log2 size). */
    static final int SIZE_CLASSES = 64;

    final CachingHostOptions options;
    /** The options as a snapshot's settings, built once. */
    private final Map<String, Object> settings;
    private final long deviceTotal;

    /** Every block this allocator owns, by handle; {@link #byAddress} maps its address to the handle. */
    Block[] table = new Block[64];
    int tableSize;
    private int[] spareHandles = new int[16];
    private int spareCount;
    final LongLongHashMap byAddress = new LongLongHashMap(256);

    /**
     * PyTorch's 64 free lists, by ceil(log2 size): power-of-two blocks, and the unrounded blocks of the
     * {@code pinned_max_*} limits, which is why one list can hold several sizes.
     */
    private final BlockStack[] bucketLists = new BlockStack[SIZE_CLASSES];
    /** Free lists of the other sizes (only with {@code pinned_round_threshold_mb}), by exact size. */
    private final SizeLists exactLists = new SizeLists();

    /** Deferred frees, oldest first (PyTorch's {@code events_}, consumed from the back). */
    private DeviceEvent[] pendingEvents = new DeviceEvent[16];
    Block[] pendingBlocks = new Block[16];
    int pendingHead;
    int pendingCount;
    private final ArrayDeque<DeviceEvent> eventPool = new ArrayDeque<>();

    long reserveBase;
    long reserveUsed;
    private boolean reserveTried;

    /** PyTorch's {@code host_memory_stats}. */
    final HostStats hostStats = new HostStats();

    // The common AllocatorStats, exact.
    private long allocationCount;
    private long freeCount;
    long live;
    private long peakLive;
    long liveBytes;
    private long peakLiveBytes;
    long requestedBytes;
    private long peakRequestedBytes;
    long reservedBytes;
    private long peakReservedBytes;
    private long largestRequest;
    private long deviceMallocs;
    private long deviceFrees;
    private long retries;
    private long outOfMemoryErrors;

    private long nextAllocationId = 1;

    HostCachingArena(DeviceMemory device, boolean ownsDevice, CachingHostOptions options) {
        this(device, ownsDevice, options, AllocatorListener.NONE);
    }

    HostCachingArena(DeviceMemory device, boolean ownsDevice, CachingHostOptions options, AllocatorListener listener) {
        // Told of the retry after the cache was returned and of every return of the cache (see the class docs).
        super(device, ownsDevice, listener);
        this.options = Objects.requireNonNull(options, "options");
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("configuration", options.configText());
        settings.put("pinned_round_threshold_bytes", options.roundThreshold());
        settings.put("pinned_reserve_segment_size_bytes", options.reserveSegmentSize());
        settings.put("pinned_use_background_threads", options.useBackgroundThreads());
        settings.put("pinned_use_cuda_host_register", false);
        settings.put("pinned_num_register_threads", (long) options.numRegisterThreads());
        settings.put("pinned_free_catch_all", options.freeCatchAll());
        // PyTorch's own names and units for the two 2.10+ limits, as its snapshot's allocator_settings has them.
        settings.put("max_round_threshold", options.maxRoundThresholdSetting());
        settings.put("max_cached_size", options.maxCachedSizeSetting());
        this.settings = Collections.unmodifiableMap(settings);
        this.deviceTotal = device.descriptor().totalBytes();
    }

    /** PyTorch's {@code size_index}: ceil(log2 size). */
    static int sizeIndex(long size) {
        return size <= 1 ? 0 : 64 - Long.numberOfLeadingZeros(size - 1);
    }

    @Override
    public String name() {
        return CachingHostAllocatorProvider.NAME;
    }

    @Override
    public CachingHostOptions options() {
        return options;
    }

    // ================================================================================================ allocate

    /** PyTorch's {@code allocate}. The stream is ignored: a pinned block belongs to no stream. */
    @Override
    public long malloc(long size, DeviceStream stream) {
        if (isNullRequest(size, stream)) {
            return 0;
        }
        lock.lock();
        try {
            ensureOpen();
            if (size > CachingHostOptions.MAX_REQUEST) {
                throw outOfMemory(size, size, OutOfMemoryException.Reason.REQUEST_TOO_LARGE);
            }
            processEvents();
            long rounded = options.roundSize(size);
            Block b = takeFree(rounded);
            if (b == null) {
                b = createBlock(size, rounded);
            }
            assert b.size >= rounded : "a block of " + b.size + " bytes for a request rounded to " + rounded;
            handOut(b, size);
            return b.ptr;
        } finally {
            lock.unlock();
        }
    }

    /**
     * PyTorch's {@code get_free_block} with pytorch#192722's fix: in the bucket of ceil(log2 rounded), the most
     * recently freed block of at least {@code rounded} bytes (never a smaller one). Sizes of devalloc's 2 MiB classes
     * take a block of exactly their size.
     */
    private Block takeFree(long rounded) {
        if (keptByExactSize(rounded)) {
            BlockStack s = exactLists.get(rounded);
            return s == null || s.count == 0 ? null : s.pop();
        }
        BlockStack s = bucketLists[sizeIndex(rounded)];
        return s == null ? null : s.takeLastFitting(rounded);
    }

    /**
     * Whether blocks of {@code size} are kept by exact size: with {@code pinned_round_threshold_mb}, every size that
     * is not a power of two (its 2 MiB classes, and the unrounded pieces of the reserve above
     * {@code pinned_max_cached_size_mb}), so that a 2 MiB class is served by its own size only, as before the
     * {@code pinned_max_*} keys. Everything else goes to PyTorch's log2 buckets.
     */
    private boolean keptByExactSize(long size) {
        return options.roundThreshold() != 0 && Long.bitCount(size) != 1;
    }

    /** The free list where a block of {@code size} is kept (null if it does not exist and {@code !create}). */
    BlockStack freeList(long size, boolean create) {
        if (keptByExactSize(size)) {
            return create ? exactLists.getOrCreate(size) : exactLists.get(size);
        }
        int i = sizeIndex(size);
        if (bucketLists[i] == null && create) {
            bucketLists[i] = new BlockStack();
        }
        return bucketLists[i];
    }

    /**
     * PyTorch's slow path ({@code allocate_host_memory}): a piece of the reserve segment if there is one with room,
     * else a device malloc of the rounded size. Unlike PyTorch, a refused device malloc is retried once after the
     * idle cached blocks were returned to the device.
     */
    private Block createBlock(long size, long rounded) {
        if (rounded > deviceTotal) {
            throw outOfMemory(size, rounded, OutOfMemoryException.Reason.REQUEST_TOO_LARGE);
        }
        if (options.reserveSegmentSize() > 0) {
            Block b = carveFromReserve(rounded);
            if (b != null) {
                return b;
            }
        }
        long ptr = timedDeviceMalloc(rounded);
        if (ptr == 0 && hasCachedDeviceBlocks()) {
            retries++;
            tellRetried(size, RetryCause.CACHE_RELEASED);
            LOG.debug("{}: the device refused {}; returning the cached blocks to it and trying again", this,
                    ByteSize.format(rounded));
            releaseCached();
            ptr = timedDeviceMalloc(rounded);
        }
        if (ptr == 0) {
            throw outOfMemory(size, rounded, OutOfMemoryException.Reason.DEVICE_EXHAUSTED);
        }
        addReserved(rounded);
        return register(ptr, rounded, rounded, false);
    }

    /** The reserve segment: made on the first miss, then a bump allocator of 4 KiB-rounded pieces, never freed. */
    private Block carveFromReserve(long rounded) {
        if (!reserveTried) {
            long bytes = options.reserveSegmentSize();
            long ptr = timedDeviceMalloc(bytes);
            reserveTried = true;
            if (ptr == 0) {
                LOG.warn("{}: the device refused the {} pinned reserve segment (pinned_reserve_segment_size_mb);"
                        + " continuing without it", this, ByteSize.format(bytes));
                return null;
            }
            reserveBase = ptr;
            addReserved(bytes);
        }
        if (reserveBase == 0) {
            return null;
        }
        long extent = ByteSize.roundUp(rounded, CachingHostOptions.RESERVE_ALIGNMENT);
        if (extent > options.reserveSegmentSize() - reserveUsed) {
            return null;
        }
        long ptr = reserveBase + reserveUsed;
        reserveUsed += extent;
        return register(ptr, rounded, extent, true);
    }

    private long timedDeviceMalloc(long bytes) {
        long start = System.nanoTime();
        long ptr;
        try {
            ptr = device().malloc(bytes);
        } catch (DeviceException e) {
            if (!hasCachedDeviceBlocks()) {
                throw e;
            }
            // A pinned device refuses to lock beyond RLIMIT_MEMLOCK with an exception; idle cached blocks hold locked
            // memory, so treat it as "no memory": the caller returns them and tries once more.
            LOG.debug("{}: the device refused {} ({}); treating it as out of memory", this, ByteSize.format(bytes),
                    e.getMessage());
            return 0;
        }
        if (ptr != 0) {
            hostStats.hostAllocTimed((System.nanoTime() - start) / 1000);
            deviceMallocs++;
        }
        return ptr;
    }

    private void addReserved(long bytes) {
        reservedBytes += bytes;
        peakReservedBytes = Math.max(peakReservedBytes, reservedBytes);
    }

    /** PyTorch's {@code add_allocated_block}: a new block the allocator owns from now on. */
    private Block register(long ptr, long rounded, long extent, boolean reserve) {
        int handle;
        if (spareCount > 0) {
            handle = spareHandles[--spareCount];
        } else {
            if (tableSize == table.length) {
                table = Arrays.copyOf(table, tableSize * 2);
            }
            handle = tableSize++;
        }
        Block b = new Block(handle, ptr, rounded, extent, reserve);
        table[handle] = b;
        byAddress.put(ptr, handle, -1);
        hostStats.blockAdded(rounded);
        return b;
    }

    private void handOut(Block b, long requested) {
        b.state = Block.ALLOCATED;
        b.requested = requested;
        b.allocationId = nextAllocationId++;
        hostStats.activated(b.size);
        allocationCount++;
        live++;
        peakLive = Math.max(peakLive, live);
        liveBytes += b.extent;
        peakLiveBytes = Math.max(peakLiveBytes, liveBytes);
        requestedBytes += requested;
        peakRequestedBytes = Math.max(peakRequestedBytes, requestedBytes);
        largestRequest = Math.max(largestRequest, requested);
    }

    /** Whether no key limits power-of-two rounding (PyTorch's default), so the out-of-memory hint applies. */
    private boolean roundsEverything() {
        return options.roundThreshold() == 0 && options.maxRoundThreshold() == CachingHostOptions.UNLIMITED
                && options.maxCachedSize() == CachingHostOptions.UNLIMITED;
    }

    private OutOfMemoryException outOfMemory(long size, long rounded, OutOfMemoryException.Reason reason) {
        outOfMemoryErrors++;
        MemoryInfo info = device().memoryInfo();
        String why = reason == OutOfMemoryException.Reason.REQUEST_TOO_LARGE
                ? "the request is larger than the device could ever serve"
                : "the device has no memory left, even after the cached blocks were returned to it";
        String message = "out of pinned memory on " + device().descriptor().id() + ": tried to allocate " + size
                + " bytes (" + ByteSize.format(size) + ")" + (rounded != size ? ", rounded up to "
                + ByteSize.format(rounded) : "") + "; " + why + ". Device: " + ByteSize.format(info.totalBytes())
                + " total, " + ByteSize.format(info.freeBytes()) + " free. This allocator: "
                + ByteSize.format(reservedBytes) + " reserved, " + ByteSize.format(liveBytes) + " allocated."
                + (roundsEverything() && rounded >= 4 * CachingHostOptions.ROUND_LARGE
                ? " Power-of-two rounding can double large pinned buffers; pinned_round_threshold_mb limits it." : "");
        return new OutOfMemoryException(reason, device().descriptor().id(), size, info.freeBytes(), info.totalBytes(),
                reservedBytes, liveBytes, Long.MAX_VALUE, message);
    }

    // ================================================================================================ free

    /** The block's handle, an index into the table. */
    @Override
    protected long liveAllocation(long address) {
        Block b = liveBlock(address);
        return b == null ? NOT_LIVE : b.handle;
    }

    @Override
    protected long allocationIdOf(long allocation) {
        return table[(int) allocation].allocationId;
    }

    @Override
    protected void releaseAllocation(long address, long allocation) {
        releaseCatching(table[(int) allocation]);
    }

    /** The block handed out at exactly {@code address}, or null. */
    private Block liveBlock(long address) {
        int h = (int) byAddress.get(address, -1);
        if (h < 0) {
            return null;
        }
        Block b = table[h];
        return b.state == Block.ALLOCATED ? b : null;
    }

    /** Upstream's catch-all around the pinned {@code free}, for device failures ({@code pinned_free_catch_all}). */
    private void releaseCatching(Block b) {
        try {
            release(b);
        } catch (DeviceException e) {
            if (options.freeCatchAll()) {
                LOG.warn("Suppressed exception in pinned allocator free(): {}", e.getMessage(), e);
                return;
            }
            LOG.warn("Exception in pinned allocator free(), rethrowing");
            throw e;
        }
    }

    /**
     * PyTorch's {@code free}: with no recorded stream the block goes straight back to its free list; otherwise one
     * event is recorded per stream and the block waits until they have all completed.
     */
    private void release(Block b) {
        DeviceEvent[] recorded = null;
        if (b.streamCount > 0) {
            try {
                recorded = recordEvents(b);
            } catch (RuntimeException e) {
                // A stream this device cannot record on (destroyed, or another device's): never strand the block.
                // Waiting for the device has the same effect as the events completing.
                LOG.warn("{}: could not record an event on a stream recorded for {} ({}); synchronizing the device"
                        + " instead", this, ByteSize.hex(b.ptr), e.toString());
                device().synchronize();
            }
            if (recorded == null) {
                b.streamCount = 0;
            }
        }
        freeCount++;
        live--;
        liveBytes -= b.extent;
        requestedBytes -= b.requested;
        b.allocationId = 0;
        if (recorded == null) {
            makeReusable(b);
            return;
        }
        b.state = Block.PENDING;
        b.eventCount += recorded.length;
        for (DeviceEvent e : recorded) {
            addPending(e, b);
        }
        b.streamCount = 0;
    }

    /** Records one event per stream; if the device refuses one, the events go back to the pool and nothing changed. */
    private DeviceEvent[] recordEvents(Block b) {
        DeviceEvent[] recorded = new DeviceEvent[b.streamCount];
        int n = 0;
        try {
            for (int i = 0; i < b.streamCount; i++) {
                DeviceEvent e = eventPool.isEmpty() ? device().createEvent() : eventPool.pollLast();
                recorded[n++] = e;
                device().recordEvent(e, new DeviceStream(b.streams[i]));
            }
        } catch (RuntimeException ex) {
            for (int i = 0; i < n; i++) {
                eventPool.addLast(recorded[i]);
            }
            throw ex;
        }
        return recorded;
    }

    /**
     * PyTorch's {@code maybe_cache_block}: no longer an active request, and back on its free list, or, when it is
     * larger than {@code pinned_max_cached_size_mb}, returned to the device (a host free in the stats). Pieces of the
     * reserve segment are never returned (upstream's {@code free_block} returns early for them and drops them from
     * its lists, losing that part of the reserve); here they stay cached. If the device refuses the free, the block
     * is cached instead and {@code emptyCache} tries again (and reports the failure).
     */
    private void makeReusable(Block b) {
        hostStats.deactivated(b.size);
        if (b.size > options.maxCachedSize() && !b.reserve) {
            try {
                freeToDevice(b);
                return;
            } catch (RuntimeException e) {
                LOG.warn("{}: could not return a freed {} block above pinned_max_cached_size_mb to the device ({});"
                        + " caching it instead", this, ByteSize.format(b.size), e.toString());
            }
        }
        b.state = Block.FREE;
        freeList(b.size, true).push(b);
    }

    private void addPending(DeviceEvent e, Block b) {
        if (pendingCount == pendingEvents.length) {
            DeviceEvent[] events = new DeviceEvent[pendingCount * 2];
            Block[] blocks = new Block[pendingCount * 2];
            for (int i = 0; i < pendingCount; i++) {
                int j = (pendingHead + i) % pendingEvents.length;
                events[i] = pendingEvents[j];
                blocks[i] = pendingBlocks[j];
            }
            pendingEvents = events;
            pendingBlocks = blocks;
            pendingHead = 0;
        }
        int tail = (pendingHead + pendingCount) % pendingEvents.length;
        pendingEvents[tail] = e;
        pendingBlocks[tail] = b;
        pendingCount++;
    }

    private void pollPending() {
        pendingEvents[pendingHead] = null;
        pendingBlocks[pendingHead] = null;
        pendingHead = (pendingHead + 1) % pendingEvents.length;
        pendingCount--;
    }

    /**
     * PyTorch's {@code process_events}: oldest event first, stopping at the first one not complete (even if later
     * ones, on other streams, are); a block whose last event completed goes back to its free list.
     */
    private void processEvents() {
        while (pendingCount > 0) {
            DeviceEvent e = pendingEvents[pendingHead];
            if (!device().isEventComplete(e)) {
                return;
            }
            Block b = pendingBlocks[pendingHead];
            pollPending();
            eventPool.addLast(e);
            if (--b.eventCount == 0) {
                makeReusable(b);
            }
        }
    }

    @Override
    public boolean recordEvent(long address, DeviceStream stream) {
        Objects.requireNonNull(stream, "stream");
        lock.lock();
        try {
            ensureOpen();
            Block b = address == 0 ? null : liveBlock(address);
            if (b == null) {
                return false;
            }
            if (!device().hasStream(stream)) {
                throw new UnknownStreamException(stream, toString());
            }
            b.addStream(stream.handle());
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void recordStream(long address, DeviceStream stream) {
        Objects.requireNonNull(stream, "stream");
        if (address != 0 && !recordEvent(address, stream)) {
            throw new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, address, toString());
        }
    }

    // ================================================================================================ empty_cache

    @Override
    public void releaseCachedMemory() {
        emptyCache();
    }

    @Override
    public void emptyCache() {
        lock.lock();
        try {
            ensureOpen();
            processEvents();
            releaseCached();
        } finally {
            lock.unlock();
        }
    }

    private boolean hasCachedDeviceBlocks() {
        for (BlockStack s : allFreeLists()) {
            for (int i = 0; i < s.count; i++) {
                if (!s.items[i].reserve) {
                    return true;
                }
            }
        }
        return false;
    }

    List<BlockStack> allFreeLists() {
        List<BlockStack> lists = new ArrayList<>();
        for (BlockStack s : bucketLists) {
            if (s != null) {
                lists.add(s);
            }
        }
        for (int i = 0; i < exactLists.count; i++) {
            lists.add(exactLists.stacks[i]);
        }
        return lists;
    }

    /**
     * PyTorch's {@code empty_cache} after its {@code process_events}: every cached block goes back to the device,
     * except the reserve segment's pieces, which stay on their free lists (PyTorch drops them from its lists without
     * freeing them, so that part of the reserve can never be used again). A block whose free the device refuses
     * stays cached; the first failure is thrown once every other block was tried.
     */
    private void releaseCached() {
        long reservedBefore = reservedBytes;
        long start = startRelease();
        try {
            releaseCachedBlocks();
        } finally {
            endRelease(start, reservedBefore - reservedBytes, true);
        }
    }

    private void releaseCachedBlocks() {
        RuntimeException failure = null;
        for (BlockStack s : allFreeLists()) {
            int kept = 0;
            for (int i = 0; i < s.count; i++) {
                Block b = s.items[i];
                if (!b.reserve) {
                    try {
                        freeToDevice(b);
                        continue;
                    } catch (RuntimeException e) {
                        failure = Failures.chain(failure, e);
                    }
                }
                s.items[kept++] = b;
            }
            Arrays.fill(s.items, kept, s.count, null);
            s.count = kept;
        }
        exactLists.compact();
        if (failure != null) {
            throw failure;
        }
    }

    /** PyTorch's {@code free_block}: {@code cudaFreeHost}, timed, and the block is gone. */
    private void freeToDevice(Block b) {
        long start = System.nanoTime();
        device().free(b.ptr);
        hostStats.hostFreeTimed((System.nanoTime() - start) / 1000);
        deviceFrees++;
        reservedBytes -= b.size;
        forget(b);
    }

    private void forget(Block b) {
        hostStats.blockRemoved(b.size);
        byAddress.remove(b.ptr, -1);
        table[b.handle] = null;
        if (spareCount == spareHandles.length) {
            spareHandles = Arrays.copyOf(spareHandles, spareCount * 2);
        }
        spareHandles[spareCount++] = b.handle;
    }

    // ================================================================================================ stats

    @Override
    public Map<String, Long> hostMemoryStats() {
        return copyLocked(hostStats::asMap);
    }

    @Override
    public void resetAccumulatedStats() {
        runLocked(() -> {
            hostStats.resetAccumulated();
            allocationCount = 0;
            freeCount = 0;
        });
    }

    @Override
    public void resetPeakStats() {
        runLocked(() -> {
            hostStats.resetPeaks();
            peakLive = live;
            peakLiveBytes = liveBytes;
            peakRequestedBytes = requestedBytes;
            peakReservedBytes = reservedBytes;
            largestRequest = 0;
        });
    }

    private long reserveTail() {
        return reserveBase == 0 ? 0 : options.reserveSegmentSize() - reserveUsed;
    }

    @Override
    public AllocatorStats stats() {
        return copyLocked(() -> {
            long largestFree = reserveTail();
            for (BlockStack s : allFreeLists()) {
                for (int i = 0; i < s.count; i++) {
                    largestFree = Math.max(largestFree, s.items[i].extent);
                }
            }
            return AllocatorStats.builder()
                    .allocationCount(allocationCount).freeCount(freeCount)
                    .activeAllocations(live).peakActiveAllocations(peakLive)
                    .allocatedBytes(liveBytes).peakAllocatedBytes(peakLiveBytes)
                    .requestedBytes(requestedBytes).peakRequestedBytes(peakRequestedBytes)
                    .reservedBytes(reservedBytes).peakReservedBytes(peakReservedBytes)
                    .largestAllocation(largestRequest).largestFreeBlock(largestFree)
                    .deviceMallocs(deviceMallocs).deviceFrees(deviceFrees)
                    .allocationRetries(retries).outOfMemoryErrors(outOfMemoryErrors).limitBytes(Long.MAX_VALUE)
                    .build();
        });
    }

    /**
     * The gauges of the one pool, "all", under the lock: reserved and allocated as {@link #stats()} has them;
     * active is allocated plus the blocks whose free waits on stream events (PyTorch's pending blocks, counted in
     * its {@code active_bytes} too); requested the allocated blocks' requests; inactive-split the free pieces of the
     * reserve segment (the one segment this allocator splits; PyTorch keeps no such figure for pinned memory). Both
     * are a walk of the blocks on read, for a figure read only when a registry scrapes.
     */
    @Override
    public List<PoolUsage> memoryUsage() {
        return copyLocked(() -> {
            long pending = 0;
            long freeReservePieces = 0;
            for (int h = 0; h < tableSize; h++) {
                Block b = table[h];
                if (b == null) {
                    continue;
                }
                if (b.state == Block.PENDING) {
                    pending += b.extent;
                } else if (b.state == Block.FREE && b.reserve) {
                    freeReservePieces += b.extent;
                }
            }
            return List.of(new PoolUsage(PoolUsage.ALL, reservedBytes, liveBytes, liveBytes + pending,
                    requestedBytes, freeReservePieces));
        });
    }

    /** Bytes held from the device (every block and the reserve segment), read without the lock. */
    @Override
    public long reservedBytes() {
        return reservedBytes;
    }

    /** The extents of the allocated blocks, as {@link #stats()} reports them, read without the lock. */
    @Override
    public long allocatedBytes() {
        return liveBytes;
    }

    /** The requests of the allocated blocks, read without the lock. */
    @Override
    public long requestedBytes() {
        return requestedBytes;
    }

    /** {@link CachingHostOptions#roundSize}. */
    @Override
    public long roundedSize(long requested) {
        return options.roundSize(requested);
    }

    // ================================================================================================ snapshot

    private static BlockState stateOf(Block b) {
        return switch (b.state) {
            case Block.ALLOCATED -> BlockState.ALLOCATED;
            case Block.PENDING -> BlockState.PENDING_FREE;
            default -> BlockState.FREE;
        };
    }

    /** A block keeps its request while allocated and while its free waits on events, as PyTorch's snapshot. */
    private static BlockSnapshot snapshotOf(Block b) {
        BlockState state = stateOf(b);
        boolean active = state == BlockState.ALLOCATED || state == BlockState.PENDING_FREE;
        return new BlockSnapshot(b.ptr, b.extent, active ? b.requested : 0, state);
    }

    /**
     * One segment per device allocation: pool {@code pinned} for a block's own allocation (one block, the whole
     * segment), pool {@code pinned_reserve} for the reserve segment (its pieces in address order, then its unused
     * tail as one free block). Settings, the options in effect: {@code configuration} (the configuration text),
     * {@code pinned_round_threshold_bytes} (0: PyTorch's power-of-two rounding everywhere),
     * {@code pinned_reserve_segment_size_bytes} (0: none), {@code pinned_use_background_threads},
     * {@code pinned_use_cuda_host_register} (always false: only {@code False} is accepted) and
     * {@code pinned_num_register_threads}.
     */
    @Override
    public MemorySnapshot snapshot() {
        lock.lock();
        try {
            List<SegmentSnapshot> segments = new ArrayList<>();
            List<Block> reservePieces = new ArrayList<>();
            for (int h = 0; h < tableSize; h++) {
                Block b = table[h];
                if (b == null) {
                    continue;
                }
                if (b.reserve) {
                    reservePieces.add(b);
                } else {
                    segments.add(new SegmentSnapshot(b.ptr, b.size, 0, "pinned", List.of(snapshotOf(b))));
                }
            }
            if (reserveBase != 0) {
                reservePieces.sort(Comparator.comparingLong(b -> b.ptr));
                List<BlockSnapshot> blocks = new ArrayList<>();
                for (Block b : reservePieces) {
                    blocks.add(snapshotOf(b));
                }
                if (reserveTail() > 0) {
                    blocks.add(new BlockSnapshot(reserveBase + reserveUsed, reserveTail(), 0, BlockState.FREE));
                }
                segments.add(new SegmentSnapshot(reserveBase, options.reserveSegmentSize(), 0, "pinned_reserve",
                        blocks));
            }
            segments.sort(Comparator.comparingLong(SegmentSnapshot::address));
            return new MemorySnapshot(name(), device().descriptor(), segments, stats(), settings);
        } finally {
            lock.unlock();
        }
    }

    // ================================================================================================ lifecycle

    /**
     * Returns every block, live or cached, and the reserve segment to the device, and destroys the events; a block
     * whose free fails is forgotten all the same (its memory is the device's to reclaim).
     */
    @Override
    protected void releaseAll(CloseFailures failures) {
        while (pendingCount > 0) {
            eventPool.addLast(pendingEvents[pendingHead]);
            pollPending();
        }
        for (int h = 0; h < tableSize; h++) {
            Block b = table[h];
            if (b == null) {
                continue;
            }
            if (b.state != Block.FREE) {
                hostStats.deactivated(b.size);
            }
            if (b.reserve) {
                forget(b);
                continue;
            }
            try {
                freeToDevice(b);
            } catch (RuntimeException e) {
                failures.add(e);
                forget(b);
            }
        }
        if (reserveBase != 0) {
            try {
                long start = System.nanoTime();
                device().free(reserveBase);
                hostStats.hostFreeTimed((System.nanoTime() - start) / 1000);
                deviceFrees++;
            } catch (RuntimeException e) {
                failures.add(e);
            }
            reserveBase = 0;
            reserveUsed = 0;
        }
        destroyEvents(eventPool, failures);
        Arrays.fill(bucketLists, null);
        exactLists.clear();
        byAddress.clear();
        live = 0;
        liveBytes = 0;
        requestedBytes = 0;
        reservedBytes = 0;
    }

    /**
     * Runs {@code inspection} under the allocator's lock: for the tests that read its bookkeeping
     * ({@code HostArenaInvariants}, a test fixture of this package).
     */
    void underLock(Runnable inspection) {
        lock.lock();
        try {
            inspection.run();
        } finally {
            lock.unlock();
        }
    }
}
