package io.devalloc.testkit;

import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A listener that writes down what only an allocator itself can tell (its retries and its releases of cached
 * memory), as lines an assertion compares: {@code "retried 1048576 1 CACHE_RELEASED"}, {@code "released 20971520"}.
 * A release's duration must not be negative. Thread-safe.
 */
public final class OwnEventLog implements AllocatorListener {

    private final List<String> events = Collections.synchronizedList(new ArrayList<>());

    /** A new, empty log. */
    public OwnEventLog() {
    }

    /** The lines written so far, oldest first (a live view: copy it to keep a moment's state). */
    public List<String> events() {
        return events;
    }

    @Override
    public void allocationRetried(long requestedBytes, int attempt, RetryCause cause) {
        events.add("retried " + requestedBytes + " " + attempt + " " + cause);
    }

    @Override
    public void cacheReleased(long bytes, long nanos) {
        if (nanos < 0) {
            throw new AssertionError("a release of " + bytes + " B took " + nanos + " ns");
        }
        events.add("released " + bytes);
    }
}
