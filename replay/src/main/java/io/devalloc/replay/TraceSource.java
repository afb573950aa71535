package io.devalloc.replay;

import io.devalloc.trace.TraceReader;
import java.io.IOException;

/**
 * A trace that can be read more than once: each {@link #open()} returns a new reader positioned at the first event.
 * The {@link Replayer} may read a trace twice (with {@code --warm}, a first pass for the state to restore), so it
 * takes a source rather than a reader; a file is a source ({@link TraceSources#of}), and so is a list of events in a
 * test.
 */
@FunctionalInterface
public interface TraceSource {

    /**
     * A new reader at the start of the trace; the caller closes it.
     *
     * @throws IOException if the trace cannot be opened (a {@link io.devalloc.trace.TraceFormatException}
     *                     when its content is not a trace format devalloc reads)
     */
    TraceReader open() throws IOException;

    /** The trace's size in bytes, for a progress estimate with {@link TraceReader#bytesRead()}; -1 if unknown. */
    default long sizeBytes() {
        return -1;
    }
}
