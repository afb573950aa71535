package io.devalloc.api.jfr;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.observe.AllocatorListener;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import jdk.jfr.FlightRecorder;

/**
 * Turns on devalloc's JFR events for an allocator built by hand (the builder does this for
 * {@code jfrEvents(true)}).
 */
public final class JfrEvents {

    /** The names of the per-call events, for {@code Recording.enable(name)} or a {@code .jfc} file. */
    public static final List<String> CALL_EVENTS = List.of(DeviceAllocEvent.NAME, DeviceFreeEvent.NAME,
            DeviceMapEvent.NAME, DeviceUnmapEvent.NAME, OutOfMemoryEvent.NAME, AllocationRetryEvent.NAME,
            CacheReleaseEvent.NAME);

    /** The name of the periodic gauge event (one per pool each period). */
    public static final String MEMORY_USAGE_EVENT = MemoryUsageEvent.NAME;

    private JfrEvents() {
    }

    /**
     * A listener that writes one JFR event per device call, out-of-memory error, retry and cache release, as
     * {@code DeviceAllocators.builder().jfrEvents(true)} adds: for a tool that builds its allocators another way.
     *
     * @param allocatorName the name the events carry in their {@code allocator} field (the allocator's user-given
     *                      name: stable across runs, so recordings can be compared)
     * @param deviceId      the device's id the events carry in their {@code device} field, e.g. {@code cuda:0}
     */
    public static AllocatorListener listener(String allocatorName, String deviceId) {
        return new JfrListener(allocatorName, deviceId);
    }

    /**
     * {@code allocator}, with its gauges written as {@code io.devalloc.MemoryUsage} events every period while a
     * recording has that event enabled (one event per pool), and also once now and once when the returned allocator
     * is closed (before it gives its memory back), so that an allocator that lives less than a period is recorded
     * too. The hook is registered with {@link jdk.jfr.FlightRecorder#addPeriodicEvent} now and removed when the
     * returned allocator is closed; closing it closes {@code allocator}. The per-call events need a
     * {@link #listener} as well, set on the builder.
     *
     * @param allocator     the allocator to read
     * @param allocatorName the name the events carry in their {@code allocator} field
     */
    public static DeviceAllocator withMemoryUsageEvents(DeviceAllocator allocator, String allocatorName) {
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(allocatorName, "allocatorName");
        return new MemoryUsageRecordedAllocator(allocator, allocatorName);
    }

    /**
     * Writes {@code allocator}'s gauges as {@code io.devalloc.MemoryUsage} events every period until the returned
     * action is run, for an allocator whose life someone else manages (a replay's), and also once now and once when
     * the action runs, so that a watch shorter than a period is recorded too: running it writes the gauges, removes
     * the hook (once; later runs do nothing) and leaves the allocator open. Run it before the allocator is closed, so
     * that JFR never reads a closed one (a closed allocator's gauges are not written).
     *
     * @param allocator     the allocator to read
     * @param allocatorName the name the events carry in their {@code allocator} field
     */
    public static Runnable memoryUsageEvents(DeviceAllocator allocator, String allocatorName) {
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(allocatorName, "allocatorName");
        MemoryUsageHook hook = new MemoryUsageHook(allocator, allocatorName, allocator.device().descriptor().id());
        FlightRecorder.addPeriodicEvent(MemoryUsageEvent.class, hook);
        hook.writeNow();
        AtomicBoolean stopped = new AtomicBoolean();
        return () -> {
            if (stopped.compareAndSet(false, true)) {
                try {
                    hook.writeNow();
                } finally {
                    FlightRecorder.removePeriodicEvent(hook);
                }
            }
        };
    }
}
