package io.devalloc.trace.pytorch;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * The bytes of a pickle, read forward once, with the position and the bytes left known: from a file through a
 * buffer of {@value #BUFFER} bytes (so that a pickle of hundreds of megabytes is never in memory whole), or from
 * an array. The length is the file's size when it is opened: the bytes left are counted from it, so every length
 * an opcode declares is checked against them before anything is allocated, as for an array. A file that ends
 * earlier than that reads as ending there (the unpickler then says where the pickle ends early); bytes beyond it
 * are not read.
 *
 * <p>An {@link InputStream} because Pyrolite's unpickler reads its opcodes' arguments from one; reads take no lock.
 * Not thread-safe: one thread reads it (the unpickler, or the memo scan).
 */
final class PickleInput extends InputStream {

    /**
     * A failure of the file itself (opening it, reading it), as opposed to what the pickle's bytes say: a reader
     * reports it as the {@link IOException} it is ({@link #getCause()}), not as a malformed pickle.
     */
    static final class SourceFailure extends IOException {
        private static final long serialVersionUID = 1L;

        SourceFailure(IOException cause) {
            super(cause.getMessage(), cause);
        }

        @Override
        public synchronized IOException getCause() {
            return (IOException) super.getCause();
        }
    }

    /** Bytes read from a file at a time. */
    static final int BUFFER = 1 << 16;

    /** The file, or null for an array. */
    private final InputStream source;
    private final long length;
    private final byte[] buf;
    /** The next byte to read in {@link #buf}. */
    private int pos;
    /** The end of what {@link #buf} holds. */
    private int limit;
    /** The position in the pickle of {@code buf[0]}. */
    private long base;

    private PickleInput(InputStream source, long length, byte[] buf, int limit) {
        this.source = source;
        this.length = length;
        this.buf = buf;
        this.limit = limit;
    }

    /** The whole pickle in an array (not copied; it must not change while it is read). */
    static PickleInput of(byte[] data) {
        return new PickleInput(null, data.length, data, data.length);
    }

    /**
     * The pickle in {@code file}, read through a buffer; close it when done.
     *
     * @throws SourceFailure when it cannot be opened
     */
    static PickleInput open(Path file) throws SourceFailure {
        try {
            long size = Files.size(file);
            return new PickleInput(Files.newInputStream(file), size, new byte[BUFFER], 0);
        } catch (IOException e) {
            throw new SourceFailure(e);
        }
    }

    /** The position of the next byte in the pickle. */
    long position() {
        return base + pos;
    }

    /** The pickle's length: the array's, or the file's size when it was opened. */
    long length() {
        return length;
    }

    /** The bytes from the position to the end. */
    long remaining() {
        return length - position();
    }

    /**
     * Makes at least {@code n} bytes (at most {@value #BUFFER}) readable in the buffer from the position, as far as
     * the pickle has them.
     *
     * @return whether it has them
     */
    private boolean fill(int n) throws IOException {
        if (limit - pos >= n) {
            return true;
        }
        if (source == null) {
            return false;
        }
        int kept = limit - pos;
        System.arraycopy(buf, pos, buf, 0, kept);
        base += pos;
        pos = 0;
        limit = kept;
        while (limit < n) {
            long left = length - (base + limit);
            if (left <= 0) {
                return false;
            }
            int read;
            try {
                read = source.read(buf, limit, (int) Math.min(buf.length - limit, left));
            } catch (IOException e) {
                throw new SourceFailure(e);
            }
            if (read < 0) {
                return false;
            }
            limit += read;
        }
        return true;
    }

    @Override
    public int read() throws IOException {
        if (pos == limit && !fill(1)) {
            return -1;
        }
        return buf[pos++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        int done = 0;
        while (done < len) {
            if (pos == limit && !fill(1)) {
                return done == 0 ? -1 : done;
            }
            int n = Math.min(len - done, limit - pos);
            System.arraycopy(buf, pos, b, off + done, n);
            pos += n;
            done += n;
        }
        return done;
    }

    @Override
    public long skip(long n) throws IOException {
        long done = 0;
        while (done < n) {
            if (pos == limit && !fill(1)) {
                break;
            }
            int step = (int) Math.min(n - done, limit - pos);
            pos += step;
            done += step;
        }
        return done;
    }

    /**
     * The byte {@code offset} (0 to 7) bytes after the position, without reading it, or -1 beyond the end.
     *
     * @throws IOException when the file cannot be read
     */
    int peek(int offset) throws IOException {
        if (!fill(offset + 1)) {
            return -1;
        }
        return buf[pos + offset] & 0xff;
    }

    /**
     * The next {@code n} bytes decoded as UTF-8 (malformed sequences replaced, as {@link String#String(byte[],
     * java.nio.charset.Charset)} does), read; the caller has checked that the pickle has them.
     *
     * @throws EOFException when it ends before them
     * @throws IOException  when the file cannot be read
     */
    String utf8(int n) throws IOException {
        if ((n <= BUFFER || source == null) && fill(n)) {
            String text = new String(buf, pos, n, StandardCharsets.UTF_8);
            pos += n;
            return text;
        }
        byte[] bytes = new byte[n];
        if (read(bytes, 0, n) != n) {
            throw new EOFException();
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        if (source != null) {
            try {
                source.close();
            } catch (IOException e) {
                throw new SourceFailure(e);
            }
        }
    }
}
