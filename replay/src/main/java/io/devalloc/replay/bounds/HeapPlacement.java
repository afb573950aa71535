package io.devalloc.replay.bounds;

import io.devalloc.api.collect.OrderedHandleSet;
import io.devalloc.api.spi.SizeRounding;
import java.util.Objects;

/**
 * One offline plan of a trace: every interval of {@link LiveIntervals} given an offset in one address space, by an
 * allocator that knew every allocation's size and lifetime in advance, so that no two intervals live at the same
 * time share a byte. {@link #heapBytes()} (the highest offset + size) is the memory that plan needs: an upper bound
 * on what an optimal offline planner needs (finding the optimum is NP-hard, dynamic storage allocation), and never
 * below the rounded {@link LowerBound} (at that peak every live interval holds its own bytes).
 *
 * <p><b>The algorithm</b> is the greedy best-fit heap of XLA's {@code GlobalDecreasingSizeBestFitHeap}
 * ({@code xla/service/heap_simulator/heap_simulator.cc}: {@code GetSpatialBufferIntervalCompare},
 * {@code GetTemporalBufferIntervalCompare}, {@code FindChunkCandidate}, {@code CommitChunk}), which TFLite's arena
 * planner also follows ({@code tensorflow/lite/arena_planner.cc} orders tensors by size, descending, then first use;
 * {@code tensorflow/lite/simple_memory_arena.cc}'s {@code Allocate} takes the smallest gap that fits among the
 * allocations overlapping in time, else the end of them):
 * <ol>
 *   <li>Order the intervals ({@link PlanOrder}): by rounded size or by lifetime, both descending, ties broken by
 *       the other key, then by the interval that starts first.</li>
 *   <li>Place each in turn: among the already placed intervals that overlap it in time, the free gaps in offset
 *       space below the highest of their ends, and the room from that end up to the plan's current height
 *       ({@code heap_size} in XLA, which counts it as a free chunk); the smallest that holds it wins, the lowest
 *       offset among equals; when none does, it goes on top, at that highest end (the plan grows).</li>
 *   <li>An interval of 0 rounded bytes occupies nothing and sits at offset 0, as XLA places 0-sized buffers.</li>
 * </ol>
 * Unlike XLA, which collects every overlapping buffer from its {@code BufferIntervalTree} and sorts their chunks for
 * each placement (O(k log k) for k overlapping buffers: billions of steps on a million-event trace), the placed
 * ranges are kept as merged offset runs in a segment tree over time ({@code TimeOffsetIndex}): the same choice, from
 * O(log n) merged lists per placement. When every interval overlaps every other (a trace that never frees), best fit
 * stacks them in order, which is worked out directly. The choice is deterministic: the same intervals and rounding
 * give the same offsets on every run.
 *
 * <p><b>Cost and its bound.</b> O(n log n) to order, then per interval a search and an insert over O(log n) run
 * lists: on the training-like trace of a million events (half a million intervals, docs/benchmarks.md) both orders
 * take a few seconds on one core. Where lists fragment (many long-lived intervals placed out of time order), caps on
 * a list's runs and on a search's runs, and a budget on the total work, bound the cost at O(n log n) before the
 * budget is spent and O(log n) per interval after it (each interval then goes on top of those it overlaps); a
 * placement they touch stays valid but may be worse than the exact best fit, and {@link #approximations()} counts
 * them: 0 on every real trace measured. Memory: the offsets and the order (12 bytes per interval), the index (16
 * bytes per leaf of its time tree, at most 2 leaves per interval, plus the runs).
 *
 * <p>Immutable after construction: thread-safe.
 */
public final class HeapPlacement {

    private final PlanOrder order;
    private final LiveIntervals intervals;
    private final long[] sizes;
    private final long[] offsets;
    private final long heapBytes;
    private final long approximations;
    private final boolean stacking;
    private final long refusedByRounding;
    private final boolean saturated;

    private HeapPlacement(PlanOrder order, LiveIntervals intervals, RoundedSizes sizes, long[] offsets,
                          long heapBytes, long approximations, boolean stacking) {
        this.order = order;
        this.intervals = intervals;
        this.sizes = sizes.bytes;
        this.offsets = offsets;
        this.heapBytes = heapBytes;
        this.approximations = approximations;
        this.stacking = stacking;
        this.refusedByRounding = sizes.refused;
        this.saturated = sizes.saturated;
    }

    /**
     * Plans {@code intervals}, each at its size rounded by {@code rounding}, in {@code order}.
     *
     * @throws IllegalArgumentException if there are more than 2^28 intervals
     */
    public static HeapPlacement of(LiveIntervals intervals, SizeRounding rounding, PlanOrder order) {
        return of(intervals, RoundedSizes.of(intervals, rounding), order);
    }

    static HeapPlacement of(LiveIntervals intervals, RoundedSizes sizes, PlanOrder order) {
        return of(intervals, sizes, order, TimeOffsetIndex.MAX_RUNS, TimeOffsetIndex.MAX_SCANNED_RUNS,
                TimeOffsetIndex.WORK_PER_INTERVAL_LEVEL);
    }

    /** With the index's limits given: for tests of the limits. */
    static HeapPlacement of(LiveIntervals intervals, RoundedSizes sizes, PlanOrder order, int maxRuns,
                            int maxScannedRuns, int workPerIntervalLevel) {
        Objects.requireNonNull(intervals, "intervals");
        Objects.requireNonNull(order, "order");
        int n = intervals.count();
        long[] offsets = new long[n];
        if (sizes.saturated) {
            // The sizes' sum does not fit in a long, so offsets might not either: no plan, a height of "at least
            // Long.MAX_VALUE", which never falls below the lower bound.
            return new HeapPlacement(order, intervals, sizes, offsets, Long.MAX_VALUE, 0, false);
        }
        long[] lifetimes = new long[n];
        for (int i = 0; i < n; i++) {
            lifetimes[i] = intervals.endEvent(i) - intervals.startEvent(i);
        }
        int[] sequence = order == PlanOrder.BY_SIZE
                ? IndexOrder.sorted(sizes.bytes, lifetimes)
                : IndexOrder.sorted(lifetimes, sizes.bytes);
        if (allOverlap(intervals)) {
            return stacked(intervals, sizes, order, sequence, offsets);
        }
        TimeOffsetIndex index = new TimeOffsetIndex(n, maxRuns, maxScannedRuns, workPerIntervalLevel);
        long height = 0;
        for (int q = 0; q < n; q++) {
            int i = sequence[q];
            long size = sizes.bytes[i];
            if (size == 0) {
                continue;
            }
            int end = intervals.endRank(i);
            long offset = index.bestFit(i, end, size, height);
            // No overflow: an offset is 0 or the end of a placed interval, so offset + size is at most the sum of
            // the sizes, which fits (not saturated).
            index.insert(i, end, offset, offset + size);
            offsets[i] = offset;
            height = Math.max(height, offset + size);
        }
        return new HeapPlacement(order, intervals, sizes, offsets, height, index.approximations(),
                index.stacking());
    }

    /**
     * Whether every interval overlaps every other in time: the last one starts before the first end (a trace that
     * never frees, or frees only after its last allocation). Best fit then puts each interval on top of all those
     * placed before it (each search finds them all, packed from 0, with no room above them), so the plan is their
     * stack, worked out here in O(n) instead of searched.
     */
    private static boolean allOverlap(LiveIntervals intervals) {
        int n = intervals.count();
        if (n == 0) {
            return false;
        }
        long lastStart = intervals.startEvent(n - 1);
        for (int i = 0; i < n; i++) {
            if (intervals.endEvent(i) <= lastStart) {
                return false;
            }
        }
        return true;
    }

    private static HeapPlacement stacked(LiveIntervals intervals, RoundedSizes sizes, PlanOrder order, int[] sequence,
                                         long[] offsets) {
        long height = 0;
        for (int i : sequence) {
            if (sizes.bytes[i] > 0) {
                offsets[i] = height;
                height += sizes.bytes[i];
            }
        }
        return new HeapPlacement(order, intervals, sizes, offsets, height, 0, false);
    }

    /**
     * A placement with the given offsets, as if {@code order} had made it: for tests of {@link #checkValid()}, which
     * must reject what the planner never makes.
     */
    static HeapPlacement withOffsets(LiveIntervals intervals, SizeRounding rounding, PlanOrder order,
                                     long[] offsets) {
        RoundedSizes sizes = RoundedSizes.of(intervals, rounding);
        long height = 0;
        for (int i = 0; i < offsets.length; i++) {
            height = Math.max(height, offsets[i] + sizes.bytes[i]);
        }
        return new HeapPlacement(order, intervals, sizes, offsets.clone(), height, 0, false);
    }

    /** The order the intervals were placed in. */
    public PlanOrder order() {
        return order;
    }

    /**
     * The memory this plan needs: the highest offset + rounded size of any interval, 0 when none has bytes;
     * {@link Long#MAX_VALUE} when {@link #saturated()}.
     */
    public long heapBytes() {
        return heapBytes;
    }

    /** The number of intervals placed (those of {@link LiveIntervals}, in its numbering). */
    public int count() {
        return offsets.length;
    }

    /** The offset of interval {@code i}; 0 for an interval of 0 rounded bytes, and for all when saturated. */
    public long offset(int i) {
        return offsets[i];
    }

    /** The bytes interval {@code i} occupies: its request, rounded. */
    public long size(int i) {
        return sizes[i];
    }

    /**
     * How often a limit of the index applied: a list's narrowest hole filled, a search cut short, or an interval put
     * on top of those it overlaps, without a search, once the work budget was spent. Each time a placement may have
     * been worse than the exact best fit, never invalid; 0 means every placement was the exact best fit described
     * above.
     */
    public long approximations() {
        return approximations;
    }

    /**
     * Whether the index spent its work budget, so that the intervals placed after that went on top of those they
     * overlap, without a gap search (counted in {@link #approximations()}).
     */
    boolean stacking() {
        return stacking;
    }

    /** Requests the rounding refused (larger than that allocator accepts), placed at their requested size. */
    public long refusedByRounding() {
        return refusedByRounding;
    }

    /**
     * Whether the rounded sizes add up to more than a {@code long} holds (a hostile or corrupt trace): then nothing
     * is placed and {@link #heapBytes()} is {@link Long#MAX_VALUE}.
     */
    public boolean saturated() {
        return saturated;
    }

    /** Whether the plan is valid: see {@link #checkValid()}. */
    public boolean isValid() {
        return firstConflict() == null;
    }

    /**
     * Checks that no two intervals live at the same event share a byte and that every interval ends at or below
     * {@link #heapBytes()}: a sweep over time with the live intervals ordered by offset, each new one compared with
     * its neighbours (O(n log n)).
     *
     * @throws IllegalStateException naming the first two intervals that collide, or the plan that is saturated
     */
    public void checkValid() {
        String conflict = firstConflict();
        if (conflict != null) {
            throw new IllegalStateException(conflict);
        }
    }

    private String firstConflict() {
        if (saturated) {
            return "no plan: the rounded sizes add up to more than " + Long.MAX_VALUE + " B";
        }
        int n = offsets.length;
        OrderedHandleSet live = new OrderedHandleSet(2, false, 1024);
        int[] nodeOf = new int[n];
        for (int k = 0; k < n; k++) {
            for (int p = intervals.endsFrom(k), last = intervals.endsFrom(k + 1); p < last; p++) {
                int gone = intervals.endsAt(p);
                if (nodeOf[gone] != OrderedHandleSet.NO_NODE) {
                    live.remove(nodeOf[gone]);
                    nodeOf[gone] = OrderedHandleSet.NO_NODE;
                }
            }
            if (sizes[k] == 0) {
                continue;
            }
            if (offsets[k] < 0 || offsets[k] + sizes[k] > heapBytes) {
                return describe(k) + " is outside the plan's " + heapBytes + " B";
            }
            int above = live.lowerBound(offsets[k], k, 0);
            int below = above == OrderedHandleSet.NO_NODE ? live.last() : live.prev(above);
            if (above != OrderedHandleSet.NO_NODE && offsets[k] + sizes[k] > offsets[live.handle(above)]) {
                return describe(k) + " overlaps " + describe(live.handle(above));
            }
            if (below != OrderedHandleSet.NO_NODE) {
                int j = live.handle(below);
                if (offsets[j] + sizes[j] > offsets[k]) {
                    return describe(k) + " overlaps " + describe(j);
                }
            }
            nodeOf[k] = live.insert(offsets[k], k, 0, k);
        }
        return null;
    }

    private String describe(int i) {
        return "interval " + i + " (events " + intervals.startEvent(i) + ".." + intervals.endEvent(i) + ", bytes "
                + offsets[i] + ".." + (offsets[i] + sizes[i]) + ")";
    }

    @Override
    public String toString() {
        return "HeapPlacement[" + order + ", " + heapBytes + " B, " + offsets.length + " intervals"
                + (approximations > 0 ? ", " + approximations + " approximations" : "") + "]";
    }
}
