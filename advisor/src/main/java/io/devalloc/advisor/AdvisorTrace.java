package io.devalloc.advisor;

import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceSource;
import io.devalloc.replay.TraceSources;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.pytorch.PyTorchPickleReader;
import io.devalloc.trace.pytorch.RecordedAllocatorSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * The trace the advisor replays, with what it needs to know before the first replay: the settings it was recorded
 * with (a PyTorch snapshot's {@code allocator_settings}), how many allocations it makes, its first and its largest
 * request. The replays themselves go through {@link #replay(Replayer)}, the one place that decides how the events
 * reach the engine.
 */
public final class AdvisorTrace {

    private final String name;
    private final TraceSource source;
    private final TraceFormat format;
    private final RecordedAllocatorSettings recorded;
    private final long events;
    private final long allocations;
    private final long firstRequest;
    private final long largestRequest;

    private AdvisorTrace(String name, TraceSource source, TraceFormat format, RecordedAllocatorSettings recorded,
                         long events, long allocations, long firstRequest, long largestRequest) {
        this.name = name;
        this.source = source;
        this.format = format;
        this.recorded = recorded;
        this.events = events;
        this.allocations = allocations;
        this.firstRequest = firstRequest;
        this.largestRequest = largestRequest;
    }

    /**
     * Reads {@code file} (any format the replay reads, detected from its content), named by its path.
     *
     * @throws IllegalArgumentException                if it is not a readable regular file
     * @throws io.devalloc.trace.TraceFormatException naming the file and the line, for a malformed trace
     * @throws IOException                             if it cannot be read
     */
    public static AdvisorTrace read(Path file) throws IOException {
        Objects.requireNonNull(file, "file");
        return read(file.toString(), TraceSources.of(file));
    }

    /**
     * Reads {@code source} once, for its settings and requests.
     *
     * @param name the trace's name in reports
     * @throws io.devalloc.trace.TraceFormatException for a malformed trace
     * @throws IOException                             if it cannot be read
     */
    public static AdvisorTrace read(String name, TraceSource source) throws IOException {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        try (TraceReader reader = source.open()) {
            RecordedAllocatorSettings recorded = reader instanceof PyTorchPickleReader pickle
                    ? pickle.recordedSettings() : null;
            long events = 0;
            long allocations = 0;
            long first = 0;
            long largest = 0;
            for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                events++;
                if (e.kind() == TraceEvent.Kind.ALLOC || e.kind() == TraceEvent.Kind.PREALLOC) {
                    if (allocations == 0) {
                        first = e.size();
                    }
                    allocations++;
                    largest = Math.max(largest, e.size());
                }
            }
            return new AdvisorTrace(name, source, reader.format(), recorded, events, allocations, first, largest);
        }
    }

    /** Replays the trace with {@code replayer}'s options. */
    ReplayOutcome replay(Replayer replayer) throws IOException {
        return replayer.replay(name, source);
    }

    /** The trace's name in reports (the path given). */
    public String name() {
        return name;
    }

    /** The format it was read in. */
    public TraceFormat format() {
        return format;
    }

    /** The settings a PyTorch snapshot was recorded with, or null when the trace is not one. */
    public RecordedAllocatorSettings recordedSettings() {
        return recorded;
    }

    /** Its events, every kind counted. */
    public long events() {
        return events;
    }

    /** Its allocations ({@code alloc} rows, and the blocks live when recording began). */
    public long allocations() {
        return allocations;
    }

    /** The size of its first allocation, 0 when it has none. */
    public long firstRequest() {
        return firstRequest;
    }

    /** The size of its largest allocation, 0 when it has none. */
    public long largestRequest() {
        return largestRequest;
    }
}
