package io.devalloc.replay;

import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceReader;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * What a trace says beyond its allocations, in memory that grows with the trace's warm state and its segment rows,
 * never with its length: with {@code --warm}, the first, streaming pass over the trace ({@link #of}), which must
 * know before the replay starts; otherwise fed by the one replaying pass ({@link #streaming}) with every event that
 * is not an alloc or a free.
 *
 * <ul>
 *   <li>the number of events (in the first pass: for the progress bar, the timeline's sampling and the snapshot
 *       rule);</li>
 *   <li>the ground truth of a PyTorch trace: its {@code segment_*} rows counted, the reserved bytes they imply
 *       (starting from the sum of the presegments), and the sizes of its segment allocations and maps, in order;</li>
 *   <li>with a warm start: the {@code presegment} and {@code prealloc} rows, and the one look-ahead of the block-size
 *       inference (rule 3 in the package documentation): for each live block of a large segment, the address of the
 *       trace's first {@code alloc} in the space after it while it is still live;</li>
 *   <li>with a warm start, for restoring presegments as mapped ranges of expandable segments
 *       ({@link ExpandableLayout}): the {@code segment_map} rows, each with the size asked for by the {@code alloc}
 *       it was made for (the next {@code alloc} row: PyTorch maps inside {@code malloc}, before it records the
 *       allocation), and for each presegment without a live block the size asked for by the first {@code alloc}
 *       inside it before any {@code segment_unmap} or {@code segment_free} touched it (which tells its pool).</li>
 * </ul>
 */
final class TraceScan {

    /** A presegment or prealloc row. */
    record Pre(long address, long size, long stream, long line) {
        long end() {
            return address + size;
        }
    }

    /**
     * A {@code segment_map} row, with the size asked for by the allocation it was made for ({@code requested}), or
     * -1 when no {@code alloc} row followed it before an {@code oom} row or the trace's end.
     */
    record MapRow(long address, long size, long stream, long requested) {
        long end() {
            return address + size;
        }
    }

    final String trace;
    final boolean collectWarm;
    TraceFormat format;
    long events;

    // Ground truth.
    long segmentAllocs;
    long segmentMaps;
    long segmentFrees;
    long segmentUnmaps;
    long presegmentBytes;
    private long delta;
    private long maxDelta;
    /**
     * The sizes of the segment_alloc and segment_map rows, in order, as the comparison with the replay's device
     * mallocs keeps them (the trace's side of it; the replay adds its own).
     */
    final SegmentComparison segments = new SegmentComparison();

    /** The trace's {@code oom} entries, the first {@link CompactTrace#KEPT_OOMS} (a full scan only). */
    final List<RecordedOom> ooms = new ArrayList<>();
    long oomRows;
    /** Bytes live as requested: start-state blocks and allocs, less completed frees (each row's own size). */
    private long liveRequested;

    /** The runs of segment frees and unmaps, told apart at the end of a full scan (not a streaming one). */
    final FlushRuns flushes = new FlushRuns();
    /** Events after the start state: allocs, frees, segment rows and oom rows. */
    long recordedEvents;

    // Warm state.
    long presegments;
    long preallocs;
    final List<Pre> presegmentRows = new ArrayList<>();
    final List<Pre> preallocRows = new ArrayList<>();
    private boolean recordedEventsStarted;
    private long firstRecordedLine;

    // Rule 3's look-ahead: candidate free ranges after live blocks, sorted by start, disjoint.
    private OpenRanges gapRanges = OpenRanges.NONE;
    /** Block address → index of its candidate range. */
    private final LongLongHashMap gapOfBlock = new LongLongHashMap();

    // The segment_map rows and what the first allocs inside the presegments asked for (expandable restores).
    final List<MapRow> mapRows = new ArrayList<>();
    /** Maps waiting for the alloc they were made for. */
    private final List<TraceEvent> pendingMaps = new ArrayList<>();
    /** The presegments; open while their first alloc is still to be seen and no unmap or free has touched them. */
    private OpenRanges presegmentRanges = OpenRanges.NONE;

    /**
     * Whether a presegment or prealloc row after the recorded events fails at once (a warm start's first pass) or is
     * remembered ({@link #misplacedWarmRow}) for a warm replay to throw (a {@link CompactTrace}, which cold replays
     * use too).
     */
    private final boolean strict;
    /** The message of the first presegment or prealloc row after the recorded events (lenient scans), or null. */
    private String misplacedWarmRow;

    private TraceScan(String trace, boolean collectWarm, boolean strict) {
        this.trace = trace;
        this.collectWarm = collectWarm;
        this.strict = strict;
    }

    /**
     * A scan fed by the replay itself ({@link #accept}), for a replay in one pass: no warm state is collected, and
     * alloc and free events are not passed to it (so {@link #events} is not the trace's count).
     */
    static TraceScan streaming(String trace, TraceFormat format) {
        TraceScan scan = new TraceScan(trace, false, true);
        scan.format = format;
        return scan;
    }

    /**
     * A scan that collects the warm state, fed with every event by its caller ({@link #accept}, then
     * {@link #endOfRows}), as a {@link CompactTrace} reads its trace: like {@link #of}, except that a presegment or
     * prealloc row after the recorded events does not fail here but in {@link #requireWarmRowsFirst}, which only a
     * warm replay calls.
     */
    static TraceScan collecting(String trace, TraceFormat format) {
        TraceScan scan = new TraceScan(trace, true, false);
        scan.format = format;
        return scan;
    }

    /**
     * Throws what {@link #of} would have thrown for a presegment or prealloc row after the recorded events.
     *
     * @throws IllegalArgumentException naming the row, if there is one
     */
    void requireWarmRowsFirst() {
        if (misplacedWarmRow != null) {
            throw new IllegalArgumentException(misplacedWarmRow);
        }
    }

    /**
     * A fresh comparison of the replay's device mallocs with this scan's segment rows, for one replay of a trace
     * whose scan is shared by many ({@link CompactTrace}); this scan's own is left untouched.
     */
    SegmentComparison newSegmentComparison() {
        return segments.copyOfTraceSide();
    }

    /**
     * Reads {@code source} once from start to end, as {@link #collecting} would: a presegment or prealloc row after
     * the recorded events is remembered, not refused (a cold replay ignores such rows).
     */
    static TraceScan collectingAll(String trace, TraceSource source) throws IOException {
        TraceScan scan;
        try (TraceReader reader = source.open()) {
            scan = collecting(trace, reader.format());
            for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                scan.accept(e);
            }
        }
        scan.endOfRows();
        return scan;
    }

    /** Reads {@code source} once from start to end. */
    static TraceScan of(String trace, TraceSource source) throws IOException {
        TraceScan scan = new TraceScan(trace, true, true);
        try (TraceReader reader = source.open()) {
            scan.format = reader.format();
            for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                scan.accept(e);
            }
        }
        scan.endOfRows();
        return scan;
    }

    /** Whether the trace is a PyTorch snapshot, whose segment rows are the ground truth. */
    boolean isPyTorch() {
        return format == TraceFormat.PYTORCH_CSV || format == TraceFormat.PYTORCH_PICKLE;
    }

    /**
     * Whether the trace carries ground truth: a PyTorch trace with recorded events and with segment rows or a warm
     * start. A PyTorch CSV that a recorder wrote has neither (a decorator cannot see device mallocs), so there is
     * nothing to compare with; and a trace of its end state only (no event after its start rows) recorded no
     * decision of the allocator: replaying it and finding the start state again would prove nothing.
     */
    boolean hasGroundTruth() {
        return isPyTorch() && recordedEvents > 0 && (presegments > 0 || groundTruthMallocs() > 0
                || groundTruthFrees() > 0);
    }

    /** Whether the trace starts from a warm allocator (it has presegment or prealloc rows). */
    boolean startsWarm() {
        return presegments > 0 || preallocs > 0;
    }

    long groundTruthMallocs() {
        return segmentAllocs + segmentMaps;
    }

    long groundTruthFrees() {
        return segmentFrees + segmentUnmaps;
    }

    /** The trace's peak reserved bytes: the presegments, plus segment allocs and maps, minus frees and unmaps. */
    long groundTruthPeakReserved() {
        return presegmentBytes + maxDelta;
    }

    /** Takes the trace's next event. */
    void accept(TraceEvent e) {
        events++;
        switch (e.kind()) {
            case PRESEGMENT -> {
                presegments++;
                presegmentBytes += e.size();
                if (collectWarm) {
                    requireBeforeRecordedEvents(e, "presegment");
                    presegmentRows.add(new Pre(e.key(), e.size(), e.stream(), e.line()));
                }
            }
            case PREALLOC -> {
                preallocs++;
                liveRequested = saturatedAdd(liveRequested, e.size());
                if (collectWarm) {
                    requireBeforeRecordedEvents(e, "prealloc");
                    preallocRows.add(new Pre(e.key(), e.size(), e.stream(), e.line()));
                }
            }
            case SEGMENT_ALLOC, SEGMENT_MAP -> {
                if (collectWarm) {
                    flushes.otherEvent(e.kind(), e.size());
                }
                if (e.kind() == TraceEvent.Kind.SEGMENT_ALLOC) {
                    segmentAllocs++;
                } else {
                    segmentMaps++;
                    if (collectWarm) {
                        pendingMaps.add(e);
                    }
                }
                segments.trace(e.size());
                delta += e.size();
                maxDelta = Math.max(maxDelta, delta);
                recorded(e);
            }
            case SEGMENT_FREE, SEGMENT_UNMAP -> {
                if (collectWarm) {
                    flushes.flushRow(events, e.flags(), presegmentBytes + delta);
                }
                if (e.kind() == TraceEvent.Kind.SEGMENT_FREE) {
                    segmentFrees++;
                } else {
                    segmentUnmaps++;
                }
                delta -= e.size();
                recorded(e);
                // The presegments it touches may be given back (and their address space reused by another pool), so
                // later allocs there say nothing about them.
                if (presegmentRanges.anyOpen()) {
                    presegmentRanges.closeOverlapping(e.key(), e.key() + e.size());
                }
            }
            case ALLOC -> {
                recorded(e);
                liveRequested = saturatedAdd(liveRequested, e.size());
                if (collectWarm) {
                    flushes.otherEvent(e.kind(), e.size());
                }
                if (gapRanges.anyOpen()) {
                    gapRanges.firstAlloc(e.key(), e.key());
                }
                if (!pendingMaps.isEmpty()) {
                    flushMaps(e.size());
                }
                if (presegmentRanges.anyOpen()) {
                    presegmentRanges.firstAlloc(e.key(), e.size());
                }
            }
            case FREE -> {
                recorded(e);
                liveRequested = saturatedAdd(liveRequested, -e.size());
                if (collectWarm) {
                    flushes.otherEvent(e.kind(), e.size());
                }
                if (gapRanges.anyOpen()) {
                    long g = gapOfBlock.get(e.key(), -1);
                    if (g >= 0) {
                        gapRanges.close((int) g);
                    }
                }
            }
            case OOM -> {
                recorded(e);
                if (collectWarm) {
                    flushes.otherEvent(e.kind(), e.size());
                    flushes.oom(presegmentBytes + delta, e.key(), e.size());
                    oomRows++;
                    if (ooms.size() < CompactTrace.KEPT_OOMS) {
                        ooms.add(new RecordedOom(events, Math.max(0, e.size()), presegmentBytes + delta,
                                Math.max(0, liveRequested), e.key() < 0 ? -1 : e.key()));
                    }
                }
                // A map followed by an oom was made for a request that failed: its size is not known here.
                flushMaps(-1);
            }
        }
    }

    /** {@code a + b}, held at the long range: a hostile trace's sizes must not wrap the live bytes around. */
    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        if (((a ^ r) & (b ^ r)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    private void requireBeforeRecordedEvents(TraceEvent e, String what) {
        if (recordedEventsStarted) {
            String message = trace + ":" + e.line() + ": a " + what + " row after the recorded events"
                    + " (which start at line " + firstRecordedLine + "); a warm start needs the presegment and"
                    + " prealloc rows first";
            if (strict) {
                throw new IllegalArgumentException(message);
            }
            if (misplacedWarmRow == null) {
                misplacedWarmRow = message;
            }
        }
    }

    private void recorded(TraceEvent e) {
        recordedEvents++;
        if (!recordedEventsStarted) {
            recordedEventsStarted = true;
            firstRecordedLine = e.line();
            if (collectWarm) {
                openGaps();
                openPresegments();
            }
        }
    }

    /** The trace has ended: the maps still waiting for an alloc get none. */
    void endOfRows() {
        if (!recordedEventsStarted && collectWarm) {
            openGaps();
        }
        flushMaps(-1);
        if (collectWarm) {
            flushes.finish(groundTruthPeakReserved());
        }
    }

    /**
     * The trace's cache flushes told apart, and the capacity it tells: from a full scan ({@link #of},
     * {@link #collecting}); null from a streaming one, which sees too little to tell.
     */
    CacheFlushes cacheFlushes() {
        return collectWarm ? flushes.summary() : null;
    }

    /** The runs of segment frees told apart, for a replay's dispatch; null from a streaming scan. */
    FlushRuns decidedFlushes() {
        return collectWarm ? flushes : null;
    }

    /** Whether the trace recorded anything after its start state: an allocator decision to compare with. */
    boolean hasHistory() {
        return recordedEvents > 0;
    }

    private void flushMaps(long requested) {
        for (TraceEvent m : pendingMaps) {
            mapRows.add(new MapRow(m.key(), m.size(), m.stream(), requested));
        }
        pendingMaps.clear();
    }

    // ---------------------------------------------------------------------------------------------- warm state

    /**
     * The presegments by address, each with its prealloc rows sorted by address.
     *
     * @throws IllegalArgumentException if a prealloc row lies in no presegment
     */
    NavigableMap<Long, List<Pre>> blocksBySegment() {
        TreeMap<Long, Pre> segments = new TreeMap<>();
        for (Pre s : presegmentRows) {
            segments.put(s.address(), s);
        }
        TreeMap<Long, List<Pre>> blocks = new TreeMap<>();
        for (Pre s : presegmentRows) {
            blocks.put(s.address(), new ArrayList<>());
        }
        for (Pre b : preallocRows) {
            var e = segments.floorEntry(b.address());
            if (e == null || b.address() >= e.getValue().end()) {
                throw new IllegalArgumentException(trace + ":" + b.line() + ": prealloc block at 0x"
                        + Long.toHexString(b.address()) + " lies in no presegment");
            }
            blocks.get(e.getKey()).add(b);
        }
        for (List<Pre> list : blocks.values()) {
            list.sort((x, y) -> Long.compare(x.address(), y.address()));
        }
        return blocks;
    }

    /** The segment a presegment row describes, by address. */
    Pre presegmentAt(long address) {
        for (Pre s : presegmentRows) {
            if (s.address() == address) {
                return s;
            }
        }
        throw new IllegalArgumentException("no presegment at 0x" + Long.toHexString(address));
    }

    /**
     * The address of the trace's first alloc in the space after the live block at {@code blockAddress}, made while
     * that block was still live, or -1 if there was none (or the block is not in a large segment).
     */
    long firstAllocAfter(long blockAddress) {
        long g = gapOfBlock.get(blockAddress, -1);
        return g < 0 ? -1 : gapRanges.firstAllocOf((int) g);
    }

    /**
     * The size asked for by the first {@code alloc} inside the presegment at {@code address} before any
     * {@code segment_unmap} or {@code segment_free} touched it, or -1 if there was none or the presegment holds a
     * live block ({@code prealloc} row).
     */
    long firstAllocIn(long address) {
        return presegmentRanges.firstAllocStartingAt(address);
    }

    /**
     * Starts watching the presegments that hold no live block for their first alloc (a live block tells the pool
     * already). Presegments do not overlap in a trace PyTorch wrote; where they do, an alloc counts for the one that
     * starts last below it.
     */
    private void openPresegments() {
        if (presegmentRows.isEmpty()) {
            return;
        }
        List<Pre> sorted = new ArrayList<>(presegmentRows);
        sorted.sort((x, y) -> Long.compare(x.address(), y.address()));
        int n = sorted.size();
        long[] start = new long[n];
        long[] end = new long[n];
        for (int i = 0; i < n; i++) {
            start[i] = sorted.get(i).address();
            end[i] = sorted.get(i).end();
        }
        presegmentRanges = new OpenRanges(start, end);
        for (Pre b : preallocRows) {
            int i = presegmentRanges.openAt(b.address());
            if (b.size() > 0 && i >= 0) {
                presegmentRanges.close(i);
            }
        }
    }

    /**
     * Opens the look-ahead's candidate ranges: after each live block of a large segment (not 2 MiB), from the end of
     * its request to the next live block or the segment's end. The block's real end lies inside (its rounded size
     * is at least the request), and no alloc can land between the request's end and the block's end while it is live,
     * so the first alloc in the range is the first one in the free space after the block.
     */
    private void openGaps() {
        if (presegmentRows.isEmpty() || preallocRows.isEmpty()) {
            return;
        }
        NavigableMap<Long, List<Pre>> bySegment = blocksBySegment();
        List<long[]> ranges = new ArrayList<>();
        for (var e : bySegment.entrySet()) {
            Pre seg = presegmentAt(e.getKey());
            if (seg.size() == WarmStart.PYTORCH_SMALL_SEGMENT) {
                continue;
            }
            List<Pre> blocks = e.getValue();
            for (int i = 0; i < blocks.size(); i++) {
                Pre b = blocks.get(i);
                long boundary = i + 1 < blocks.size() ? blocks.get(i + 1).address() : seg.end();
                if (b.end() < boundary) {
                    ranges.add(new long[] {b.end(), boundary, b.address()});
                }
            }
        }
        ranges.sort((x, y) -> Long.compare(x[0], y[0]));
        int n = ranges.size();
        long[] start = new long[n];
        long[] end = new long[n];
        for (int i = 0; i < n; i++) {
            long[] r = ranges.get(i);
            start[i] = r[0];
            end[i] = r[1];
            if (r[2] != 0) {
                gapOfBlock.put(r[2], i, -1);
            }
        }
        gapRanges = new OpenRanges(start, end);
    }

    /**
     * Disjoint address ranges sorted by start (the presegments, the look-ahead's gaps), each open until it is closed,
     * and what the first alloc in each gave (-1 while none): the scan watches the open ones on every alloc and free.
     */
    private static final class OpenRanges {

        static final OpenRanges NONE = new OpenRanges(new long[0], new long[0]);

        private final long[] start;
        private final long[] end;
        private final long[] firstAlloc;
        private final boolean[] open;
        private int openCount;

        /** The ranges {@code [start[i], end[i])}, sorted by start, all open. */
        OpenRanges(long[] start, long[] end) {
            this.start = start;
            this.end = end;
            firstAlloc = new long[start.length];
            Arrays.fill(firstAlloc, -1);
            open = new boolean[start.length];
            Arrays.fill(open, true);
            openCount = start.length;
        }

        boolean anyOpen() {
            return openCount > 0;
        }

        /** The open range holding {@code address} (the last one starting at or below it); -1 for none. */
        int openAt(long address) {
            int i = Arrays.binarySearch(start, address);
            if (i < 0) {
                i = -i - 2;
            }
            return i >= 0 && address < end[i] && open[i] ? i : -1;
        }

        void close(int i) {
            if (open[i]) {
                open[i] = false;
                openCount--;
            }
        }

        /** An alloc at {@code address}: the open range holding it keeps {@code value} and closes. */
        void firstAlloc(long address, long value) {
            int i = openAt(address);
            if (i >= 0) {
                firstAlloc[i] = value;
                close(i);
            }
        }

        /** Closes the open ranges that overlap {@code [from, to)}. */
        void closeOverlapping(long from, long to) {
            for (int i = 0; i < start.length; i++) {
                if (open[i] && start[i] < to && from < end[i]) {
                    close(i);
                }
            }
        }

        long firstAllocOf(int i) {
            return firstAlloc[i];
        }

        /** What the first alloc gave in the range that starts at {@code address}; -1 for none or no such range. */
        long firstAllocStartingAt(long address) {
            int i = Arrays.binarySearch(start, address);
            return i < 0 ? -1 : firstAlloc[i];
        }
    }
}
