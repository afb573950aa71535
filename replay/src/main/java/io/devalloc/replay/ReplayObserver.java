package io.devalloc.replay;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.observe.AllocatorListener;

/**
 * Watches the allocator of a replay as an application watches its own: what the launcher's {@code --metrics} and
 * {@code --jfr} give a replay. Only the replaying pass is watched, from its first event to its last (and the frees
 * of the allocator's close after it): a warm start's restore before the first event is not told, as the replay's own
 * figures do not count it, and neither is the second replay up to the peak that a replay runs for the peak's
 * snapshot. So the observer's counts are the replay's.
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
     * set with {@code DeviceAllocators.builder().listener(...)} is (and guarded the same way). Asked once, just
     * before the first event.
     *
     * @param device the device the replay runs on
     */
    AllocatorListener listener(DeviceDescriptor device);

    /**
     * The replaying pass's allocator is ready for the first event: built, and restored when the replay starts warm.
     * Called once per replay, after {@link #listener}, with the allocator {@link #finished} is given.
     */
    default void opened(DeviceAllocator allocator) {
    }

    /** The replaying pass applied its last event; its allocator is still open (its gauges are the end's). */
    default void finished(DeviceAllocator allocator) {
    }
}
