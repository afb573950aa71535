package io.devalloc.replay;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceDescriptor;
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
        public AllocatorListener listener(DeviceDescriptor device) {
            return AllocatorListener.NONE;
        }

        @Override
        public String toString() {
            return "ReplayObserver.NONE";
        }
    };

    /**
     * Told of the replaying pass's device calls, out-of-memory errors, retries and cache releases, as a listener
     * set with {@code DeviceAllocators.builder().listener(...)} is (and guarded the same way). Asked when the
     * replaying pass's device is open, before its allocator is built (again, with the same device, when a warm
     * start reopens it: return the same listener).
     *
     * @param device the device the replay runs on
     */
    AllocatorListener listener(DeviceDescriptor device);

    /**
     * The replaying pass's allocator is ready for the first event: built, and restored when the replay starts warm
     * (the listener was told of the restore's device calls already). Called once per replay, with the allocator
     * {@link #finished} is given.
     */
    default void opened(DeviceAllocator allocator) {
    }

    /** The replaying pass applied its last event; its allocator is still open (its gauges are the end's). */
    default void finished(DeviceAllocator allocator) {
    }
}
