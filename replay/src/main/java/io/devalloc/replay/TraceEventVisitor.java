package io.devalloc.replay;

import io.devalloc.trace.TraceEvent;

/**
 * What {@link CompactTrace#forEachEvent(TraceEventVisitor)} calls for each event of a compact trace, in trace order:
 * the event's columns as primitives, with no object made per event, for analyses that walk a trace read once (the
 * bounds of {@code io.devalloc.replay.bounds}) without replaying it.
 *
 * <p>Called on the thread that called {@code forEachEvent}, one event at a time; an implementation needs no
 * synchronisation unless it shares its state with other threads.
 */
@FunctionalInterface
public interface TraceEventVisitor {

    /**
     * One event.
     *
     * @param index its 0-based position in the trace, every kind counted ({@code 0 .. events() - 1})
     * @param kind  what it is ({@link TraceEvent#kind()})
     * @param key   its key ({@link TraceEvent#key()}: an address or allocation number; for an {@code OOM} the
     *              device's free bytes, or {@link TraceEvent#FREE_BYTES_UNKNOWN})
     * @param size  its size ({@link TraceEvent#size()}: the bytes requested; for an {@code OOM} the request that
     *              failed as the format records it, 0 when it does not)
     */
    void event(long index, TraceEvent.Kind kind, long key, long size);
}
