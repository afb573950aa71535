package io.devalloc.advisor;

import io.devalloc.replay.ReplayResult;
import java.util.Objects;

/**
 * What the advisor found for one setting of the grid, each figure from one replay with the what-if rules (see the
 * package documentation): exactly what {@code devalloc replay TRACE --config CONFIG --empty-cache-at-segment-free}
 * reports, with {@code --device sim:CAPACITYB} for the card.
 *
 * @param entry            the setting and where it came from
 * @param recorded         whether it is the setting the trace was recorded with (the baseline)
 * @param result           the replay on an unlimited device ({@link Advisor#UNLIMITED_DEVICE}): what the setting needs
 *                         to run with no cache flush; null when the setting could not run ({@code error})
 * @param minCapacityBytes the smallest capacity, a multiple of {@link Advisor#GRANULARITY}, on which the whole trace
 *                         runs with no out-of-memory error, flushing the cache as often as it must (one
 *                         {@link Advisor#GRANULARITY} less fails); -1 when it did not run even on the unlimited device,
 *                         or could not run at all
 * @param atMinCapacity    the replay on a device of {@code minCapacityBytes}, or null without one
 * @param searchRuns       the replays the capacity search took
 * @param atCapacity       the replay on the card ({@link CardCapacity}), or null when no capacity is known
 * @param error            why the setting could not run, or null
 */
public record SettingResult(GridEntry entry, boolean recorded, ReplayResult result, long minCapacityBytes,
                            ReplayResult atMinCapacity, int searchRuns, CapacityCheck atCapacity, String error) {

    public SettingResult {
        Objects.requireNonNull(entry, "entry");
        if ((result == null) == (error == null)) {
            throw new IllegalArgumentException("a setting has either a result or an error");
        }
    }

    /**
     * A builder of a setting's result with nothing set: the entry must be set, and either the result or the error;
     * not set, the setting is not the recorded one, has no smallest capacity (-1), took no search runs and has no
     * replay at the smallest capacity or on the card.
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Builds a {@link SettingResult} part by part, each part named as its component (the record's parameters say
     * what each holds). Not thread-safe; {@link #build()} may be called again after changes.
     */
    public static final class Builder {
        private GridEntry entry;
        private boolean recorded;
        private ReplayResult result;
        private long minCapacityBytes = -1;
        private ReplayResult atMinCapacity;
        private int searchRuns;
        private CapacityCheck atCapacity;
        private String error;

        private Builder() {
        }

        /** Sets {@link SettingResult#entry()}. */
        public Builder entry(GridEntry entry) {
            this.entry = entry;
            return this;
        }

        /** Sets {@link SettingResult#recorded()}. */
        public Builder recorded(boolean recorded) {
            this.recorded = recorded;
            return this;
        }

        /** Sets {@link SettingResult#result()}. */
        public Builder result(ReplayResult result) {
            this.result = result;
            return this;
        }

        /** Sets {@link SettingResult#minCapacityBytes()}. */
        public Builder minCapacityBytes(long minCapacityBytes) {
            this.minCapacityBytes = minCapacityBytes;
            return this;
        }

        /** Sets {@link SettingResult#atMinCapacity()}. */
        public Builder atMinCapacity(ReplayResult atMinCapacity) {
            this.atMinCapacity = atMinCapacity;
            return this;
        }

        /** Sets {@link SettingResult#searchRuns()}. */
        public Builder searchRuns(int searchRuns) {
            this.searchRuns = searchRuns;
            return this;
        }

        /** Sets {@link SettingResult#atCapacity()}. */
        public Builder atCapacity(CapacityCheck atCapacity) {
            this.atCapacity = atCapacity;
            return this;
        }

        /** Sets {@link SettingResult#error()}. */
        public Builder error(String error) {
            this.error = error;
            return this;
        }

        /**
         * The setting's result.
         *
         * @throws IllegalStateException    when the entry is not set
         * @throws IllegalArgumentException when neither or both of the result and the error are set
         */
        public SettingResult build() {
            if (entry == null) {
                throw new IllegalStateException("a setting's result needs its grid entry: call entry(...) before"
                        + " build()");
            }
            return new SettingResult(entry, recorded, result, minCapacityBytes, atMinCapacity, searchRuns, atCapacity,
                    error);
        }
    }

    /** A setting that could not run. */
    static SettingResult failed(GridEntry entry, boolean recorded, String error) {
        return builder().entry(entry).recorded(recorded).error(error).build();
    }

    /** The setting's configuration text. */
    public String config() {
        return entry.config();
    }

    /** Whether the setting ran. */
    public boolean ran() {
        return result != null;
    }

    /** Whether a smallest capacity was found: the setting ran, and ran without out-of-memory errors. */
    public boolean fits() {
        return minCapacityBytes > 0;
    }

    /** Device mallocs and frees (maps and unmaps included) on the unlimited device; -1 when it did not run. */
    public long deviceCalls() {
        return result == null ? -1 : result.deviceMallocs() + result.deviceFrees();
    }

    /** The cache flushes (allocation retries) at the smallest capacity; -1 without one. */
    public long retriesAtMinCapacity() {
        return atMinCapacity == null ? -1 : atMinCapacity.allocRetries();
    }

    /**
     * The replay on the card: on the device of the card's capacity when one is known, else on the unlimited device;
     * null when the setting could not run.
     */
    public ReplayResult onCard() {
        return atCapacity != null ? atCapacity.result() : result;
    }

    /** Whether it runs on the card without an out-of-memory error. */
    public boolean runsOnCard() {
        ReplayResult r = onCard();
        return r != null && r.ooms() == 0;
    }

    /** The cache flushes on the card (allocation retries); -1 when it could not run. */
    public long flushesOnCard() {
        ReplayResult r = onCard();
        return r == null ? -1 : r.allocRetries();
    }

    /** The peak reserved on the card; -1 when it could not run. */
    public long peakReservedOnCard() {
        ReplayResult r = onCard();
        return r == null ? -1 : r.peakReservedBytes();
    }

    /** Device mallocs and frees on the card; -1 when it could not run. */
    public long deviceCallsOnCard() {
        ReplayResult r = onCard();
        return r == null ? -1 : r.deviceMallocs() + r.deviceFrees();
    }
}
