package io.devalloc.api.jfr;

import io.devalloc.api.DeviceAllocator;
import java.util.Objects;

/**
 * Turns on devalloc's JFR events for an allocator built by hand (the builder does this for
 * {@code jfrEvents(true)}).
 */
public final class JfrEvents {

    private JfrEvents() {
    }

    /**
     * {@code allocator}, with its gauges written as {@code io.devalloc.MemoryUsage} events every period while a
     * recording has that event enabled (one event per pool). The hook is registered with
     * {@link jdk.jfr.FlightRecorder#addPeriodicEvent} now and removed when the returned allocator is closed; closing
     * it closes {@code allocator}. The per-call events need a {@link JfrListener} as well, set on the builder.
     *
     * @param allocator     the allocator to read
     * @param allocatorName the name the events carry in their {@code allocator} field
     */
    public static DeviceAllocator withMemoryUsageEvents(DeviceAllocator allocator, String allocatorName) {
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(allocatorName, "allocatorName");
        return new MemoryUsageRecordedAllocator(allocator, allocatorName);
    }
}
