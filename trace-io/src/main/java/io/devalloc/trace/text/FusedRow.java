package io.devalloc.trace.text;

import java.io.IOException;
import java.util.Arrays;

/**
 * The fused fast path that the text readers share: the next line looked at in place in its {@link TextLines}
 * buffer, its numbers read while its end is looked for, and the line consumed only when the whole of it has the
 * reader's common shape. Each reading method returns where the row goes on, or -1 where it is not of that shape: the
 * reader then leaves the line (nothing moved) to its general path, which reads it with the messages naming the file
 * and the line. Where both accept a row, both must give the same values. Internal to trace-io's readers (this package
 * is exported only to the replay and the advisor). Not thread-safe: the number read last is kept, so that a read
 * returns one {@code int} and allocates nothing.
 */
public final class FusedRow {

    /** The most hexadecimal digits {@link #hex} takes: 16 fill an unsigned 64-bit pointer. */
    private static final int MAX_HEX_DIGITS = 16;
    /** Byte → its value as a hexadecimal digit, or -1. */
    private static final byte[] HEX_DIGITS = new byte[256];

    static {
        Arrays.fill(HEX_DIGITS, (byte) -1);
        for (int c = '0'; c <= '9'; c++) {
            HEX_DIGITS[c] = (byte) (c - '0');
        }
        for (int c = 'a'; c <= 'f'; c++) {
            HEX_DIGITS[c] = (byte) (c - 'a' + 10);
            HEX_DIGITS[c - 'a' + 'A'] = (byte) (c - 'a' + 10);
        }
    }

    private final TextLines lines;
    private final SwarDigits digits = new SwarDigits();
    private long value;

    public FusedRow(TextLines lines) {
        this.lines = lines;
    }

    /**
     * Where the next line starts in {@link TextLines#buffer()} (read the buffer after this: it may be replaced), with
     * {@link TextLines#FUSED_SLACK} bytes readable from there; -1 where the fast path cannot take it.
     */
    public int start() throws IOException {
        return lines.peek(TextLines.FUSED_SLACK);
    }

    /** The number that {@link #decimal} or {@link #hex} read last. */
    public long value() {
        return value;
    }

    /** 1 to {@value SwarDigits#MAX_DIGITS} decimal digits at {@code from}: where they end, or -1. */
    public int decimal(byte[] b, int from) {
        int end = digits.read(b, from);
        value = digits.value();
        return end;
    }

    /** {@link #decimal(byte[], int)} followed by {@code separator}: the index after the separator, or -1. */
    public int decimal(byte[] b, int from, char separator) {
        int end = decimal(b, from);
        return end < 0 || b[end] != separator ? -1 : end + 1;
    }

    /** 1 to 16 hexadecimal digits (either case, no {@code 0x}) at {@code from}: where they end, or -1. */
    public int hex(byte[] b, int from) {
        long v = 0;
        int i = from;
        while (i - from <= MAX_HEX_DIGITS) {
            int d = HEX_DIGITS[b[i] & 0xff];
            if (d < 0) {
                break;
            }
            v = v << 4 | d;
            i++;
        }
        if (i == from || i - from > MAX_HEX_DIGITS) {
            return -1;
        }
        value = v;
        return i;
    }

    /** Consumes the line if its terminator ({@code \n} or {@code \r\n}) is at {@code i}; false otherwise. */
    public boolean end(int i) {
        return lines.endLineAt(i);
    }
}
