package io.devalloc.trace;

import java.io.Closeable;
import java.io.IOException;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * What the readers of a plain text file share: the format they read, how far into their text they are
 * ({@link #bytesRead()}) and closing it. Each reads and parses its own lines, with trace-io's text helpers; those are
 * exported to the replay and the advisor only, so they stay out of this class's signatures: here the text is what
 * {@link #close()} closes, and a position. (The Android reader, whose text may be a zip's entry, has no position in
 * the file and closes the zip too: it is not one of them.)
 */
public abstract class TextTraceReader implements TraceReader {

    private final TraceFormat format;
    private final Closeable text;
    private final LongSupplier position;

    /**
     * A reader of {@code text}.
     *
     * @param format   the format read
     * @param text     the text read, closed by {@link #close()}
     * @param position the bytes of the text consumed so far
     */
    protected TextTraceReader(TraceFormat format, Closeable text, LongSupplier position) {
        this.format = Objects.requireNonNull(format, "format");
        this.text = Objects.requireNonNull(text, "text");
        this.position = Objects.requireNonNull(position, "position");
    }

    @Override
    public final TraceFormat format() {
        return format;
    }

    @Override
    public final long bytesRead() {
        return position.getAsLong();
    }

    @Override
    public final void close() throws IOException {
        text.close();
    }
}
