package io.devalloc.advisor;

import io.devalloc.replay.RecordedOom;
import io.devalloc.replay.ReplayResult;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * What {@code devalloc advise} says of a trace that ran out of memory (its {@code oom} entries, as a snapshot dumped by
 * an out-of-memory observer ends): the failures as recorded, whether the recorded setting fails the same way when
 * replayed on the card, what every setting does there, and one sentence that reads it for the user.
 *
 * @param ooms         the trace's {@code oom} entries in order (at most the first
 *                     {@value io.devalloc.replay.CompactTrace#KEPT_OOMS} are kept), never empty
 * @param entries      how many {@code oom} entries the trace has
 * @param card         the card the settings were replayed on: {@code --capacity}, or what the entries tell (reserved
 *                     plus the device's free bytes); null when neither is known
 * @param reproduction the recorded setting replayed on the card from the trace's start state, its own cache flushes
 *                     and failures left to the allocator; null when it was not replayed (no card, not PyTorch's
 *                     allocator, or the entries record no request)
 * @param verdict      the one sentence: the setting that gets through with the fewest flushes, or, when none does,
 *                     the capacity the best one needs and how much more that is than the card had
 */
public record OomPostMortem(List<RecordedOom> ooms, long entries, CardCapacity card, Reproduction reproduction,
                            String verdict) {

    public OomPostMortem {
        ooms = List.copyOf(ooms);
        if (ooms.isEmpty()) {
            throw new IllegalArgumentException("a post-mortem needs an oom entry");
        }
        Objects.requireNonNull(verdict, "verdict");
    }

    /** The first {@code oom} entry: the request the program failed on first. */
    public RecordedOom first() {
        return ooms.getFirst();
    }

    /**
     * The recorded setting replayed on the card, warm (from the trace's start state, as the recording was), with the
     * program's {@code empty_cache()} where it called it and everything else left to the allocator: whether the
     * recorded failure comes back by itself.
     *
     * @param reproduced  whether the replay's first out-of-memory error is at the first entry's event, for its request
     * @param replayed    the replay's first out-of-memory error, or null when it had none
     * @param sentence    what happened, in words
     */
    public record Reproduction(boolean reproduced, ReplayResult.OomPoint replayed, String sentence) {

        public Reproduction {
            Objects.requireNonNull(sentence, "sentence");
        }

        /** {@code out-of-memory reproduced} or {@code out-of-memory not reproduced}. */
        public String word() {
            return reproduced ? "out-of-memory reproduced" : "out-of-memory not reproduced";
        }
    }

    /** What a setting does on the card at the trace's first out-of-memory error. */
    public enum Passage {
        /** It serves every request and runs to the end of the trace without an out-of-memory error. */
        RUNS_TO_END("runs", "gets past it and runs to the end"),
        /** It serves the request that failed, and fails later. */
        PAST_THEN_FAILS("past", "gets past it, then fails later"),
        /** It fails at the same request. */
        FAILS_THERE("fails", "fails at the same request"),
        /** It fails before the recorded failure. */
        FAILS_BEFORE("before", "fails before it"),
        /** The setting did not run, or was not replayed on a card. */
        UNKNOWN("-", "was not replayed on the card");

        private final String cell;
        private final String words;

        Passage(String cell, String words) {
            this.cell = cell;
            this.words = words;
        }

        /** The table's cell. */
        public String cell() {
            return cell;
        }

        /** In a sentence, after the setting's name. */
        public String words() {
            return words;
        }

        /** {@code runs_to_end}, as the JSON names it. */
        public String jsonName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What {@code s} does on the card at this trace's first out-of-memory error. */
    public Passage passage(SettingResult s) {
        return passage(s, first());
    }

    /** What {@code s} does on the card at {@code first}, the trace's first out-of-memory error. */
    static Passage passage(SettingResult s, RecordedOom first) {
        CapacityCheck c = s.atCapacity();
        if (c == null) {
            return Passage.UNKNOWN;
        }
        ReplayResult.OomPoint failed = c.firstOom();
        if (failed == null) {
            return Passage.RUNS_TO_END;
        }
        if (failed.event() < first.event()) {
            return Passage.FAILS_BEFORE;
        }
        return failed.event() == first.event() ? Passage.FAILS_THERE : Passage.PAST_THEN_FAILS;
    }

    /**
     * What the card has to spare for {@code s}: the card's capacity less the smallest device on which the setting
     * runs the whole trace; -1 when the setting does not run on the card or has no smallest capacity. Below
     * {@link Advisor#GRANULARITY} the figure is only known to be under it (the search steps by it).
     */
    public long spareBytes(SettingResult s) {
        if (card == null || !s.fits() || !s.runsOnCard()) {
            return -1;
        }
        return Math.max(0, card.bytes() - s.minCapacityBytes());
    }
}
