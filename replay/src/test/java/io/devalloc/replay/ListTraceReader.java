package io.devalloc.replay;

import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceReader;
import java.util.Iterator;
import java.util.List;

/** A trace reader over a list of events, for tests. */
public final class ListTraceReader implements TraceReader {

    private final TraceFormat format;
    private final Iterator<TraceEvent> events;
    private boolean closed;

    public ListTraceReader(TraceFormat format, List<TraceEvent> events) {
        this.format = format;
        this.events = events.iterator();
    }

    @Override
    public TraceFormat format() {
        return format;
    }

    @Override
    public TraceEvent next() {
        if (closed) {
            throw new IllegalStateException("reader closed");
        }
        return events.hasNext() ? events.next() : null;
    }

    @Override
    public void close() {
        closed = true;
    }
}
