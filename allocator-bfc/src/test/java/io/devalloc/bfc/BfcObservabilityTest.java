package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.stats.PoolUsage;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.OwnEventLog;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What bfc itself tells its listener (the retry after waiting for frees, regions given back), and its gauges. */
class BfcObservabilityTest {

    private final SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
    private final OwnEventLog listener = new OwnEventLog();

    private BfcAllocator bfc(String config) {
        BfcAllocatorProvider provider = new BfcAllocatorProvider(Map.of());
        return provider.create(new AllocatorSetup(device, AllocatorConfig.parse(config, provider.configSchema()),
                false, listener));
    }

    @Test
    void aRequestThatWaitsForFreesIsToldOnceAsAllocationRetriesCountsIt() {
        try (BfcAllocator a = bfc("retry_timeout_ms:30")) {
            long hog = a.malloc(700 * ByteSize.MiB);
            assertThrows(OutOfMemoryException.class, () -> a.malloc(500 * ByteSize.MiB));
            assertEquals(List.of("retried " + 500 * ByteSize.MiB + " 1 FREES_AWAITED"), listener.events());
            assertEquals(1, a.stats().allocationRetries());
            a.free(hog);
        }
    }

    @Test
    void withoutRetryNothingIsTold() {
        try (BfcAllocator a = bfc("allow_retry_on_failure:false,garbage_collection:false")) {
            long hog = a.malloc(700 * ByteSize.MiB);
            assertThrows(OutOfMemoryException.class, () -> a.malloc(500 * ByteSize.MiB));
            assertEquals(List.of(), listener.events());
            a.free(hog);
        }
    }

    @Test
    void anExplicitReleaseIsToldWithTheRegionsGivenBackEvenWhenThereWereNone() {
        try (BfcAllocator a = bfc("allow_growth:true,virtual_memory:false")) {
            long x = a.malloc(300 * ByteSize.MiB);
            a.free(x);
            long reserved = a.stats().reservedBytes();
            a.releaseCachedMemory();
            a.releaseCachedMemory();
            assertEquals(List.of("released " + reserved, "released 0"), listener.events());
            assertEquals(0, a.stats().reservedBytes());
        }
    }

    @Test
    void garbageCollectionOnTheOutOfMemoryPathIsToldWhenItFreedRegions() {
        try (BfcAllocator a = bfc("allow_growth:true,virtual_memory:false,allow_retry_on_failure:false")) {
            long x = a.malloc(300 * ByteSize.MiB);
            a.free(x);
            long region = a.stats().reservedBytes();
            // 600 MiB fits neither the free region nor beside it: the free region goes back, and a larger one comes.
            long y = a.malloc(600 * ByteSize.MiB);
            assertEquals(List.of("released " + region), listener.events());
            a.free(y);
        }
    }

    @Test
    void memoryUsageIsTheStatsAndTheFreeChunksOfSplitRegions() {
        try (BfcAllocator a = bfc("allow_growth:true,virtual_memory:false")) {
            long p = a.malloc(ByteSize.MiB);
            long q = a.malloc(ByteSize.MiB / 2);
            long r = a.malloc(3 * ByteSize.MiB);
            long whole = a.malloc(64 * ByteSize.MiB);
            a.free(p);
            List<PoolUsage> usage = a.memoryUsage();
            assertEquals(1, usage.size());
            PoolUsage all = usage.get(0);
            AllocatorStats s = a.stats();
            assertEquals(PoolUsage.ALL, all.pool());
            assertEquals(s.reservedBytes(), all.reservedBytes());
            assertEquals(s.allocatedBytes(), all.allocatedBytes());
            assertEquals(s.allocatedBytes(), all.activeBytes());
            assertEquals(s.requestedBytes(), all.requestedBytes());
            long expected = 0;
            for (SegmentSnapshot seg : a.snapshot().segments()) {
                if (seg.blocks().size() > 1) {
                    for (BlockSnapshot b : seg.blocks()) {
                        if (b.state() == BlockState.FREE) {
                            expected += b.size();
                        }
                    }
                }
            }
            assertTrue(expected >= ByteSize.MiB, "the freed chunk sits in a split region: " + expected);
            assertEquals(expected, all.inactiveSplitBytes());
            a.free(q);
            a.free(r);
            a.free(whole);
            a.releaseCachedMemory();
            assertEquals(new PoolUsage(PoolUsage.ALL, 0, 0, 0, 0, 0), a.memoryUsage().get(0));
        }
    }
}
