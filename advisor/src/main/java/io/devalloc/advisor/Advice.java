package io.devalloc.advisor;

import io.devalloc.replay.CacheFlushes;
import io.devalloc.replay.DeviceTrace;
import io.devalloc.replay.ReplayOutcome;
import java.util.List;
import java.util.Objects;

/**
 * Everything {@code devalloc advise} found for one device of a trace, what every report renders for it.
 *
 * @param trace          the trace's name
 * @param cudaDevice     the CUDA device index, or {@link DeviceTrace#NO_DEVICE} for a format that names none
 * @param history        whether the device has a recorded history (else only its end state: no what-if replay, no
 *                       verdict, no recommendation)
 * @param events         the device's events, every kind counted
 * @param allocator      the allocator's name
 * @param objective      what the recommendation minimises
 * @param capacity       the card the settings are compared on ({@code --capacity} or read from the trace), or null
 *                       when none is known (an unlimited device)
 * @param minSaving      the least saving worth a change
 * @param grid           the grid swept (its problems included)
 * @param trust          the trust line
 * @param settings       every setting, ranked by the objective (best first; settings that did not run on the card, or
 *                       could not run, last); empty for a device with only its end state
 * @param recommendation the recommendation, or null when no setting runs (or the device has only its end state)
 * @param flushes        the trace's cache flushes told apart, and the capacity it tells
 * @param oom            for a trace with {@code oom} entries: the failures, whether they come back on the card, what
 *                       each setting does there and the verdict; null for a trace without any
 * @param ladder         the bounds ladder: the lower bound, the offline plan, the grid's least memory and the recorded
 *                       setting's, with the sentence that reads them; null for a device with only its end state
 * @param endState       for a device without history: its end state, restored under the recorded settings
 *                       (segments, blocks, waste by cause); null for a device with history, or when it could not be
 *                       restored (the trust line says why)
 * @param notes          what the reader should know about the what-if runs
 * @param runs           the replays made for this device
 * @param threads        the threads they ran on
 */
public record Advice(String trace, int cudaDevice, boolean history, long events, String allocator, Objective objective,
                     CardCapacity capacity, MinSaving minSaving, Grid grid, TrustLine trust,
                     List<SettingResult> settings, Recommendation recommendation, CacheFlushes flushes,
                     OomPostMortem oom, BoundsLadder ladder, ReplayOutcome endState, List<String> notes, long runs,
                     int threads) {

    public Advice {
        Objects.requireNonNull(trace, "trace");
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(objective, "objective");
        Objects.requireNonNull(minSaving, "minSaving");
        Objects.requireNonNull(grid, "grid");
        Objects.requireNonNull(trust, "trust");
        Objects.requireNonNull(flushes, "flushes");
        settings = List.copyOf(settings);
        notes = List.copyOf(notes);
    }

    /** Whether the device has a recorded history (else only its end state: no replay, no verdict). */
    public boolean hasHistory() {
        return history;
    }

    /** {@code cuda:1}, or the empty string for a format that names no device. */
    public String deviceLabel() {
        return cudaDevice == DeviceTrace.NO_DEVICE ? "" : "cuda:" + cudaDevice;
    }

    /** The capacity given with {@code --capacity}, or -1 (a capacity read from the trace is {@link #capacity()}). */
    public long capacityBytes() {
        return capacity == null || capacity.readFromTrace() ? -1 : capacity.bytes();
    }

    /** The baseline's what-if result (the recorded setting replayed as every other), or null when it did not run. */
    public SettingResult baseline() {
        for (SettingResult s : settings) {
            if (s.recorded()) {
                return s;
            }
        }
        return null;
    }

    /**
     * What this device needs, for the summary across devices: its recorded peak reserved; for a device that ran out
     * of memory, at least the smallest capacity on which a setting of the grid runs the whole trace, its failed
     * requests served ({@link #leastCapacity()}), since the recording stopped short of what the job needs.
     */
    public long neededBytes() {
        long peak = recordedPeakReservedBytes();
        SettingResult least = oom == null ? null : leastCapacity();
        return least == null ? peak : Math.max(peak, least.minCapacityBytes());
    }

    /** The setting with the smallest capacity that runs the whole trace, or null when none does. */
    public SettingResult leastCapacity() {
        SettingResult least = null;
        for (SettingResult s : settings) {
            if (s.fits() && (least == null || s.minCapacityBytes() < least.minCapacityBytes())) {
                least = s;
            }
        }
        return least;
    }

    /**
     * The peak reserved bytes this device needs, for the summary across devices: the trace's own recorded peak (its
     * segment rows) when it has one, else the baseline's replay, else the end state's.
     */
    public long recordedPeakReservedBytes() {
        if (trust.outcome() != null && trust.outcome().result().groundTruth() != null) {
            return trust.outcome().result().groundTruth().peakReservedBytes();
        }
        if (endState != null) {
            return endState.result().peakReservedBytes();
        }
        SettingResult base = baseline();
        return base != null && base.ran() ? base.result().peakReservedBytes() : 0;
    }
}
