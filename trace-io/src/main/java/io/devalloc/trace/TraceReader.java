package io.devalloc.trace;

import java.io.IOException;

/**
 * A streaming reader of one trace file: constant memory whatever the trace's length. Not thread-safe.
 */
public interface TraceReader extends AutoCloseable {

    /** The format being read. */
    TraceFormat format();

    /**
     * The next event, or null at the end.
     *
     * @throws TraceFormatException naming the file, the line and what was expected, on malformed input
     */
    TraceEvent next() throws IOException;

    /**
     * How many bytes of the file the reader has consumed, for a progress estimate against the file's size; -1 when
     * it cannot tell (the default; compressed or binary input).
     */
    default long bytesRead() {
        return -1;
    }

    @Override
    void close() throws IOException;
}
