package io.devalloc.replay.bounds;

import java.util.Arrays;

/**
 * The offset ranges of the intervals placed so far, indexed by time, for the best-fit search of
 * {@link HeapPlacement}: given a new interval's time range, the free gaps in offset space among the placed intervals
 * that overlap it in time, without visiting those intervals one by one.
 *
 * <p><b>Why not XLA's interval tree.</b> XLA's {@code BufferIntervalTree} returns every placed buffer that overlaps
 * the new one, and {@code FindChunkCandidate} sorts their chunks by offset: O(k log k) for k overlapping buffers. A
 * training trace keeps hundreds to thousands of blocks live at once and a million-event trace has a third of a
 * million of them, so that is billions of steps. Here the time axis (in ranks: interval {@code i} occupies ranks
 * {@code [i, endRank(i))}, see {@link LiveIntervals}) is a segment tree, and every tree node keeps two sorted lists
 * of disjoint offset <em>runs</em>, where touching or overlapping ranges are merged into one run:
 * <ul>
 *   <li>{@code own(v)}: the union of the ranges of the intervals whose time range the tree stores at {@code v} (its
 *       canonical nodes, as a segment tree splits a range into at most two nodes per level);</li>
 *   <li>{@code sub(v)}: the union of {@code own(u)} over every {@code u} in {@code v}'s subtree.</li>
 * </ul>
 * Two node ranges intersect exactly when one node is an ancestor of the other, so the placed intervals that
 * overlap a time range {@code [s, e)} are exactly those in {@code sub(c)} of its canonical nodes {@code c} and
 * those in {@code own(a)} of their proper ancestors {@code a}, which all lie on the paths from leaves {@code s} and
 * {@code e - 1} to the root. The occupied offsets are the union of those O(log n) lists, merged with a small heap.
 * Best fit packs intervals against one another (each one placed at the end of a run, or at 0), so the lists stay
 * short: on the training traces measured, about ten lists and a hundred runs per search, thirty lists of ten runs
 * per insert.
 *
 * <p><b>The worst case, bounded.</b> Lists fragment when many long-lived intervals are placed out of time order
 * (largest first, in a trace where most blocks live long: each list then holds a scattered subset of offsets whose
 * union over a query's lists is whole again), and a search or an insert then walks long lists. Three limits keep
 * that bounded, each keeping every plan valid (no two intervals that overlap in time overlap in offset) at the price
 * of exactness, each counted in {@link #approximations()}:
 * <ul>
 *   <li>a list that would exceed {@value #MAX_RUNS} runs fills its narrowest hole (it then reads as occupied, so
 *       later searches skip it);</li>
 *   <li>a search stops after {@value #MAX_SCANNED_RUNS} runs, with the best gap seen so far, or the top;</li>
 *   <li>the work (runs merged, shifted and filled) has a budget of {@value #WORK_PER_INTERVAL_LEVEL} per interval and
 *       level of the tree, twice what the costliest trace measured needed: past it, the index keeps only the highest
 *       end of each list and every later interval goes on top of the placed intervals it overlaps (no gap search),
 *       in O(log n) each.</li>
 * </ul>
 * So a placement costs O(n log n) before the budget runs out and O(log n) per interval after it, whatever the trace.
 *
 * <p>Not thread-safe: one placement owns one index.
 */
final class TimeOffsetIndex {

    /** The most runs one list keeps. */
    static final int MAX_RUNS = 1024;
    /** The most runs one search merges. */
    static final int MAX_SCANNED_RUNS = 4096;
    /** The budget of work (runs merged, shifted or filled) per interval and level of the tree. */
    static final int WORK_PER_INTERVAL_LEVEL = 64;
    /** The most ranks an index takes: its lists are indexed by {@code int}, four per leaf. */
    static final int MAX_RANKS = 1 << 28;

    /** Leaves of the segment tree: a power of two, at least the number of ranks. Node {@code v}'s children are
     * {@code 2v} and {@code 2v + 1}; leaf {@code r} is node {@code leaves + r}. */
    private final int leaves;
    /**
     * List {@code 2v} is {@code own(v)}, list {@code 2v + 1} is {@code sub(v)}, null while empty (a list never
     * empties again): element 0 is the number of runs, then each run's start and end. The count lives in the array
     * so that a list costs one memory access, not two: the lists of a placement lie far apart in memory.
     */
    private final long[][] runs;
    private final int maxRuns;
    private final int maxScannedRuns;
    /** The work allowed before the index stops searching gaps. */
    private final long budget;
    private long work;
    /** Once the budget is spent: each list's highest end (its runs are no longer kept up to date); else null. */
    private long[] tops;
    private long approximations;

    // Scratch of a search: the lists it merges, the next run of each (an index into its array), that run's start,
    // and the merge heap (of list numbers, by that start).
    private long[][] merged = new long[64][];
    private int[] listOf = new int[64];
    private int[] next = new int[64];
    private long[] head = new long[64];
    private int[] heap = new int[64];

    /** @throws IllegalArgumentException if {@code ranks} is above {@link #MAX_RANKS} */
    TimeOffsetIndex(int ranks) {
        this(ranks, MAX_RUNS, MAX_SCANNED_RUNS, WORK_PER_INTERVAL_LEVEL);
    }

    /** With other limits than the defaults: for tests of the limits (caps at least 2, budget at least 0). */
    TimeOffsetIndex(int ranks, int maxRuns, int maxScannedRuns, int workPerIntervalLevel) {
        if (maxRuns < 2 || maxScannedRuns < 2 || workPerIntervalLevel < 0) {
            throw new IllegalArgumentException("caps must be at least 2 and the budget at least 0, got " + maxRuns
                    + ", " + maxScannedRuns + ", " + workPerIntervalLevel);
        }
        if (ranks > MAX_RANKS) {
            throw new IllegalArgumentException("an offline plan takes at most " + MAX_RANKS + " intervals, got "
                    + ranks);
        }
        this.maxRuns = maxRuns;
        this.maxScannedRuns = maxScannedRuns;
        int l = 1;
        int levels = 1;
        while (l < ranks) {
            l <<= 1;
            levels++;
        }
        leaves = l;
        runs = new long[4 * l][];
        budget = (long) workPerIntervalLevel * Math.max(ranks, 1) * levels;
    }

    /** The work done so far: runs merged by searches, shifted and filled by inserts. */
    long work() {
        return work;
    }

    /** Whether the budget is spent, so that intervals now go on top of those they overlap. */
    boolean stacking() {
        return tops != null;
    }

    /** Holes filled, searches cut short and searches skipped past the budget: 0 when every placement was exact. */
    long approximations() {
        return approximations;
    }

    /**
     * Where best fit puts {@code size} bytes (&gt; 0) live over ranks {@code [s, e)}: the lowest offset of the
     * smallest free gap among the placed intervals that overlap it in time (the gaps below the highest of their
     * ends, and the room from that end to {@code heapBytes}, as XLA's {@code FindChunkCandidate} counts it) that
     * holds it; else that highest end (the heap grows).
     */
    long bestFit(int s, int e, long size, long heapBytes) {
        int k = 0;
        for (int l = s + leaves, r = e + leaves; l < r; l >>>= 1, r >>>= 1) {
            if ((l & 1) != 0) {
                k = gather(k, 2 * l + 1);
                l++;
            }
            if ((r & 1) != 0) {
                r--;
                k = gather(k, 2 * r + 1);
            }
        }
        int h = 0;
        for (int a = s + leaves, b = e - 1 + leaves; a >= 1; a >>>= 1, b >>>= 1, h++) {
            if (outside(a, h, s, e)) {
                k = gather(k, 2 * a);
            }
            if (b != a && outside(b, h, s, e)) {
                k = gather(k, 2 * b);
            }
        }
        long top = 0;
        if (tops != null) {
            // Past the budget: on top of every placed interval that overlaps this one.
            for (int q = 0; q < k; q++) {
                top = Math.max(top, tops[listOf[q]]);
            }
            approximations++;
            return top;
        }
        for (int q = 0; q < k; q++) {
            long[] list = merged[q];
            top = Math.max(top, list[2 * (int) list[0]]);
            next[q] = 1;
            head[q] = list[1];
            heap[q] = q;
        }
        int heapSize = k;
        for (int q = k / 2 - 1; q >= 0; q--) {
            siftDown(q, heapSize);
        }
        long best = -1;
        long bestBytes = Long.MAX_VALUE;
        long covered = 0;
        int scanned = 0;
        while (heapSize > 0) {
            int q = heap[0];
            long[] list = merged[q];
            int at = next[q];
            long runStart = list[at];
            if (runStart > covered) {
                long gap = runStart - covered;
                if (gap >= size && gap < bestBytes) {
                    best = covered;
                    bestBytes = gap;
                    if (gap == size) {
                        // A gap of the exact size: nothing fits better, and no later gap ties at a lower offset.
                        break;
                    }
                }
            }
            covered = Math.max(covered, list[at + 1]);
            if (top - covered < size) {
                // Every gap still to come lies between here and the top: none of them can hold it.
                break;
            }
            if (at + 2 > 2 * (int) list[0]) {
                heap[0] = heap[--heapSize];
            } else {
                next[q] = at + 2;
                head[q] = list[at + 2];
            }
            siftDown(0, heapSize);
            if (++scanned == maxScannedRuns && heapSize > 0) {
                approximations++;
                break;
            }
        }
        spend((long) scanned + k);
        long room = heapBytes - top;
        if (room >= size && room < bestBytes) {
            best = top;
        }
        return best >= 0 ? best : top;
    }

    /** Records bytes {@code [from, to)} as occupied over ranks {@code [s, e)}. */
    void insert(int s, int e, long from, long to) {
        for (int l = s + leaves, r = e + leaves; l < r; l >>>= 1, r >>>= 1) {
            if ((l & 1) != 0) {
                add(2 * l, from, to);
                add(2 * l + 1, from, to);
                l++;
            }
            if ((r & 1) != 0) {
                r--;
                add(2 * r, from, to);
                add(2 * r + 1, from, to);
            }
        }
        int h = 0;
        for (int a = s + leaves, b = e - 1 + leaves; a >= 1; a >>>= 1, b >>>= 1, h++) {
            if (outside(a, h, s, e)) {
                add(2 * a + 1, from, to);
            }
            if (b != a && outside(b, h, s, e)) {
                add(2 * b + 1, from, to);
            }
        }
    }

    /** Whether node {@code v}, at height {@code h} above the leaves, covers a rank outside {@code [s, e)}. */
    private boolean outside(int v, int h, int s, int e) {
        long lo = ((long) v << h) - leaves;
        return lo < s || lo + (1L << h) > e;
    }

    /** Adds list {@code list} to the search's scratch when it has runs; returns the new count. */
    private int gather(int k, int list) {
        long[] r = runs[list];
        if (tops != null ? tops[list] == 0 : r == null) {
            return k;
        }
        if (k == merged.length) {
            merged = Arrays.copyOf(merged, 2 * k);
            listOf = Arrays.copyOf(listOf, 2 * k);
            next = Arrays.copyOf(next, 2 * k);
            head = Arrays.copyOf(head, 2 * k);
            heap = Arrays.copyOf(heap, 2 * k);
        }
        merged[k] = r;
        listOf[k] = list;
        return k + 1;
    }

    /** Moves the heap's element at {@code at} down to its place among the first {@code size}. */
    private void siftDown(int at, int size) {
        if (at >= size) {
            return;
        }
        int i = at;
        int q = heap[i];
        long key = head[q];
        while (true) {
            int child = 2 * i + 1;
            if (child >= size) {
                break;
            }
            if (child + 1 < size && head[heap[child + 1]] < head[heap[child]]) {
                child++;
            }
            if (head[heap[child]] >= key) {
                break;
            }
            heap[i] = heap[child];
            i = child;
        }
        heap[i] = q;
    }

    /** Merges {@code [from, to)} into list {@code list}. */
    private void add(int list, long from, long to) {
        if (tops != null) {
            tops[list] = Math.max(tops[list], to);
            return;
        }
        long[] r = runs[list];
        if (r == null) {
            r = new long[5];
            r[0] = 1;
            r[1] = from;
            r[2] = to;
            runs[list] = r;
            return;
        }
        int m = (int) r[0];
        // i: the first run that ends at or after `from`; j: the last that starts at or before `to`. Runs i..j touch
        // or overlap the new range; none does when i > j.
        int i = firstEndingAtOrAfter(r, m, from);
        int j = lastStartingAtOrBefore(r, m, to);
        long moved;
        if (i > j) {
            if (2 * m + 3 > r.length) {
                r = Arrays.copyOf(r, 2 * r.length - 1);
                runs[list] = r;
            }
            System.arraycopy(r, 1 + 2 * i, r, 3 + 2 * i, 2 * (m - i));
            r[1 + 2 * i] = from;
            r[2 + 2 * i] = to;
            moved = (long) m - i + 1;
            m++;
        } else {
            r[1 + 2 * i] = Math.min(r[1 + 2 * i], from);
            r[2 + 2 * i] = Math.max(r[2 + 2 * j], to);
            System.arraycopy(r, 3 + 2 * j, r, 3 + 2 * i, 2 * (m - j - 1));
            moved = (long) m - j;
            m -= j - i;
        }
        if (m > maxRuns) {
            approximations++;
            moved += m;
            m = fillNarrowestHole(r, m);
        }
        r[0] = m;
        spend(moved);
    }

    /** Counts {@code units} of work; once past the budget, keeps only each list's highest end from then on. */
    private void spend(long units) {
        work += units;
        if (work > budget && tops == null) {
            tops = new long[runs.length];
            for (int list = 0; list < runs.length; list++) {
                long[] r = runs[list];
                if (r != null) {
                    tops[list] = r[2 * (int) r[0]];
                    runs[list] = null;
                }
            }
        }
    }

    private static int firstEndingAtOrAfter(long[] r, int m, long from) {
        int lo = 0;
        int hi = m;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (r[2 + 2 * mid] >= from) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    private static int lastStartingAtOrBefore(long[] r, int m, long to) {
        int lo = 0;
        int hi = m;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (r[1 + 2 * mid] <= to) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo - 1;
    }

    /** Joins the two runs around the narrowest hole (the lowest of the narrowest); returns the new run count. */
    private static int fillNarrowestHole(long[] r, int m) {
        int at = 0;
        long narrowest = Long.MAX_VALUE;
        for (int h = 0; h + 1 < m; h++) {
            long hole = r[3 + 2 * h] - r[2 + 2 * h];
            if (hole < narrowest) {
                narrowest = hole;
                at = h;
            }
        }
        r[2 + 2 * at] = r[4 + 2 * at];
        System.arraycopy(r, 5 + 2 * at, r, 3 + 2 * at, 2 * (m - at - 2));
        return m - 1;
    }
}
