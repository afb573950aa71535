package io.devalloc.replay;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.observe.AllocatorListener;

/**
 * Watches the allocator of a replay as an application watches its own: what the launcher's {@code --metrics} and
 * {@code --jfr} give a replay. Only the replaying pass is watched, from the device's opening (with a warm start's
 * restore, which the allocator really makes) to its last event; the second replay up to the peak, which a replay
 * runs for the peak's snapshot, is not, so every count is the replay's once.
 *
 * <p>Called on the replaying thread.
 */
public interface ReplayObserver {

    /** Watches nothing: the replay runs exactly as without an observer. */
    ReplayObserver NONE = new ReplayObserver() {
        @Override
        public AllocatorListener listener() {
            return AllocatorListener.NONE;
        }

        @Override
        public String toString() {
            return "ReplayObserver.NONE";
        }
    };

    /**
     * Told of the replaying pass's device calls, out-of-memory errors, retries and cache releases, as a listener
     * set with {@code DeviceAllocators.builder().listener(...)} is (and guarded the same way).
     */
    AllocatorListener listener();

    /**
     * The replaying pass's allocator was built (before a warm start restores anything). A warm start that places
     * segments at their recorded addresses reopens the device before restoring anything: this is then called again
     * with the new allocator (the first one, which made no call, is closed), and the last one is the replay's.
     */
    default void opened(DeviceAllocator allocator) {
    }

    /** The replaying pass applied its last event; its allocator is still open (its gauges are the end's). */
    default void finished(DeviceAllocator allocator) {
    }
}
