package io.devalloc.replay;

import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.observe.DeviceCall;
import java.util.Objects;

/**
 * The listener a watched replay builds its allocator with: passes everything to the listener it is pointed at,
 * nothing before. The replay points it at the observer's listener when the events start, so that a warm start's
 * restore (calls the trace's own figures do not count either) is not told, and every count the observer sees is the
 * replay's. Not thread-safe: a replay runs on one thread.
 */
final class ListenerRelay implements AllocatorListener {

    private AllocatorListener target = AllocatorListener.NONE;

    /** From now on, tell {@code listener}. */
    void to(AllocatorListener listener) {
        this.target = Objects.requireNonNull(listener, "listener");
    }

    @Override
    public void deviceCall(DeviceCall call, long address, long bytes, long nanos, boolean succeeded) {
        target.deviceCall(call, address, bytes, nanos, succeeded);
    }

    @Override
    public void outOfMemory(long requestedBytes, OutOfMemoryException error) {
        target.outOfMemory(requestedBytes, error);
    }

    @Override
    public void allocationRetried(long requestedBytes, int attempt, RetryCause cause) {
        target.allocationRetried(requestedBytes, attempt, cause);
    }

    @Override
    public void cacheReleased(long bytes, long nanos) {
        target.cacheReleased(bytes, nanos);
    }

    @Override
    public String toString() {
        return "ListenerRelay[" + target + "]";
    }
}
