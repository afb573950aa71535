package io.devalloc.trace.text;

import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * One ASCII CSV line built in a reusable {@code byte} buffer and written to an {@link OutputStream} (or a
 * {@link Writer}) in one call, so that a recorded event formats without creating strings or running a charset
 * encoder. Only ASCII may be appended. Not thread-safe: each recorder owns one.
 */
public final class CsvLine {

    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private final OutputStream bytesOut;
    private final Writer charsOut;
    private byte[] buf = new byte[128];
    private char[] chars;
    private int len;

    public CsvLine(OutputStream out) {
        this.bytesOut = Objects.requireNonNull(out, "out");
        this.charsOut = null;
    }

    public CsvLine(Writer out) {
        this.bytesOut = null;
        this.charsOut = Objects.requireNonNull(out, "out");
    }

    private void ensure(int more) {
        if (len + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
        }
    }

    public CsvLine ch(char c) {
        ensure(1);
        buf[len++] = (byte) c;
        return this;
    }

    public CsvLine comma() {
        return ch(',');
    }

    public CsvLine text(String s) {
        int n = s.length();
        ensure(n);
        for (int i = 0; i < n; i++) {
            buf[len++] = (byte) s.charAt(i);
        }
        return this;
    }

    /** {@code v} in decimal, with a minus sign when negative. */
    public CsvLine decimal(long v) {
        ensure(20);
        if (v >= 0) {
            v = -v; // work on the negative side, which also holds Long.MIN_VALUE
        } else {
            buf[len++] = '-';
        }
        int start = len;
        do {
            buf[len++] = (byte) ('0' - (v % 10));
            v /= 10;
        } while (v != 0);
        reverse(start);
        return this;
    }

    /** {@code v} read as an unsigned 64-bit number, in decimal. */
    public CsvLine unsignedDecimal(long v) {
        if (v >= 0) {
            return decimal(v);
        }
        long quotient = Long.divideUnsigned(v, 10);
        decimal(quotient);
        return ch((char) ('0' + (v - quotient * 10)));
    }

    /** {@code v} read as an unsigned 64-bit number, in lower-case hexadecimal, no prefix. */
    public CsvLine hex(long v) {
        ensure(16);
        int start = len;
        do {
            buf[len++] = HEX[(int) (v & 0xf)];
            v >>>= 4;
        } while (v != 0);
        reverse(start);
        return this;
    }

    /** {@code v} (0 ≤ v) zero-padded to {@code width} digits. */
    public CsvLine padded(long v, int width) {
        ensure(width);
        for (int i = width - 1; i >= 0; i--) {
            buf[len + i] = (byte) ('0' + v % 10);
            v /= 10;
        }
        len += width;
        return this;
    }

    private void reverse(int start) {
        for (int i = start, j = len - 1; i < j; i++, j--) {
            byte c = buf[i];
            buf[i] = buf[j];
            buf[j] = c;
        }
    }

    /** Ends the line with {@code \n}, writes it and starts the next one. */
    public void end() throws IOException {
        ch('\n');
        try {
            if (bytesOut != null) {
                bytesOut.write(buf, 0, len);
            } else {
                if (chars == null || chars.length < len) {
                    chars = new char[buf.length];
                }
                for (int i = 0; i < len; i++) {
                    chars[i] = (char) buf[i];
                }
                charsOut.write(chars, 0, len);
            }
        } finally {
            len = 0;
        }
    }
}
