package io.devalloc.advisor;

import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.report.Percent;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;

/**
 * How the advisor orders the settings and picks the one to recommend, for an objective (see {@link Objective}).
 *
 * <p><b>Order.</b> First the settings that run on the objective's device ("ranked"): on the card for
 * {@link Objective#RESERVED} and {@link Objective#DEVICE_CALLS}, with a smallest capacity for
 * {@link Objective#CAPACITY}. {@code reserved} takes them by fewest cache flushes on the card, then by peak reserved
 * there; {@code capacity} by smallest capacity; {@code device-calls} by device calls on the card. Byte figures within
 * {@link Advisor#GRANULARITY} are tied (a smallest capacity is known to one step of the search only, so a "best" is
 * never noise): settings are taken in groups, each the smallest figure left and every figure at most one step above
 * it; within a group the tie-break ({@link Objective#tieBreak()}), then the recorded setting, then the smaller
 * figure, then the grid's order. After them, unranked, the settings that ran out of memory there (fewest failures
 * first, then the one that got furthest), then those that could not run.
 *
 * <p><b>The recommendation</b> never makes the user's job worse on the card: for {@code reserved} and
 * {@code device-calls} only a setting whose peak reserved on the card is not above the recorded setting's is
 * recommended (unless the recorded setting runs out of memory there, when getting past the failure is what counts).
 * And a change is recommended only when it is worth it: it avoids an out-of-memory error the recorded setting hits,
 * or it flushes the cache fewer times on the card, or it saves at least the margin ({@link MinSaving}) of the
 * objective's figure. Otherwise the recorded setting stays, "already best within the margin", and the report names
 * the runner-up. Where the recommended setting reserves more than the recorded one anywhere the reports show (the
 * unlimited device, the card, the smallest capacity), the recommendation says so in words.
 */
final class Ranking {

    private Ranking() {
    }

    /** The objective's figure: the peak reserved on the card, the smallest capacity, or the device calls. */
    static long figure(SettingResult s, Objective objective) {
        return switch (objective) {
            case RESERVED -> s.peakReservedOnCard();
            case CAPACITY -> s.minCapacityBytes();
            case DEVICE_CALLS -> s.deviceCallsOnCard();
        };
    }

    /** Whether the setting runs on the objective's device: the card, or (for capacity) some capacity. */
    static boolean ranked(SettingResult s, Objective objective) {
        return objective == Objective.CAPACITY ? s.fits() : s.ran() && s.runsOnCard();
    }

    /** How far apart two settings' figures may be and still tie: one granularity for bytes, none for calls. */
    static long tolerance(Objective objective) {
        return objective == Objective.DEVICE_CALLS ? 0 : Advisor.GRANULARITY;
    }

    /** Whether {@code a} and {@code b} tie on the objective's figure (within {@link #tolerance}). */
    static boolean tied(SettingResult a, SettingResult b, Objective objective) {
        return Math.abs(figure(a, objective) - figure(b, objective)) <= tolerance(objective);
    }

    /** What comes before the figure: fewest cache flushes on the card, for {@code reserved}. */
    private static long first(SettingResult s, Objective objective) {
        return objective == Objective.RESERVED ? s.flushesOnCard() : 0;
    }

    /** What breaks a tie within a group. */
    private static long secondary(SettingResult s, Objective objective) {
        return switch (objective) {
            case RESERVED -> s.deviceCallsOnCard();
            case CAPACITY -> s.deviceCalls();
            case DEVICE_CALLS -> s.peakReservedOnCard();
        };
    }

    /** Best first (see the class documentation). */
    static List<SettingResult> rank(List<SettingResult> results, Objective objective) {
        IdentityHashMap<SettingResult, Integer> order = new IdentityHashMap<>();
        List<SettingResult> ranked = new ArrayList<>();
        List<SettingResult> failing = new ArrayList<>();
        List<SettingResult> errors = new ArrayList<>();
        for (SettingResult s : results) {
            order.put(s, order.size());
            if (ranked(s, objective)) {
                ranked.add(s);
            } else if (s.ran()) {
                failing.add(s);
            } else {
                errors.add(s);
            }
        }
        ranked.sort(Comparator.<SettingResult>comparingLong(s -> first(s, objective))
                .thenComparingLong(s -> figure(s, objective)));
        Comparator<SettingResult> inGroup = Comparator.<SettingResult>comparingLong(s -> secondary(s, objective))
                .thenComparing(s -> !s.recorded())
                .thenComparingLong(s -> figure(s, objective))
                .thenComparingInt(order::get);
        List<SettingResult> sorted = new ArrayList<>();
        int start = 0;
        while (start < ranked.size()) {
            SettingResult lead = ranked.get(start);
            int end = start;
            while (end < ranked.size() && first(ranked.get(end), objective) == first(lead, objective)
                    && figure(ranked.get(end), objective) - figure(lead, objective) <= tolerance(objective)) {
                end++;
            }
            List<SettingResult> group = new ArrayList<>(ranked.subList(start, end));
            group.sort(inGroup);
            sorted.addAll(group);
            start = end;
        }
        failing.sort(Comparator.<SettingResult>comparingLong(s -> failures(s, objective))
                .thenComparingLong(s -> -firstFailure(s, objective))
                .thenComparingInt(order::get));
        sorted.addAll(failing);
        sorted.addAll(errors);
        return sorted;
    }

    /** Out-of-memory errors where the setting did not run: on the card, or on the unlimited device. */
    private static long failures(SettingResult s, Objective objective) {
        return objective == Objective.CAPACITY ? s.result().ooms() : s.onCard().ooms();
    }

    /** The event of the first failure there (later is better: the setting got further). */
    private static long firstFailure(SettingResult s, Objective objective) {
        var r = objective == Objective.CAPACITY ? s.result() : s.onCard();
        return r.firstOom() == null ? Long.MAX_VALUE : r.firstOom().event();
    }

    // ------------------------------------------------------------------------------------------ recommendation

    /**
     * The recommendation for {@code ranked} (as {@link #rank} orders them), or null when no setting runs on the
     * objective's device.
     */
    static Recommendation recommend(AllocatorProvider allocator, List<SettingResult> ranked, Objective objective,
                                    MinSaving margin, String baselineName) {
        SettingResult base = null;
        for (SettingResult s : ranked) {
            if (s.recorded()) {
                base = s;
            }
        }
        boolean baseRanked = base != null && ranked(base, objective);
        SettingResult best = null;
        // The first setting ranked above the chosen one that holds more of the card than the recorded setting.
        SettingResult passedOver = null;
        for (SettingResult s : ranked) {
            if (!ranked(s, objective)) {
                break;
            }
            if (objective != Objective.CAPACITY && baseRanked && s.peakReservedOnCard() > base.peakReservedOnCard()) {
                if (passedOver == null) {
                    passedOver = s; // never recommend holding more of the card than the recorded setting does
                }
                continue;
            }
            best = s;
            break;
        }
        if (best == null) {
            return null;
        }
        boolean card = false;
        for (SettingResult s : ranked) {
            card |= s.atCapacity() != null;
        }
        String what = what(objective, card);
        if (same(best, base) && passedOver != null) {
            return recommendation(allocator, base, base, objective, true, Recommendation.Why.HOLDS_LESS,
                    baselineName + " is kept: " + label(passedOver) + " ranks first on " + what + " but reserves "
                            + ByteSize.format(passedOver.peakReservedOnCard() - base.peakReservedOnCard())
                            + " more" + (card ? " of the card" : "") + " at its peak ("
                            + ByteSize.format(passedOver.peakReservedOnCard()) + " against "
                            + ByteSize.format(base.peakReservedOnCard()) + "), and a change never holds more memory"
                            + " than the recorded setting", passedOver);
        }
        if (same(best, base)) {
            return recommendation(allocator, base, base, objective, true, Recommendation.Why.ALREADY_BEST,
                    baselineName + " is already best: no setting of the grid beats it on " + what + " ("
                            + (tolerance(objective) > 0 ? "figures within " + ByteSize.format(tolerance(objective))
                            + " are ties, " : "ties ") + "broken by " + objective.tieBreak() + ")", null);
        }
        String above = passedOver == null ? "" : " (" + label(passedOver) + " ranks above it but reserves "
                + ByteSize.format(passedOver.peakReservedOnCard() - base.peakReservedOnCard()) + " more than "
                + baselineName + " at its peak, and a change never holds more memory than the recorded setting)";
        if (base == null || !base.ran()) {
            return recommendation(allocator, best, base, objective, false, Recommendation.Why.SAVES,
                    of(ranked.size()) + "this one has " + what, null);
        }
        if (!baseRanked) {
            String where = objective == Objective.CAPACITY ? "on any device up to " + Advisor.UNLIMITED_DEVICE
                    : "on the card";
            return recommendation(allocator, best, base, objective, false, Recommendation.Why.AVOIDS_OOM,
                    baselineName + " runs out of memory " + where + "; this one runs the whole trace there, and of"
                            + " those that do it has " + what, null);
        }
        if (objective != Objective.CAPACITY && best.flushesOnCard() < base.flushesOnCard()) {
            return recommendation(allocator, best, base, objective, false, Recommendation.Why.FEWER_FLUSHES,
                    (best.flushesOnCard() == 0 ? "it never flushes the cache on the card" : "it flushes the cache "
                            + times(best.flushesOnCard()) + " on the card") + ", where " + baselineName
                            + " flushes it " + times(base.flushesOnCard()) + " (each flush synchronises the device,"
                            + " frees every cached block and retries the device malloc)" + above, null);
        }
        boolean worth = objective == Objective.DEVICE_CALLS
                ? margin.reachedCalls(base.deviceCallsOnCard() - best.deviceCallsOnCard(), base.deviceCallsOnCard())
                : margin.reached(figure(base, objective) - figure(best, objective), figure(base, objective));
        if (worth) {
            return recommendation(allocator, best, base, objective, false, Recommendation.Why.SAVES,
                    of(ranked.size()) + "this one has " + what + above, null);
        }
        return recommendation(allocator, base, base, objective, true, Recommendation.Why.WITHIN_MARGIN,
                baselineName + " is already best within the margin (" + margin.describe() + "): "
                        + label(best) + " ranks first but " + smallGain(best, base, objective) + ", too little to be"
                        + " worth a change (--min-saving sets the margin)", best);
    }

    /** What the best setting has, in words: on the card, or on the unlimited device when no card is known. */
    private static String what(Objective objective, boolean card) {
        return switch (objective) {
            case RESERVED -> card ? "the fewest cache flushes and the lowest peak reserved on the card"
                    : "the lowest peak reserved";
            case CAPACITY -> "the smallest device to run the whole trace (flushing its cache as often as it must)";
            case DEVICE_CALLS -> "the fewest device mallocs and frees" + (card ? " on the card" : "");
        };
    }

    /** What the runner-up gains, in words, when it is within the margin. */
    private static String smallGain(SettingResult best, SettingResult base, Objective objective) {
        if (objective == Objective.DEVICE_CALLS) {
            long saved = base.deviceCallsOnCard() - best.deviceCallsOnCard();
            return "saves only " + count(saved) + " device call" + (saved == 1 ? "" : "s") + " ("
                    + Percent.of((double) saved / Math.max(1, base.deviceCallsOnCard())) + ")";
        }
        long saved = figure(base, objective) - figure(best, objective);
        if (saved <= 0) {
            return "saves nothing on " + (objective == Objective.CAPACITY ? "the smallest capacity"
                    : "the peak reserved") + " (it wins a tie)";
        }
        return "saves only " + ByteSize.format(saved) + " (" + Percent.of((double) saved / figure(base, objective))
                + ")";
    }

    private static Recommendation recommendation(AllocatorProvider allocator, SettingResult chosen, SettingResult base,
                                                 Objective objective, boolean keep, Recommendation.Why why,
                                                 String reason, SettingResult runnerUp) {
        Long saving = null;
        Double fraction = null;
        Long calls = null;
        Double callsFraction = null;
        if (base != null && ranked(base, objective)) {
            long b = savingFigure(base, objective);
            saving = b - savingFigure(chosen, objective);
            fraction = b == 0 ? 0.0 : (double) saving / b;
            long bc = callsFigure(base, objective);
            calls = bc - callsFigure(chosen, objective);
            callsFraction = bc == 0 ? 0.0 : (double) calls / bc;
        }
        List<String> costs = keep || base == null || !base.ran() ? List.of() : costs(chosen, base);
        return new Recommendation(chosen, Advisor.envLine(allocator, chosen.config()), saving, fraction, calls,
                callsFraction, keep, why, reason, runnerUp, costs, allocator.caveats(chosen.config()));
    }

    /** The bytes a saving is counted in: the peak reserved on the card, or the smallest capacity. */
    static long savingFigure(SettingResult s, Objective objective) {
        return objective == Objective.CAPACITY ? s.minCapacityBytes() : s.peakReservedOnCard();
    }

    /** The device calls a saving is counted in: on the card, or on the unlimited device for capacity. */
    static long callsFigure(SettingResult s, Objective objective) {
        return objective == Objective.CAPACITY ? s.deviceCalls() : s.deviceCallsOnCard();
    }

    /**
     * Where {@code chosen} reserves more than {@code base} among the figures the reports show, in words: the peak
     * reserved on the unlimited device (what it needs with no flush), on the card, and the smallest capacity.
     */
    static List<String> costs(SettingResult chosen, SettingResult base) {
        List<String> costs = new ArrayList<>();
        if (chosen.ran() && base.ran() && chosen.result().peakReservedBytes() > base.result().peakReservedBytes()) {
            long more = chosen.result().peakReservedBytes() - base.result().peakReservedBytes();
            costs.add("with no cache flush (an unlimited device) it reserves " + ByteSize.format(more) + " more than"
                    + " the recorded setting at its peak (" + ByteSize.format(chosen.result().peakReservedBytes())
                    + " against " + ByteSize.format(base.result().peakReservedBytes()) + ")"
                    + (chosen.fits() && chosen.retriesAtMinCapacity() > 0 ? "; it fits its smallest capacity only by"
                    + " flushing its cache " + times(chosen.retriesAtMinCapacity()) : ""));
        }
        if (chosen.atCapacity() != null && base.atCapacity() != null
                && chosen.peakReservedOnCard() > base.peakReservedOnCard()) {
            costs.add("on the card it reserves " + ByteSize.format(chosen.peakReservedOnCard()
                    - base.peakReservedOnCard()) + " more than the recorded setting at its peak ("
                    + ByteSize.format(chosen.peakReservedOnCard()) + " against "
                    + ByteSize.format(base.peakReservedOnCard()) + ")");
        }
        if (chosen.fits() && base.fits() && chosen.minCapacityBytes() > base.minCapacityBytes()) {
            costs.add("its smallest capacity is " + ByteSize.format(chosen.minCapacityBytes()
                    - base.minCapacityBytes()) + " larger than the recorded setting's ("
                    + ByteSize.format(chosen.minCapacityBytes()) + " against "
                    + ByteSize.format(base.minCapacityBytes()) + ")");
        }
        return costs;
    }

    /**
     * Whether two entries are the same row. Identity, not equality: two settings may have equal figures (a record's
     * equals), and only the recorded one is the baseline.
     */
    @SuppressWarnings("ReferenceEquality")
    private static boolean same(SettingResult a, SettingResult b) {
        return a == b;
    }

    static String label(SettingResult s) {
        return s.config().isEmpty() ? "(defaults)" : s.config();
    }

    /** {@code of the 5 settings, }, or nothing when there is only one. */
    private static String of(int settings) {
        return settings == 1 ? "" : "of the " + settings + " settings, ";
    }

    private static String times(long n) {
        return n == 1 ? "once" : count(n) + " times";
    }

    private static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

}
