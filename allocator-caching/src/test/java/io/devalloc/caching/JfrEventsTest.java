package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.jfr.JfrEvents;
import io.devalloc.api.stats.PoolUsage;
import io.devalloc.api.units.ByteSize;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.Test;

/**
 * devalloc's JFR events as a recording sees them: {@code caching} on a simulated device, built with
 * {@code jfrEvents(true)}, recorded with a {@link RecordingStream}.
 */
class JfrEventsTest {

    private static final List<String> CALL_EVENTS = List.of("io.devalloc.DeviceAlloc", "io.devalloc.DeviceFree",
            "io.devalloc.DeviceMap", "io.devalloc.DeviceUnmap", "io.devalloc.OutOfMemory",
            "io.devalloc.AllocationRetry", "io.devalloc.CacheRelease");
    private static final String MEMORY_USAGE = "io.devalloc.MemoryUsage";
    private static final long SEGMENT = 2 * ByteSize.MiB; // caching's small-pool segment (PyTorch's kSmallBuffer)

    /** The events of {@code allocatorName} recorded while {@code work} ran, with the events {@code setup} enables. */
    private static List<RecordedEvent> record(Consumer<RecordingStream> setup, String allocatorName, Runnable work) {
        List<RecordedEvent> events = new CopyOnWriteArrayList<>();
        try (RecordingStream stream = new RecordingStream()) {
            setup.accept(stream);
            stream.onEvent(e -> {
                if (e.getEventType().getName().startsWith("io.devalloc.")
                        && (allocatorName == null || allocatorName.equals(e.getString("allocator")))) {
                    events.add(e);
                }
            });
            stream.startAsync();
            work.run();
            stream.stop(); // waits until every event recorded so far has been consumed
        }
        return events;
    }

    private static void enableCallEvents(RecordingStream stream) {
        for (String name : CALL_EVENTS) {
            stream.enable(name).withoutStackTrace();
        }
    }

    private static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name)).toList();
    }

    @Test
    void deviceMallocAndFreeAreEventsWithSizeAddressSuccessAndCallDuration() {
        long[] segment = new long[1];
        List<RecordedEvent> events = record(JfrEventsTest::enableCallEvents, "jfr-trainer", () -> {
            try (DeviceAllocator a = DeviceAllocators.builder().device("sim:1GiB").allocator("caching")
                    .name("jfr-trainer").jfrEvents(true).build()) {
                segment[0] = a.malloc(1000);
                a.free(segment[0]);
                a.releaseCachedMemory();
            }
        });
        List<RecordedEvent> allocs = named(events, "io.devalloc.DeviceAlloc");
        assertEquals(1, allocs.size(), events.toString());
        RecordedEvent alloc = allocs.get(0);
        assertEquals("jfr-trainer", alloc.getString("allocator"));
        assertEquals("sim:0", alloc.getString("device"));
        assertEquals(segment[0], alloc.getLong("address"), "the first block starts the segment");
        assertEquals(SEGMENT, alloc.getLong("size"));
        assertTrue(alloc.getBoolean("succeeded"));
        assertFalse(alloc.getDuration("callDuration").isNegative());
        assertFalse(alloc.getDuration().isNegative());

        List<RecordedEvent> frees = named(events, "io.devalloc.DeviceFree");
        assertEquals(1, frees.size(), "releaseCachedMemory gave the segment back: " + events);
        assertEquals(segment[0], frees.get(0).getLong("address"));
        assertEquals(SEGMENT, frees.get(0).getLong("size"), "the size the device malloc had");
        assertTrue(frees.get(0).getBoolean("succeeded"));
        assertFalse(frees.get(0).getDuration("callDuration").isNegative());

        EventType type = alloc.getEventType();
        assertEquals("jdk.jfr.DataAmount", type.getField("size").getContentType());
        assertEquals("jdk.jfr.MemoryAddress", type.getField("address").getContentType());
        assertEquals("jdk.jfr.Timespan", type.getField("callDuration").getContentType());
        assertEquals(List.of("devalloc", "Device"), type.getCategoryNames());
    }

    @Test
    void expandableSegmentsMapAndUnmapPages() {
        List<RecordedEvent> events = record(JfrEventsTest::enableCallEvents, "jfr-expandable", () -> {
            try (DeviceAllocator a = DeviceAllocators.builder().device("sim:1GiB").allocator("caching")
                    .config("expandable_segments:True").name("jfr-expandable").jfrEvents(true).build()) {
                a.free(a.malloc(1000));
                a.releaseCachedMemory();
            }
        });
        List<RecordedEvent> maps = named(events, "io.devalloc.DeviceMap");
        List<RecordedEvent> unmaps = named(events, "io.devalloc.DeviceUnmap");
        assertFalse(maps.isEmpty(), events.toString());
        assertFalse(unmaps.isEmpty(), events.toString());
        assertTrue(named(events, "io.devalloc.DeviceAlloc").isEmpty(), "expandable segments map, never malloc");
        long mapped = maps.stream().filter(e -> e.getBoolean("succeeded")).mapToLong(e -> e.getLong("size")).sum();
        long unmapped = unmaps.stream().mapToLong(e -> e.getLong("size")).sum();
        assertEquals(SEGMENT, mapped, "one 2 MiB page of the small pool");
        assertEquals(mapped, unmapped, "the release unmapped what was mapped");
        assertTrue(maps.get(0).getLong("address") != 0);
    }

    @Test
    void anOutOfMemoryErrorAndTheHandlersRetryAreEvents() {
        long request = 512 * ByteSize.MiB; // fits the device, not beside the 768 MiB held
        List<RecordedEvent> events = record(JfrEventsTest::enableCallEvents, "jfr-oom", () -> {
            try (DeviceAllocator a = DeviceAllocators.builder().device("sim:1GiB").allocator("caching")
                    .name("jfr-oom").jfrEvents(true).outOfMemoryHandler(f -> f.retryCount() == 0).build()) {
                long held = a.malloc(768 * ByteSize.MiB);
                assertThrows(OutOfMemoryException.class, () -> a.malloc(request));
                a.free(held);
            }
        });
        List<RecordedEvent> ooms = named(events, "io.devalloc.OutOfMemory");
        assertEquals(2, ooms.size(), "the first attempt and the one retry: " + events);
        for (RecordedEvent oom : ooms) {
            assertEquals(request, oom.getLong("requestedSize"));
            assertEquals("DEVICE_EXHAUSTED", oom.getString("reason"));
            assertEquals("sim:0", oom.getString("device"));
            assertTrue(oom.getString("message").contains("Tried to allocate 512.00 MiB"), oom.getString("message"));
            assertEquals("jdk.jfr.DataAmount", oom.getEventType().getField("requestedSize").getContentType());
        }
        List<RecordedEvent> retries = named(events, "io.devalloc.AllocationRetry");
        // Each attempt runs PyTorch's ladder, whose last step retries after releasing the cache; between the two
        // attempts, the handler's retry.
        assertEquals(List.of("CACHE_RELEASED", "HANDLER", "CACHE_RELEASED"),
                retries.stream().map(e -> e.getString("cause")).toList(), events.toString());
        RecordedEvent handlers = retries.get(1);
        assertEquals(1, handlers.getInt("attempt"));
        for (RecordedEvent retry : retries) {
            assertEquals(request, retry.getLong("requestedSize"));
        }
        List<RecordedEvent> failedMallocs = named(events, "io.devalloc.DeviceAlloc").stream()
                .filter(e -> !e.getBoolean("succeeded")).toList();
        assertFalse(failedMallocs.isEmpty(), "the device's refusals are events too: " + events);
        assertEquals(0, failedMallocs.get(0).getLong("address"));
    }

    @Test
    void aCacheReleaseIsAnEventWithItsSizeAndDuration() {
        List<RecordedEvent> events = record(JfrEventsTest::enableCallEvents, "jfr-release",
                () -> JfrEvents.listener("jfr-release", "sim:0").cacheReleased(3 * SEGMENT, 12_345));
        List<RecordedEvent> releases = named(events, "io.devalloc.CacheRelease");
        assertEquals(1, releases.size(), events.toString());
        assertEquals(3 * SEGMENT, releases.get(0).getLong("releasedSize"));
        assertEquals(Duration.ofNanos(12_345), releases.get(0).getDuration("callDuration"));
        assertEquals("sim:0", releases.get(0).getString("device"));
    }

    @Test
    void theMemoryUsageEventReadsTheGaugesEveryPeriodUntilTheAllocatorCloses() throws InterruptedException {
        CountDownLatch seen = new CountDownLatch(1);
        List<RecordedEvent> events = new CopyOnWriteArrayList<>();
        DeviceAllocator a = DeviceAllocators.builder().device("sim:1GiB").allocator("caching")
                .name("jfr-gauges").jfrEvents(true).build();
        List<PoolUsage> expected;
        try (RecordingStream stream = new RecordingStream()) {
            stream.enable(MEMORY_USAGE).withPeriod(Duration.ofMillis(20));
            long live = a.malloc(5000);
            expected = a.memoryUsage();
            stream.onEvent(MEMORY_USAGE, e -> {
                if ("jfr-gauges".equals(e.getString("allocator"))) {
                    events.add(e);
                    seen.countDown();
                }
            });
            stream.startAsync();
            assertTrue(seen.await(30, TimeUnit.SECONDS), "no io.devalloc.MemoryUsage event in 30 s");
            stream.stop();
            a.free(live);
        } finally {
            a.close();
        }
        for (PoolUsage usage : expected) {
            RecordedEvent e = events.stream().filter(x -> x.getString("pool").equals(usage.pool())).findFirst()
                    .orElseThrow(() -> new AssertionError("no event for pool " + usage.pool() + ": " + events));
            assertEquals(usage.reservedBytes(), e.getLong("reserved"));
            assertEquals(usage.allocatedBytes(), e.getLong("allocated"));
            assertEquals(usage.activeBytes(), e.getLong("active"));
            assertEquals(usage.requestedBytes(), e.getLong("requested"));
            assertEquals(usage.inactiveSplitBytes(), e.getLong("inactiveSplit"));
            assertEquals("sim:0", e.getString("device"));
            assertEquals("jdk.jfr.DataAmount", e.getEventType().getField("reserved").getContentType());
        }
        assertEquals(SEGMENT, expected.get(0).reservedBytes(), "a live allocation holds a segment");

        // Closed: the hook is gone, so a new recording sees nothing of this allocator.
        List<RecordedEvent> afterClose = record(s -> s.enable(MEMORY_USAGE).withPeriod(Duration.ofMillis(20)),
                "jfr-gauges", () -> sleep(300));
        assertEquals(List.of(), afterClose);
    }

    @Test
    void anAllocatorShorterThanThePeriodHasItsGaugesAtItsStartAndItsEnd() {
        List<List<PoolUsage>> expected = new ArrayList<>();
        // A period no test outlives: every event seen is one of the two written outside the period.
        List<RecordedEvent> events = record(s -> s.enable(MEMORY_USAGE).withPeriod(Duration.ofHours(1)),
                "jfr-short", () -> {
                    try (DeviceAllocator a = DeviceAllocators.builder().device("sim:1GiB").allocator("caching")
                            .name("jfr-short").jfrEvents(true).build()) {
                        expected.add(a.memoryUsage());
                        assertTrue(a.malloc(5000) != 0);
                        expected.add(a.memoryUsage());
                    }
                });
        List<RecordedEvent> usage = named(events, MEMORY_USAGE);
        assertEquals(2 * expected.get(0).size(), usage.size(), usage::toString);
        for (int p = 0; p < expected.get(0).size(); p++) {
            String pool = expected.get(0).get(p).pool();
            List<RecordedEvent> written = usage.stream().filter(e -> e.getString("pool").equals(pool))
                    .sorted(Comparator.comparing(RecordedEvent::getStartTime)).toList();
            assertEquals(2, written.size(), () -> pool + ": " + written);
            for (int i = 0; i < 2; i++) {
                assertEquals(expected.get(i).get(p).reservedBytes(), written.get(i).getLong("reserved"), pool);
                assertEquals(expected.get(i).get(p).allocatedBytes(), written.get(i).getLong("allocated"), pool);
            }
        }
        assertEquals(0, expected.get(0).get(0).reservedBytes(), "built: nothing reserved yet");
        assertEquals(SEGMENT, expected.get(1).get(0).reservedBytes(), "closing: the live allocation's segment");
    }

    @Test
    void aReplaysWatchShorterThanThePeriodHasItsGaugesAtItsStartAndItsEnd() {
        List<RecordedEvent> events = record(s -> s.enable(MEMORY_USAGE).withPeriod(Duration.ofHours(1)),
                "jfr-watch", () -> {
                    try (DeviceAllocator a = DeviceAllocators.builder().device("sim:1GiB").allocator("caching")
                            .build()) {
                        Runnable stop = JfrEvents.memoryUsageEvents(a, "jfr-watch");
                        assertTrue(a.malloc(5000) != 0);
                        stop.run();
                        stop.run(); // once: a second run writes nothing
                        assertTrue(a.malloc(5000) != 0);
                    }
                });
        List<RecordedEvent> all = named(events, MEMORY_USAGE).stream().filter(e -> e.getString("pool").equals("all"))
                .sorted(Comparator.comparing(RecordedEvent::getStartTime)).toList();
        assertEquals(2, all.size(), events::toString);
        assertEquals(0, all.get(0).getLong("reserved"));
        assertEquals(SEGMENT, all.get(1).getLong("reserved"));
    }

    @Test
    void withoutTheSettingNothingIsWrittenEvenWhileRecording() {
        List<RecordedEvent> events = record(s -> {
            enableCallEvents(s);
            s.enable(MEMORY_USAGE).withPeriod(Duration.ofMillis(20));
        }, null, () -> {
            try (DeviceAllocator a = DeviceAllocators.builder().device("sim:1GiB").allocator("caching")
                    .name("jfr-off").build()) {
                a.free(a.malloc(1000));
                a.releaseCachedMemory();
                assertThrows(OutOfMemoryException.class, () -> a.malloc(2 * ByteSize.GiB));
                sleep(200);
            }
        });
        assertEquals(List.of(), events);
    }

    @Test
    void withTheEventsDisabledInTheRecordingNothingIsWritten() {
        List<RecordedEvent> events = record(s -> {
            for (String name : CALL_EVENTS) {
                s.disable(name);
            }
            s.disable(MEMORY_USAGE);
            s.enable("jdk.JavaMonitorWait"); // something is recorded, just not ours
        }, null, () -> {
            try (DeviceAllocator a = DeviceAllocators.builder().device("sim:1GiB").allocator("caching")
                    .name("jfr-disabled").jfrEvents(true).build()) {
                a.free(a.malloc(1000));
                a.releaseCachedMemory();
                assertThrows(OutOfMemoryException.class, () -> a.malloc(2 * ByteSize.GiB));
                for (EventType type : FlightRecorder.getFlightRecorder().getEventTypes()) {
                    if (type.getName().startsWith("io.devalloc.")) {
                        assertFalse(type.isEnabled(), type.getName() + " is enabled with no recording that wants it");
                    }
                }
            }
        });
        assertEquals(List.of(), events);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
