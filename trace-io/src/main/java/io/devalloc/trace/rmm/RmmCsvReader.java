package io.devalloc.trace.rmm;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.trace.TextTraceReader;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.text.CsvColumns;
import io.devalloc.trace.text.FusedRow;
import io.devalloc.trace.text.SwarDigits;
import io.devalloc.trace.text.TextLines;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Path;

/**
 * Reads RMM's replay log, the CSV that {@code rmm::mr::logging_resource_adaptor} writes and RMM's
 * {@code REPLAY_BENCHMARK} reads: the header {@value #HEADER}, then one row per call, for example
 * {@code 2342727,15:47:02.841961,allocate,0x10012400000,1048576,0}.
 *
 * <ul>
 *   <li>{@code Thread}: the OS thread id, decimal; kept as the event's thread.</li>
 *   <li>{@code Time}: {@code HH:MM:SS.micro} as the adaptor writes it (a plain {@code seconds.micro} number, as
 *       RMM's user guide shows, is accepted too); checked, not kept.</li>
 *   <li>{@code Action}: {@code allocate} gives {@link Kind#ALLOC}, {@code free} gives {@link Kind#FREE},
 *       {@code allocate failure} (an allocation that threw) gives {@link Kind#OOM}: what the recorded resource did,
 *       ground truth of what the recorded resource did, with the size that could not be served (the key is
 *       {@link TraceEvent#FREE_BYTES_UNKNOWN}: RMM does not log the device's free memory).</li>
 *   <li>{@code Pointer}: hexadecimal, with or without {@code 0x}, or {@code (nil)} for null (key 0).</li>
 *   <li>{@code Size}: bytes, decimal (for a free, the size given to {@code deallocate}).</li>
 *   <li>{@code Stream}: the stream handle, hexadecimal with or without {@code 0x} ({@code 0} for the default
 *       stream), or {@code (nil)}. RMM's own parser reads this column as decimal and so gets 0 for every
 *       {@code 0x...} stream; this reader keeps the value.</li>
 * </ul>
 * Blank lines are ignored. An event's {@link TraceEvent#line() line} is its line in the file (the header is line
 * 1). One line at a time: constant memory.
 */
public final class RmmCsvReader extends TextTraceReader {

    /** The header line, exactly. */
    public static final String HEADER = "Thread,Time,Action,Pointer,Size,Stream";

    private final TextLines lines;
    private final FusedRow row;
    private final CsvColumns columns = new CsvColumns(HEADER);

    /** Opens a file. */
    public RmmCsvReader(Path file) throws IOException {
        this(TextLines.open(file));
    }

    /**
     * Reads from a character stream, closed by {@link #close()} (and when the header is wrong).
     *
     * @param in   the text
     * @param file the name messages give
     */
    public RmmCsvReader(Reader in, String file) throws IOException {
        this(new TextLines(in, file));
    }

    private RmmCsvReader(TextLines lines) throws IOException {
        super(TraceFormat.RMM_CSV, lines, lines::position);
        this.lines = lines;
        this.row = new FusedRow(lines);
        columns.expectHeader(lines);
    }

    @Override
    public TraceEvent next() throws IOException {
        int p = row.start();
        if (p >= 0) {
            TraceEvent fused = fusedRow(lines.buffer(), p);
            if (fused != null) {
                return fused;
            }
        }
        // Anything fusedRow does not take (blank lines, other time forms, (nil), failures, the last lines, errors)
        // is read column by column, with the messages.
        String line;
        while ((line = lines.next()) != null) {
            if (line.isBlank()) {
                continue;
            }
            columns.splitExactly(line, lines);
            long thread = lines.unsignedDecimal(line, columns.start(0), columns.end(0), "Thread");
            checkTime(line, columns.start(1), columns.end(1));
            String action = line.substring(columns.start(2), columns.end(2));
            Kind kind = switch (action) {
                case "allocate" -> Kind.ALLOC;
                case "free" -> Kind.FREE;
                case "allocate failure" -> Kind.OOM;
                default -> throw lines.error("unknown Action '" + UntrustedText.excerpt(action)
                        + "': expected allocate, free or allocate failure");
            };
            long pointer = pointer(line, columns.start(3), columns.end(3), "Pointer");
            long size = lines.size(line, columns.start(4), columns.end(4), "Size");
            long stream = pointer(line, columns.start(5), columns.end(5), "Stream");
            // A failure's pointer is (nil): its key says the device's free bytes are not recorded (TraceEvent#key).
            return new TraceEvent(kind, kind == Kind.OOM ? TraceEvent.FREE_BYTES_UNKNOWN : pointer, size, stream,
                    thread, lines.lineNumber());
        }
        return null;
    }

    // The common row, as the logging adaptor writes it, parsed while its end is looked for:
    // thread,HH:MM:SS.f,allocate|free,0x<hex>,size,0|0x<hex> and \n or \r\n.

    /** {@code "allocate"} as a little-endian word, and {@code "free,"} as the low five bytes of one. */
    private static final long ALLOCATE = 0x657461636F6C6C61L;
    private static final long FREE_COMMA = 0x2C65657266L;

    /**
     * The event of the line at {@code b[p]} if it has the common shape, moving past it; null (nothing moved) for any
     * other line. Where both accept a row, both give the same event.
     */
    private TraceEvent fusedRow(byte[] b, int p) {
        int i = row.decimal(b, p, ',');
        if (i < 0) {
            return null;
        }
        long thread = row.value();
        i = time(b, i);
        if (i < 0 || b[i] != ',') {
            return null;
        }
        i++;
        Kind kind;
        if (SwarDigits.word(b, i) == ALLOCATE && b[i + 8] == ',') {
            kind = Kind.ALLOC;
            i += 9;
        } else if ((SwarDigits.word(b, i) & 0xFFFFFFFFFFL) == FREE_COMMA) {
            kind = Kind.FREE;
            i += 5;
        } else {
            return null;
        }
        if (b[i] != '0' || b[i + 1] != 'x') {
            return null;
        }
        i = row.hex(b, i + 2);
        if (i < 0 || b[i] != ',') {
            return null;
        }
        long pointer = row.value();
        i = row.decimal(b, i + 1, ',');
        if (i < 0) {
            return null;
        }
        long size = row.value();
        long stream;
        if (b[i] == '0' && b[i + 1] == 'x') {
            i = row.hex(b, i + 2);
            if (i < 0) {
                return null;
            }
            stream = row.value();
        } else if (b[i] == '0') {
            stream = 0;
            i++;
        } else {
            return null;
        }
        if (!row.end(i)) {
            return null;
        }
        return new TraceEvent(kind, pointer, size, stream, thread, lines.lineNumber());
    }

    /** {@code HH:MM:SS.f} (1 to 9 fraction digits) at {@code i}, as {@link #checkTime} accepts it: its end, or -1. */
    private static int time(byte[] b, int i) {
        if (b[i + 2] != ':' || b[i + 5] != ':' || b[i + 8] != '.') {
            return -1;
        }
        int hours = twoDigits(b, i);
        int minutes = twoDigits(b, i + 3);
        int seconds = twoDigits(b, i + 6);
        if (hours < 0 || hours >= 24 || minutes < 0 || minutes >= 60 || seconds < 0 || seconds >= 61) {
            return -1;
        }
        int end = SwarDigits.skip(b, i + 9);
        return end < 0 || end - (i + 9) > 9 ? -1 : end;
    }

    private static int twoDigits(byte[] b, int i) {
        int hi = b[i] - '0';
        int lo = b[i + 1] - '0';
        return hi < 0 || hi > 9 || lo < 0 || lo > 9 ? -1 : hi * 10 + lo;
    }

    private long pointer(String line, int from, int to, String what) throws TraceFormatException {
        if (line.startsWith("(nil)", from) && to - from == 5) {
            return 0;
        }
        return lines.hex(line, from, to, what);
    }

    /** {@code HH:MM:SS.f} (1 to 9 fraction digits), or {@code seconds.f}. */
    private void checkTime(String line, int from, int to) throws TraceFormatException {
        int dot = line.indexOf('.', from);
        if (dot < 0 || dot >= to) {
            dot = to;
        }
        boolean ok = dot < to && to - dot - 1 >= 1 && to - dot - 1 <= 9 && digits(line, dot + 1, to);
        if (ok) {
            if (dot - from == 8 && line.charAt(from + 2) == ':' && line.charAt(from + 5) == ':') {
                ok = digits(line, from, from + 2) && digits(line, from + 3, from + 5) && digits(line, from + 6, dot)
                        && Integer.parseInt(line, from, from + 2, 10) < 24
                        && Integer.parseInt(line, from + 3, from + 5, 10) < 60
                        && Integer.parseInt(line, from + 6, dot, 10) < 61;
            } else {
                ok = dot > from && dot - from <= 12 && digits(line, from, dot);
            }
        }
        if (!ok) {
            throw lines.error("Time: expected HH:MM:SS.micro (like 15:47:02.841961), got '"
                    + UntrustedText.excerpt(line.substring(from, to)) + "'");
        }
    }

    private static boolean digits(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }
}
