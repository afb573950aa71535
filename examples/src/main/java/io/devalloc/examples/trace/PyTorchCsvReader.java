package io.devalloc.examples.trace;

import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
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
        this(new InputStreamReader(Files.newInputStream(file), StandardCharsets.UTF_8), file.toString());
    }

    /**
     * Reads from a character stream, closed by {@link #close()} (and when the header is wrong).
     *
     * @param in   the text
     * @param file the name messages give
     */
    public PyTorchCsvReader(Reader in, String file) throws IOException {
        this.lines = new TextLines(in, file);
        try {
            String header = lines.next();
            if (header == null) {
                throw new TraceFormatException(file, 1, "expected the header '" + HEADER + "', got an empty file");
            }
            if (!header.equals(HEADER)) {
                throw lines.error("expected the header '" + HEADER + "', got '" + header + "'");
            }
        } catch (IOException | RuntimeException e) {
            lines.close();
            throw e;
        }
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
        String line;
        while ((line = lines.next()) != null) {
            if (line.isBlank()) {
                continue;
            }
            int count = columns.split(line);
            if (count != COLUMNS) {
                throw lines.error("expected " + COLUMNS + " columns (" + HEADER + "), got " + count);
            }
            lines.unsignedDecimal(line, columns.start(0), columns.end(0), "seq");
            String text = line.substring(columns.start(1), columns.end(1));
            PyTorchAction action = PyTorchAction.of(text);
            if (action == null) {
                throw lines.error("unknown action '" + text + "': expected one of " + PyTorchAction.EXPECTED);
            }
            boolean optional = !action.needsAddressAndSize;
            long addr = optional && columns.empty(2) ? 0
                    : lines.unsignedDecimal(line, columns.start(2), columns.end(2), "addr");
            long size = optional && columns.empty(3) ? 0 : lines.size(line, columns.start(3), columns.end(3), "size");
            long stream = columns.empty(4) ? 0
                    : lines.unsignedDecimal(line, columns.start(4), columns.end(4), "stream");
            if (!columns.empty(5)) {
                lines.unsignedDecimal(line, columns.start(5), columns.end(5), "time_us");
            }
            if (action.kind == null) {
                skipped++;
                continue;
            }
            return new TraceEvent(action.kind, addr, size, stream, 0, lines.lineNumber());
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        lines.close();
    }
}
