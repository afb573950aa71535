package io.devalloc.trace.pytorch;

import io.devalloc.trace.TextTraceReader;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.text.CsvColumns;
import io.devalloc.trace.text.FusedRow;
import io.devalloc.trace.text.SwarDigits;
import io.devalloc.trace.text.TextLines;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Path;

/**
 * Reads the CSV form of a PyTorch memory snapshot, as {@code pickle_to_csv.py --prepend-segments --prepend-live}
 * writes it: the header {@value #HEADER}, then one row per record.
 *
 * <table>
 *   <caption>What each action becomes</caption>
 *   <tr><th>action</th><th>event</th></tr>
 *   <tr><td>{@code presegment}</td><td>{@link TraceEvent.Kind#PRESEGMENT} (segment address and size)</td></tr>
 *   <tr><td>{@code prealloc}</td><td>{@link TraceEvent.Kind#PREALLOC}</td></tr>
 *   <tr><td>{@code alloc}</td><td>{@link TraceEvent.Kind#ALLOC}</td></tr>
 *   <tr><td>{@code free_completed}</td><td>{@link TraceEvent.Kind#FREE}</td></tr>
 *   <tr><td>{@code segment_alloc}, {@code segment_free}, {@code segment_map}, {@code segment_unmap}</td>
 *       <td>the {@code SEGMENT_*} ground-truth events</td></tr>
 *   <tr><td>{@code oom}</td><td>{@link TraceEvent.Kind#OOM}: the size column holds the device's free bytes, as
 *       {@code pickle_to_csv.py} writes it, which become the event's key ({@link TraceEvent#FREE_BYTES_UNKNOWN}
 *       when empty); the request is not in the CSV (size 0)</td></tr>
 *   <tr><td>{@code free_requested}, {@code snapshot}</td><td>checked, then skipped (counted by
 *       {@link #skipped()})</td></tr>
 * </table>
 *
 * <p>{@code addr}, {@code size}, {@code stream} and {@code seq} are non-negative decimal integers, {@code time_us}
 * is one or empty (it is not kept). {@code addr} and {@code size} may be empty only on {@code oom} and
 * {@code snapshot} rows (then 0); an empty {@code stream} is stream 0. Blank lines are ignored. An event's
 * {@link TraceEvent#line() line} is its line in the file (the header is line 1). One line at a time: constant
 * memory.
 */
public final class PyTorchCsvReader extends TextTraceReader {

    /** The header line, exactly. */
    public static final String HEADER = "seq,action,addr,size,stream,time_us";

    private final TextLines lines;
    private final FusedRow row;
    private final CsvColumns columns = new CsvColumns(HEADER);
    private long skipped;

    /** Opens a file. */
    public PyTorchCsvReader(Path file) throws IOException {
        this(TextLines.open(file));
    }

    /**
     * Reads from a character stream, closed by {@link #close()} (and when the header is wrong).
     *
     * @param in   the text
     * @param file the name messages give
     */
    public PyTorchCsvReader(Reader in, String file) throws IOException {
        this(new TextLines(in, file));
    }

    private PyTorchCsvReader(TextLines lines) throws IOException {
        super(TraceFormat.PYTORCH_CSV, lines, lines::position);
        this.lines = lines;
        this.row = new FusedRow(lines);
        columns.expectHeader(lines);
    }

    /** The {@code free_requested} and {@code snapshot} rows read so far (checked, no event). */
    public long skipped() {
        return skipped;
    }

    @Override
    public TraceEvent next() throws IOException {
        TextLines lines = this.lines;
        CsvColumns columns = this.columns;
        while (true) {
            int p = row.start();
            if (p >= 0 && fusedRow(lines.buffer(), p)) {
                if (fastAction.kind == null) {
                    skipped++;
                    continue;
                }
                return event(fastAction.kind, fastAddr, fastSize, fastSize, fastStream);
            }
            // Anything fusedRow does not take (blank lines, empty or long numbers, the last lines, errors) is read
            // column by column, with the messages.
            if (!lines.nextLine()) {
                return null;
            }
            if (lines.blank()) {
                continue;
            }
            byte[] line = lines.buffer();
            columns.splitExactly(lines);
            lines.unsignedDecimal(columns.start(0), columns.end(0), "seq");
            PyTorchAction action = PyTorchAction.of(line, columns.start(1), columns.end(1));
            if (action == null) {
                throw lines.error("unknown action '" + lines.quote(columns.start(1), columns.end(1))
                        + "': expected one of " + PyTorchAction.EXPECTED);
            }
            boolean optional = !action.needsAddressAndSize;
            long addr = optional && columns.empty(2) ? 0
                    : lines.unsignedDecimal(columns.start(2), columns.end(2), "addr");
            long size = optional && columns.empty(3) ? 0 : lines.size(columns.start(3), columns.end(3), "size");
            long stream = columns.empty(4) ? 0 : lines.unsignedDecimal(columns.start(4), columns.end(4), "stream");
            if (!columns.empty(5)) {
                lines.unsignedDecimal(columns.start(5), columns.end(5), "time_us");
            }
            if (action.kind == null) {
                skipped++;
                continue;
            }
            return event(action.kind, addr, size, columns.empty(3) ? TraceEvent.FREE_BYTES_UNKNOWN : size, stream);
        }
    }

    /**
     * The row's event. An {@code oom} row's size column holds the device's free bytes ({@code pickle_to_csv.py}
     * writes {@code device_free} there, and no request): they become the event's key, and its size (the request) is
     * 0, not known.
     */
    private TraceEvent event(TraceEvent.Kind kind, long addr, long size, long freeBytes, long stream) {
        if (kind == TraceEvent.Kind.OOM) {
            return new TraceEvent(kind, freeBytes, 0, stream, 0, lines.lineNumber());
        }
        return new TraceEvent(kind, addr, size, stream, 0, lines.lineNumber());
    }

    // The common row, parsed while its end is looked for: six columns, every number 1 to 18 ASCII digits, a known
    // action, ended by \n or \r\n.

    /** {@code "alloc,"} as the low six bytes of a little-endian word. */
    private static final long ALLOC_COMMA = 0x2C636F6C6C61L;
    /** {@code "free_com"} and {@code "pleted,"} (low seven bytes). */
    private static final long FREE_COM = 0x6D6F635F65657266L;
    private static final long PLETED_COMMA = 0x2C646574656C70L;

    private PyTorchAction fastAction;
    private long fastAddr;
    private long fastSize;
    private long fastStream;

    /**
     * Parses the line at {@code b[p]} into the {@code fast*} fields if it has the common shape, and moves past it;
     * false (nothing moved) for any other line, which the general path then reads with its messages. Where both
     * accept a row, both give the same values.
     */
    private boolean fusedRow(byte[] b, int p) {
        int i = SwarDigits.skip(b, p);
        if (i < 0 || b[i] != ',') {
            return false;
        }
        i++;
        long word = SwarDigits.word(b, i);
        PyTorchAction action;
        if ((word & 0xFFFFFFFFFFFFL) == ALLOC_COMMA) {
            action = PyTorchAction.ALLOC;
            i += 6;
        } else if (word == FREE_COM && (SwarDigits.word(b, i + 8) & 0xFFFFFFFFFFFFFFL) == PLETED_COMMA) {
            action = PyTorchAction.FREE_COMPLETED;
            i += 15;
        } else {
            int comma = i;
            int last = i + PyTorchAction.LONGEST;
            while (comma <= last && b[comma] != ',') {
                comma++;
            }
            if (comma > last || (action = PyTorchAction.of(b, i, comma)) == null) {
                return false;
            }
            i = comma + 1;
        }
        i = row.decimal(b, i, ',');
        if (i < 0) {
            return false;
        }
        long addr = row.value();
        i = row.decimal(b, i, ',');
        if (i < 0) {
            return false;
        }
        long size = row.value();
        i = row.decimal(b, i, ',');
        if (i < 0) {
            return false;
        }
        long stream = row.value();
        i = SwarDigits.skip(b, i);
        if (i < 0 || !row.end(i)) {
            return false;
        }
        fastAction = action;
        fastAddr = addr;
        fastSize = size;
        fastStream = stream;
        return true;
    }
}
