package io.devalloc.examples.trace;

import io.devalloc.examples.trace.TraceEvent.Kind;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.LocalTime;
import java.util.Objects;

/**
 * Writes RMM's replay log, as {@code rmm::mr::logging_resource_adaptor} does, so that RMM's
 * {@code REPLAY_BENCHMARK} and {@link RmmCsvReader} can read it: the header {@value RmmCsvReader#HEADER}, then
 * {@code thread,HH:MM:SS.micro,action,pointer,size,stream} rows. The pointer is written as C's {@code %p} writes it
 * ({@code 0x10012400000}, {@code 0x0} for null, which RMM's parser reads), the stream as RMM's {@code format_stream} does ({@code 0} for the
 * default stream, {@code 0x...} otherwise), the time of day from the writer's clock.
 *
 * <p>{@link Kind#ALLOC} and {@link Kind#PREALLOC} events are written as {@code allocate}, {@link Kind#FREE} as
 * {@code free}; the other kinds (segments, out of memory: what an allocator did, not what was asked of it) have no
 * row in RMM's log and are not written. An allocation that failed is written with
 * {@link #allocateFailure(long, long, long)}. Reading the file back with {@link RmmCsvReader} gives the written
 * events with the file's line numbers ({@code PREALLOC} comes back as {@code ALLOC}). Not thread-safe.
 */
public final class RmmCsvWriter implements AutoCloseable {

    private final Writer out;
    private final Clock clock;
    private final StringBuilder row = new StringBuilder(96);

    /** Writes to a new file (replacing any), with the system clock's time of day. */
    public RmmCsvWriter(Path file) throws IOException {
        this(new BufferedWriter(new OutputStreamWriter(Files.newOutputStream(file), StandardCharsets.UTF_8),
                1 << 16), Clock.systemDefaultZone());
    }

    /**
     * Writes to a character stream (closed by {@link #close()}); writes the header at once.
     *
     * @param out   where the rows go
     * @param clock gives each row's time of day
     */
    public RmmCsvWriter(Writer out, Clock clock) throws IOException {
        this.out = Objects.requireNonNull(out, "out");
        this.clock = Objects.requireNonNull(clock, "clock");
        out.write(RmmCsvReader.HEADER);
        out.write('\n');
    }

    /**
     * Writes one event: {@code allocate} for {@link Kind#ALLOC} and {@link Kind#PREALLOC}, {@code free} for
     * {@link Kind#FREE}.
     *
     * @return true when written; false for a kind that RMM's log has no row for
     */
    public boolean write(TraceEvent event) throws IOException {
        String action = switch (event.kind()) {
            case ALLOC, PREALLOC -> "allocate";
            case FREE -> "free";
            default -> null;
        };
        if (action == null) {
            return false;
        }
        row(event.thread(), action, event.key(), event.size(), event.stream());
        return true;
    }

    /** Writes an {@code allocate failure} row: an allocation of {@code size} bytes that threw (null pointer). */
    public void allocateFailure(long size, long stream, long thread) throws IOException {
        row(thread, "allocate failure", 0, size, stream);
    }

    private void row(long thread, String action, long pointer, long size, long stream) throws IOException {
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
        row.setLength(0);
        row.append(Long.toUnsignedString(thread)).append(',');
        time(LocalTime.now(clock));
        row.append(',').append(action).append(',');
        if (pointer == 0) {
            row.append("0x0");
        } else {
            row.append("0x").append(Long.toHexString(pointer));
        }
        row.append(',').append(size).append(',');
        if (stream == 0) {
            row.append('0');
        } else {
            row.append("0x").append(Long.toHexString(stream));
        }
        row.append('\n');
        out.append(row);
    }

    /** {@code HH:MM:SS.micro}, as spdlog's {@code %H:%M:%S.%f}. */
    private void time(LocalTime t) {
        two(t.getHour());
        row.append(':');
        two(t.getMinute());
        row.append(':');
        two(t.getSecond());
        row.append('.');
        String micros = Integer.toString(t.getNano() / 1000);
        row.append("000000", 0, 6 - micros.length()).append(micros);
    }

    private void two(int v) {
        if (v < 10) {
            row.append('0');
        }
        row.append(v);
    }

    /** Flushes what is written. */
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void close() throws IOException {
        out.close();
    }
}
