package io.devalloc.replay;

/**
 * The ground truth's sequence comparison: the sizes of our device mallocs (and maps) against the trace's
 * {@code segment_alloc}/{@code segment_map} rows, n-th against n-th, in one pass, whichever side comes first.
 *
 * <p>Why a queue: with a single pass over the trace, the trace's n-th segment row may not have been read when the
 * replay makes its n-th device malloc (the original allocator grew later, or not at all). Our sizes wait in a queue
 * until the trace's row arrives, and are dropped once a difference is found. The queue holds at most
 * {@value #MAX_WAITING} sizes; a replay that gets further ahead of the trace than that stops comparing there and says
 * so (the sizes beyond are not kept, so that memory stays bounded whatever the allocator does).
 *
 * <p>Not thread-safe: the replaying thread owns it.
 */
final class SegmentComparison {

    /** The most of our sizes kept while the trace has not caught up. */
    static final int MAX_WAITING = 1 << 20;

    private final LongList traceSizes = new LongList();
    private long ours;
    private long[] waiting = new long[16];
    private boolean[] waitingIsMap = new boolean[16];
    private int head;
    private int tail;
    private boolean overflowed;

    private long diffIndex = -1;
    private long diffOurs;
    private boolean diffIsMap;
    private boolean diffNotCompared;

    /**
     * A new comparison holding a copy of this one's trace sizes and none of ours: for a replay
     * of a trace read once ({@link CompactTrace}), each replay compares its own device mallocs.
     *
     * @throws IllegalStateException if this comparison has seen device mallocs of its own
     */
    SegmentComparison copyOfTraceSide() {
        if (ours != 0) {
            throw new IllegalStateException("the comparison already holds a replay's device mallocs");
        }
        SegmentComparison copy = new SegmentComparison();
        copy.traceSizes.addAll(traceSizes);
        return copy;
    }

    /** Our next device malloc (or map, when {@code map}) of {@code bytes}. */
    void ours(long bytes, boolean map) {
        long n = ours++;
        if (diffIndex >= 0) {
            return;
        }
        if (n < traceSizes.size()) {
            compare(n, bytes, map, traceSizes.get((int) n));
        } else if (!overflowed) {
            if (tail - head == MAX_WAITING) {
                overflowed = true;
                return;
            }
            if (tail == waiting.length) {
                compact();
            }
            waiting[tail] = bytes;
            waitingIsMap[tail] = map;
            tail++;
        }
    }

    /** The trace's next {@code segment_alloc} or {@code segment_map} row, of {@code bytes}. */
    void trace(long bytes) {
        int n = traceSizes.size();
        traceSizes.add(bytes);
        if (diffIndex >= 0 || n >= ours) {
            return;
        }
        if (head < tail) {
            compare(n, waiting[head], waitingIsMap[head], bytes);
            head++;
        } else {
            // Ours was made but not kept (more than MAX_WAITING ahead).
            diffIndex = n;
            diffNotCompared = true;
        }
    }

    private void compare(long n, long oursBytes, boolean map, long traceBytes) {
        if (oursBytes != traceBytes) {
            diffIndex = n;
            diffOurs = oursBytes;
            diffIsMap = map;
            head = tail = 0;
        }
    }

    private void compact() {
        int live = tail - head;
        if (live * 2 > waiting.length) {
            int capacity = Math.min(Math.max(16, waiting.length * 2), MAX_WAITING);
            long[] w = new long[capacity];
            boolean[] m = new boolean[capacity];
            System.arraycopy(waiting, head, w, 0, live);
            System.arraycopy(waitingIsMap, head, m, 0, live);
            waiting = w;
            waitingIsMap = m;
        } else {
            System.arraycopy(waiting, head, waiting, 0, live);
            System.arraycopy(waitingIsMap, head, waitingIsMap, 0, live);
        }
        head = 0;
        tail = live;
    }

    /** Our device mallocs and maps so far. */
    long oursCount() {
        return ours;
    }

    /** The trace's segment allocations and maps so far. */
    int traceCount() {
        return traceSizes.size();
    }

    /**
     * The first difference in the sequence, or null when the sizes agree as far as both go (the counts may still
     * differ).
     */
    String firstDifference() {
        if (diffIndex < 0) {
            int n = traceSizes.size();
            if (ours > n) {
                // Our (n+1)-th is the head of the queue, if it was kept.
                if (head < tail) {
                    return describe(n, waiting[head], waitingIsMap[head], "none in the trace (it made " + n + ")");
                }
                return "device malloc #" + (n + 1) + ": not compared (this replay made more than " + MAX_WAITING
                        + " device mallocs beyond the trace's)";
            }
            if (ours < n) {
                return "device malloc #" + (ours + 1) + ": none here (this replay made " + ours + "), "
                        + traceSizes.get((int) ours) + " B in the trace";
            }
            return null;
        }
        if (diffNotCompared) {
            return "device malloc #" + (diffIndex + 1) + ": not compared (this replay was more than " + MAX_WAITING
                    + " device mallocs ahead of the trace)";
        }
        return describe(diffIndex, diffOurs, diffIsMap, traceSizes.get((int) diffIndex) + " B in the trace");
    }

    private static String describe(long n, long oursBytes, boolean map, String trace) {
        return "device " + (map ? "map" : "malloc") + " #" + (n + 1) + ": " + oursBytes + " B here, " + trace;
    }
}
