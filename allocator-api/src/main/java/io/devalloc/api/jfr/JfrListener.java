package io.devalloc.api.jfr;

import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.observe.DeviceCall;
import java.util.Objects;

/**
 * An {@link AllocatorListener} that writes JFR events: {@code io.devalloc.DeviceAlloc}, {@code DeviceFree},
 * {@code DeviceMap}, {@code DeviceUnmap}, {@code OutOfMemory}, {@code AllocationRetry} and {@code CacheRelease}
 * (see this package's documentation for their fields). Each call builds its event and writes it only when
 * {@link jdk.jfr.Event#shouldCommit()} says a running recording wants it: with no recording, or with the event
 * disabled in the recording's settings, a call costs one short-lived object (which the JIT usually removes) and one
 * flag read.
 *
 * <p>Usually set by {@code DeviceAllocators.builder().name("trainer").jfrEvents(true)} (or
 * {@code -Ddevalloc.jfr=true}), which also registers the periodic {@code io.devalloc.MemoryUsage} event; it may be
 * given to {@code DeviceAllocators.Builder.listener} directly too.
 *
 * <p>Thread-safe: it holds nothing but its two names.
 */
final class JfrListener implements AllocatorListener {

    private final String allocatorName;
    private final String deviceId;

    /**
     * @param allocatorName the name the events carry in their {@code allocator} field (the allocator's user-given
     *                      name: stable across runs, so recordings can be compared)
     * @param deviceId      the device's id the events carry in their {@code device} field, e.g. {@code cuda:0}
     */
    JfrListener(String allocatorName, String deviceId) {
        this.allocatorName = Objects.requireNonNull(allocatorName, "allocatorName");
        this.deviceId = Objects.requireNonNull(deviceId, "deviceId");
    }

    @Override
    public void deviceCall(DeviceCall call, long address, long bytes, long nanos, boolean succeeded) {
        DeviceCallEvent event = switch (call) {
            case MALLOC -> new DeviceAllocEvent();
            case FREE -> new DeviceFreeEvent();
            case MAP -> new DeviceMapEvent();
            case UNMAP -> new DeviceUnmapEvent();
        };
        event.write(allocatorName, deviceId, address, bytes, nanos, succeeded);
    }

    @Override
    public void outOfMemory(long requestedBytes, OutOfMemoryException error) {
        new OutOfMemoryEvent().write(allocatorName, deviceId, requestedBytes, error);
    }

    @Override
    public void allocationRetried(long requestedBytes, int attempt, RetryCause cause) {
        new AllocationRetryEvent().write(allocatorName, deviceId, requestedBytes, attempt, cause);
    }

    @Override
    public void cacheReleased(long bytes, long nanos) {
        new CacheReleaseEvent().write(allocatorName, deviceId, bytes, nanos);
    }

    @Override
    public String toString() {
        return "JfrListener[" + allocatorName + " on " + deviceId + "]";
    }
}
