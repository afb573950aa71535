package io.devalloc.api.jfr;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.spi.ForwardingDeviceAllocator;
import jdk.jfr.FlightRecorder;

/**
 * An allocator whose gauges JFR reads every period: the hook is added when this decorator is made and removed when
 * it is closed, so a closed allocator is neither read nor kept alive by JFR. The gauges are also written once when
 * it is made and once as it closes, so that a recording of an allocator that lives less than a period still has
 * them. Everything else is forwarded.
 */
final class MemoryUsageRecordedAllocator extends ForwardingDeviceAllocator {

    private final MemoryUsageHook hook;

    MemoryUsageRecordedAllocator(DeviceAllocator allocator, String allocatorName) {
        super(allocator);
        this.hook = new MemoryUsageHook(allocator, allocatorName, allocator.device().descriptor().id());
        FlightRecorder.addPeriodicEvent(MemoryUsageEvent.class, hook);
        hook.writeNow();
    }

    @Override
    public void close() {
        try {
            hook.writeNow(); // the gauges as the allocator ends, before the close gives its memory back
        } finally {
            try {
                FlightRecorder.removePeriodicEvent(hook);
            } finally {
                super.close();
            }
        }
    }

    @Override
    public String toString() {
        return delegate().toString();
    }
}
