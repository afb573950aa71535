package io.devalloc.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.observe.DeviceCall;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.stats.PoolUsage;
import io.devalloc.api.units.ByteSize;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * {@link DevallocMetrics} on real allocators over the simulated device, read back from a {@link SimpleMeterRegistry}:
 * every gauge equals what {@link DeviceAllocator#memoryUsage()} and {@link DeviceAllocator#stats()} say, every counter
 * what the allocator's stats count, with the documented names, units and tags.
 */
class DevallocMetricsTest {

    private static final String BYTES = "bytes";
    /** The meters whose base unit is bytes. */
    private static final Set<String> BYTE_METERS = Set.of(DevallocMetrics.MEMORY_RESERVED,
            DevallocMetrics.MEMORY_ALLOCATED, DevallocMetrics.MEMORY_ACTIVE, DevallocMetrics.MEMORY_REQUESTED,
            DevallocMetrics.MEMORY_INACTIVE, DevallocMetrics.MEMORY_RESERVED_PEAK,
            DevallocMetrics.MEMORY_ALLOCATED_PEAK, DevallocMetrics.MEMORY_LIMIT, DevallocMetrics.DEVICE_CALL_BYTES,
            DevallocMetrics.CACHE_RELEASED);

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private static DeviceAllocator build(DevallocMetrics metrics, String device, String allocator, String config) {
        return DeviceAllocators.builder().device(device).allocator(allocator).config(config)
                .listener(metrics.listener()).build();
    }

    private double gauge(String name, String allocator, String... tags) {
        return registry.get(name).tag(DevallocMetrics.TAG_ALLOCATOR, allocator).tags(tags).gauge().value();
    }

    private double counter(String name, String allocator, String... tags) {
        return registry.get(name).tag(DevallocMetrics.TAG_ALLOCATOR, allocator).tags(tags).functionCounter().count();
    }

    private double calls(String allocator, DeviceCall call, boolean succeeded) {
        return counter(DevallocMetrics.DEVICE_CALLS, allocator, DevallocMetrics.TAG_OP, call.tag(),
                DevallocMetrics.TAG_OUTCOME, succeeded ? "success" : "failure");
    }

    /** Every gauge of every pool equals the allocator's own figures, read at the same moment. */
    private void assertGaugesEqualTheAllocatorsFigures(String name, DeviceAllocator allocator) {
        List<PoolUsage> usage = allocator.memoryUsage();
        for (PoolUsage u : usage) {
            assertPool(name, u, DevallocMetrics.MEMORY_RESERVED, PoolUsage::reservedBytes);
            assertPool(name, u, DevallocMetrics.MEMORY_ALLOCATED, PoolUsage::allocatedBytes);
            assertPool(name, u, DevallocMetrics.MEMORY_ACTIVE, PoolUsage::activeBytes);
            assertPool(name, u, DevallocMetrics.MEMORY_REQUESTED, PoolUsage::requestedBytes);
            assertPool(name, u, DevallocMetrics.MEMORY_INACTIVE, PoolUsage::inactiveSplitBytes);
        }
        Set<String> pools = new TreeSet<>();
        for (Meter m : registry.find(DevallocMetrics.MEMORY_RESERVED).tag(DevallocMetrics.TAG_ALLOCATOR, name)
                .meters()) {
            pools.add(m.getId().getTag(DevallocMetrics.TAG_POOL));
        }
        Set<String> expected = new TreeSet<>();
        usage.forEach(u -> expected.add(u.pool()));
        assertEquals(expected, pools, "one time series per pool of memoryUsage()");
        AllocatorStats s = allocator.stats();
        assertEquals(s.peakReservedBytes(), gauge(DevallocMetrics.MEMORY_RESERVED_PEAK, name));
        assertEquals(s.peakAllocatedBytes(), gauge(DevallocMetrics.MEMORY_ALLOCATED_PEAK, name));
        assertEquals(s.limitBytes() == Long.MAX_VALUE ? -1 : s.limitBytes(), gauge(DevallocMetrics.MEMORY_LIMIT, name));
        assertEquals(s.activeAllocations(), gauge(DevallocMetrics.ALLOCATIONS_ACTIVE, name));
    }

    private void assertPool(String name, PoolUsage u, String meter, ToLongFunction<PoolUsage> figure) {
        assertEquals(figure.applyAsLong(u), gauge(meter, name, DevallocMetrics.TAG_POOL, u.pool()),
                meter + " of pool " + u.pool());
    }

    /** The device-call counters and the OOM counter equal the allocator's own counts. */
    private void assertCountersEqualTheAllocatorsCounts(String name, DeviceAllocator allocator) {
        AllocatorStats s = allocator.stats();
        assertEquals(s.deviceMallocs(), calls(name, DeviceCall.MALLOC, true) + calls(name, DeviceCall.MAP, true),
                "deviceMallocs counts successful mallocs and maps");
        assertEquals(s.deviceFrees(), calls(name, DeviceCall.FREE, true) + calls(name, DeviceCall.UNMAP, true),
                "deviceFrees counts frees and unmaps");
        assertEquals(s.outOfMemoryErrors(), counter(DevallocMetrics.OUT_OF_MEMORY, name));
    }

    @Test
    void cachingAllocatorGaugesAndCountersFollowAllocationsFreesAnOutOfMemoryErrorAndEmptyCache() {
        DevallocMetrics metrics = DevallocMetrics.named("trainer");
        try (DeviceAllocator a = build(metrics, "sim:256MiB", "caching", "")) {
            metrics.bindTo(registry, a);
            assertGaugesEqualTheAllocatorsFigures("trainer", a);
            assertEquals(0, calls("trainer", DeviceCall.MALLOC, true));

            long small = a.malloc(1000);
            long large = a.malloc(5 * ByteSize.MiB);
            long large2 = a.malloc(30 * ByteSize.MiB);
            a.free(large2);
            assertTrue(a.stats().reservedBytes() > a.stats().allocatedBytes(), "something is cached");
            assertTrue(gauge(DevallocMetrics.MEMORY_RESERVED, "trainer", DevallocMetrics.TAG_POOL, PoolUsage.ALL)
                    >= 35 * ByteSize.MiB);
            assertGaugesEqualTheAllocatorsFigures("trainer", a);
            assertCountersEqualTheAllocatorsCounts("trainer", a);
            assertEquals(3, calls("trainer", DeviceCall.MALLOC, true), "a small segment and two large ones");
            assertEquals(a.stats().reservedBytes(),
                    counter(DevallocMetrics.DEVICE_CALL_BYTES, "trainer", DevallocMetrics.TAG_OP, "malloc"),
                    "the bytes the mallocs got are what is reserved (nothing freed yet)");

            assertThrows(OutOfMemoryException.class, () -> a.malloc(ByteSize.GiB));
            assertEquals(1, a.stats().outOfMemoryErrors());
            assertEquals(1, counter(DevallocMetrics.OUT_OF_MEMORY, "trainer"));
            assertTrue(calls("trainer", DeviceCall.MALLOC, false) >= 1, "the device refused the 1 GiB malloc");
            assertCountersEqualTheAllocatorsCounts("trainer", a);

            a.releaseCachedMemory();
            // The 30 MiB segment went back to the device: in the OOM's retry ladder or here.
            assertTrue(calls("trainer", DeviceCall.FREE, true) >= 1, "the cached segment was freed");
            assertEquals(30 * ByteSize.MiB,
                    counter(DevallocMetrics.DEVICE_CALL_BYTES, "trainer", DevallocMetrics.TAG_OP, "free"),
                    "the free carried the size of the segment it returned");
            assertCountersEqualTheAllocatorsCounts("trainer", a);
            assertGaugesEqualTheAllocatorsFigures("trainer", a);

            Timer mallocs = registry.get(DevallocMetrics.DEVICE_CALL_DURATION).tag(DevallocMetrics.TAG_OP, "malloc")
                    .timer();
            assertEquals(calls("trainer", DeviceCall.MALLOC, true) + calls("trainer", DeviceCall.MALLOC, false),
                    mallocs.count(), "every malloc since the binding is timed, failed or not");
            assertEquals(TimeUnit.SECONDS, mallocs.baseTimeUnit());
            a.free(small);
            a.free(large);
            assertGaugesEqualTheAllocatorsFigures("trainer", a);
        }
    }

    @Test
    void everyMeterHasTheDocumentedUnitAndTheAllocatorAndDeviceTags() {
        DevallocMetrics metrics = DevallocMetrics.named("inference", Tags.of("region", "eu"));
        try (DeviceAllocator a = build(metrics, "sim:64MiB", "caching", "")) {
            metrics.bindTo(registry, a);
            List<String> problems = new ArrayList<>();
            Set<String> names = new TreeSet<>();
            for (Meter m : registry.getMeters()) {
                Meter.Id id = m.getId();
                names.add(id.getName() + " " + id.getType().name().toLowerCase(Locale.ROOT));
                if (!"inference".equals(id.getTag("allocator")) || !"sim:0".equals(id.getTag("device"))
                        || !"eu".equals(id.getTag("region"))) {
                    problems.add(id + ": tags");
                }
                String unit = m instanceof Timer ? "seconds" : BYTE_METERS.contains(id.getName()) ? BYTES
                        : id.getName().equals(DevallocMetrics.ALLOCATIONS_ACTIVE) ? "allocations" : null;
                String actual = m instanceof Timer ? ((Timer) m).baseTimeUnit().name().toLowerCase(Locale.ROOT)
                        : id.getBaseUnit();
                if (!Objects.equals(unit, actual)) {
                    problems.add(id + ": unit " + actual + ", not " + unit);
                }
            }
            assertEquals(List.of(), problems);
            assertEquals(new TreeSet<>(List.of(
                    "devalloc.allocations.active gauge",
                    "devalloc.cache.release.duration timer",
                    "devalloc.cache.released counter",
                    "devalloc.cache.releases counter",
                    "devalloc.device.call.bytes counter",
                    "devalloc.device.call.duration timer",
                    "devalloc.device.calls counter",
                    "devalloc.memory.active gauge",
                    "devalloc.memory.allocated gauge",
                    "devalloc.memory.allocated.peak gauge",
                    "devalloc.memory.inactive gauge",
                    "devalloc.memory.limit gauge",
                    "devalloc.memory.requested gauge",
                    "devalloc.memory.reserved gauge",
                    "devalloc.memory.reserved.peak gauge",
                    "devalloc.oom counter",
                    "devalloc.retries counter")), names);
            for (DeviceCall call : DeviceCall.values()) {
                for (String outcome : List.of("success", "failure")) {
                    registry.get(DevallocMetrics.DEVICE_CALLS).tags("op", call.tag(), "outcome", outcome)
                            .functionCounter();
                }
                registry.get(DevallocMetrics.DEVICE_CALL_DURATION).tag("op", call.tag()).timer();
            }
            for (RetryCause cause : RetryCause.values()) {
                registry.get(DevallocMetrics.RETRIES).tag("cause", cause.name().toLowerCase(Locale.ROOT))
                        .functionCounter();
            }
            assertEquals(BYTES, registry.get(DevallocMetrics.DEVICE_CALL_BYTES).tag("op", "malloc").meter().getId()
                    .getBaseUnit());
        }
    }

    @Test
    void expandableSegmentsAreCountedAsMapsAndUnmaps() {
        DevallocMetrics metrics = DevallocMetrics.named("expandable");
        try (DeviceAllocator a = build(metrics, "sim:1GiB", "caching", "expandable_segments:True")) {
            metrics.bindTo(registry, a);
            long p = a.malloc(30 * ByteSize.MiB);
            long q = a.malloc(50 * ByteSize.MiB);
            assertTrue(calls("expandable", DeviceCall.MAP, true) >= 1, "large blocks are mapped pages");
            assertEquals(0, calls("expandable", DeviceCall.MALLOC, true), "no cudaMalloc with expandable segments");
            assertEquals(a.stats().reservedBytes(),
                    counter(DevallocMetrics.DEVICE_CALL_BYTES, "expandable", DevallocMetrics.TAG_OP, "map"));
            a.free(p);
            a.free(q);
            a.releaseCachedMemory();
            assertTrue(calls("expandable", DeviceCall.UNMAP, true) >= 1, "empty_cache unmapped the pages");
            assertEquals(counter(DevallocMetrics.DEVICE_CALL_BYTES, "expandable", DevallocMetrics.TAG_OP, "map")
                            - a.stats().reservedBytes(),
                    counter(DevallocMetrics.DEVICE_CALL_BYTES, "expandable", DevallocMetrics.TAG_OP, "unmap"));
            assertCountersEqualTheAllocatorsCounts("expandable", a);
            assertGaugesEqualTheAllocatorsFigures("expandable", a);
            assertEquals(calls("expandable", DeviceCall.MAP, true),
                    registry.get(DevallocMetrics.DEVICE_CALL_DURATION).tag("op", "map").timer().count());
        }
    }

    @Test
    void bfcCallsMadeBeforeTheBinderIsBoundAreCountedAndTimedWhenItBinds() {
        DevallocMetrics metrics = DevallocMetrics.named("tf");
        try (DeviceAllocator a = build(metrics, "sim:1GiB", "bfc", "memory_limit_mb:64")) {
            long p = a.malloc(ByteSize.MiB);
            assertEquals(1, a.stats().deviceMallocs(), "allow_growth:false reserves the whole limit at once");
            metrics.bindTo(registry, a);
            assertEquals(1, calls("tf", DeviceCall.MALLOC, true), "counted by the listener before the binding");
            assertEquals(64 * ByteSize.MiB, counter(DevallocMetrics.DEVICE_CALL_BYTES, "tf", "op", "malloc"));
            assertEquals(1, registry.get(DevallocMetrics.DEVICE_CALL_DURATION).tag("op", "malloc").timer().count(),
                    "the duration measured before the binding is recorded when it binds");
            assertEquals(64 * ByteSize.MiB, gauge(DevallocMetrics.MEMORY_LIMIT, "tf"));
            assertThrows(OutOfMemoryException.class, () -> a.malloc(100 * ByteSize.MiB));
            assertGaugesEqualTheAllocatorsFigures("tf", a);
            assertCountersEqualTheAllocatorsCounts("tf", a);
            assertEquals(1, counter(DevallocMetrics.OUT_OF_MEMORY, "tf"));
            a.free(p);
            assertGaugesEqualTheAllocatorsFigures("tf", a);
        }
    }

    @Test
    void aHandlersRetryIsCountedWithItsCause() {
        DevallocMetrics metrics = DevallocMetrics.named("spilling");
        long[] held = new long[1];
        DeviceAllocator[] self = new DeviceAllocator[1];
        try (DeviceAllocator a = DeviceAllocators.builder().device("sim:64MiB").allocator("direct")
                .listener(metrics.listener())
                .outOfMemoryHandler(failure -> {
                    if (held[0] == 0) {
                        return false;
                    }
                    self[0].free(held[0]); // spill: give back what this program held
                    held[0] = 0;
                    return true;
                }).build()) {
            self[0] = a;
            metrics.bindTo(registry, a);
            held[0] = a.malloc(40 * ByteSize.MiB);
            long p = a.malloc(40 * ByteSize.MiB);
            assertEquals(1, counter(DevallocMetrics.RETRIES, "spilling", "cause", "handler"));
            assertEquals(0, counter(DevallocMetrics.RETRIES, "spilling", "cause", "cache_released"));
            assertEquals(1, counter(DevallocMetrics.OUT_OF_MEMORY, "spilling"), "the failure before the retry");
            assertCountersEqualTheAllocatorsCounts("spilling", a);
            a.free(p);
        }
    }

    @Test
    void cacheReleasesAndTheAllocatorsOwnRetriesAreCountedAndTimed() {
        // What the allocators tell from inside (their retries after a release, their releases of cached memory),
        // told to the listener directly: the meters must show exactly what it was told.
        DevallocMetrics metrics = DevallocMetrics.named("cache");
        try (DeviceAllocator a = build(metrics, "sim:64MiB", "caching", "")) {
            metrics.bindTo(registry, a);
            metrics.listener().cacheReleased(3 * ByteSize.MiB, 2_000_000);
            metrics.listener().cacheReleased(0, 1_000_000);
            metrics.listener().allocationRetried(ByteSize.MiB, 1, RetryCause.CACHE_RELEASED);
            metrics.listener().allocationRetried(ByteSize.MiB, 1, RetryCause.FREES_AWAITED);
            metrics.listener().allocationRetried(ByteSize.MiB, 2, RetryCause.FREES_AWAITED);
            assertEquals(2, counter(DevallocMetrics.CACHE_RELEASES, "cache"));
            assertEquals(3 * ByteSize.MiB, counter(DevallocMetrics.CACHE_RELEASED, "cache"));
            Timer releases = registry.get(DevallocMetrics.CACHE_RELEASE_DURATION).timer();
            assertEquals(2, releases.count());
            assertEquals(3.0, releases.totalTime(TimeUnit.MILLISECONDS), 1e-9);
            assertEquals(2.0, releases.max(TimeUnit.MILLISECONDS), 1e-9);
            assertEquals(1, counter(DevallocMetrics.RETRIES, "cache", "cause", "cache_released"));
            assertEquals(2, counter(DevallocMetrics.RETRIES, "cache", "cause", "frees_awaited"));
            assertEquals(0, counter(DevallocMetrics.RETRIES, "cache", "cause", "handler"));
        }
    }

    @Test
    void cachingTellsItsReleasesAndRetries() {
        DevallocMetrics metrics = DevallocMetrics.named("told");
        try (DeviceAllocator a = build(metrics, "sim:256MiB", "caching", "")) {
            metrics.bindTo(registry, a);
            long p = a.malloc(30 * ByteSize.MiB);
            a.free(p);
            assertThrows(OutOfMemoryException.class, () -> a.malloc(ByteSize.GiB));
            long q = a.malloc(30 * ByteSize.MiB);
            a.free(q);
            a.releaseCachedMemory();
            assertEquals(a.stats().allocationRetries(),
                    counter(DevallocMetrics.RETRIES, "told", "cause", "cache_released"));
            assertTrue(counter(DevallocMetrics.CACHE_RELEASES, "told") >= 2);
            assertEquals(calls("told", DeviceCall.FREE, true) * 30 * ByteSize.MiB,
                    counter(DevallocMetrics.CACHE_RELEASED, "told"));
            assertEquals(counter(DevallocMetrics.CACHE_RELEASES, "told"),
                    registry.get(DevallocMetrics.CACHE_RELEASE_DURATION).timer().count());
            assertGaugesEqualTheAllocatorsFigures("told", a);
        }
    }

    @Test
    void listenerOnlyRegistrationCountsEveryAllocatorItWasGivenToWithoutGauges() {
        DevallocMetrics metrics = DevallocMetrics.named("fleet");
        metrics.bindTo(registry);
        try (DeviceAllocator a = build(metrics, "sim:64MiB", "direct", "");
             DeviceAllocator b = build(metrics, "sim:64MiB", "direct", "")) {
            a.free(a.malloc(ByteSize.MiB));
            b.free(b.malloc(ByteSize.MiB));
            b.free(b.malloc(ByteSize.MiB));
            assertEquals(3, calls("fleet", DeviceCall.MALLOC, true));
            assertEquals(3, calls("fleet", DeviceCall.FREE, true));
            assertEquals(3, registry.get(DevallocMetrics.DEVICE_CALL_DURATION).tag("op", "free").timer().count());
            assertEquals(List.of(), registry.find(DevallocMetrics.MEMORY_RESERVED).meters(), "no gauge");
            for (Meter m : registry.getMeters()) {
                assertEquals(DevallocMetrics.ALL_DEVICES, m.getId().getTag(DevallocMetrics.TAG_DEVICE), m.getId()
                        .toString());
            }
        }
    }

    @Test
    void misuseIsAClearErrorThatRegistersNothing() {
        assertThrows(IllegalArgumentException.class, () -> DevallocMetrics.named(" "));
        IllegalArgumentException ownTag = assertThrows(IllegalArgumentException.class,
                () -> DevallocMetrics.named("x", List.of(Tag.of("pool", "p"))));
        assertTrue(ownTag.getMessage().contains("'pool'"), ownTag.getMessage());

        DevallocMetrics metrics = DevallocMetrics.named("once");
        try (DeviceAllocator a = build(metrics, "sim:64MiB", "caching", "");
             DeviceAllocator other = build(DevallocMetrics.named("other"), "sim:64MiB", "caching", "")) {
            metrics.bindTo(registry, a);
            int meters = registry.getMeters().size();
            IllegalStateException twice = assertThrows(IllegalStateException.class,
                    () -> metrics.bindTo(registry, a));
            assertTrue(twice.getMessage().contains("already bound"), twice.getMessage());
            SimpleMeterRegistry second = new SimpleMeterRegistry();
            IllegalStateException otherAllocator = assertThrows(IllegalStateException.class,
                    () -> metrics.bindTo(second, other));
            assertTrue(otherAllocator.getMessage().contains("DevallocMetrics.named"), otherAllocator.getMessage());
            assertThrows(IllegalStateException.class, () -> metrics.bindTo(second));
            assertEquals(meters, registry.getMeters().size());
            assertEquals(List.of(), second.getMeters());
            assertTrue(metrics.listener() == metrics.listener(), "one listener per binder");
        }

        DevallocMetrics late = DevallocMetrics.named("late");
        DeviceAllocator closed = build(late, "sim:64MiB", "caching", "");
        closed.close();
        IllegalStateException closedError = assertThrows(IllegalStateException.class,
                () -> late.bindTo(registry, closed));
        assertTrue(closedError.getMessage().contains("closed"), closedError.getMessage());
        assertEquals(List.of(), registry.find(DevallocMetrics.MEMORY_RESERVED).tag("allocator", "late").meters());
    }

    @Test
    void aClosedAllocatorsGaugesReadWhatItHoldsAndNeverThrow() {
        DevallocMetrics metrics = DevallocMetrics.named("closing");
        DeviceAllocator a = build(metrics, "sim:64MiB", "caching", "");
        metrics.bindTo(registry, a);
        a.malloc(8 * ByteSize.MiB);
        long peak = a.stats().peakReservedBytes();
        assertTrue(peak > 0);
        a.close();
        for (Meter m : registry.find(DevallocMetrics.MEMORY_RESERVED).meters()) {
            assertEquals(0.0, ((Gauge) m).value(), m.getId().toString());
        }
        assertEquals(0.0, gauge(DevallocMetrics.MEMORY_ALLOCATED, "closing", "pool", PoolUsage.ALL));
        assertEquals(0.0, gauge(DevallocMetrics.ALLOCATIONS_ACTIVE, "closing"));
        assertEquals(peak, gauge(DevallocMetrics.MEMORY_RESERVED_PEAK, "closing"), "peaks are kept");
        assertCountersEqualTheAllocatorsCounts("closing", a);
        assertTrue(calls("closing", DeviceCall.FREE, true) >= 1, "close returned the segment");
    }

    @Test
    void theRegistryDoesNotKeepTheAllocatorAlive() throws InterruptedException {
        DevallocMetrics metrics = DevallocMetrics.named("collected");
        WeakReference<DeviceAllocator> ref = bindAndClose(metrics);
        for (int i = 0; i < 50 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertFalse(ref.get() != null, "the allocator was collected although its gauges are registered");
        assertTrue(Double.isNaN(gauge(DevallocMetrics.MEMORY_RESERVED, "collected", "pool", PoolUsage.ALL)));
        assertTrue(Double.isNaN(gauge(DevallocMetrics.MEMORY_RESERVED_PEAK, "collected")));
        assertEquals(1, calls("collected", DeviceCall.MALLOC, true), "the counters live on with the binder");
    }

    private WeakReference<DeviceAllocator> bindAndClose(DevallocMetrics metrics) {
        DeviceAllocator a = build(metrics, "sim:64MiB", "caching", "");
        metrics.bindTo(registry, a);
        a.malloc(ByteSize.MiB);
        a.close();
        return new WeakReference<>(a);
    }
}
