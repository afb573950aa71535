package io.devalloc.examples.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;

/**
 * The line-reading half of the text readers: one line at a time (constant memory), the line number kept for
 * messages, a trailing {@code \r} and a leading byte-order mark dropped, and number parsing that reports the file,
 * the line and what was expected.
 */
final class TextLines implements AutoCloseable {

    private final BufferedReader in;
    private final String file;
    private long lineNumber;

    TextLines(Reader in, String file) {
        this.in = in instanceof BufferedReader b ? b : new BufferedReader(in, 1 << 16);
        this.file = file;
    }

    /** The file's name, as messages give it. */
    String file() {
        return file;
    }

    /** The number of the line last returned by {@link #next()} (1-based; 0 before the first). */
    long lineNumber() {
        return lineNumber;
    }

    /** The next line without its line terminator, or null at the end of the file. */
    String next() throws IOException {
        String line = in.readLine();
        if (line == null) {
            return null;
        }
        lineNumber++;
        if (lineNumber == 1 && !line.isEmpty() && line.charAt(0) == '\uFEFF') {
            line = line.substring(1);
        }
        int n = line.length();
        if (n > 0 && line.charAt(n - 1) == '\r') {
            line = line.substring(0, n - 1);
        }
        return line;
    }

    /** A format error on the current line. */
    TraceFormatException error(String problem) {
        return new TraceFormatException(file, lineNumber, problem);
    }

    /**
     * A non-negative decimal integer in {@code text[from, to)}: up to 2^64 − 1, read as an unsigned 64-bit value
     * (addresses and handles can use the top bit).
     */
    long unsignedDecimal(String text, int from, int to, String what) throws TraceFormatException {
        return unsigned(text, from, to, 10, what, "a non-negative decimal integer");
    }

    /** A non-negative decimal integer that fits a signed 64-bit value (sizes, counts). */
    long size(String text, int from, int to, String what) throws TraceFormatException {
        long v = unsignedDecimal(text, from, to, what);
        if (v < 0) {
            throw error(what + ": expected a size below 2^63, got '" + text.substring(from, to) + "'");
        }
        return v;
    }

    /** A hexadecimal integer with or without a {@code 0x} prefix, as an unsigned 64-bit value. */
    long hex(String text, int from, int to, String what) throws TraceFormatException {
        int start = from;
        if (to - from > 2 && text.charAt(from) == '0'
                && (text.charAt(from + 1) == 'x' || text.charAt(from + 1) == 'X')) {
            start = from + 2;
        }
        return unsigned(text, start, to, 16, what, "a hexadecimal number (0x...)", from);
    }

    private long unsigned(String text, int from, int to, int radix, String what, String expected)
            throws TraceFormatException {
        return unsigned(text, from, to, radix, what, expected, from);
    }

    private long unsigned(String text, int from, int to, int radix, String what, String expected, int shownFrom)
            throws TraceFormatException {
        if (from >= to) {
            throw error(what + ": expected " + expected + ", got '" + text.substring(shownFrom, to) + "'");
        }
        // Up to 18 decimal or 15 hexadecimal digits cannot overflow 64 bits: no check per digit.
        int safe = radix == 10 ? 18 : 15;
        long value = 0;
        for (int i = from; i < to; i++) {
            int d = asciiDigit(text.charAt(i), radix);
            if (d < 0) {
                throw error(what + ": expected " + expected + ", got '" + text.substring(shownFrom, to) + "'");
            }
            if (i - from >= safe && Long.compareUnsigned(value, Long.divideUnsigned(-1L - d, radix)) > 0) {
                throw error(what + ": expected " + expected + " below 2^64, got '" + text.substring(shownFrom, to)
                        + "'");
            }
            value = value * radix + d;
        }
        return value;
    }

    /** The value of an ASCII digit in the radix (10 or 16), or -1: no other script's digits. */
    private static int asciiDigit(char c, int radix) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (radix == 16) {
            if (c >= 'a' && c <= 'f') {
                return c - 'a' + 10;
            }
            if (c >= 'A' && c <= 'F') {
                return c - 'A' + 10;
            }
        }
        return -1;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
