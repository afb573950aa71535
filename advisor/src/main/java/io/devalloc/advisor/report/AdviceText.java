package io.devalloc.advisor.report;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.CapacityCheck;
import io.devalloc.advisor.Objective;
import io.devalloc.advisor.Recommendation;
import io.devalloc.advisor.SettingResult;
import io.devalloc.advisor.TrustLine;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.cli.TextTable;
import io.devalloc.replay.cli.TextWrap;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;

/**
 * The terminal report of {@code devalloc advise}: the trust line first, then the recommendation with the line to
 * paste, then every setting ranked, then the grid's problems and the notes. Lines stay within
 * {@link TextWrap#MAX_WIDTH} columns, except table rows with a long configuration.
 */
public final class AdviceText {

    private AdviceText() {
    }

    /** Prints {@code advice} to {@code out}. */
    public static void print(PrintWriter out, Advice advice) {
        out.println("Advice for " + advice.trace() + " through " + advice.allocator() + ": " + advice.settings().size()
                + " settings, " + count(advice.runs()) + " replays on " + advice.threads()
                + (advice.threads() == 1 ? " thread" : " threads"));
        out.println();

        TrustLine t = advice.trust();
        TextWrap.print(out, "Trust: ", "  ", t.word() + " - " + trustSentence(t));
        TextWrap.print(out, "  ", "  ", "baseline: " + (t.config().isEmpty() ? "(defaults)" : t.config())
                + ", from " + t.configSource());
        for (String note : t.notes()) {
            TextWrap.print(out, "  - ", "    ", note);
        }
        out.println();

        Recommendation rec = advice.recommendation();
        if (rec == null) {
            TextWrap.print(out, "Recommendation: ", "  ", "none: no setting runs the whole trace without an"
                    + " out-of-memory error on " + Advisor.UNLIMITED_DEVICE);
        } else {
            SettingResult best = rec.setting();
            out.println("Recommendation: " + (best.config().isEmpty() ? "(defaults)" : best.config())
                    + (rec.alreadyBest() ? " (" + advice.trust().baselineName() + ")" : ""));
            out.println();
            out.println("  " + rec.env());
            out.println();
            TextWrap.print(out, "  ", "  ", rec.reason() + ".");
            for (Saving saving : savings(advice)) {
                TextWrap.print(out, "  ", "  ", saving.measure() + ": " + saving.recommended() + ", "
                        + advice.trust().baselineName() + " " + saving.recorded() + ": " + saving.verb() + " "
                        + saving.amount() + " (" + saving.percent() + ").");
            }
            for (String caveat : rec.caveats()) {
                TextWrap.print(out, "  caveat: ", "    ", caveat);
            }
        }
        out.println();

        out.println("Settings, best first (" + measure(advice) + "; within " + ByteSize.format(Advisor.GRANULARITY)
                + " a tie, broken by " + advice.objective().tieBreak() + "):");
        out.println();
        boolean withCapacity = advice.capacityBytes() != -1;
        TextTable table = withCapacity
                ? TextTable.withHeaders("#", "CONFIG", "MIN CAPACITY", "PEAK RESERVED", "PEAK ALLOC", "FRAG",
                        "MALLOCS/FREES", "RETRIES", "OOMS AT " + ByteSize.format(advice.capacityBytes()))
                : TextTable.withHeaders("#", "CONFIG", "MIN CAPACITY", "PEAK RESERVED", "PEAK ALLOC", "FRAG",
                        "MALLOCS/FREES", "RETRIES");
        table.wrap(1);
        for (int c = 2; c < (withCapacity ? 9 : 8); c++) {
            table.align(c, TextTable.Align.RIGHT);
        }
        table.align(0, TextTable.Align.RIGHT);
        int rank = 0;
        for (SettingResult s : advice.settings()) {
            String label = (s.config().isEmpty() ? "(defaults)" : s.config()) + (s.recorded() ? " *" : "");
            ReplayResult r = s.result();
            if (r == null) {
                Object[] cells = {"-", label, "error", "", "", "", "", "", ""};
                table.row(withCapacity ? cells : java.util.Arrays.copyOf(cells, 8));
                continue;
            }
            Object[] cells = {s.fits() ? Integer.toString(++rank) : "-", label,
                    s.fits() ? ByteSize.format(s.minCapacityBytes()) : "> " + Advisor.UNLIMITED_DEVICE,
                    ByteSize.format(r.peakReservedBytes()), ByteSize.format(r.peakAllocatedBytes()),
                    percent(r.fragmentation()), count(r.deviceMallocs()) + " / " + count(r.deviceFrees()),
                    count(r.allocRetries()), capacityCell(s.atCapacity())};
            table.row(withCapacity ? cells : java.util.Arrays.copyOf(cells, 8));
        }
        table.print(out, "  ");
        out.println("  * " + (advice.trust().baselineName().equals("the recorded setting")
                ? "the recorded setting (the baseline)" : "the baseline (the defaults)"));
        if (withCapacity) {
            for (SettingResult s : advice.settings()) {
                String where = firstOom(s.atCapacity());
                if (where != null) {
                    TextWrap.print(out, "  at " + ByteSize.format(advice.capacityBytes()) + ", ", "    ",
                            (s.config().isEmpty() ? "(defaults)" : s.config()) + " " + where);
                }
            }
        }
        for (SettingResult s : advice.settings()) {
            if (s.error() != null) {
                TextWrap.print(out, "  error: ", "    ", (s.config().isEmpty() ? "(defaults)" : s.config()) + ": "
                        + s.error());
            }
        }
        if (!advice.grid().problems().isEmpty()) {
            out.println();
            out.println("Grid problems (left out; the other settings ran):");
            for (String p : advice.grid().problems()) {
                TextWrap.print(out, "  - ", "    ", p);
            }
        }
        out.println();
        out.println("Notes:");
        for (String note : advice.notes()) {
            TextWrap.print(out, "  - ", "    ", note);
        }
    }

    /** The trust line's sentence after its verdict. */
    static String trustSentence(TrustLine t) {
        String settings = TrustLine.FROM_SNAPSHOT.equals(t.configSource()) ? "the recorded settings" : "the defaults";
        return switch (t.verdict()) {
            case MATCH -> "replayed under " + settings + " (warm, with empty_cache() where the program called"
                    + " it, as 'devalloc replay --warm --empty-cache-at-segment-free'), the allocator made the device"
                    + " mallocs, frees, segment sizes and peak the trace recorded";
            case DIFFERS -> "replayed under " + settings + ", the allocator did not do what the trace recorded;"
                    + " first difference: " + t.firstDifference() + ". Figures below are less trustworthy";
            case NOT_COMPARABLE -> t.firstDifference();
            case FAILED -> settings + " could not be replayed: " + t.firstDifference();
        };
    }

    /**
     * One saving of the recommended setting against the recorded one, as reports print it.
     *
     * @param measure     what is compared, in words
     * @param recommended the recommended setting's figure, formatted
     * @param recorded    the recorded setting's figure, formatted
     * @param verb        {@code saves}, or {@code needs more by} when the recommended figure is larger
     * @param amount      the difference, formatted, without its sign
     * @param percent     the difference over the recorded figure, without its sign
     */
    record Saving(String measure, String recommended, String recorded, String verb, String amount, String percent) {
    }

    /**
     * The savings the reports show, the objective's own first: device calls then the smallest capacity for
     * {@code device-calls}, the objective's bytes for the others; empty when the recorded setting has no figure.
     */
    static List<Saving> savings(Advice advice) {
        Recommendation rec = advice.recommendation();
        if (rec == null || rec.savingBytes() == null) {
            return List.of();
        }
        SettingResult best = rec.setting();
        SettingResult base = advice.baseline();
        Saving bytes = new Saving(measure(advice), ByteSize.format(figure(advice, best)),
                ByteSize.format(figure(advice, base)), rec.savingBytes() >= 0 ? "saves" : "needs more by",
                ByteSize.format(Math.abs(rec.savingBytes())), percent(Math.abs(rec.savingFraction())));
        if (advice.objective() != Objective.DEVICE_CALLS) {
            return List.of(bytes);
        }
        Saving calls = new Saving("device calls (mallocs and frees)", count(best.deviceCalls()),
                count(base.deviceCalls()), rec.savingDeviceCalls() >= 0 ? "saves" : "needs more by",
                count(Math.abs(rec.savingDeviceCalls())), percent(Math.abs(rec.savingDeviceCallsFraction())));
        return List.of(calls, bytes);
    }

    /** Where the replay on the user's device first failed, in words; null when it ran. */
    static String firstOom(CapacityCheck c) {
        if (c == null || c.firstOom() == null) {
            return null;
        }
        ReplayResult.OomPoint o = c.firstOom();
        return "first runs out of memory at event " + count(o.event()) + ": a request of "
                + ByteSize.format(o.requestBytes()) + " with " + ByteSize.format(o.reservedBytes()) + " reserved and "
                + ByteSize.format(o.allocatedBytes()) + " allocated (" + count(c.ooms()) + " failed allocations in"
                + " all)";
    }

    /** What the objective's byte figure measures, in words. */
    static String measure(Advice advice) {
        return switch (advice.objective()) {
            case CAPACITY, DEVICE_CALLS -> "smallest capacity that runs";
            case RESERVED -> "peak reserved";
        };
    }

    private static long figure(Advice advice, SettingResult s) {
        return switch (advice.objective()) {
            case CAPACITY, DEVICE_CALLS -> s.minCapacityBytes();
            case RESERVED -> s.result().peakReservedBytes();
        };
    }

    private static String capacityCell(CapacityCheck c) {
        return c == null ? "" : c.runs() ? "0 (runs)" : count(c.ooms());
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    static String percent(double fraction) {
        return String.format(Locale.ROOT, "%.1f%%", fraction * 100);
    }
}
