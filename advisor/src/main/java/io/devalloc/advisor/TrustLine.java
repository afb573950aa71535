package io.devalloc.advisor;

import io.devalloc.replay.ReplayOutcome;
import java.util.List;
import java.util.Objects;

/**
 * Whether the replay reproduces what the recorded program's allocator did: the trace replayed under the settings it
 * was recorded with, warm and with the program's {@code empty_cache()} calls (as
 * {@code devalloc replay --warm --empty-cache-at-segment-free} does), compared with the trace's own segment rows.
 *
 * @param config          the baseline's configuration text (the recorded settings, or the defaults)
 * @param configSource    where the baseline came from, in words: {@code the snapshot's allocator_settings}, or why
 *                        the defaults were taken
 * @param verdict         the verdict
 * @param firstDifference the first difference when the verdict is {@link Verdict#DIFFERS}, else null
 * @param outcome         the trust replay, or null when it could not run
 * @param notes           what the reader should know about the baseline (settings that could not be carried over)
 */
public record TrustLine(String config, String configSource, Verdict verdict, String firstDifference,
                        ReplayOutcome outcome, List<String> notes) {

    /** What the trust replay showed. */
    public enum Verdict {
        /** The replay made the device mallocs, frees, peak and segment sizes the trace recorded. */
        MATCH,
        /** It did not: {@link #firstDifference()} says where. */
        DIFFERS,
        /**
         * The trace records no allocator decisions to compare with (not a PyTorch trace), or the allocator is not
         * the one that recorded it (a PyTorch trace replayed through {@code bfc}): not comparable.
         */
        NOT_COMPARABLE,
        /** The baseline could not be replayed: {@link #firstDifference()} says why. */
        FAILED
    }

    public TrustLine {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(configSource, "configSource");
        Objects.requireNonNull(verdict, "verdict");
        notes = List.copyOf(notes);
    }

    /** {@link #configSource()} of a baseline read from a PyTorch snapshot's {@code allocator_settings}. */
    public static final String FROM_SNAPSHOT = "the snapshot's allocator_settings";

    /**
     * How reports name the baseline: "the recorded setting" only when the trace recorded it (a snapshot's
     * {@code allocator_settings}); otherwise it is only the defaults, and calling it recorded would claim what the
     * trace does not say.
     */
    public String baselineName() {
        return FROM_SNAPSHOT.equals(configSource) ? "the recorded setting" : "the baseline (the defaults)";
    }

    /** {@code MATCH}, {@code DIFFERS}, {@code NOT COMPARABLE} or {@code FAILED}, as reports show it. */
    public String word() {
        return verdict.name().replace('_', ' ');
    }
}
