package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.stats.PoolUsage;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.OwnEventLog;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the caching allocator itself tells its listener (retries, cache releases), and its per-pool gauges. */
class CachingObservabilityTest {

    private final SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
    private final OwnEventLog listener = new OwnEventLog();

    private CachingArena arena(String config) {
        return new CachingArena(device, false, CachingConfig.parse(config), listener);
    }

    @Test
    void emptyCacheIsToldWithTheBytesGivenBackEvenWhenNothingWasCached() {
        try (CachingArena a = arena("")) {
            a.emptyCache();
            long small = a.malloc(1000);
            long large = a.malloc(30 * ByteSize.MiB);
            a.free(small);
            a.free(large);
            long reserved = a.stats().reservedBytes();
            a.emptyCache();
            assertEquals(List.of("released 0", "released " + reserved), listener.events());
            assertEquals(2 * ByteSize.MiB + 30 * ByteSize.MiB, reserved);
            assertEquals(0, a.stats().reservedBytes());
        }
    }

    @Test
    void theOutOfMemoryLadderTellsTheReleaseThenTheRetryPyTorchCounts() {
        try (CachingArena a = arena("")) {
            long keep = a.malloc(600 * ByteSize.MiB);
            long cached = a.malloc(300 * ByteSize.MiB);
            a.free(cached);
            // 500 MiB: the 300 MiB cached block is too small, the device has 124 MiB: release it and retry.
            long b = a.malloc(300 * ByteSize.MiB + ByteSize.MiB);
            assertEquals(List.of("released " + 300 * ByteSize.MiB,
                    "retried " + (301 * ByteSize.MiB) + " 1 CACHE_RELEASED"), listener.events());
            assertEquals(1, a.memoryStats().get("num_alloc_retries"));
            assertEquals(1, a.stats().allocationRetries());
            listener.events().clear();
            assertThrows(OutOfMemoryException.class, () -> a.malloc(200 * ByteSize.MiB));
            assertEquals(List.of("released 0", "retried " + 200 * ByteSize.MiB + " 1 CACHE_RELEASED"),
                    listener.events(), "a ladder that finds nothing to release still waits and retries");
            assertEquals(2, a.stats().allocationRetries());
            a.free(keep);
            a.free(b);
        }
    }

    @Test
    void expandableSegmentsReleaseByUnmappingAndTellTheBytesUnmapped() {
        try (CachingArena a = arena("expandable_segments:True")) {
            long x = a.malloc(50 * ByteSize.MiB);
            a.free(x);
            long reserved = a.stats().reservedBytes();
            assertTrue(reserved >= 50 * ByteSize.MiB);
            a.emptyCache();
            assertEquals(List.of("released " + reserved), listener.events());
        }
    }

    @Test
    void garbageCollectionIsToldWhenItGaveSomethingBack() {
        // 512 MiB allowed, collected down to 256 MiB on a cache miss.
        try (CachingArena a = arena("per_process_memory_fraction:0.5,garbage_collection_threshold:0.5")) {
            long[] blocks = {a.malloc(100 * ByteSize.MiB), a.malloc(100 * ByteSize.MiB), a.malloc(100 * ByteSize.MiB)};
            for (long b : blocks) {
                a.free(b);
            }
            assertEquals(List.of(), listener.events(), "a miss below the threshold releases nothing and tells nothing");
            long before = a.stats().reservedBytes();
            long c = a.malloc(150 * ByteSize.MiB);
            long collected = before + 150 * ByteSize.MiB - a.stats().reservedBytes();
            assertTrue(collected >= 100 * ByteSize.MiB, "collected " + collected);
            assertEquals(List.of("released " + collected), listener.events());
            a.free(c);
        }
    }

    @Test
    void releaseOfAvailableOversizeBlocksIsTold() {
        try (CachingArena a = arena("max_split_size_mb:20")) {
            long keep = a.malloc(650 * ByteSize.MiB);
            long oversize = a.malloc(300 * ByteSize.MiB);
            a.free(oversize);
            // 120 MiB may not take the cached 300 MiB block (an oversize block is not split) and the device has
            // 74 MiB left: release_available_cached_blocks frees the 300 MiB block, and the malloc succeeds without
            // the full release.
            long b = a.malloc(120 * ByteSize.MiB);
            assertEquals(List.of("released " + 300 * ByteSize.MiB), listener.events());
            assertEquals(0, a.stats().allocationRetries());
            a.free(b);
            a.free(keep);
        }
    }

    @Test
    void memoryUsageIsPyTorchsCurrentFiguresForAllAndEachPool() {
        try (CachingArena a = arena("")) {
            device.setEventCompletion(EventCompletion.MANUAL);
            DeviceStream other = device.createStream();
            long s1 = a.malloc(1000);
            long s2 = a.malloc(3000);
            long l1 = a.malloc(5 * ByteSize.MiB);
            long l2 = a.malloc(7 * ByteSize.MiB);
            a.recordStream(l2, other);
            a.free(s1);
            a.free(l2); // waits on the other stream's event: still active
            List<PoolUsage> usage = a.memoryUsage();
            Map<String, Long> m = a.memoryStats();
            assertEquals(List.of("all", "small", "large"), usage.stream().map(PoolUsage::pool).toList());
            String[] keys = {"all", "small_pool", "large_pool"};
            for (int i = 0; i < 3; i++) {
                PoolUsage u = usage.get(i);
                String k = keys[i];
                assertEquals(m.get("reserved_bytes." + k + ".current"), u.reservedBytes(), k);
                assertEquals(m.get("allocated_bytes." + k + ".current"), u.allocatedBytes(), k);
                assertEquals(m.get("active_bytes." + k + ".current"), u.activeBytes(), k);
                assertEquals(m.get("requested_bytes." + k + ".current"), u.requestedBytes(), k);
                assertEquals(m.get("inactive_split_bytes." + k + ".current"), u.inactiveSplitBytes(), k);
            }
            PoolUsage all = usage.get(0);
            PoolUsage small = usage.get(1);
            PoolUsage large = usage.get(2);
            assertEquals(a.stats().reservedBytes(), all.reservedBytes());
            assertEquals(a.stats().allocatedBytes(), all.allocatedBytes());
            assertEquals(small.reservedBytes() + large.reservedBytes(), all.reservedBytes());
            assertEquals(2 * ByteSize.MiB, small.reservedBytes());
            assertEquals(20 * ByteSize.MiB, large.reservedBytes());
            assertEquals(3072, small.allocatedBytes());
            assertEquals(5 * ByteSize.MiB, large.allocatedBytes());
            assertEquals(5 * ByteSize.MiB + 7 * ByteSize.MiB, large.activeBytes(), "the pending free is active");
            assertEquals(2 * ByteSize.MiB - 3072, small.inactiveSplitBytes(), "the free pieces of the split segment");
            assertTrue(large.inactiveSplitBytes() > 0);
            device.setEventCompletion(EventCompletion.IMMEDIATE);
            a.free(s2);
            a.free(l1);
        }
    }
}
