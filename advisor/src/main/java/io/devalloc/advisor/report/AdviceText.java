package io.devalloc.advisor.report;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.BoundsLadder;
import io.devalloc.advisor.CapacityCheck;
import io.devalloc.advisor.CardCapacity;
import io.devalloc.advisor.JobAdvice;
import io.devalloc.advisor.Objective;
import io.devalloc.advisor.OomPostMortem;
import io.devalloc.advisor.Recommendation;
import io.devalloc.advisor.SettingResult;
import io.devalloc.advisor.TrustLine;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.CacheFlushes;
import io.devalloc.replay.RecordedOom;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.WasteAtPeak;
import io.devalloc.replay.cli.TextTable;
import io.devalloc.replay.cli.TextWrap;
import io.devalloc.replay.report.Percent;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The terminal report of {@code devalloc advise}: for a trace of several devices, a summary of every device first
 * (naming the one that needs the most memory); then, for each device, the trust line, the recommendation with the
 * line to paste, every setting ranked, the grid's problems and the notes. Lines stay within
 * {@link TextWrap#MAX_WIDTH} columns.
 */
public final class AdviceText {

    /** The settings whose first out-of-memory error on the card the terminal report spells out; the rest counted. */
    static final int FAILURES_LISTED = 3;

    private AdviceText() {
    }

    /** Prints the advice on every device of a trace to {@code out}. */
    public static void print(PrintWriter out, JobAdvice job) {
        boolean several = job.devices().size() > 1;
        if (several || !job.unusedDevices().isEmpty()) {
            summary(out, job);
        }
        for (Advice advice : job.devices()) {
            if (several) {
                out.println();
                out.println("== " + advice.deviceLabel() + " " + "=".repeat(Math.max(3, 76
                        - advice.deviceLabel().length())));
                out.println();
            }
            print(out, advice);
        }
    }

    /** The devices of a trace, one line each, and the one that needs the most memory. */
    static void summary(PrintWriter out, JobAdvice job) {
        List<Advice> with = job.withHistory();
        out.println("Devices of " + job.trace() + ": " + with.size() + " with a history" + (job.endStateOnly()
                .isEmpty() ? "" : ", " + job.endStateOnly().size() + " with only an end state")
                + (job.unusedDevices().isEmpty() ? "" : ", " + job.unusedDevices().size() + " unused"));
        out.println();
        TextTable t = TextTable.withHeaders("DEVICE", "EVENTS", "TRUST", "RECORDED PEAK", "CARD", "OOMS",
                        "RECOMMENDATION")
                .align(1, TextTable.Align.RIGHT).align(3, TextTable.Align.RIGHT).align(5, TextTable.Align.RIGHT)
                .wrapBetweenWords(6);
        for (Advice a : job.devices()) {
            if (!a.hasHistory()) {
                t.row(a.deviceLabel(), count(a.events()), "END STATE ONLY", ByteSize.format(
                        a.recordedPeakReservedBytes()) + " at its end", "-", "-", "none: no history to replay");
                continue;
            }
            Recommendation rec = a.recommendation();
            t.row(a.deviceLabel(), count(a.events()), a.trust().word(), ByteSize.format(a.recordedPeakReservedBytes()),
                    a.capacity() == null ? "-" : ByteSize.format(a.capacity().bytes()) + " (" + a.capacity().source()
                            .jsonName().replace('_', ' ') + ")",
                    a.oom() == null ? "0" : count(a.oom().entries()),
                    rec == null ? "none runs" : rec.alreadyBest() ? "keep " + label(rec.setting().config())
                            : label(rec.setting().config()));
        }
        t.print(out, "  ");
        if (!job.unusedDevices().isEmpty()) {
            TextWrap.print(out, "  ", "  ", "unused: " + devices(job.unusedDevices()) + " (no trace entry, no"
                    + " segment: GPUs the process could see and never used)");
        }
        TextWrap.print(out, "  ", "  ", mostMemorySentence(job) + ".");
        out.println();
    }

    /** Which device needs the most memory, and why that figure. */
    public static String mostMemorySentence(JobAdvice job) {
        Advice most = job.mostMemory();
        String who = most.deviceLabel() + " needs the most memory: ";
        if (!most.hasHistory()) {
            return who + ByteSize.format(most.recordedPeakReservedBytes()) + " reserved at its end state";
        }
        SettingResult least = most.oom() == null ? null : most.leastCapacity();
        if (least != null && least.minCapacityBytes() > most.recordedPeakReservedBytes()) {
            return who + "it ran out of memory" + (most.capacity() == null ? "" : " on its "
                    + ByteSize.format(most.capacity().bytes()) + " card") + ", and the least any setting of the grid"
                    + " needs to run it whole is " + ByteSize.format(least.minCapacityBytes()) + " ("
                    + label(least.config()) + ")";
        }
        if (most.oom() != null && least == null) {
            return who + "it ran out of memory, and no setting of the grid runs it whole, even on "
                    + Advisor.UNLIMITED_DEVICE;
        }
        return who + ByteSize.format(most.recordedPeakReservedBytes()) + " reserved at its recorded peak"
                + (most.oom() == null ? "" : ", where it ran out of memory");
    }

    private static String devices(List<Integer> indexes) {
        List<String> names = new ArrayList<>();
        for (int i : indexes) {
            names.add("cuda:" + i);
        }
        return String.join(", ", names);
    }

    /** Prints the advice on one device to {@code out}. */
    public static void print(PrintWriter out, Advice advice) {
        String on = advice.deviceLabel().isEmpty() ? "" : " (" + advice.deviceLabel() + ")";
        if (!advice.hasHistory()) {
            endState(out, advice, on);
            return;
        }
        out.println("Advice for " + advice.trace() + on + " through " + advice.allocator() + ": "
                + counted(advice.settings().size(), "setting") + ", " + counted(advice.runs(), "replay") + " on "
                + advice.threads()
                + (advice.threads() == 1 ? " thread" : " threads"));
        out.println();
        if (advice.oom() != null) {
            oom(out, advice.oom());
        }
        trust(out, advice.trust());

        Recommendation rec = advice.recommendation();
        if (rec == null) {
            TextWrap.print(out, "Recommendation: ", "  ", "none: " + noneRuns(advice));
        } else {
            SettingResult chosen = rec.setting();
            out.println("Recommendation: " + label(chosen.config())
                    + (rec.alreadyBest() ? (advice.trust().baselineName().equals("the recorded setting")
                    ? " (the recorded setting)" : " (the baseline)") : ""));
            out.println();
            out.println("  " + rec.env());
            out.println();
            TextWrap.print(out, "  ", "  ", capitalised(rec.reason()) + ".");
            for (Saving saving : savings(advice)) {
                TextWrap.print(out, "  ", "  ", capitalised(saving.measure()) + ": " + saving.recommended() + ", "
                        + advice.trust().baselineName() + " " + saving.recorded() + ": " + saving.tail() + ".");
            }
            for (String cost : rec.costs()) {
                TextWrap.print(out, "  note: ", "    ", cost);
            }
            for (String caveat : rec.caveats()) {
                TextWrap.print(out, "  caveat: ", "    ", caveat);
            }
        }
        out.println();
        if (advice.ladder() != null) {
            ladder(out, advice.ladder());
        }

        TextWrap.print(out, "", "  ", "Settings, best first (" + objectiveSentence(advice) + "):");
        out.println();
        table(advice).print(out, "  ");
        out.println("  * " + (advice.trust().baselineName().equals("the recorded setting")
                ? "the recorded setting (the baseline)" : "the baseline (the defaults)"));
        if (advice.oom() != null && advice.capacity() != null) {
            TextWrap.print(out, "  ", "    ", "AT THE OOM: what the setting does on the card at event "
                    + count(advice.oom().first().event()) + ", where the recording first ran out of memory: runs ="
                    + " gets past it and runs to the end; past = gets past it, fails later; fails = fails there;"
                    + " before = fails before it");
        }
        if (advice.capacity() != null) {
            int failing = 0;
            for (SettingResult s : advice.settings()) {
                String where = firstOom(s.atCapacity());
                if (where != null && ++failing <= FAILURES_LISTED) {
                    TextWrap.print(out, "  on the card, ", "    ", label(s.config()) + " " + where);
                }
            }
            if (failing > FAILURES_LISTED) {
                TextWrap.print(out, "  ", "    ", "and " + (failing - FAILURES_LISTED) + " more settings run out of"
                        + " memory on the card (--json and --html list where each fails)");
            }
        }
        for (SettingResult s : advice.settings()) {
            if (s.error() != null) {
                TextWrap.print(out, "  error: ", "    ", label(s.config()) + ": " + s.error());
            }
        }
        if (!advice.grid().problems().isEmpty()) {
            out.println();
            out.println("Grid problems (left out; the other settings ran):");
            for (String p : advice.grid().problems()) {
                TextWrap.print(out, "  - ", "    ", p);
            }
        }
        notes(out, advice);
    }

    /**
     * The out-of-memory post-mortem, first for a trace that ran out of memory: the failures as recorded, whether the
     * first comes back on the card, and the verdict.
     */
    static void oom(PrintWriter out, OomPostMortem post) {
        TextWrap.print(out, "Out of memory: ", "  ", "the trace records " + (post.entries() == 1
                ? "an out-of-memory error" : count(post.entries()) + " out-of-memory errors")
                + " (torch.OutOfMemoryError), " + (post.entries() == 1 ? "" : "each ") + "after the allocator's retry"
                + " ladder had freed its cache:");
        out.println();
        TextTable t = TextTable.withHeaders("EVENT", "REQUEST", "RESERVED", "LIVE\n(REQUESTED)", "DEVICE FREE",
                "RESERVED +\nDEVICE FREE");
        for (int c = 0; c < 6; c++) {
            t.align(c, TextTable.Align.RIGHT);
        }
        int listed = 0;
        for (RecordedOom o : post.ooms()) {
            if (++listed > FAILURES_LISTED) {
                break;
            }
            t.row(count(o.event()), o.requestBytes() > 0 ? ByteSize.format(o.requestBytes()) : "-",
                    ByteSize.format(o.reservedBytes()), ByteSize.format(o.liveRequestedBytes()),
                    o.deviceFreeBytes() < 0 ? "-" : ByteSize.format(o.deviceFreeBytes()),
                    o.capacityBytes() < 0 ? "-" : ByteSize.format(o.capacityBytes()));
        }
        t.print(out, "  ");
        if (post.entries() > FAILURES_LISTED) {
            TextWrap.print(out, "  ", "  ", "and " + count(post.entries() - FAILURES_LISTED) + " more (--json lists"
                    + " up to " + count(post.ooms().size()) + ")");
        }
        if (post.card() != null) {
            TextWrap.print(out, "  ", "  ", "the card: " + ByteSize.format(post.card().bytes()) + ", "
                    + post.card().reason());
        }
        if (post.reproduction() != null) {
            TextWrap.print(out, "  ", "  ", post.reproduction().word() + ": " + post.reproduction().sentence());
        }
        out.println();
        TextWrap.print(out, "  Verdict: ", "  ", post.verdict());
        out.println();
    }

    /**
     * The bounds ladder, bottom up: each rung's memory and how far above the rounded lower bound it is, then the
     * sentence that reads it.
     */
    static void ladder(PrintWriter out, BoundsLadder ladder) {
        TextWrap.print(out, "", "  ", "Bounds (what any allocator could do; a setting's memory is its smallest"
                + " capacity; % of the rung's own):");
        out.println();
        TextTable t = TextTable.withHeaders("", "MEMORY", "ABOVE THE\nLOWER BOUND");
        t.align(1, TextTable.Align.RIGHT);
        t.align(2, TextTable.Align.RIGHT);
        for (BoundsLadder.Rung r : ladder.rungs()) {
            t.row(r.label(), r.bytes() < 0 ? "-" : ByteSize.format(r.bytes()), aboveFloor(ladder, r));
        }
        t.print(out, "  ");
        out.println();
        TextWrap.print(out, "  ", "  ", ladder.reading());
        out.println();
    }

    /**
     * {@code +2.97 MiB (0.2%)}: how far a rung is above the rounded lower bound, and that as a share of the rung's own
     * memory (the most of it any allocator could save, as the reading says it); {@code -} for the bound's own rungs
     * and a rung without memory.
     */
    public static String aboveFloor(BoundsLadder ladder, BoundsLadder.Rung r) {
        if (r.bytes() < 0 || ladder.saturated() || r.key().equals("requested") || r.key().equals("rounded")) {
            return "-";
        }
        long above = r.bytes() - ladder.floorBytes();
        return above <= 0 ? "0 B" : "+" + ByteSize.format(above) + " (" + percent((double) above / r.bytes()) + ")";
    }

    private static void trust(PrintWriter out, TrustLine t) {
        TextWrap.print(out, "Trust: ", "  ", t.word() + " - " + trustSentence(t));
        TextWrap.print(out, "  ", "  ", "baseline: " + label(t.config()) + ", from " + t.configSource());
        for (String note : t.notes()) {
            TextWrap.print(out, "  - ", "    ", note);
        }
        out.println();
    }

    private static void notes(PrintWriter out, Advice advice) {
        out.println();
        out.println("Notes:");
        for (String note : advice.notes()) {
            TextWrap.print(out, "  - ", "    ", note);
        }
    }

    /** A device with only its end state: what it held, and why there is no verdict. */
    private static void endState(PrintWriter out, Advice advice, String on) {
        out.println("Advice for " + advice.trace() + on + ": end state only, no history");
        out.println();
        trust(out, advice.trust());
        ReplayResult r = advice.endState() == null ? null : advice.endState().result();
        if (r != null) {
            out.println("End state (what the snapshot holds when it was taken):");
            out.println();
            TextTable t = TextTable.withoutHeaders(2).align(1, TextTable.Align.RIGHT);
            t.row("reserved", ByteSize.format(r.peakReservedBytes()));
            t.row("allocated (block sizes)", ByteSize.format(r.peakAllocatedBytes()));
            t.row("requested", ByteSize.format(r.peakRequestedBytes()));
            t.row("segments", r.peakSnapshot() == null ? "-" : count(r.peakSnapshot().segments().size()));
            WasteAtPeak w = r.peak() == null ? null : r.peak().waste();
            if (w != null) {
                t.row("waste: rounding", ByteSize.format(w.rounding()));
                t.row("waste: unsplit remainders", ByteSize.format(w.unsplitRemainder()));
                t.row("waste: free blocks in used segments", ByteSize.format(w.freeInUsedSegments()));
                t.row("waste: free segments", ByteSize.format(w.freeSegments()));
                t.row("waste: unmapped page tails", ByteSize.format(w.unmappedPageTails()));
            }
            t.print(out, "  ");
        }
        notes(out, advice);
    }

    /** Why no setting is recommended, in words. */
    static String noneRuns(Advice advice) {
        CardCapacity card = advice.capacity();
        if (advice.objective() != Objective.CAPACITY && card != null) {
            return "no setting runs the whole trace without an out-of-memory error on the card ("
                    + ByteSize.format(card.bytes()) + "; see the notes for the capacity any of them needs)";
        }
        return "no setting runs the whole trace without an out-of-memory error on " + Advisor.UNLIMITED_DEVICE;
    }

    /** The objective in use, in words: what the table is ranked by and how ties are broken. */
    static String objectiveSentence(Advice advice) {
        String card = advice.capacity() == null ? "an unlimited device, as no capacity is known"
                : "the card, " + ByteSize.format(advice.capacity().bytes());
        String ties = "within " + ByteSize.format(Advisor.GRANULARITY) + " a tie, broken by "
                + advice.objective().tieBreak();
        return switch (advice.objective()) {
            case RESERVED -> "objective 'reserved': no out-of-memory error, then the fewest cache flushes, then the"
                    + " lowest peak reserved, on " + card + "; " + ties;
            case CAPACITY -> "objective 'capacity': the smallest device that runs the whole trace, flushing the cache"
                    + " as often as it must; " + ties;
            case DEVICE_CALLS -> "objective 'device-calls': no out-of-memory error, then the fewest device mallocs"
                    + " and frees, on " + card + "; ties broken by " + advice.objective().tieBreak();
        };
    }

    /** The ranked settings as a table; with a card, its figures first. */
    static TextTable table(Advice advice) {
        boolean card = advice.capacity() != null;
        List<String> headers = new ArrayList<>(List.of("#", "CONFIG"));
        OomPostMortem post = card ? advice.oom() : null;
        if (post != null) {
            headers.add("AT THE\nOOM");
        }
        if (card) {
            headers.addAll(List.of("OOMS\nON CARD", "FLUSHES\nON CARD", "PEAK RES.\nON CARD"));
        }
        headers.addAll(List.of(card ? "PEAK RES.\nNO FLUSH" : "PEAK\nRESERVED", "MIN\nCAPACITY",
                "FLUSHES\nTHERE"));
        if (!card) {
            headers.addAll(List.of("PEAK\nALLOC", "FRAG"));
        }
        headers.add("MALLOCS/\nFREES");
        TextTable table = TextTable.withHeaders(headers.toArray(new String[0]));
        table.wrapBetweenWords(1);
        for (int c = 2; c < headers.size(); c++) {
            table.align(c, TextTable.Align.RIGHT);
        }
        table.align(0, TextTable.Align.RIGHT);
        int rank = 0;
        for (SettingResult s : advice.settings()) {
            String name = label(s.config()) + (s.recorded() ? " *" : "");
            ReplayResult r = s.result();
            List<String> cells = new ArrayList<>();
            boolean ranked = ranked(s, advice);
            cells.add(ranked ? Integer.toString(++rank) : "-");
            cells.add(name);
            if (r == null) {
                cells.add("error");
                while (cells.size() < headers.size()) {
                    cells.add("");
                }
                table.row(cells.toArray());
                continue;
            }
            if (post != null) {
                cells.add(post.passage(s).cell());
            }
            if (card) {
                CapacityCheck c = s.atCapacity();
                cells.add(c.runs() ? "0" : count(c.ooms()));
                cells.add(count(c.flushes()));
                cells.add(ByteSize.format(c.peakReserved()));
            }
            cells.add(r.ooms() > 0 ? "OOM" : ByteSize.format(r.peakReservedBytes()));
            cells.add(s.fits() ? ByteSize.format(s.minCapacityBytes()) : "> " + Advisor.UNLIMITED_DEVICE);
            cells.add(s.fits() ? count(s.retriesAtMinCapacity()) : "-");
            ReplayResult shown = card ? s.onCard() : r;
            if (!card) {
                cells.add(ByteSize.format(r.peakAllocatedBytes()));
                cells.add(percent(r.fragmentation()));
            }
            cells.add(count(shown.deviceMallocs()) + " / " + count(shown.deviceFrees()));
            table.row(cells.toArray());
        }
        return table;
    }

    /** Whether the setting is ranked by the advice's objective (it runs on the objective's device). */
    static boolean ranked(SettingResult s, Advice advice) {
        return advice.objective() == Objective.CAPACITY ? s.fits() : s.ran() && s.runsOnCard();
    }

    /** The trust line's sentence after its verdict. */
    static String trustSentence(TrustLine t) {
        String settings = TrustLine.FROM_SNAPSHOT.equals(t.configSource()) ? "the recorded settings" : "the defaults";
        return switch (t.verdict()) {
            case MATCH -> "replayed under " + settings + " (warm" + flushesReplayed(t) + ", as 'devalloc replay"
                    + " --warm --empty-cache-at-segment-free'), the allocator made the device mallocs, frees, segment"
                    + " sizes and peak the trace recorded";
            case DIFFERS -> "replayed under " + settings + ", the allocator did not do what the trace recorded;"
                    + " first difference: " + t.firstDifference() + ". Figures below are less trustworthy";
            case NOT_COMPARABLE -> t.firstDifference();
            case FAILED -> settings + " could not be replayed: " + t.firstDifference();
        };
    }

    /**
     * How the trust replay applied the trace's flushes and failures, in words: only those it has (nothing for a trace
     * without segment frees and out-of-memory errors).
     */
    private static String flushesReplayed(TrustLine t) {
        CacheFlushes f = t.outcome() == null ? null : t.outcome().flushes().trace();
        if (f == null) {
            return "";
        }
        List<String> parts = new ArrayList<>();
        if (f.programCalls() > 0) {
            parts.add("empty_cache() where the program called it");
        }
        if (f.allocatorFlushes() > 0) {
            parts.add("the allocator's own cache flushes where it made them");
        }
        if (t.outcome().flushes().reproducedOoms() + t.outcome().flushes().oomsNotReproduced() > 0) {
            parts.add("its out-of-memory errors where they happened");
        }
        return parts.isEmpty() ? "" : ", with " + String.join(" and ", parts);
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

        /** {@code saves 78.00 MiB (4.4%)}, {@code needs more by ...}, or {@code no saving} when they are equal. */
        String tail() {
            return amount.equals("0 B") || amount.equals("0") ? "no saving"
                    : verb + " " + amount + " (" + percent + ")";
        }
    }

    /**
     * The savings the reports show for a change of setting, the objective's own first: device calls then the peak
     * reserved for {@code device-calls}, the objective's bytes for the others; empty when the recommendation keeps
     * the recorded setting or the recorded setting has no figure.
     */
    static List<Saving> savings(Advice advice) {
        Recommendation rec = advice.recommendation();
        if (rec == null || rec.savingBytes() == null || rec.alreadyBest()) {
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
        Saving calls = new Saving("device calls (mallocs and frees) on the card", count(best.deviceCallsOnCard()),
                count(base.deviceCallsOnCard()), rec.savingDeviceCalls() >= 0 ? "saves" : "needs more by",
                count(Math.abs(rec.savingDeviceCalls())), percent(Math.abs(rec.savingDeviceCallsFraction())));
        return List.of(calls, bytes);
    }

    /** Where the replay on the card first failed, in words; null when it ran. */
    static String firstOom(CapacityCheck c) {
        if (c == null || c.firstOom() == null) {
            return null;
        }
        ReplayResult.OomPoint o = c.firstOom();
        return "first runs out of memory at event " + count(o.event()) + ": a request of "
                + ByteSize.format(o.requestBytes()) + " with " + ByteSize.format(o.reservedBytes()) + " reserved and "
                + ByteSize.format(o.allocatedBytes()) + " allocated (" + counted(c.ooms(), "failed allocation") + " in"
                + " all)";
    }

    /** What the objective's byte figure measures, in words. */
    static String measure(Advice advice) {
        return switch (advice.objective()) {
            case CAPACITY -> "smallest capacity that runs";
            case RESERVED, DEVICE_CALLS -> advice.capacity() == null ? "peak reserved (no capacity is known: an"
                    + " unlimited device)" : "peak reserved on the card";
        };
    }

    private static long figure(Advice advice, SettingResult s) {
        return advice.objective() == Objective.CAPACITY ? s.minCapacityBytes() : s.peakReservedOnCard();
    }

    static String label(String config) {
        return config.isEmpty() ? "(defaults)" : config;
    }

    static String capitalised(String s) {
        return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }

    /** {@code 1 setting}, {@code 3 settings}: {@code n} and the noun, plural unless {@code n} is 1. */
    public static String counted(long n, String noun) {
        return count(n) + " " + noun + (n == 1 ? "" : "s");
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** A fraction as every report prints it ({@link Percent}). */
    public static String percent(double fraction) {
        return Percent.of(fraction);
    }
}
