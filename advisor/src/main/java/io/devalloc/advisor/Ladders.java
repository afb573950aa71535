package io.devalloc.advisor;

import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.bounds.IntervalCounts;
import io.devalloc.replay.bounds.LowerBound;
import io.devalloc.replay.bounds.OfflinePlan;
import io.devalloc.replay.report.Percent;
import java.util.List;

/**
 * Builds a device's {@link BoundsLadder} from its bounds and its ranked settings, and words the sentence that reads
 * it: how much of the gap between the recorded setting and the lower bound the best setting closes, and whether what
 * is left is worth tuning for (the margin of {@code --min-saving}). Stateless: thread-safe.
 */
final class Ladders {

    /** The baseline, as the reading names it: the setting the trace recorded. */
    static final String RECORDED = "the recorded setting";
    /** ... or the defaults, for a trace that does not record its allocator's settings. */
    static final String DEFAULTS = "the defaults";

    private Ladders() {
    }

    static BoundsLadder of(LowerBound bound, OfflinePlan plan, IntervalCounts counts, String roundingAllocator,
                           List<SettingResult> ranked, MinSaving margin, boolean recordedSetting) {
        SettingResult best = null;
        SettingResult recorded = null;
        for (SettingResult s : ranked) {
            if (s.recorded()) {
                recorded = s;
            }
            if (!s.fits()) {
                continue;
            }
            if (best == null || s.minCapacityBytes() < best.minCapacityBytes()
                    || (s.minCapacityBytes() == best.minCapacityBytes() && s.recorded())) {
                // On a tie the recorded setting is the best: nothing is gained by a change.
                best = s;
            }
        }
        String reading = reading(bound, plan, best == null ? null : Ranking.label(best),
                best == null ? -1 : best.minCapacityBytes(), recorded == null || !recorded.fits() ? -1
                        : recorded.minCapacityBytes(),
                best != null && best.recorded(), recordedSetting ? RECORDED : DEFAULTS, margin);
        return new BoundsLadder(bound, plan, counts, roundingAllocator, best, recorded, recordedSetting, reading);
    }

    /**
     * The sentence that reads a ladder.
     *
     * @param bestName       the label of the grid's setting with the least memory, or null when none runs the trace
     * @param need           that setting's memory (its smallest capacity)
     * @param recordedNeed   the recorded setting's, or -1 when it does not run the whole trace
     * @param bestIsRecorded whether the recorded setting (the baseline) is that setting
     * @param baseline       the baseline's name: {@link #RECORDED} or {@link #DEFAULTS}
     */
    static String reading(LowerBound bound, OfflinePlan plan, String bestName, long need, long recordedNeed,
                          boolean bestIsRecorded, String baseline, MinSaving margin) {
        if (bound.saturated() || plan.saturated()) {
            return "The trace's sizes add up to more than 2^63 bytes (a corrupt or hostile trace): no bound can be"
                    + " told from it.";
        }
        long floor = bound.roundedPeakBytes();
        String floorText = "the lower bound (" + ByteSize.format(floor) + ")";
        if (bestName == null) {
            return "No setting of the grid runs the whole trace; no allocator that rounds requests this way can run"
                    + " it in less than " + ByteSize.format(floor) + ", the lower bound.";
        }
        String name = bestName;
        StringBuilder s = new StringBuilder();
        if (recordedNeed < 0) {
            s.append("The setting of the grid that runs the trace in the least memory is " + name + " ("
                    + ByteSize.format(need) + "; " + baseline + (baseline.equals(DEFAULTS) ? " do" : " does")
                    + " not run it whole)");
        } else if (recordedNeed <= floor) {
            return capitalised(baseline) + runs(baseline) + " the trace in its lower bound (" + ByteSize.format(floor)
                    + "): no allocator that rounds requests this way can need less; tuning the allocator will not"
                    + " help.";
        } else if (bestIsRecorded) {
            s.append(capitalised(baseline)).append(runs(baseline)).append(" the trace in the least memory of the grid's"
                    + " settings ("
                    + ByteSize.format(need) + ")");
        } else {
            long gap = recordedNeed - floor;
            double closed = Math.clamp((double) (recordedNeed - need) / gap, 0.0, 1.0);
            s.append("The setting of the grid that runs the trace in the least memory, " + name + " ("
                    + ByteSize.format(need) + "), closes " + Percent.of(closed) + " of the gap between " + baseline
                    + " (" + ByteSize.format(recordedNeed) + ") and " + floorText);
        }
        String above = (recordedNeed < 0 || bestIsRecorded) ? floorText : "the lower bound";
        long left = Math.max(0, need - floor);
        if (left == 0) {
            return s.append("; it needs no more than ").append(above).append(": no allocator that rounds requests"
                    + " this way can need less, and tuning the allocator further will not help.").toString();
        }
        String leftText = ByteSize.format(left) + " (" + Percent.of((double) left / Math.max(1, need)) + ")";
        if (!margin.reached(left, need)) {
            s.append("; the ").append(leftText).append(" above ").append(above)
                    .append(" is under the margin worth a change (")
                    .append(margin.describe()).append("): tuning the allocator further will not help.");
            return s.toString();
        }
        s.append("; ").append(leftText).append(" is left above ").append(above)
                .append(", the most any other setting or allocator could save. ");
        long planned = plan.bytes();
        if (planned < need) {
            long saved = need - planned;
            s.append("An allocator that knew every allocation in advance would need " + ByteSize.format(planned)
                    + " (the offline plan): " + ByteSize.format(saved) + " (" + Percent.of((double) saved / need)
                    + ") less than " + name + (margin.reached(saved, need) ? ": a better placement is worth"
                    + " looking for." : ": under the margin worth a change."));
        } else {
            s.append("The offline plan, an allocator that knew every allocation in advance and kept each block at one"
                    + " place in one address space, needs " + ByteSize.format(planned) + ", no less than " + name
                    + ": the plan is a greedy heuristic, and the allocator is not held to one address space (the"
                    + " memory of a freed segment is mapped again elsewhere), so only the lower bound bounds it.");
        }
        return s.toString();
    }

    private static String capitalised(String s) {
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }

    /** The verb after the baseline's name: the defaults are plural. */
    private static String runs(String baseline) {
        return baseline.equals(DEFAULTS) ? " run" : " runs";
    }
}
