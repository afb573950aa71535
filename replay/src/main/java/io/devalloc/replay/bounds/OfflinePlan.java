package io.devalloc.replay.bounds;

import io.devalloc.api.spi.SizeRounding;
import java.util.Objects;

/**
 * The memory an allocator would need that knew every allocation's size and lifetime in advance and placed them in
 * one address space: the best-fit heap of {@link HeapPlacement} run in both {@link PlanOrder}s, the lower kept, as
 * XLA's {@code ChooseBestHeapAlgorithm} keeps the smaller of its spatial and temporal heaps. An upper bound on the
 * optimal offline plan, never below the rounded {@link LowerBound}.
 *
 * <p>Immutable: thread-safe. {@link #of} places the intervals twice, one order after the other, on the calling
 * thread.
 *
 * @param bySizeBytes       the plan's height with the intervals placed largest first ({@link PlanOrder#BY_SIZE})
 * @param byLifetimeBytes   the plan's height with the intervals placed longest-lived first
 *                          ({@link PlanOrder#BY_LIFETIME})
 * @param approximations    placements of either order that a cap of the index may have made worse than the exact
 *                          best fit ({@link HeapPlacement#approximations()}); 0 when both are exact
 * @param refusedByRounding requests the rounding refused, placed at their requested size
 * @param saturated         whether the rounded sizes add up to more than a {@code long} holds: both figures are then
 *                          {@link Long#MAX_VALUE}, read "at least that many bytes"
 */
public record OfflinePlan(long bySizeBytes, long byLifetimeBytes, long approximations, long refusedByRounding,
                          boolean saturated) {

    /** Plans {@code intervals}, each at its size rounded by {@code rounding}, in both orders. */
    public static OfflinePlan of(LiveIntervals intervals, SizeRounding rounding) {
        Objects.requireNonNull(intervals, "intervals");
        RoundedSizes sizes = RoundedSizes.of(intervals, rounding);
        return of(HeapPlacement.of(intervals, sizes, PlanOrder.BY_SIZE),
                HeapPlacement.of(intervals, sizes, PlanOrder.BY_LIFETIME));
    }

    /**
     * The plan of two placements of the same intervals under the same rounding, one in each order: for a caller that
     * places them at once, on two threads.
     *
     * @throws IllegalArgumentException if the placements are not one of each order, of the same intervals
     */
    public static OfflinePlan of(HeapPlacement bySize, HeapPlacement byLifetime) {
        if (bySize.order() != PlanOrder.BY_SIZE || byLifetime.order() != PlanOrder.BY_LIFETIME) {
            throw new IllegalArgumentException("a plan is one placement by size and one by lifetime, got "
                    + bySize.order() + " and " + byLifetime.order());
        }
        if (bySize.count() != byLifetime.count() || bySize.refusedByRounding() != byLifetime.refusedByRounding()
                || bySize.saturated() != byLifetime.saturated()) {
            throw new IllegalArgumentException("the two placements are not of the same intervals and rounding");
        }
        return new OfflinePlan(bySize.heapBytes(), byLifetime.heapBytes(),
                bySize.approximations() + byLifetime.approximations(), bySize.refusedByRounding(),
                bySize.saturated());
    }

    /** The plan's figure: the lower of the two orders'. */
    public long bytes() {
        return Math.min(bySizeBytes, byLifetimeBytes);
    }

    /** The order that gave {@link #bytes()}; {@link PlanOrder#BY_SIZE} on a tie (XLA keeps the first on a tie). */
    public PlanOrder bestOrder() {
        return byLifetimeBytes < bySizeBytes ? PlanOrder.BY_LIFETIME : PlanOrder.BY_SIZE;
    }
}
