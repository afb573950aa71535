package io.devalloc.advisor;

import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.RecordedOom;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.report.Percent;
import java.util.List;
import java.util.Locale;

/**
 * The sentences of an {@link OomPostMortem}: what the replay of the recorded setting on the card shows, and the
 * verdict. Pure functions of the advice's figures, apart from the replays, so that tests check every case.
 */
final class PostMortems {

    private PostMortems() {
    }

    /**
     * What the recorded setting's replay on the card did at the first recorded failure.
     *
     * @param first    the trace's first {@code oom} entry
     * @param replayed the replay's first out-of-memory error, or null when it had none
     * @param card     the card it ran on
     */
    static OomPostMortem.Reproduction reproduction(RecordedOom first, ReplayResult.OomPoint replayed,
                                                   CardCapacity card) {
        String on = "the recorded setting, replayed on the card (" + ByteSize.format(card.bytes()) + ") from the"
                + " trace's start state with its own retry ladder, ";
        String recorded = "event " + count(first.event()) + " (a request of " + ByteSize.format(first.requestBytes())
                + ")";
        if (replayed != null && replayed.event() == first.event()) {
            return new OomPostMortem.Reproduction(true, replayed, on + "fails at the same event for the same request, "
                    + recorded + ", with " + ByteSize.format(replayed.reservedBytes()) + " reserved and "
                    + ByteSize.format(replayed.allocatedBytes()) + " allocated after its retry ladder");
        }
        String parted = ": " + whyNotAsRecorded(first, card);
        if (replayed != null && replayed.event() < first.event()) {
            return new OomPostMortem.Reproduction(false, replayed, on + "fails earlier, at event "
                    + count(replayed.event()) + " (a request of " + ByteSize.format(replayed.requestBytes())
                    + "), than the recording at " + recorded + parted);
        }
        String after = replayed == null ? " and runs to the end of the trace"
                : " and fails later, at event " + count(replayed.event());
        return new OomPostMortem.Reproduction(false, replayed, on + "serves the request that failed at " + recorded
                + after + parted);
    }

    /**
     * The verdict: which setting gets through on the card with the fewest flushes, or, when none does, the capacity
     * the best one needs and how much more that is than the card had.
     *
     * @param post         the post-mortem's entries and card (its verdict is what this makes)
     * @param ranked       every setting, ranked
     * @param recommended  the recommendation, or null
     * @param startsWarm   whether the trace starts from a state recorded before its events (what-ifs start empty)
     */
    static String verdict(OomPostMortem post, List<SettingResult> ranked, Recommendation recommended,
                          boolean startsWarm) {
        RecordedOom first = post.first();
        String failure = post.entries() == 1 ? "the out-of-memory error at event " + count(first.event())
                : "the first of its " + count(post.entries()) + " out-of-memory errors (event "
                + count(first.event()) + ")";
        CardCapacity card = post.card();
        if (card == null) {
            return "The trace records " + (post.entries() == 1 ? "an out-of-memory error" : count(post.entries())
                    + " out-of-memory errors") + ", the first at event " + count(first.event()) + (first.requestBytes()
                    > 0 ? " (a request of " + ByteSize.format(first.requestBytes()) + ")" : "") + ", but not the"
                    + " memory the allocator could use then, so which setting gets past it is not known: give"
                    + " --capacity (the memory PyTorch could use on that card: torch.cuda.mem_get_info()'s free bytes"
                    + " plus torch.cuda.memory_reserved() at the failure).";
        }
        String onCard = "on this card (" + ByteSize.format(card.bytes()) + ", " + card.reason() + ")";
        SettingResult through = throughWithFewestFlushes(ranked, recommended);
        SettingResult base = baseline(ranked);
        if (base != null && base.ran() && base.runsOnCard()) {
            // The failure does not come back under the recorded setting: say why first, whatever else runs.
            String why = card.source() == CardCapacity.Source.GIVEN || !startsWarm ? whyNotAsRecorded(first, card)
                    : "the recording did not start empty (its trace begins with memory already reserved, from before"
                    + " the history), and a fresh start may get through";
            String also = through == null || through.recorded() ? "" : " " + Ranking.label(through) + " runs to the"
                    + " end there too, with " + callsThere(through) + ".";
            return "The recorded setting, replayed from an empty allocator, gets past " + failure + " and runs to the"
                    + " end " + onCard + ": " + why + "." + also;
        }
        if (through != null) {
            long spare = post.spareBytes(through);
            return Ranking.label(through) + " gets past " + failure + " and runs to the end " + onCard + ", with "
                    + callsThere(through) + " and " + spare(spare, card) + "; the recorded setting "
                    + (base == null ? "could not be replayed" : post.passage(base).words()) + ".";
        }
        SettingResult smallest = null;
        for (SettingResult s : ranked) {
            if (s.fits() && (smallest == null || s.minCapacityBytes() < smallest.minCapacityBytes())) {
                smallest = s;
            }
        }
        // A setting that gets past the first failure and fails later (a run that caught it and went on).
        SettingResult past = null;
        for (SettingResult s : ranked) {
            if (past == null && OomPostMortem.passage(s, first) == OomPostMortem.Passage.PAST_THEN_FAILS) {
                past = s;
            }
        }
        String pastSentence = "";
        if (past != null) {
            ReplayResult.OomPoint next = past.atCapacity().firstOom();
            pastSentence = "; " + Ranking.label(past) + " gets past " + failure + ", then fails at event "
                    + count(next.event())
                    + " (a request of " + ByteSize.format(next.requestBytes()) + ")";
        }
        String head = (past == null ? "No setting of the grid gets past " + failure + " " + onCard
                : "No setting of the grid runs to the end " + onCard) + pastSentence;
        if (smallest == null) {
            return head + ", and none runs the trace even on " + Advisor.UNLIMITED_DEVICE + ".";
        }
        long more = smallest.minCapacityBytes() - card.bytes();
        return head + ": to run the whole trace the best, " + Ranking.label(smallest) + ", needs a device of "
                + ByteSize.format(smallest.minCapacityBytes()) + ", " + ByteSize.format(Math.max(0, more)) + " ("
                + Percent.of((double) Math.max(0, more) / card.bytes()) + ") more than the card had.";
    }

    /**
     * Why the recorded setting's replay on the card does not fail where the recording did: a card given with
     * {@code --capacity} that is not the recording's, a card the trace only bounds from above, or the replay and the
     * recording parting before the failure.
     */
    private static String whyNotAsRecorded(RecordedOom first, CardCapacity card) {
        if (card.source() == CardCapacity.Source.GIVEN) {
            long then = first.capacityBytes();
            return then > 0 ? "the card given with --capacity is not the memory the recording had ("
                    + ByteSize.format(then) + ", reserved plus the device's free bytes at the failure)"
                    : "the card given with --capacity is not the one the recording ran out of memory on";
        }
        if (card.source() == CardCapacity.Source.OOM_REQUEST) {
            return "the trace does not record the device's free memory, so the card is only bounded from above (the"
                    + " real one was smaller: give --capacity, torch.cuda.mem_get_info()'s total or the job's"
                    + " per-process limit)";
        }
        return "the replay parts from the recording there (the capacity the trace tells is the smallest it saw; other"
                + " processes' memory, or a per-process memory fraction the snapshot does not record, may have made"
                + " the real card smaller: give --capacity)";
    }

    /** {@code 1 cache flush and 17 device frees there}: what getting through costs on the card. */
    private static String callsThere(SettingResult s) {
        ReplayResult there = s.atCapacity() == null ? null : s.atCapacity().result();
        long frees = there == null ? 0 : there.deviceFrees();
        return flushes(s.flushesOnCard()) + (frees > 0 ? " and " + count(frees) + " device free" + (frees == 1 ? ""
                : "s") + " (cudaFree or unmap: each synchronises the device)" : "") + " there";
    }

    /**
     * The setting that runs the whole trace on the card with the fewest flushes: the recommendation when it does
     * (the ranking put it first for that), else the first such setting of the ranking; null when none does.
     */
    private static SettingResult throughWithFewestFlushes(List<SettingResult> ranked, Recommendation recommended) {
        if (recommended != null && recommended.setting().ran() && recommended.setting().runsOnCard()) {
            return recommended.setting();
        }
        SettingResult best = null;
        for (SettingResult s : ranked) {
            if (s.ran() && s.runsOnCard() && (best == null || s.flushesOnCard() < best.flushesOnCard())) {
                best = s;
            }
        }
        return best;
    }

    private static SettingResult baseline(List<SettingResult> ranked) {
        for (SettingResult s : ranked) {
            if (s.recorded()) {
                return s;
            }
        }
        return null;
    }

    private static String spare(long spare, CardCapacity card) {
        if (spare < 0) {
            return "no room to spare";
        }
        // A card bounded only from above (no free bytes recorded) leaves at most that much.
        String atMost = card.source() == CardCapacity.Source.OOM_REQUEST ? "at most " : "";
        return spare < Advisor.GRANULARITY ? "less than " + ByteSize.format(Advisor.GRANULARITY) + " to spare"
                : atMost + ByteSize.format(spare) + " to spare (it runs on a device that much smaller)";
    }

    private static String flushes(long n) {
        return n == 0 ? "no cache flush" : count(n) + " cache flush" + (n == 1 ? "" : "es");
    }

    private static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

}
