package io.devalloc.advisor;

import io.devalloc.replay.bounds.IntervalCounts;
import io.devalloc.replay.bounds.LowerBound;
import io.devalloc.replay.bounds.OfflinePlan;
import io.devalloc.replay.bounds.PlanOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * How close a device's settings come to what any allocator could do, from the bottom up: the lower bound (the most
 * bytes live at once as the program requested them, then after the allocator's rounding), the offline plan (what an
 * allocator that knew every allocation's size and lifetime in advance would need in one address space), the grid's
 * setting that runs the trace in the least memory, and the recorded setting; with the one sentence that reads it
 * ({@link #reading()}). The settings' rung is their smallest capacity ({@link SettingResult#minCapacityBytes()}):
 * the least memory each runs the whole trace in, flushes allowed, measured to {@link Advisor#GRANULARITY}. See
 * docs/bounds.md for the two bounds' rules.
 *
 * <p>Immutable: thread-safe.
 *
 * @param bound             the lower bound, requested and rounded
 * @param plan              the offline plan, the better of its two orders
 * @param counts            what the trace's rows became (allocations, warm-start blocks, OOM instants, rows
 *                          interpreted)
 * @param roundingAllocator the allocator whose request rounding, under its defaults, the rounded bound and the plan
 *                          use (the defaults round least: PyTorch's {@code roundup_power2_divisions} only rounds more)
 * @param best              the grid's setting with the smallest capacity, or null when no setting runs the whole
 *                          trace
 * @param recorded          the recorded setting (the baseline), whether it runs the whole trace or not; null when it
 *                          is not among the settings
 * @param recordedSetting   whether the baseline is a setting the trace recorded (else the defaults, for a trace that
 *                          does not record its allocator's settings)
 * @param reading           the sentence that reads the ladder for the user
 */
public record BoundsLadder(LowerBound bound, OfflinePlan plan, IntervalCounts counts, String roundingAllocator,
                           SettingResult best, SettingResult recorded, boolean recordedSetting, String reading) {

    public BoundsLadder {
        Objects.requireNonNull(bound, "bound");
        Objects.requireNonNull(plan, "plan");
        Objects.requireNonNull(counts, "counts");
        Objects.requireNonNull(roundingAllocator, "roundingAllocator");
        Objects.requireNonNull(reading, "reading");
        if (best != null && !best.fits()) {
            throw new IllegalArgumentException("the best setting on the ladder runs the whole trace");
        }
    }

    /** The floor the reading measures from: the rounded lower bound; -1 when {@link #saturated()}. */
    public long floorBytes() {
        return saturated() ? -1 : bound.roundedPeakBytes();
    }

    /**
     * The share of the gap between the recorded setting and the floor that the best setting closes, in [0, 1]; NaN
     * without both settings, or when the recorded setting leaves no gap.
     */
    public double gapClosed() {
        if (saturated() || best == null || recorded == null || !recorded.fits()
                || recorded.minCapacityBytes() <= floorBytes()) {
            return Double.NaN;
        }
        long gap = recorded.minCapacityBytes() - floorBytes();
        return Math.clamp((double) (recorded.minCapacityBytes() - best.minCapacityBytes()) / gap, 0.0, 1.0);
    }

    /** What the best setting needs above the floor (0 at or below it); -1 without a best setting. */
    public long leftBytes() {
        return best == null || saturated() ? -1 : Math.max(0, best.minCapacityBytes() - floorBytes());
    }

    /**
     * One rung of the ladder, as every report shows it.
     *
     * @param key   {@code requested}, {@code rounded}, {@code plan}, {@code best} or {@code recorded} (the JSON's
     *              names)
     * @param label what the rung is, in words
     * @param bytes the memory of the rung; -1 where there is none (no setting runs the whole trace)
     */
    public record Rung(String key, String label, long bytes) {
    }

    /**
     * The rungs, bottom up: the lower bound as requested, then rounded, the offline plan, the grid's least memory,
     * the recorded setting (one rung when the recorded setting is the grid's least). Events are numbered from 1, as
     * every report numbers them (the bounds package numbers rows from 0).
     */
    public List<Rung> rungs() {
        List<Rung> rungs = new ArrayList<>();
        if (saturated()) {
            // Sizes that add up beyond a long: the bounds are no figures (the reading says so).
            rungs.add(new Rung("requested", "lower bound, as requested: the sizes add up beyond 2^63 bytes", -1));
            rungs.add(new Rung("rounded", "lower bound, rounded: none", -1));
            rungs.add(new Rung("plan", "offline plan: none", -1));
        } else {
            rungs.add(new Rung("requested", "lower bound, as requested"
                    + (bound.requestedPeakEvent() < 0 ? "" : " (event " + count(bound.requestedPeakEvent() + 1) + ")"),
                    bound.requestedPeakBytes()));
            rungs.add(new Rung("rounded", "lower bound, rounded as " + roundingAllocator + " rounds",
                    bound.roundedPeakBytes()));
            rungs.add(new Rung("plan", "offline plan (" + (plan.bestOrder() == PlanOrder.BY_SIZE ? "largest first"
                    : "longest-lived first") + ")", plan.bytes()));
        }
        if (best == null) {
            rungs.add(new Rung("best", "least of the grid: no setting runs the whole trace", -1));
        } else if (best.recorded()) {
            rungs.add(new Rung("recorded", baseline() + ", the grid's least", best.minCapacityBytes()));
            return rungs;
        } else {
            rungs.add(new Rung("best", "least of the grid: " + Ranking.label(best), best.minCapacityBytes()));
        }
        boolean runs = recorded != null && recorded.fits();
        rungs.add(new Rung("recorded", baseline() + (runs ? "" : ", which does not run the whole trace"),
                runs ? recorded.minCapacityBytes() : -1));
        return rungs;
    }

    /** Whether the trace's sizes add up beyond a {@code long}: the bounds are then no figures (a hostile trace). */
    public boolean saturated() {
        return bound.saturated() || plan.saturated();
    }

    /** The baseline's rung, named as the reports name it: {@code the recorded setting: (defaults)}. */
    private String baseline() {
        if (!recordedSetting) {
            return "the defaults (the baseline)";
        }
        return "the recorded setting" + (recorded == null ? "" : ": " + Ranking.label(recorded));
    }

    private static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
