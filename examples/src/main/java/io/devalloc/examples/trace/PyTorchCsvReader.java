package io.devalloc.examples.trace;

import java.io.IOException;
import java.io.Reader;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.file.Files;
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
 *   <tr><td>{@code oom}</td><td>{@link TraceEvent.Kind#OOM}: key 0 (the row has no address) and, as
 *       {@code pickle_to_csv.py} writes it, the device's free bytes as the size</td></tr>
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
public final class PyTorchCsvReader implements TraceReader {

    /** The header line, exactly. */
    public static final String HEADER = "seq,action,addr,size,stream,time_us";

    private static final int COLUMNS = 6;

    private final TextLines lines;
    private final CsvColumns columns = new CsvColumns(COLUMNS);
    private long skipped;

    /** Opens a file. */
    public PyTorchCsvReader(Path file) throws IOException {
        this(new TextLines(Files.newInputStream(file), file.toString()));
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
        this.lines = lines;
        lines.expectHeader(HEADER);
    }

    @Override
    public TraceFormat format() {
        return TraceFormat.PYTORCH_CSV;
    }

    /** The {@code free_requested} and {@code snapshot} rows read so far (checked, no event). */
    public long skipped() {
        return skipped;
    }

    @Override
    public TraceEvent next() throws IOException {
        TextLines lines = this.lines;
        CsvColumns columns = this.columns;
        while (lines.nextLine()) {
            byte[] line = lines.buffer();
            if (fastRow(line, lines.start(), lines.end())) {
                if (fastAction.kind == null) {
                    skipped++;
                    continue;
                }
                return new TraceEvent(fastAction.kind, fastAddr, fastSize, fastStream, 0, lines.lineNumber());
            }
            // Anything fastRow does not take (blank lines, empty or long numbers, errors) is read column by column.
            if (lines.blank()) {
                continue;
            }
            int count = columns.split(line, lines.start(), lines.end());
            if (count != COLUMNS) {
                throw lines.error("expected " + COLUMNS + " columns (" + HEADER + "), got " + count);
            }
            lines.unsignedDecimal(columns.start(0), columns.end(0), "seq");
            PyTorchAction action = PyTorchAction.of(line, columns.start(1), columns.end(1));
            if (action == null) {
                throw lines.error("unknown action '" + lines.text(columns.start(1), columns.end(1))
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
            return new TraceEvent(action.kind, addr, size, stream, 0, lines.lineNumber());
        }
        return null;
    }

    // The common row, read in one pass: six columns, every number 1 to 18 ASCII digits, a known action.
    private PyTorchAction fastAction;
    private long fastAddr;
    private long fastSize;
    private long fastStream;

    /**
     * Reads a row of the common shape into the {@code fast*} fields; false (nothing read) for any other line, which
     * the general path then reads, with its messages. Where both accept a row, both give the same values.
     */
    private boolean fastRow(byte[] b, int from, int to) {
        int i = number(b, from, to);
        if (i < 0 || i >= to || b[i] != ',') {
            return false;
        }
        int actionStart = ++i;
        while (i < to && b[i] != ',') {
            i++;
        }
        if (i >= to) {
            return false;
        }
        PyTorchAction action = PyTorchAction.of(b, actionStart, i);
        if (action == null) {
            return false;
        }
        i = number(b, i + 1, to);
        if (i < 0 || i >= to || b[i] != ',') {
            return false;
        }
        long addr = value;
        i = number(b, i + 1, to);
        if (i < 0 || i >= to || b[i] != ',') {
            return false;
        }
        long size = value;
        i = number(b, i + 1, to);
        if (i < 0 || i >= to || b[i] != ',') {
            return false;
        }
        long stream = value;
        if (number(b, i + 1, to) != to) {
            return false;
        }
        fastAction = action;
        fastAddr = addr;
        fastSize = size;
        fastStream = stream;
        return true;
    }

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** The number {@link #number} read last. */
    private long value;

    /**
     * Reads 1 to 18 ASCII digits starting at {@code from} into {@link #value}; returns where they end, or -1 when
     * there are none or more.
     */
    private int number(byte[] b, int from, int to) {
        long v = 0;
        int i = from;
        // Eight digits at a time (at most two blocks: 16 of the 18 digits allowed).
        while (i + 8 <= to && i - from < 16) {
            long x = (long) LONGS.get(b, i);
            if ((x & 0xF0F0F0F0F0F0F0F0L) != 0x3030303030303030L
                    || ((x + 0x0606060606060606L) & 0xF0F0F0F0F0F0F0F0L) != 0x3030303030303030L) {
                break;
            }
            x -= 0x3030303030303030L;
            x = x * 10 + (x >>> 8);
            x = ((x & 0x000000FF000000FFL) * (100 + (1000000L << 32))
                    + ((x >>> 16) & 0x000000FF000000FFL) * (1 + (10000L << 32))) >>> 32;
            v = v * 100_000_000L + x;
            i += 8;
        }
        while (i < to) {
            int d = b[i] - '0';
            if (d < 0 || d > 9) {
                break;
            }
            v = v * 10 + d;
            i++;
        }
        if (i == from || i - from > 18) {
            return -1;
        }
        value = v;
        return i;
    }

    @Override
    public void close() throws IOException {
        lines.close();
    }
}
