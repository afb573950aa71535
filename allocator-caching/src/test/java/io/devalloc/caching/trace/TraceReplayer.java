package io.devalloc.caching.trace;

import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.caching.CachingOptions;
import io.devalloc.caching.TraceAction;
import io.devalloc.caching.TraceEntry;
import io.devalloc.caching.trace.CsvTrace.Action;
import io.devalloc.caching.trace.CsvTrace.Row;
import io.devalloc.sim.DeviceOperation;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Replays a {@link CsvTrace} on the caching allocator over a {@link SimulatedDevice}, and reports what the allocator
 * did next to what PyTorch did. See the package documentation for the rules (which rows are replayed, how streams
 * and addresses are mapped, how a warm allocator is seeded).
 *
 * <p>One replayer replays once. Not thread-safe.
 */
final class TraceReplayer {

    /** The simulated device's memory, as in the issue: an 80 GiB GPU. */
    static final long CAPACITY = 80 * ByteSize.GiB;
    /**
     * The simulated address space: [2 MiB, 2^47). The recorded addresses (around 2^35) must lie inside it for the
     * scripted presegment addresses; new segments then come top-down from 2^47, i.e. above every restored segment.
     */
    static final long TOP_ADDRESS = 1L << 47;
    static final long ADDRESS_SPACE = TOP_ADDRESS - 2 * ByteSize.MiB;

    private final CsvTrace trace;
    private final SimulatedDevice device;
    private final CachingAllocator allocator;
    private final CachingOptions options;
    private final Map<Long, DeviceStream> streams = new HashMap<>();
    /** Restored segments (at the trace's own addresses): address → size. */
    private final TreeMap<Long, Long> restoredSegments = new TreeMap<>();
    /** The trace's segment_alloc rows, paired in order with our device mallocs during the replay. */
    private final List<Row> traceNewSegments;
    /** Our segments allocated during the replay: our address → {the paired trace address or NONE, size}. */
    private final TreeMap<Long, long[]> newSegments = new TreeMap<>();
    private int pairedNew;
    private int deviceOpsSeen;
    private final int startOps;
    private final long startReserved;
    private boolean replayed;

    private TraceReplayer(CsvTrace trace, SimulatedDevice device, CachingOptions options) {
        this.trace = trace;
        this.device = device;
        this.options = options;
        this.allocator = CachingAllocatorProvider.create(device, options);
        this.traceNewSegments = trace.rows(Action.SEGMENT_ALLOC);
        seed();
        this.startReserved = allocator.memoryStats().get("reserved_bytes.all.current");
        this.deviceOpsSeen = device.history().size();
        this.startOps = deviceOpsSeen;
        // Recording clears the history, so it holds the replayed window only (the seeding is not in it).
        allocator.recordHistory(Math.max(16, trace.rows().size() * 2));
    }

    /**
     * A replayer with PyTorch's default settings on an 80 GiB simulated device whose new segments come top-down. A
     * trace recorded from an empty allocator starts empty; a warm trace's presegment and prealloc rows are restored
     * first, at their recorded addresses (see the package documentation).
     */
    static TraceReplayer of(CsvTrace trace) {
        return of(trace, CachingOptions.defaults());
    }

    /** As {@link #of(CsvTrace)} with explicit options. */
    static TraceReplayer of(CsvTrace trace, CachingOptions options) {
        return of(trace, options, false);
    }

    /**
     * As {@link #of(CsvTrace)}, with explicit options, and optionally with the device handing out the trace's own
     * {@code segment_alloc} addresses, in order, for the segments the replay allocates (after the presegments), so
     * that every segment sits where PyTorch's did and best-fit ties resolve as they did.
     */
    static TraceReplayer of(CsvTrace trace, CachingOptions options, boolean traceSegmentAddresses) {
        List<Long> scripted = new ArrayList<>();
        for (Row r : trace.rows(Action.PRESEGMENT)) {
            scripted.add(r.addr());
        }
        if (traceSegmentAddresses) {
            for (Row r : trace.rows(Action.SEGMENT_ALLOC)) {
                scripted.add(r.addr());
            }
        }
        SimulatedDevice device = SimulatedDevice.builder()
                .capacity(CAPACITY)
                .topAddress(TOP_ADDRESS)
                .addressSpace(ADDRESS_SPACE)
                .scriptedAddresses(scripted)
                .recordHistory(true)
                .build();
        return new TraceReplayer(trace, device, options);
    }

    CachingAllocator allocator() {
        return allocator;
    }

    SimulatedDevice device() {
        return device;
    }

    private DeviceStream stream(long traceStream) {
        if (traceStream == 0) {
            return DeviceStream.DEFAULT;
        }
        return streams.computeIfAbsent(traceStream, s -> device.createStream());
    }

    // ------------------------------------------------------------------------------------------------ seeding

    /** A restored segment: its address, size and the trace's prealloc blocks inside it. */
    private record PreSegment(long addr, long size, long stream, List<Row> blocks) {
        long end() {
            return addr + size;
        }

        boolean small() {
            // PyTorch's small pool has only 2 MiB segments; large segments are >= 10 MiB.
            return size == CachingOptions.SMALL_BUFFER;
        }
    }

    /** How the size of a restored block was inferred. */
    enum SizeRule {
        /** The rounded request: PyTorch split the rest off (or there was no rest). */
        ROUNDED,
        /** The rounded request plus the room up to the next live block or the segment's end (at most 1 MiB). */
        TAIL_TO_BOUNDARY,
        /** The rounded request plus the room up to where the trace's first alloc in the free space after it lands. */
        TAIL_TO_FIRST_ALLOC
    }

    /** The restored block of one prealloc row. */
    record RestoredBlock(Row row, long rounded, long blockSize, SizeRule rule) {
    }

    private final List<RestoredBlock> restored = new ArrayList<>();

    /** The restored blocks, in address order. */
    List<RestoredBlock> restoredBlocks() {
        return List.copyOf(restored);
    }

    /** A free range after a live block's rounded end that may still start with the block's unsplit tail. */
    private record Gap(Row block, long rounded, long start, long end) {
    }

    private void seed() {
        TreeMap<Long, PreSegment> segments = new TreeMap<>();
        for (Row r : trace.rows(Action.PRESEGMENT)) {
            long ours = allocator.restoreSegment(r.size(), stream(r.stream()));
            if (ours != r.addr()) {
                throw new IllegalStateException("presegment " + r + " was restored at " + ours);
            }
            segments.put(r.addr(), new PreSegment(r.addr(), r.size(), r.stream(), new ArrayList<>()));
            restoredSegments.put(r.addr(), r.size());
        }
        for (Row r : trace.rows(Action.PREALLOC)) {
            var e = segments.floorEntry(r.addr());
            if (e == null || r.addr() >= e.getValue().end()) {
                throw new IllegalStateException("prealloc " + r + " lies in no presegment");
            }
            e.getValue().blocks().add(r);
        }
        // Rule 1 (should_split): the rounded size, or up to the boundary when PyTorch would not have split.
        Map<Long, RestoredBlock> sizes = new HashMap<>();
        TreeMap<Long, Gap> gaps = new TreeMap<>();
        for (PreSegment seg : segments.values()) {
            List<Row> blocks = new ArrayList<>(seg.blocks());
            blocks.sort((a, b) -> Long.compare(a.addr(), b.addr()));
            for (int i = 0; i < blocks.size(); i++) {
                Row r = blocks.get(i);
                long boundary = i + 1 < blocks.size() ? blocks.get(i + 1).addr() : seg.end();
                long rounded = options.roundSize(r.size());
                long blockSize = inferBlockSize(rounded, boundary - r.addr(), seg.small());
                sizes.put(r.addr(), new RestoredBlock(r, rounded, blockSize,
                        blockSize == rounded ? SizeRule.ROUNDED : SizeRule.TAIL_TO_BOUNDARY));
                if (!seg.small() && blockSize == rounded && r.addr() + rounded < boundary) {
                    gaps.put(r.addr() + rounded, new Gap(r, rounded, r.addr() + rounded, boundary));
                }
            }
        }
        // Rule 2: the free space after a block may begin with the block's unsplit tail (<= 1 MiB) followed by a
        // free block. PyTorch allocates from the low end of a free block, so the trace's first alloc inside that
        // space (while the block is still live) lands exactly where the free block begins.
        Map<Long, Gap> byBlock = new HashMap<>();
        for (Gap g : gaps.values()) {
            byBlock.put(g.block().addr(), g);
        }
        for (Row r : trace.rows()) {
            if (gaps.isEmpty()) {
                break;
            }
            if (r.action() == Action.FREE_COMPLETED) {
                Gap g = byBlock.remove(r.addr());
                if (g != null) {
                    gaps.remove(g.start());
                }
            } else if (r.action() == Action.ALLOC) {
                var e = gaps.floorEntry(r.addr());
                if (e == null || r.addr() >= e.getValue().end()) {
                    continue;
                }
                Gap g = e.getValue();
                gaps.remove(g.start());
                byBlock.remove(g.block().addr());
                long tail = r.addr() - g.start();
                if (tail > 0 && tail <= CachingOptions.SMALL_SIZE && g.rounded() < options.maxSplitSize()) {
                    sizes.put(g.block().addr(), new RestoredBlock(g.block(), g.rounded(), g.rounded() + tail,
                            SizeRule.TAIL_TO_FIRST_ALLOC));
                }
            }
        }
        restored.addAll(sizes.values());
        restored.sort((a, b) -> Long.compare(a.row().addr(), b.row().addr()));
        for (Row r : trace.rows(Action.PREALLOC)) {
            RestoredBlock b = sizes.get(r.addr());
            allocator.restoreAllocation(r.addr(), b.blockSize(), r.size(), stream(r.stream()));
            live.put(r.addr(), r.addr(), NONE);
        }
    }

    /**
     * The size of a live block PyTorch made for a request that rounds to {@code rounded}, given the room up to the
     * next live block or the segment's end: PyTorch splits the remainder off only when {@code should_split} says
     * so (small pool: remainder &ge; 512 B; large pool: size &lt; max_split_size and remainder &gt; 1 MiB). In the
     * large pool every free block is larger than 1 MiB (each block is at least a rounded large request, and merging
     * only grows them), so room of at most 1 MiB past the rounded size can only be this block's unsplit tail.
     */
    long inferBlockSize(long rounded, long room, boolean small) {
        long remainder = room - rounded;
        if (remainder < 0) {
            throw new IllegalStateException("a block of " + rounded + " B does not fit in " + room + " B");
        }
        boolean split = small
                ? remainder >= CachingOptions.MIN_BLOCK_SIZE
                : rounded < options.maxSplitSize() && remainder > CachingOptions.SMALL_SIZE;
        return split || remainder == 0 ? rounded : room;
    }

    // ------------------------------------------------------------------------------------------------ replay

    private static final long NONE = Long.MIN_VALUE;
    /** Trace block address → our block address, for live blocks. */
    private final LongLongHashMap live = new LongLongHashMap(4096);

    /**
     * What the replay produced.
     *
     * @param mallocSizes         device mallocs during the replay, in order: sizes
     * @param mallocAddresses     and addresses
     * @param mallocSeqs          for each device malloc, the seq of the alloc row during which it happened
     * @param traceMallocSeqs     for each of the trace's segment_alloc rows, the seq of the alloc row that follows it
     *                            (the one PyTorch made the segment for), or -1 if none follows
     * @param segmentHistory      our history's segment_alloc entries, in order
     * @param segmentEvents       how many segment_alloc, segment_free, segment_map and segment_unmap entries our
     *                            history has
     * @param deviceFrees         device frees during the replay
     * @param startReserved       reserved bytes after seeding
     * @param peakReserved        {@code reserved_bytes.all.peak} at the end (seeding included)
     * @param endReserved         {@code reserved_bytes.all.current} at the end
     * @param endAllocated        {@code allocated_bytes.all.current} at the end
     * @param placementMismatches alloc rows whose block landed elsewhere than PyTorch's, comparing addresses
     *                            relative to paired segments (restored segments pair with themselves; our n-th new
     *                            segment with the trace's n-th segment_alloc)
     * @param firstMismatch       a description of the first such row, or null
     * @param allocs              alloc rows replayed
     * @param frees               free_completed rows replayed
     */
    record Result(List<Long> mallocSizes, List<Long> mallocAddresses, List<Long> mallocSeqs,
            List<Long> traceMallocSeqs, List<TraceEntry> segmentHistory, Map<TraceAction, Long> segmentEvents,
            long deviceFrees, long startReserved, long peakReserved, long endReserved, long endAllocated,
            long placementMismatches, String firstMismatch, long allocs, long frees) {
    }

    Result replay() {
        if (replayed) {
            throw new IllegalStateException("a replayer replays once");
        }
        replayed = true;
        List<Long> mallocSeqs = new ArrayList<>();
        List<Long> traceMallocSeqs = new ArrayList<>();
        long mismatches = 0;
        String firstMismatch = null;
        long allocs = 0;
        long frees = 0;
        int pendingTraceSegments = 0;
        long before = device.counters().mallocs();
        long deviceChanges = deviceChanges();
        for (Row r : trace.rows()) {
            switch (r.action()) {
                case ALLOC -> {
                    for (; pendingTraceSegments > 0; pendingTraceSegments--) {
                        traceMallocSeqs.add(r.seq());
                    }
                    long ours = allocator.malloc(r.size(), stream(r.stream()));
                    allocs++;
                    if (live.put(r.addr(), ours, NONE) != NONE) {
                        throw new IllegalStateException("row " + r + ": the trace allocates a live address again");
                    }
                    long after = device.counters().mallocs();
                    for (; before < after; before++) {
                        mallocSeqs.add(r.seq());
                    }
                    if (deviceChanges != deviceChanges()) {
                        deviceChanges = deviceChanges();
                        pairNewSegments();
                    }
                    long translated = toTraceAddress(ours);
                    if (translated != r.addr()) {
                        mismatches++;
                        if (firstMismatch == null) {
                            firstMismatch = "row " + r.seq() + " (alloc " + r.size() + " B): PyTorch 0x"
                                    + Long.toHexString(r.addr()) + ", ours 0x" + Long.toHexString(ours)
                                    + (translated == NONE ? " (in no paired segment)"
                                    : " = trace 0x" + Long.toHexString(translated));
                        }
                    }
                }
                case FREE_COMPLETED -> {
                    long ours = live.remove(r.addr(), NONE);
                    if (ours == NONE) {
                        throw new IllegalStateException("row " + r + ": free of an address that is not live");
                    }
                    allocator.free(ours);
                    frees++;
                    if (deviceChanges != deviceChanges()) {
                        deviceChanges = deviceChanges();
                        pairNewSegments();
                    }
                }
                case SEGMENT_ALLOC -> pendingTraceSegments++;
                case PRESEGMENT, PREALLOC, FREE_REQUESTED, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP, OOM, SNAPSHOT -> {
                    // Seeded before, or ground truth to compare with, not requests.
                }
                default -> throw new IllegalStateException("unhandled " + r);
            }
        }
        for (; pendingTraceSegments > 0; pendingTraceSegments--) {
            traceMallocSeqs.add(-1L);
        }
        List<Long> sizes = new ArrayList<>();
        List<Long> addresses = new ArrayList<>();
        long deviceFrees = 0;
        List<DeviceOperation> ops = device.history();
        for (DeviceOperation op : ops.subList(startOps, ops.size())) {
            if (op.kind() == DeviceOperation.Kind.MALLOC) {
                sizes.add(op.bytes());
                addresses.add(op.address());
            } else if (op.kind() == DeviceOperation.Kind.FREE) {
                deviceFrees++;
            }
        }
        Map<TraceAction, Long> segmentEvents = new EnumMap<>(TraceAction.class);
        for (TraceAction a : List.of(TraceAction.SEGMENT_ALLOC, TraceAction.SEGMENT_FREE, TraceAction.SEGMENT_MAP,
                TraceAction.SEGMENT_UNMAP)) {
            segmentEvents.put(a, 0L);
        }
        List<TraceEntry> segmentHistory = new ArrayList<>();
        for (TraceEntry e : allocator.history()) {
            segmentEvents.computeIfPresent(e.action(), (k, v) -> v + 1);
            if (e.action() == TraceAction.SEGMENT_ALLOC) {
                segmentHistory.add(e);
            }
        }
        Map<String, Long> stats = allocator.memoryStats();
        return new Result(sizes, addresses, mallocSeqs, traceMallocSeqs, segmentHistory, segmentEvents, deviceFrees,
                startReserved, stats.get("reserved_bytes.all.peak"), stats.get("reserved_bytes.all.current"),
                stats.get("allocated_bytes.all.current"), mismatches, firstMismatch, allocs, frees);
    }

    private long deviceChanges() {
        var c = device.counters();
        return c.mallocs() + c.frees();
    }

    /** Pairs our new device mallocs with the trace's segment_alloc rows, in order; forgets freed segments. */
    private void pairNewSegments() {
        List<DeviceOperation> ops = device.history();
        for (; deviceOpsSeen < ops.size(); deviceOpsSeen++) {
            DeviceOperation op = ops.get(deviceOpsSeen);
            if (op.kind() == DeviceOperation.Kind.FREE) {
                newSegments.remove(op.address());
                restoredSegments.remove(op.address());
            } else if (op.kind() == DeviceOperation.Kind.MALLOC) {
                long traceAddress = pairedNew < traceNewSegments.size() ? traceNewSegments.get(pairedNew).addr() : NONE;
                newSegments.put(op.address(), new long[] {traceAddress, op.bytes()});
                pairedNew++;
            }
        }
    }

    /** Our address in the trace's terms: the same offset in the paired segment; NONE if there is none. */
    private long toTraceAddress(long ours) {
        var e = newSegments.floorEntry(ours);
        if (e != null && ours < e.getKey() + e.getValue()[1]) {
            return e.getValue()[0] == NONE ? NONE : e.getValue()[0] + (ours - e.getKey());
        }
        var p = restoredSegments.floorEntry(ours);
        if (p != null && ours < p.getKey() + p.getValue()) {
            return ours;
        }
        return NONE;
    }
}
