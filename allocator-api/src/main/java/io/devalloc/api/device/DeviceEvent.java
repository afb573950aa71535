package io.devalloc.api.device;

/**
 * A device event: CUDA's {@code cudaEvent_t}. Recorded on a stream, it completes when the device has finished
 * all work queued on that stream before the record. Allocators use events to know when memory that a stream may
 * still read can be reused.
 *
 * @param handle the device's handle for the event; never 0
 */
public record DeviceEvent(long handle) {

    public DeviceEvent {
        if (handle == 0) {
            throw new IllegalArgumentException("event handle 0 is reserved for 'no event'");
        }
    }

    @Override
    public String toString() {
        return "event(0x" + Long.toHexString(handle) + ")";
    }
}
