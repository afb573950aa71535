package io.devalloc.trace.rmm;

import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import java.io.IOException;
import java.io.Writer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;

/**
 * Writes RMM's replay log, as {@code rmm::mr::logging_resource_adaptor} does, so that RMM's
 * {@code REPLAY_BENCHMARK} and {@link RmmCsvReader} can read it: the header {@value RmmCsvReader#HEADER}, then
 * {@code thread,HH:MM:SS.micro,action,pointer,size,stream} rows. The pointer is written as glibc's {@code %p} writes
 * it, as RMM's log has it ({@code 0x10012400000}; {@code (nil)} for null, e.g. an {@code allocate failure}, which
 * RMM's parser reads as 0), the stream as RMM's {@code format_stream} does ({@code 0} for the default stream,
 * {@code 0x...} otherwise), the time of day from the writer's clock.
 *
 * <p>{@link Kind#ALLOC} and {@link Kind#PREALLOC} events are written as {@code allocate}, {@link Kind#FREE} as
 * {@code free}; segment and {@link Kind#OOM} events (what an allocator did, not what was asked of it) are not
 * written by {@link #write}: a PyTorch {@code oom} row's size is the device's free bytes, not a request. A request
 * that failed is written with {@link #allocateFailure(long, long, long)} (an RMM trace's {@code allocate failure}
 * rows come back as {@code OOM} events with that size). The rows are formatted by {@link RmmCsvRecorder}, the recording
 * decorator's writer, so a written log and a recorded one are the same format byte for byte. Reading the file back with
 * {@link RmmCsvReader} gives the written events with the file's line numbers ({@code PREALLOC} comes back as
 * {@code ALLOC}). Not thread-safe.
 */
public final class RmmCsvWriter implements AutoCloseable {

    /** Formats the rows: the recording decorator's writer, so that recorded and written logs are the same. */
    private final RmmCsvRecorder recorder;
    private final Clock clock;

    /** Writes to a new file (replacing any), with the system clock's time of day. */
    public RmmCsvWriter(Path file) throws IOException {
        this(new RmmCsvRecorder(file), Clock.system(ZoneId.systemDefault()));
    }

    /**
     * Writes to a character stream (closed by {@link #close()}); writes the header at once.
     *
     * @param out   where the rows go
     * @param clock gives each row's time of day (in the clock's zone)
     */
    public RmmCsvWriter(Writer out, Clock clock) throws IOException {
        this(new RmmCsvRecorder(Objects.requireNonNull(out, "out"), Objects.requireNonNull(clock, "clock").getZone()),
                clock);
    }

    private RmmCsvWriter(RmmCsvRecorder recorder, Clock clock) {
        this.recorder = recorder;
        this.clock = clock;
    }

    /**
     * Writes one event: {@code allocate} for {@link Kind#ALLOC} and {@link Kind#PREALLOC}, {@code free} for
     * {@link Kind#FREE}.
     *
     * @return true when written; false for a kind that RMM's log has no row for
     */
    public boolean write(TraceEvent event) throws IOException {
        return switch (event.kind()) {
            case ALLOC, PREALLOC -> {
                checkSize(event.size());
                recorder.allocate(event.thread(), now(), event.key(), event.size(), event.stream());
                yield true;
            }
            case FREE -> {
                checkSize(event.size());
                recorder.free(event.thread(), now(), event.key(), event.size(), event.stream());
                yield true;
            }
            default -> false;
        };
    }

    /**
     * Writes an {@code allocate failure} row: an allocation of {@code size} bytes that threw, with pointer
     * {@code (nil)} as RMM writes it.
     */
    public void allocateFailure(long size, long stream, long thread) throws IOException {
        checkSize(size);
        recorder.allocateFailure(thread, now(), size, stream, null);
    }

    private static void checkSize(long size) {
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
    }

    /** The clock's time in microseconds since the epoch. */
    private long now() {
        Instant t = clock.instant();
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000);
    }

    /** Flushes what is written. */
    public void flush() throws IOException {
        recorder.flush();
    }

    @Override
    public void close() throws IOException {
        recorder.close();
    }
}
