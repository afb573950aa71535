package io.devalloc.advisor;

import io.devalloc.replay.CompactTrace;
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
 * The trace the advisor replays, read once: its events in a {@link CompactTrace} (primitive columns,
 * {@value CompactTrace#BYTES_PER_EVENT} bytes per event, no object per event), which every replay of every setting
 * reads without reading or parsing the file again, and what the advisor needs before the first replay: the settings
 * it was recorded with (a PyTorch snapshot's {@code allocator_settings}), how many allocations it makes, its first
 * and its largest request. Immutable; any number of threads may replay it at once.
 */
public final class AdvisorTrace {

    private final String name;
    private final CompactTrace compact;
    private final RecordedAllocatorSettings recorded;
    private final long allocations;
    private final long firstRequest;
    private final long largestRequest;

    private AdvisorTrace(String name, CompactTrace compact, RecordedAllocatorSettings recorded, long allocations,
                         long firstRequest, long largestRequest) {
        this.name = name;
        this.compact = compact;
        this.recorded = recorded;
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
     * Reads {@code source} once, into memory: its events, its settings and its requests.
     *
     * @param name the trace's name in reports
     * @throws io.devalloc.trace.TraceFormatException for a malformed trace
     * @throws IOException                             if it cannot be read
     */
    public static AdvisorTrace read(String name, TraceSource source) throws IOException {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        // The compact trace opens the source once; this reader looks at each event on its way into the columns.
        Counting counting = new Counting(source);
        CompactTrace compact = CompactTrace.read(name, counting);
        if (counting.opened != 1) {
            throw new IllegalStateException("the trace was opened " + counting.opened + " times, not once");
        }
        return new AdvisorTrace(name, compact, counting.recorded, counting.allocations, counting.first,
                counting.largest);
    }

    /** Replays the trace with {@code replayer}'s options: from memory, reading nothing. */
    ReplayOutcome replay(Replayer replayer) {
        return replayer.replay(compact);
    }

    /** The trace in memory, as every replay reads it. */
    public CompactTrace compact() {
        return compact;
    }

    /** The trace's name in reports (the path given). */
    public String name() {
        return name;
    }

    /** The format it was read in. */
    public TraceFormat format() {
        return compact.format();
    }

    /** The settings a PyTorch snapshot was recorded with, or null when the trace is not one. */
    public RecordedAllocatorSettings recordedSettings() {
        return recorded;
    }

    /** Its events, every kind counted. */
    public long events() {
        return compact.events();
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

    /** The source, opened once, seen through a reader that notes the settings and the allocations as they pass. */
    private static final class Counting implements TraceSource {
        private final TraceSource source;
        int opened;
        RecordedAllocatorSettings recorded;
        long allocations;
        long first;
        long largest;

        Counting(TraceSource source) {
            this.source = source;
        }

        @Override
        public long sizeBytes() {
            return source.sizeBytes();
        }

        @Override
        public TraceReader open() throws IOException {
            opened++;
            TraceReader reader = source.open();
            if (reader instanceof PyTorchPickleReader pickle) {
                recorded = pickle.recordedSettings();
            }
            return new TraceReader() {
                @Override
                public TraceFormat format() {
                    return reader.format();
                }

                @Override
                public TraceEvent next() throws IOException {
                    TraceEvent e = reader.next();
                    if (e != null && (e.kind() == TraceEvent.Kind.ALLOC || e.kind() == TraceEvent.Kind.PREALLOC)) {
                        if (allocations == 0) {
                            first = e.size();
                        }
                        allocations++;
                        largest = Math.max(largest, e.size());
                    }
                    return e;
                }

                @Override
                public long bytesRead() {
                    return reader.bytesRead();
                }

                @Override
                public void close() throws IOException {
                    reader.close();
                }
            };
        }
    }
}
