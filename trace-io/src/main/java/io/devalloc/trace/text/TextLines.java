package io.devalloc.trace.text;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.trace.TraceFormatException;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The line-reading half of the text readers: one line at a time (constant memory), the line number kept for
 * messages, a leading byte-order mark dropped, and number parsing that reports the file, the line and what was
 * expected.
 *
 * <p>Lines are found in a byte buffer read from the stream (UTF-8; a character stream is encoded to UTF-8 as it is
 * read): {@link #nextLine()} makes the current line {@code buffer()[start(), end())} with no copy, and the number
 * parsers read ASCII digits from the bytes; a {@code String} is built only by {@link #next()} and on the error path.
 * Lines end at {@code \n}, {@code \r} or {@code \r\n}, as {@link java.io.BufferedReader#readLine()} ends them.
 *
 * <p>A line longer than {@link #MAX_LINE_BYTES} is refused ({@link TraceFormatException}) before it is held whole:
 * no supported format comes near it, and a file of one endless line must not exhaust the heap.
 */
public final class TextLines implements Closeable {

    private static final int BUFFER = 1 << 17;
    /** The longest line read: every supported format's rows are a few hundred bytes at most. */
    public static final int MAX_LINE_BYTES = 1 << 20;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final InputStream in;
    private final String file;
    private long lineNumber;

    private byte[] buf = new byte[BUFFER];
    private int pos;
    private int limit;
    private int start;
    private int end;
    private boolean eof;
    /** The last line ended with {@code \r}: a {@code \n} right after it belongs to the same terminator. */
    private boolean skipLF;

    public TextLines(Reader in, String file) {
        this(new EncodingStream(in), file);
    }

    public TextLines(InputStream in, String file) {
        this.in = in;
        this.file = file;
    }

    /** The lines of {@code file}, which messages name by its path. */
    public static TextLines open(Path file) throws IOException {
        return new TextLines(Files.newInputStream(file), file.toString());
    }

    /** The bytes of the stream read so far, and those of them not yet consumed: for {@link #position()}. */
    private long streamBytes;

    /** The bytes of the stream consumed so far (up to the current line's end): for progress. */
    public long position() {
        return streamBytes - (limit - pos);
    }

    /** The file's name, as messages give it. */
    public String file() {
        return file;
    }

    /** The number of the line last returned by {@link #next()} (1-based; 0 before the first). */
    public long lineNumber() {
        return lineNumber;
    }

    /** The bytes holding the current line (valid until the next call of {@link #nextLine()}). */
    public byte[] buffer() {
        return buf;
    }

    /** Where the current line starts in {@link #buffer()}. */
    public int start() {
        return start;
    }

    /** Where the current line ends (exclusive, without its terminator). */
    public int end() {
        return end;
    }

    /** The next line without its line terminator, or null at the end of the file. */
    public String next() throws IOException {
        if (!nextLine()) {
            return null;
        }
        return text(start, end);
    }

    /** Moves to the next line ({@link #start()}, {@link #end()}); false at the end of the file. */
    public boolean nextLine() throws IOException {
        int scan = pos;
        while (true) {
            if (skipLF) {
                if (pos < limit) {
                    if (buf[pos] == '\n') {
                        pos++;
                    }
                    skipLF = false;
                    scan = pos;
                } else if (eof) {
                    skipLF = false;
                } else {
                    fill();
                    scan = pos;
                    continue;
                }
            }
            int i = terminator(buf, scan, limit);
            if (i >= 0) {
                start = pos;
                end = i;
                pos = i + 1;
                skipLF = buf[i] == '\r';
                return found();
            }
            if (eof) {
                if (pos < limit) {
                    start = pos;
                    end = limit;
                    pos = limit;
                    return found();
                }
                return false;
            }
            int scanned = limit - pos;
            if (scanned > MAX_LINE_BYTES) {
                throw tooLong(file, lineNumber + 1);
            }
            fill();
            scan = pos + scanned;
        }
    }

    private boolean found() throws TraceFormatException {
        if (end - start > MAX_LINE_BYTES) {
            throw tooLong(file, lineNumber + 1);
        }
        lineNumber++;
        if (lineNumber == 1 && end - start >= 3 && buf[start] == (byte) 0xEF && buf[start + 1] == (byte) 0xBB
                && buf[start + 2] == (byte) 0xBF) {
            start += 3;
        }
        return true;
    }

    /** The refusal of line {@code number}: longer than {@link #MAX_LINE_BYTES}. */
    public static TraceFormatException tooLong(String file, long number) {
        return new TraceFormatException(file, number, "line " + number + " is longer than " + MAX_LINE_BYTES
                + " bytes: no supported trace format has lines that long");
    }

    /** Keeps the unread bytes, at the buffer's start (a larger buffer when they fill it), and reads more. */
    private void fill() throws IOException {
        int kept = limit - pos;
        if (pos > 0) {
            System.arraycopy(buf, pos, buf, 0, kept);
        } else if (kept == buf.length) {
            buf = Arrays.copyOf(buf, buf.length * 2);
        }
        pos = 0;
        limit = kept;
        int n = in.read(buf, limit, buf.length - limit);
        if (n < 0) {
            eof = true;
        } else {
            limit += n;
            streamBytes += n;
        }
    }

    // ------------------------------------------------------------------------------- fused fast paths

    /**
     * For a reader that parses a line while it looks for its end: where the next line starts in {@link #buffer()},
     * with at least {@code slack} bytes readable from there (reading more if needed), or -1 when that cannot be had
     * (the end of the file is near, or a {@code \r\n} is half consumed); the reader then falls back to
     * {@link #nextLine()}. Call {@link #buffer()} after this: reading more may replace the buffer.
     */
    public int peek(int slack) throws IOException {
        if (skipLF) {
            return -1;
        }
        if (limit - pos < slack) {
            if (eof) {
                return -1;
            }
            fill();
            if (limit - pos < slack) {
                return -1;
            }
        }
        return pos;
    }

    /** The index of the first {@code \n} or {@code \r} in {@code b[from, to)}, or -1. */
    private static int terminator(byte[] b, int from, int to) {
        int i = from;
        // Eight bytes at a time: the lowest byte of x that is \n or \r, found by the zero-byte test on x ^ c.
        for (; i + 8 <= to; i += 8) {
            long x = (long) LONGS.get(b, i);
            long lf = x ^ 0x0A0A0A0A0A0A0A0AL;
            long cr = x ^ 0x0D0D0D0D0D0D0D0DL;
            long hits = (((lf - 0x0101010101010101L) & ~lf) | ((cr - 0x0101010101010101L) & ~cr)) & 0x8080808080808080L;
            if (hits != 0) {
                return i + (Long.numberOfTrailingZeros(hits) >>> 3);
            }
        }
        for (; i < to; i++) {
            byte c = b[i];
            if (c == '\n' || c == '\r') {
                return i;
            }
        }
        return -1;
    }

    /**
     * The slack a reader's fused fast path asks {@link #peek(int)} for: its longest row (about 115 bytes) plus the
     * 24 bytes a number read looks ahead ({@link SwarDigits}).
     */
    public static final int FUSED_SLACK = 160;

    /**
     * Ends a line that the reader parsed from {@link #peek(int)} if its terminator ({@code \n} or {@code \r\n})
     * is at {@code i}; false (nothing moved) for anything else there, which the general path then reads.
     */
    public boolean endLineAt(int i) {
        byte[] b = buf;
        if (b[i] == '\n') {
            consumed(i, i + 1);
            return true;
        }
        if (b[i] == '\r' && b[i + 1] == '\n') {
            consumed(i, i + 2);
            return true;
        }
        return false;
    }

    /**
     * Ends a line that the reader parsed from {@link #peek(int)}: the line is {@code buffer()[peek, lineEnd)} and
     * the next one starts at {@code next} (after the line's terminator, which the reader checked).
     */
    private void consumed(int lineEnd, int next) {
        start = pos;
        end = lineEnd;
        pos = next;
        lineNumber++;
    }

    /** The text of {@code buffer()[from, to)}. */
    public String text(int from, int to) {
        return new String(buf, from, to - from, StandardCharsets.UTF_8);
    }

    /**
     * {@code buffer()[from, to)} as a message may quote it ({@link UntrustedText#excerpt(CharSequence)}): bounded,
     * control characters escaped.
     */
    public String quote(int from, int to) {
        return UntrustedText.excerpt(text(from, to));
    }

    /** Whether the current line holds only white space (as {@link String#isBlank()} tells). */
    public boolean blank() {
        byte[] b = buf;
        for (int i = start; i < end; i++) {
            int c = b[i];
            if (c < 0) {
                return text(start, end).isBlank();
            }
            if (c != ' ' && (c < 0x09 || c > 0x0D) && (c < 0x1C || c > 0x1F)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Reads the first line and checks that it is exactly {@code header}; on any failure the input is closed, so a
     * reader's constructor can throw without leaking the file.
     */
    public void expectHeader(String header) throws IOException {
        try {
            String first = next();
            if (first == null) {
                throw new TraceFormatException(file, 1, "expected the header '" + header + "', got an empty file");
            }
            if (!first.equals(header)) {
                throw error("expected the header '" + header + "', got '" + UntrustedText.excerpt(first) + "'");
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** A format error on the current line. */
    public TraceFormatException error(String problem) {
        return new TraceFormatException(file, lineNumber, problem);
    }

    // ------------------------------------------------------------------------------- numbers in the current line

    /** {@link #unsignedDecimal(String, int, int, String)} of {@code buffer()[from, to)}. */
    public long unsignedDecimal(int from, int to, String what) throws TraceFormatException {
        byte[] b = buf;
        int n = to - from;
        if (n > 0 && n <= 18) {
            long value = 0;
            for (int i = from; i < to; i++) {
                int d = b[i] - '0';
                if (d < 0 || d > 9) {
                    throw error(what + ": expected a non-negative decimal integer, got '" + quote(from, to) + "'");
                }
                value = value * 10 + d;
            }
            return value;
        }
        String text = text(from, to);
        return unsignedDecimal(text, 0, text.length(), what);
    }

    /** {@link #size(String, int, int, String)} of {@code buffer()[from, to)}. */
    public long size(int from, int to, String what) throws TraceFormatException {
        long v = unsignedDecimal(from, to, what);
        if (v < 0) {
            throw error(what + ": expected a size below 2^63, got '" + quote(from, to) + "'");
        }
        return v;
    }

    /** {@link #hex(String, int, int, String)} of {@code buffer()[from, to)}. */
    public long hex(int from, int to, String what) throws TraceFormatException {
        byte[] b = buf;
        int digits = from;
        if (to - from > 2 && b[from] == '0' && (b[from + 1] == 'x' || b[from + 1] == 'X')) {
            digits = from + 2;
        }
        int n = to - digits;
        if (n > 0 && n <= 15) {
            long value = 0;
            for (int i = digits; i < to; i++) {
                int d = asciiDigit((char) (b[i] & 0xff), 16);
                if (d < 0) {
                    throw error(what + ": expected a hexadecimal number (0x...), got '" + quote(from, to) + "'");
                }
                value = value * 16 + d;
            }
            return value;
        }
        String text = text(from, to);
        return hex(text, 0, text.length(), what);
    }

    // ------------------------------------------------------------------------------- numbers in a string

    /**
     * A non-negative decimal integer in {@code text[from, to)}: up to 2^64 − 1, read as an unsigned 64-bit value
     * (addresses and handles can use the top bit).
     */
    public long unsignedDecimal(String text, int from, int to, String what) throws TraceFormatException {
        return unsigned(text, from, to, 10, what, "a non-negative decimal integer");
    }

    /** A non-negative decimal integer that fits a signed 64-bit value (sizes, counts). */
    public long size(String text, int from, int to, String what) throws TraceFormatException {
        long v = unsignedDecimal(text, from, to, what);
        if (v < 0) {
            throw error(what + ": expected a size below 2^63, got '" + quote(text, from, to) + "'");
        }
        return v;
    }

    /** A hexadecimal integer with or without a {@code 0x} prefix, as an unsigned 64-bit value. */
    public long hex(String text, int from, int to, String what) throws TraceFormatException {
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
            throw error(what + ": expected " + expected + ", got '" + quote(text, shownFrom, to) + "'");
        }
        // Up to 18 decimal or 15 hexadecimal digits cannot overflow 64 bits: no check per digit.
        int safe = radix == 10 ? 18 : 15;
        long value = 0;
        for (int i = from; i < to; i++) {
            int d = asciiDigit(text.charAt(i), radix);
            if (d < 0) {
                throw error(what + ": expected " + expected + ", got '" + quote(text, shownFrom, to) + "'");
            }
            if (i - from >= safe && Long.compareUnsigned(value, Long.divideUnsigned(-1L - d, radix)) > 0) {
                throw error(what + ": expected " + expected + " below 2^64, got '"
                        + quote(text, shownFrom, to) + "'");
            }
            value = value * radix + d;
        }
        return value;
    }

    /** {@code text[from, to)} as a message may quote it, without copying the whole of it first. */
    private static String quote(String text, int from, int to) {
        return UntrustedText.excerpt(CharBuffer.wrap(text, from, to));
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

    /** A character stream as UTF-8 bytes (unpaired surrogates become {@code ?}). */
    private static final class EncodingStream extends InputStream {

        private final Reader reader;
        private final CharsetEncoder encoder = StandardCharsets.UTF_8.newEncoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE);
        private final CharBuffer chars = CharBuffer.allocate(8192).flip();
        private boolean eof;
        private boolean done;

        EncodingStream(Reader reader) {
            this.reader = reader;
        }

        @Override
        public int read() throws IOException {
            // TextLines reads blocks only; a single byte could split a character's encoding.
            throw new UnsupportedOperationException("read blocks of at least 4 bytes");
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (done) {
                return -1;
            }
            ByteBuffer out = ByteBuffer.wrap(b, off, len);
            while (true) {
                CoderResult result = encoder.encode(chars, out, eof);
                if (out.position() > off || result.isOverflow()) {
                    return out.position() - off;
                }
                if (eof) {
                    encoder.flush(out);
                    done = true;
                    return out.position() > off ? out.position() - off : -1;
                }
                chars.compact();
                int n = reader.read(chars);
                chars.flip();
                if (n < 0) {
                    eof = true;
                }
            }
        }

        @Override
        public void close() throws IOException {
            reader.close();
        }
    }
}
