package io.devalloc.trace;

import java.io.Closeable;
import java.io.Flushable;
import java.io.IOException;
import java.util.Objects;

/**
 * What the text recorders share: the output they own, flushed and closed through here, and the name they give in
 * messages. Each writes its own rows, with trace-io's text helpers; those are exported to the replay and the advisor
 * only, so they stay out of this class's signatures: here the output is what {@link #flush()} and {@link #close()}
 * reach.
 */
public abstract class TextTraceRecorder implements TraceRecorder {

    private final Flushable flushTarget;
    private final Closeable closeTarget;
    private final String name;

    /**
     * A recorder that writes to {@code output}.
     *
     * @param output where the rows go, flushed and closed by this recorder
     * @param name   what {@link #toString()} says
     */
    protected <O extends Flushable & Closeable> TextTraceRecorder(O output, String name) {
        this.flushTarget = Objects.requireNonNull(output, "output");
        this.closeTarget = output;
        this.name = Objects.requireNonNull(name, "name");
    }

    @Override
    public final void flush() throws IOException {
        flushTarget.flush();
    }

    @Override
    public final void close() throws IOException {
        closeTarget.close();
    }

    @Override
    public final String toString() {
        return name;
    }
}
