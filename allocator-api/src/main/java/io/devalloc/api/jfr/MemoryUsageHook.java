package io.devalloc.api.jfr;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.stats.PoolUsage;

/**
 * The periodic hook of one allocator: JFR runs it once per period of {@code io.devalloc.MemoryUsage} (only while a
 * recording has the event enabled), and it writes one event per pool from {@link DeviceAllocator#memoryUsage()}
 * (a consistent copy taken under the allocator's lock, as for a metrics scrape). {@link #writeNow} writes the same
 * events outside the period, when the watching begins and ends: a run shorter than the period would otherwise have
 * none.
 */
final class MemoryUsageHook implements Runnable {

    private final DeviceAllocator allocator;
    private final String allocatorName;
    private final String deviceId;

    MemoryUsageHook(DeviceAllocator allocator, String allocatorName, String deviceId) {
        this.allocator = allocator;
        this.allocatorName = allocatorName;
        this.deviceId = deviceId;
    }

    @Override
    public void run() {
        for (PoolUsage usage : allocator.memoryUsage()) {
            MemoryUsageEvent event = new MemoryUsageEvent();
            event.source(allocatorName, deviceId);
            event.pool = usage.pool();
            event.reserved = usage.reservedBytes();
            event.allocated = usage.allocatedBytes();
            event.active = usage.activeBytes();
            event.requested = usage.requestedBytes();
            event.inactiveSplit = usage.inactiveSplitBytes();
            event.commit();
        }
    }

    /**
     * Writes the gauges now, outside the period, when a recording has the event enabled and the allocator is still
     * open (a closed one holds nothing to report).
     */
    void writeNow() {
        if (new MemoryUsageEvent().isEnabled() && !allocator.isClosed()) {
            run();
        }
    }

    @Override
    public String toString() {
        return "MemoryUsageHook[" + allocatorName + "]";
    }
}
