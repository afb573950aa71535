package io.devalloc.trace.valgrind;

import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.text.TextLines;
import io.devalloc.trace.TraceEvent.Kind;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads the malloc traces that wee_alloc recorded from valgrind ({@code valgrind --trace-malloc=yes}): the body of a
 * Rust array literal, one operation per line.
 * <pre>
 * Alloc(552),
 * Alloc(120),
 * Free(1),
 * </pre>
 * {@code Alloc(size)} is the k-th allocation (k = 0, 1, 2 ... in file order) and gives {@link Kind#ALLOC} with key k;
 * {@code Free(k)} frees the k-th allocation and gives {@link Kind#FREE} with key k and size 0 (the trace does not
 * repeat it). There are no addresses, streams or threads (0). Spaces around the operation and blank lines are
 * allowed, and so is a missing comma on a line (the last element of an array literal needs none). A {@code Free} of an
 * index never allocated, or freed twice, is not a format error: the replay deals with it. An event's
 * {@link TraceEvent#line() line} is its line in the file. One line at a time: constant memory.
 */
public final class ValgrindReader implements TraceReader {

    private static final String EXPECTED = "expected Alloc(<size>), or Free(<index>),";

    private final TextLines lines;
    private long allocations;

    /** Opens a file. */
    public ValgrindReader(Path file) throws IOException {
        this.lines = new TextLines(Files.newInputStream(file), file.toString());
    }

    /**
     * Reads from a character stream, closed by {@link #close()}.
     *
     * @param in   the text
     * @param file the name messages give
     */
    public ValgrindReader(Reader in, String file) {
        this.lines = new TextLines(in, file);
    }

    @Override
    public TraceFormat format() {
        return TraceFormat.VALGRIND;
    }

    /** The {@code Alloc} lines read so far: the index the next one gets. */
    public long allocations() {
        return allocations;
    }

    @Override
    public TraceEvent next() throws IOException {
        String line;
        while ((line = lines.next()) != null) {
            int from = 0;
            int to = line.length();
            while (from < to && Character.isWhitespace(line.charAt(from))) {
                from++;
            }
            while (to > from && Character.isWhitespace(line.charAt(to - 1))) {
                to--;
            }
            if (from == to) {
                continue;
            }
            if (line.charAt(to - 1) == ',') {
                to--;
                while (to > from && Character.isWhitespace(line.charAt(to - 1))) {
                    to--;
                }
            }
            boolean alloc = line.startsWith("Alloc(", from);
            boolean free = !alloc && line.startsWith("Free(", from);
            if ((!alloc && !free) || to == from || line.charAt(to - 1) != ')') {
                throw lines.error(EXPECTED + " got '" + line.strip() + "'");
            }
            int open = from + (alloc ? 6 : 5);
            if (alloc) {
                long size = lines.size(line, open, to - 1, "Alloc(size)");
                return new TraceEvent(Kind.ALLOC, allocations++, size, 0, 0, lines.lineNumber());
            }
            long index = lines.size(line, open, to - 1, "Free(index)");
            return new TraceEvent(Kind.FREE, index, 0, 0, 0, lines.lineNumber());
        }
        return null;
    }

    @Override
    public long bytesRead() {
        return lines.position();
    }

    @Override
    public void close() throws IOException {
        lines.close();
    }
}
