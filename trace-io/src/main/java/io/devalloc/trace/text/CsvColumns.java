package io.devalloc.trace.text;

import io.devalloc.trace.TraceFormatException;
import java.io.IOException;

/**
 * Splits a CSV line without quoting into the columns its file's header names, with no copy of the line; checks the
 * header.
 */
public final class CsvColumns {

    private final String header;
    private final int expected;
    private final int[] bounds;

    /** The columns of a file whose first line is exactly {@code header}: as many as it names. */
    public CsvColumns(String header) {
        this.header = header;
        int commas = 0;
        for (int i = header.indexOf(','); i >= 0; i = header.indexOf(',', i + 1)) {
            commas++;
        }
        this.expected = commas + 1;
        this.bounds = new int[expected + 1];
    }

    /** Reads the first line of {@code lines} and checks that it is the header; closes {@code lines} if not. */
    public void expectHeader(TextLines lines) throws IOException {
        lines.expectHeader(header);
    }

    /** Finds the columns of {@code line}; returns how many there are (only the first {@code expected} are kept). */
    public int split(String line) {
        int columns = 1;
        bounds[0] = -1;
        for (int i = line.indexOf(','); i >= 0; i = line.indexOf(',', i + 1)) {
            if (columns < expected) {
                bounds[columns] = i;
            }
            columns++;
        }
        if (columns <= expected) {
            bounds[columns] = line.length();
        }
        return columns;
    }

    /**
     * Finds the columns of the bytes {@code line[from, to)}; returns how many there are. Positions are indexes in
     * {@code line}.
     */
    public int split(byte[] line, int from, int to) {
        int columns = 1;
        bounds[0] = from - 1;
        for (int i = from; i < to; i++) {
            if (line[i] == ',') {
                if (columns < expected) {
                    bounds[columns] = i;
                }
                columns++;
            }
        }
        if (columns <= expected) {
            bounds[columns] = to;
        }
        return columns;
    }

    /**
     * Splits the current line of {@code lines}, which must have exactly the header's columns.
     *
     * @throws TraceFormatException naming the file and the line, for any other count
     */
    public void splitExactly(TextLines lines) throws TraceFormatException {
        expect(split(lines.buffer(), lines.start(), lines.end()), lines);
    }

    /** As {@link #splitExactly(TextLines)}, for {@code line}, the text of the current line of {@code lines}. */
    public void splitExactly(String line, TextLines lines) throws TraceFormatException {
        expect(split(line), lines);
    }

    private void expect(int count, TextLines lines) throws TraceFormatException {
        if (count != expected) {
            throw lines.error("expected " + expected + " columns (" + header + "), got " + count);
        }
    }

    /** Where column {@code i} (0-based) starts. */
    public int start(int i) {
        return bounds[i] + 1;
    }

    /** Where column {@code i} ends (exclusive). */
    public int end(int i) {
        return bounds[i + 1];
    }

    /** True when column {@code i} is empty. */
    public boolean empty(int i) {
        return start(i) == end(i);
    }
}
