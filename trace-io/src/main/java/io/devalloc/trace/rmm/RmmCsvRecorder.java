package io.devalloc.trace.rmm;

import io.devalloc.trace.TextTraceRecorder;
import io.devalloc.trace.TraceRecorder;
import io.devalloc.trace.text.CsvLine;
import io.devalloc.trace.text.CsvRecorderOutput;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.Objects;

/**
 * Writes RMM's replay log, the CSV that {@code rmm::mr::logging_resource_adaptor} writes and RMM's
 * {@code REPLAY_BENCH} (and devalloc's {@code replay}) reads:
 * <pre>
 * Thread,Time,Action,Pointer,Size,Stream
 * 1,15:47:02.841961,allocate,0x7f3a00000000,1048576,0
 * 1,15:47:02.841990,allocate failure,(nil),85899345920,0x5581d2a0
 * 23,15:47:02.842007,free,0x7f3a00000000,1048576,0
 * </pre>
 * <ul>
 *   <li>{@code Thread}: the Java thread id ({@link Thread#threadId()}); RMM writes the OS thread id. Replay groups
 *       events by it.</li>
 *   <li>{@code Time}: the wall clock in the recorder's time zone (the system default for
 *       {@link #RmmCsvRecorder(Path)}), {@code HH:MM:SS.ffffff}, as RMM's {@code %H:%M:%S.%f}. RMM's replay does
 *       not use it.</li>
 *   <li>{@code Action}: {@code allocate}, {@code free} or {@code allocate failure}.</li>
 *   <li>{@code Pointer}: lower-case hex with {@code 0x}, as C's {@code printf("%p")} (glibc) writes a pointer, and
 *       {@code (nil)}, as it writes a null pointer, for a failure (and for any null address). That is what RMM
 *       writes: its {@code logging_resource_adaptor} logs {@code "allocate failure,%p,%zu,%s"} with
 *       {@code nullptr}, and its replay benchmark's {@code log_parser.hpp} reads {@code (nil)} as 0 and any other
 *       pointer as hex. RMM versions before its printf-style logger (fmt's {@code {}}) wrote {@code 0x0} instead;
 *       devalloc's reader takes both.</li>
 *   <li>{@code Size}: the bytes asked for, in decimal; for a failure the size that could not be served.</li>
 *   <li>{@code Stream}: the stream handle as C++'s {@code ostream << std::hex} prints a {@code cudaStream_t}:
 *       {@code 0} for the default stream, otherwise {@code 0x} and lower-case hex. (RMM's own parser reads this
 *       column as decimal, so it sees every stream as 0; devalloc's reader reads the hex.)</li>
 * </ul>
 * Lines end with {@code \n}; the file is ASCII. {@code recordStream} has no RMM action and is not written.
 *
 * <p>Output is buffered: a crash loses the rows since the last {@link #flush()}, as RMM's log without
 * {@code auto_flush}. Not thread-safe on its own (see {@link TraceRecorder}).
 */
public final class RmmCsvRecorder extends TextTraceRecorder {

    /** The header line, exactly as RMM writes it. */
    public static final String HEADER = "Thread,Time,Action,Pointer,Size,Stream";
    /** A null pointer as glibc's {@code printf("%p")}, and so RMM's log, writes it. */
    public static final String NULL_POINTER = "(nil)";

    private final CsvRecorderOutput output;
    private final ZoneRules zone;
    /** Cached UTC offset, valid for epoch seconds in [offsetFrom, offsetUntil). */
    private long offsetFrom = Long.MAX_VALUE;
    private long offsetUntil = Long.MIN_VALUE;
    private int offsetSeconds;

    /** Creates (or truncates) {@code file} and writes the header; times in the system default time zone. */
    public RmmCsvRecorder(Path file) throws IOException {
        this(CsvRecorderOutput.create(file), ZoneId.systemDefault());
    }

    /**
     * Writes ASCII to {@code out} (which this recorder then owns and closes; buffer it) and writes the header now.
     *
     * @param zone the time zone of the {@code Time} column
     */
    public RmmCsvRecorder(OutputStream out, ZoneId zone) throws IOException {
        this(new CsvRecorderOutput(out), zone);
    }

    /**
     * Writes to {@code out} (which this recorder then owns and closes) and writes the header now.
     *
     * @param zone the time zone of the {@code Time} column
     */
    public RmmCsvRecorder(Writer out, ZoneId zone) throws IOException {
        this(new CsvRecorderOutput(out), zone);
    }

    private RmmCsvRecorder(CsvRecorderOutput output, ZoneId zone) throws IOException {
        super(output, "RMM CSV recorder");
        this.output = output;
        this.zone = Objects.requireNonNull(zone, "zone").getRules();
        output.row().text(HEADER).end();
    }

    @Override
    public void allocate(long threadId, long epochMicros, long address, long size, long stream) throws IOException {
        row(threadId, epochMicros, "allocate", address, size, stream);
    }

    @Override
    public void allocateFailure(long threadId, long epochMicros, long size, long stream, RuntimeException cause)
            throws IOException {
        row(threadId, epochMicros, "allocate failure", 0, size, stream);
    }

    @Override
    public void free(long threadId, long epochMicros, long address, long size, long stream) throws IOException {
        row(threadId, epochMicros, "free", address, size, stream);
    }

    private void row(long threadId, long epochMicros, String action, long address, long size, long stream)
            throws IOException {
        CsvLine line = output.row();
        line.unsignedDecimal(threadId).comma();
        time(line, epochMicros);
        line.comma().text(action).comma();
        if (address == 0) {
            line.text(NULL_POINTER);
        } else {
            line.text("0x").hex(address);
        }
        line.comma().decimal(size).comma();
        if (stream == 0) {
            line.ch('0');
        } else {
            line.text("0x").hex(stream);
        }
        line.end();
    }

    /** {@code HH:MM:SS.ffffff} in the recorder's zone. */
    private void time(CsvLine line, long epochMicros) {
        long seconds = Math.floorDiv(epochMicros, 1_000_000L);
        long micros = Math.floorMod(epochMicros, 1_000_000L);
        long local = seconds + offsetAt(seconds);
        long secondOfDay = Math.floorMod(local, 86_400L);
        line.padded(secondOfDay / 3600, 2).ch(':').padded(secondOfDay / 60 % 60, 2).ch(':')
                .padded(secondOfDay % 60, 2).ch('.').padded(micros, 6);
    }

    private int offsetAt(long epochSecond) {
        if (epochSecond < offsetFrom || epochSecond >= offsetUntil) {
            Instant instant = Instant.ofEpochSecond(epochSecond);
            offsetSeconds = zone.getOffset(instant).getTotalSeconds();
            if (zone.isFixedOffset()) {
                offsetFrom = Long.MIN_VALUE;
                offsetUntil = Long.MAX_VALUE;
            } else {
                ZoneOffsetTransition next = zone.nextTransition(instant);
                offsetFrom = epochSecond;
                offsetUntil = next == null ? Long.MAX_VALUE : next.toEpochSecond();
            }
        }
        return offsetSeconds;
    }
}
