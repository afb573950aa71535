package io.devalloc.examples.trace;

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
     * The next event, for a first pass that needs every event's kind but the details of the rare kinds only: like
     * {@link #next()}, except that the reader may return {@link TraceEvent.Kind#ALLOC ALLOC} and
     * {@link TraceEvent.Kind#FREE FREE} events as the shared {@link TraceEvent#SKIMMED_ALLOC} and
     * {@link TraceEvent#SKIMMED_FREE}, without reading or checking their other columns (so a malformed one may
     * pass here and be reported by {@link #next()} on the next pass). The events and their order are those of
     * {@link #next()}. By default, {@link #next()}.
     *
     * @throws TraceFormatException on malformed input
     */
    default TraceEvent nextSkimming() throws IOException {
        return next();
    }

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
