package io.devalloc.trace.text;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.Flushable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a CSV trace recorder writes: its {@link CsvLine}, the stream or writer under it (which the recorder owns:
 * flushed and closed through this), and whether the recorder is closed: rows are refused once it is closed, and
 * flushing or closing again does nothing. Internal to trace-io's recorders (this
 * package is exported only to the replay and the advisor). Not thread-safe, as the recorders are not.
 */
public final class CsvRecorderOutput implements Flushable, Closeable {

    private final CsvLine line;
    private final Flushable flushTarget;
    private final Closeable closeTarget;
    private boolean closed;

    /** ASCII to {@code out}, which it then owns. */
    public CsvRecorderOutput(OutputStream out) {
        this(new CsvLine(out), out, out);
    }

    /** Text to {@code out}, which it then owns. */
    public CsvRecorderOutput(Writer out) {
        this(new CsvLine(out), out, out);
    }

    private CsvRecorderOutput(CsvLine line, Flushable flushTarget, Closeable closeTarget) {
        this.line = line;
        this.flushTarget = flushTarget;
        this.closeTarget = closeTarget;
    }

    /** Creates (or truncates) {@code file}, behind a buffer that a recorder's rows fill before each write. */
    public static OutputStream create(Path file) throws IOException {
        return new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
    }

    /**
     * The line to build the next row in, ended by {@link CsvLine#end()}.
     *
     * @throws IOException once closed
     */
    public CsvLine row() throws IOException {
        if (closed) {
            throw new IOException("recorder is closed");
        }
        return line;
    }

    @Override
    public void flush() throws IOException {
        if (!closed) {
            flushTarget.flush();
        }
    }

    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            closeTarget.close();
        }
    }
}
