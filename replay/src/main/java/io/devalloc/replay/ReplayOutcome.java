package io.devalloc.replay;

import io.devalloc.trace.TraceFormat;
import java.util.List;
import java.util.Objects;

/**
 * A {@link ReplayResult} with what else the replay noticed: the trace's format, the device it ran on, the events it
 * could not replay as written, and how a warm start was done.
 *
 * @param result           the figures (what reports and comparisons use)
 * @param format           the trace's format
 * @param deviceName       the device's descriptor, e.g. {@code sim:0 (simulated GPU (80.00 GiB))}
 * @param unknownFrees     frees of a key that was not live (skipped)
 * @param failedFrees      frees of an allocation that had run out of memory (skipped: there was nothing to free)
 * @param reallocations    allocations of a key that was still live: the trace lost a free, so the older allocation
 *                         was freed after the new one was made
 * @param streams          trace streams other than the default one, each created on the device
 * @param emptyCacheCalls  calls to {@code releaseCachedMemory()} made for runs of {@code segment_free} rows
 * @param warmStart        how the trace's warm state was set up
 * @param restoredSegments presegments restored ({@link WarmStartKind#RESTORED})
 * @param restoredBlocks   prealloc blocks restored, or allocated with malloc ({@link WarmStartKind#MALLOC})
 * @param notes            sentences for the user about how the replay differs from the recording, may be empty
 * @param flushes          how the trace's cache flushes and out-of-memory rows were applied
 */
public record ReplayOutcome(ReplayResult result, TraceFormat format, String deviceName, long unknownFrees,
                            long failedFrees, long reallocations, int streams, long emptyCacheCalls,
                            WarmStartKind warmStart, long restoredSegments, long restoredBlocks, List<String> notes,
                            FlushReplay flushes) {

    /** How the warm state of a PyTorch trace ({@code presegment}/{@code prealloc} rows) was set up. */
    public enum WarmStartKind {
        /** The trace has no warm state, or no warm start was asked for. */
        NONE,
        /** Presegments and prealloc blocks restored into a caching allocator, as recorded. */
        RESTORED,
        /** The allocator cannot restore state: prealloc blocks allocated with malloc, presegments not restored. */
        MALLOC
    }

    public ReplayOutcome {
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(format, "format");
        Objects.requireNonNull(deviceName, "deviceName");
        Objects.requireNonNull(warmStart, "warmStart");
        Objects.requireNonNull(flushes, "flushes");
        notes = List.copyOf(notes);
    }

    /** An outcome without flushes to tell of ({@link FlushReplay#NONE}). */
    public ReplayOutcome(ReplayResult result, TraceFormat format, String deviceName, long unknownFrees,
                         long failedFrees, long reallocations, int streams, long emptyCacheCalls,
                         WarmStartKind warmStart, long restoredSegments, long restoredBlocks, List<String> notes) {
        this(result, format, deviceName, unknownFrees, failedFrees, reallocations, streams, emptyCacheCalls,
                warmStart, restoredSegments, restoredBlocks, notes, FlushReplay.NONE);
    }

    /** This outcome with {@code notes} in place of its own. */
    public ReplayOutcome withNotes(List<String> notes) {
        return new ReplayOutcome(result, format, deviceName, unknownFrees, failedFrees, reallocations, streams,
                emptyCacheCalls, warmStart, restoredSegments, restoredBlocks, notes, flushes);
    }

    /** A short label of the run: the allocator, with its configuration when there is one. */
    public String label() {
        return label(result.allocator(), result.conf());
    }

    /** {@code caching}, or {@code caching expandable_segments:True} with a configuration. */
    public static String label(String allocator, String conf) {
        return conf.isBlank() ? allocator : allocator + " " + conf.strip();
    }
}
