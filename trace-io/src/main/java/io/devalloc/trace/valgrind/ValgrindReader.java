package io.devalloc.trace.valgrind;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.trace.TextTraceReader;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
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
public final class ValgrindReader extends TextTraceReader {

    private static final String EXPECTED = "expected Alloc(<size>), or Free(<index>),";

    private final TextLines lines;
    private final FusedRow row;
    private long allocations;

    /** Opens a file. */
    public ValgrindReader(Path file) throws IOException {
        this(TextLines.open(file));
    }

    /**
     * Reads from a character stream, closed by {@link #close()}.
     *
     * @param in   the text
     * @param file the name messages give
     */
    public ValgrindReader(Reader in, String file) {
        this(new TextLines(in, file));
    }

    private ValgrindReader(TextLines lines) {
        super(TraceFormat.VALGRIND, lines, lines::position);
        this.lines = lines;
        this.row = new FusedRow(lines);
    }

    /** The {@code Alloc} lines read so far: the index the next one gets. */
    public long allocations() {
        return allocations;
    }

    @Override
    public TraceEvent next() throws IOException {
        TextLines lines = this.lines;
        while (true) {
            int p = row.start();
            if (p >= 0) {
                TraceEvent fused = fusedLine(lines.buffer(), p);
                if (fused != null) {
                    return fused;
                }
            }
            // Anything fusedLine does not take (blank lines, spaces, the last lines, errors) is read with the
            // messages.
            if (!lines.nextLine()) {
                return null;
            }
            TraceEvent event = parse();
            if (event != null) {
                return event;
            }
        }
    }

    /** The event of an {@code Alloc} of {@code number} bytes, or of a {@code Free} of allocation {@code number}. */
    private TraceEvent event(boolean alloc, long number) {
        if (alloc) {
            return new TraceEvent(Kind.ALLOC, allocations++, number, 0, 0, lines.lineNumber());
        }
        return new TraceEvent(Kind.FREE, number, 0, 0, 0, lines.lineNumber());
    }

    // The common line, parsed while its end is looked for: Alloc(<size>), or Free(<index>), with 1 to 18 digits,
    // nothing around them but an optional comma, ended by \n or \r\n.

    /** {@code "Alloc("} (low six bytes) and {@code "Free("} (low five) as little-endian words. */
    private static final long ALLOC_OPEN = 0x28636F6C6C41L;
    private static final long FREE_OPEN = 0x2865657246L;

    /**
     * The event of the line at {@code b[p]} if it has the common shape, moving past it; null (nothing moved) for any
     * other line, which {@link #parse()} then reads. Where both accept a line, both give the same event.
     */
    private TraceEvent fusedLine(byte[] b, int p) {
        long word = SwarDigits.word(b, p);
        boolean alloc;
        int i;
        if ((word & 0xFFFFFFFFFFFFL) == ALLOC_OPEN) {
            alloc = true;
            i = p + 6;
        } else if ((word & 0xFFFFFFFFFFL) == FREE_OPEN) {
            alloc = false;
            i = p + 5;
        } else {
            return null;
        }
        i = row.decimal(b, i, ')');
        if (i < 0) {
            return null;
        }
        if (b[i] == ',') {
            i++;
        }
        if (!row.end(i)) {
            return null;
        }
        return event(alloc, row.value());
    }

    /**
     * The current line's event, or null for a blank line. White space is what {@link Character#isWhitespace} says:
     * ASCII here, and the line's text when it holds other characters.
     */
    private TraceEvent parse() throws TraceFormatException {
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
            return null;
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
        return event(alloc, lines.size(open, to - 1, alloc ? "Alloc(size)" : "Free(index)"));
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
    private TraceEvent parse(String line) throws TraceFormatException {
        int from = 0;
        int to = line.length();
        while (from < to && Character.isWhitespace(line.charAt(from))) {
            from++;
        }
        while (to > from && Character.isWhitespace(line.charAt(to - 1))) {
            to--;
        }
        if (from == to) {
            return null;
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
        return event(alloc, lines.size(line, open, to - 1, alloc ? "Alloc(size)" : "Free(index)"));
    }
}
