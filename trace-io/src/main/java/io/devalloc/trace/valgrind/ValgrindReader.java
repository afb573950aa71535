package io.devalloc.trace.valgrind;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.text.FusedRow;
import io.devalloc.trace.text.SwarDigits;
import io.devalloc.trace.text.TextLines;
import java.io.IOException;
import java.io.Reader;
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
        this.lines = TextLines.open(file);
        this.row = new FusedRow(lines);
    }

    /**
     * Reads from a character stream, closed by {@link #close()}.
     *
     * @param in   the text
     * @param file the name messages give
     */
    public ValgrindReader(Reader in, String file) {
        this.lines = new TextLines(in, file);
        this.row = new FusedRow(lines);
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
        TextLines lines = this.lines;
        while (true) {
            int kind = fusedLine();
            if (kind == NONE) {
                // Anything fusedLine does not take (blank lines, spaces, the last lines, errors) is read with the
                // messages.
                if (!lines.nextLine()) {
                    return null;
                }
                kind = parse();
            }
            if (kind == ALLOC) {
                return new TraceEvent(Kind.ALLOC, allocations++, number, 0, 0, lines.lineNumber());
            }
            if (kind == FREE) {
                return new TraceEvent(Kind.FREE, number, 0, 0, 0, lines.lineNumber());
            }
        }
    }

    // What a line gives: an Alloc of number bytes, a Free of allocation number, or nothing (a blank line).
    private static final int NONE = 0;
    private static final int ALLOC = 1;
    private static final int FREE = 2;
    private static final int BLANK = 3;

    /** The size of an {@code Alloc}, or the index of a {@code Free}, of the line read last. */
    private long number;

    // The common line, parsed while its end is looked for: Alloc(<size>), or Free(<index>), with 1 to 18 digits,
    // nothing around them but an optional comma, ended by \n or \r\n.

    /** {@code "Alloc("} (low six bytes) and {@code "Free("} (low five) as little-endian words. */
    private static final long ALLOC_OPEN = 0x28636F6C6C41L;
    private static final long FREE_OPEN = 0x2865657246L;

    private final FusedRow row;

    /**
     * Parses the next line if it has the common shape and moves past it; {@link #NONE} (nothing read, nothing moved)
     * for any other line, which {@link #parse()} then reads. Where both accept a line, both give the same event.
     */
    private int fusedLine() throws IOException {
        FusedRow row = this.row;
        int p = row.start();
        if (p < 0) {
            return NONE;
        }
        byte[] b = lines.buffer();
        long word = SwarDigits.word(b, p);
        int kind;
        int i;
        if ((word & 0xFFFFFFFFFFFFL) == ALLOC_OPEN) {
            kind = ALLOC;
            i = p + 6;
        } else if ((word & 0xFFFFFFFFFFL) == FREE_OPEN) {
            kind = FREE;
            i = p + 5;
        } else {
            return NONE;
        }
        i = row.decimal(b, i, ')');
        if (i < 0) {
            return NONE;
        }
        if (b[i] == ',') {
            i++;
        }
        if (!row.end(i)) {
            return NONE;
        }
        number = row.value();
        return kind;
    }

    /**
     * The current line: {@link #ALLOC} or {@link #FREE} with its {@link #number}, or {@link #BLANK}. White space is
     * what {@link Character#isWhitespace} says: ASCII here, and the line's text when it holds other characters.
     */
    private int parse() throws TraceFormatException {
        byte[] b = lines.buffer();
        int from = lines.start();
        int to = lines.end();
        for (int i = from; i < to; i++) {
            if (b[i] < 0) {
                return parse(lines.text(from, to));
            }
        }
        while (from < to && Character.isWhitespace(b[from])) {
            from++;
        }
        while (to > from && Character.isWhitespace(b[to - 1])) {
            to--;
        }
        if (from == to) {
            return BLANK;
        }
        if (b[to - 1] == ',') {
            to--;
            while (to > from && Character.isWhitespace(b[to - 1])) {
                to--;
            }
        }
        boolean alloc = startsWith(b, from, to, "Alloc(");
        boolean free = !alloc && startsWith(b, from, to, "Free(");
        if ((!alloc && !free) || to == from || b[to - 1] != ')') {
            throw lines.error(EXPECTED + " got '"
                    + UntrustedText.excerpt(lines.text(lines.start(), lines.end()).strip()) + "'");
        }
        int open = from + (alloc ? 6 : 5);
        number = lines.size(open, to - 1, alloc ? "Alloc(size)" : "Free(index)");
        return alloc ? ALLOC : FREE;
    }

    private static boolean startsWith(byte[] b, int from, int to, String prefix) {
        int n = prefix.length();
        if (to - from < n) {
            return false;
        }
        for (int k = 0; k < n; k++) {
            if (b[from + k] != prefix.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    /** {@link #parse()} of a line that holds characters other than ASCII. */
    private int parse(String line) throws TraceFormatException {
        int from = 0;
        int to = line.length();
        while (from < to && Character.isWhitespace(line.charAt(from))) {
            from++;
        }
        while (to > from && Character.isWhitespace(line.charAt(to - 1))) {
            to--;
        }
        if (from == to) {
            return BLANK;
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
            throw lines.error(EXPECTED + " got '" + UntrustedText.excerpt(line.strip()) + "'");
        }
        int open = from + (alloc ? 6 : 5);
        number = lines.size(line, open, to - 1, alloc ? "Alloc(size)" : "Free(index)");
        return alloc ? ALLOC : FREE;
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
