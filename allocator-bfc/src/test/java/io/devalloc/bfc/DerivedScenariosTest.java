package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.DeviceOperation;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The spec's "Derived scenarios" (§7) and the split, growth and back-pedal rules they come from (§3). */
class DerivedScenariosTest {

    private static final long KiB = ByteSize.KiB;
    private static final long MiB = ByteSize.MiB;
    private static final long GiB = ByteSize.GiB;

    private static BfcArena bfc(SimulatedDevice device, String config) {
        return (BfcArena) new BfcAllocatorProvider(Map.of()).create(device, config);
    }

    @Test
    void noSplitWhenTheChunkIsUnderTwiceTheRequest() {
        // 1 MiB pool, no growth: 600000 B rounds to 600064; 1 MiB < 2 × 600064 and the slack is under 128 MiB, so the
        // caller gets the whole region.
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "memory_limit_mb:1,allow_growth:false,virtual_memory:false,"
                     + "allow_retry_on_failure:false")) {
            long p = a.malloc(600000);
            assertEquals(600000, a.requestedSize(p));
            assertEquals(1048576, a.allocatedSize(p));
            assertEquals(1048576, a.bfcStats().bytesInUse());
            assertEquals(1, a.memoryDump().chunks().size());
            assertEquals(0, a.tryMalloc(256, 256, DeviceStream.DEFAULT));
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class, () -> a.malloc(256));
            assertEquals(OutOfMemoryException.Reason.LIMIT_REACHED, oom.reason());
            BfcArenaInvariants.check(a);
            a.free(p);
            BfcArenaInvariants.check(a);
        }
    }

    @Test
    void splitWhenTheChunkIsAtLeastTwiceTheRequest() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "memory_limit_mb:1,virtual_memory:false")) {
            long p = a.malloc(512 * KiB);
            assertEquals(512 * KiB, a.allocatedSize(p));
            assertEquals(2, a.memoryDump().chunks().size());
            a.free(p);
            assertEquals(1, a.memoryDump().chunks().size(), "the free merges back");
            BfcArenaInvariants.check(a);
        }
    }

    @Test
    void splitWhenTheLeftoverReachesTheFragmentationFraction() {
        // 64 MiB pool: a 40 MiB request leaves 24 MiB, under both 2× and the default 128 MiB cap: no split...
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "memory_limit_mb:64,virtual_memory:false")) {
            long p = a.malloc(40 * MiB);
            assertEquals(64 * MiB, a.allocatedSize(p));
            a.free(p);
        }
        // ...but with fragmentation_fraction 0.25 the cap is 16 MiB, and 24 MiB ≥ 16 MiB splits.
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "memory_limit_mb:64,virtual_memory:false,fragmentation_fraction:0.25")) {
            long p = a.malloc(40 * MiB);
            assertEquals(40 * MiB, a.allocatedSize(p));
            assertEquals(24 * MiB, a.bfcStats().largestFreeBlockBytes());
            a.free(p);
            BfcArenaInvariants.check(a);
        }
    }

    @Test
    void noGrowthReservesTheWholeLimitLazily() {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).recordHistory(true).build();
             BfcArena a = bfc(device, "memory_limit_mb:64,virtual_memory:false")) {
            assertEquals(0, a.regionCount(), "nothing is reserved at construction");
            assertEquals(0, device.counters().mallocCalls());
            assertEquals(64 * MiB, a.currentRegionAllocationBytes());
            long p = a.malloc(256);
            assertEquals(1, a.regionCount());
            assertEquals(64 * MiB, a.bfcStats().poolBytes());
            assertEquals(List.of(new DeviceOperation(DeviceOperation.Kind.MALLOC, device.history().get(0).address(),
                    64 * MiB)), device.history());
            a.free(p);
        }
    }

    @Test
    void growthStartsAt2MiBAndDoubles() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "allow_growth:true,virtual_memory:false")) {
            assertEquals(2 * MiB, a.currentRegionAllocationBytes());
            long p = a.malloc(256);
            assertEquals(2 * MiB, a.bfcStats().poolBytes());
            assertEquals(4 * MiB, a.currentRegionAllocationBytes());
            BfcArenaInvariants.check(a);
            a.free(p);
        }
    }

    @Test
    void growthFirstRegionIsCappedByASmallLimit() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "allow_growth:true,virtual_memory:false,memory_limit_mb:1")) {
            assertEquals(MiB, a.currentRegionAllocationBytes(), "min(limit, 2 MiB)");
        }
    }

    @Test
    void backPedalsWhenTheDeviceRefusesTheTarget() {
        // No growth, a 64 MiB limit, but the device only has 40 MiB left: 64 → 57.6 → … until a size fits.
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).granularity(256)
                .recordHistory(true).build();
             BfcArena a = bfc(device, "memory_limit_mb:64,virtual_memory:false")) {
            device.setLimitBytes(40 * MiB);
            long p = a.malloc(MiB);
            long expected = 64 * MiB;
            int calls = 1;
            while (expected > 40 * MiB) {
                expected = ((long) (expected * 0.9) + 255) / 256 * 256;
                calls++;
            }
            assertEquals(calls, device.counters().mallocCalls());
            assertEquals(expected, a.bfcStats().poolBytes());
            assertEquals(expected, device.history().get(0).bytes());
            assertEquals(128 * MiB, a.currentRegionAllocationBytes(), "the target doubles even after a back-pedal");
            BfcArenaInvariants.check(a);
            a.free(p);
        }
    }

    /** 128 × 4 MiB with growth under a 512 MiB limit on plain mallocs, then frees the first 127. */
    private static long fragment(BfcArena a) {
        List<Long> ptrs = new ArrayList<>();
        for (int i = 0; i < 128; i++) {
            ptrs.add(a.malloc(4 * MiB));
        }
        for (int i = 0; i < 127; i++) {
            a.free(ptrs.get(i));
        }
        return ptrs.get(127);
    }

    @Test
    void garbageCollectionFreesWholeRegionsToMakeRoomForALargerOne() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "memory_limit_mb:512,allow_growth:true,virtual_memory:false,"
                     + "garbage_collection:true,allow_retry_on_failure:false")) {
            long last = fragment(a);
            assertEquals(8, a.regionCount());
            // 254 MiB: the largest free chunk is 252 MiB and nothing is left to reserve; GC frees the 7 wholly free
            // regions (256 MiB), the pool falls to 256 MiB, Extend makes a 256 MiB region.
            long p = a.malloc(254 * MiB);
            assertNotEquals(0, p);
            assertEquals(2, a.regionCount());
            assertEquals(512 * MiB, a.bfcStats().poolBytes());
            assertEquals(7, device.counters().frees());
            assertEquals(9, device.counters().mallocs());
            BfcArenaInvariants.check(a);
            a.free(p);
            a.free(last);
            BfcArenaInvariants.check(a);
        }
    }

    @Test
    void withoutGarbageCollectionTheSameRequestFails() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "memory_limit_mb:512,allow_growth:true,virtual_memory:false,"
                     + "garbage_collection:false,allow_retry_on_failure:false")) {
            long last = fragment(a);
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class, () -> a.malloc(254 * MiB));
            assertEquals(OutOfMemoryException.Reason.FRAGMENTATION, oom.reason());
            assertEquals(8, a.regionCount());
            assertEquals(0, device.counters().frees());
            a.free(last);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "memory_limit_mb:2,allow_growth:false,virtual_memory:false",
        "memory_limit_mb:2,allow_growth:false,virtual_memory:true",
        "memory_limit_mb:1024,allow_growth:true,virtual_memory:false"})
    void fragmentationMetric(String config) {
        // Each configuration makes the first region exactly 2 MiB.
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, config)) {
            long p1 = a.malloc(256 * KiB);
            long p2 = a.malloc(256 * KiB);
            long p3 = a.malloc(256 * KiB);
            assertEquals(2 * MiB, a.bfcStats().poolBytes());
            assertEquals(0.0, a.bfcStats().fragmentationMetric(), "one free chunk: no fragmentation");
            a.free(p2);
            // free = 2 MiB − 512 KiB = 1.5 MiB, largest free = 1.25 MiB: (1.5 − 1.25) / 1.5 = 1/6.
            BfcStats s = a.bfcStats();
            assertEquals(1.5 * MiB, s.poolBytes() - s.bytesInUse());
            assertEquals(1280 * KiB, s.largestFreeBlockBytes());
            assertEquals(1.0 / 6, s.fragmentationMetric(), 1e-12);
            assertEquals(0.1667, s.fragmentationMetric(), 5e-5);
            assertEquals(1.0 / 6, a.memoryDump().stats().fragmentationMetric(), 1e-12);
            BfcArenaInvariants.check(a);
            a.free(p1);
            a.free(p3);
            assertEquals(0.0, a.bfcStats().fragmentationMetric());
        }
    }

    @Test
    void fragmentationMetricIsNaNWhenNothingIsFree() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "memory_limit_mb:2,virtual_memory:false")) {
            assertTrue(Double.isNaN(a.bfcStats().fragmentationMetric()), "no memory at all");
            long p = a.malloc(2 * MiB);
            assertTrue(Double.isNaN(a.bfcStats().fragmentationMetric()), "everything in use");
            a.free(p);
        }
    }

    @Test
    void bestFitPrefersTheSmallestChunkThenTheLowestAddress() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "memory_limit_mb:1,virtual_memory:false")) {
            long[] p = new long[7];
            long[] sizes = {1024, 256, 512, 256, 512, 256, 256};
            for (int i = 0; i < p.length; i++) {
                p[i] = a.malloc(sizes[i]);
            }
            // Free 1024 (p0), 512 (p2), 512 (p4): isolated free chunks between used ones.
            a.free(p[0]);
            a.free(p[2]);
            a.free(p[4]);
            assertEquals(p[2], a.malloc(300), "the lower of the two 512-B chunks");
            assertEquals(p[4], a.malloc(512), "the remaining 512-B chunk before the 1024-B one");
            long q = a.malloc(600);
            assertEquals(p[0], q);
            assertEquals(1024, a.allocatedSize(q), "1024 < 2 × 768: not split");
            BfcArenaInvariants.check(a);
        }
    }

    @Test
    void aFreeMergesWithBothNeighbours() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "memory_limit_mb:1,virtual_memory:false")) {
            long p1 = a.malloc(256);
            long p2 = a.malloc(256);
            long p3 = a.malloc(256);
            long p4 = a.malloc(256);
            a.free(p1);
            a.free(p3);
            assertEquals(5, a.memoryDump().chunks().size());
            a.free(p2);
            List<BfcMemoryDump.ChunkInfo> chunks = a.memoryDump().chunks();
            assertEquals(3, chunks.size());
            assertEquals(768, chunks.get(0).size());
            assertEquals(p1, chunks.get(0).address());
            assertEquals(Bins.binFor(768), chunks.get(0).bin());
            assertEquals(-1, chunks.get(1).bin(), "in use: not binned");
            assertEquals(256, chunks.get(0).requestedSize(), "a free chunk keeps its stale requested size");
            BfcArenaInvariants.check(a);
            a.free(p4);
            assertEquals(1, a.memoryDump().chunks().size());
        }
    }

    @Test
    void allocationIdsStartAtOneAndIncrease() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = bfc(device, "memory_limit_mb:1,virtual_memory:false")) {
            long p1 = a.malloc(256);
            long p2 = a.malloc(256);
            assertEquals(1, a.allocationId(p1));
            assertEquals(2, a.allocationId(p2));
            a.free(p1);
            long p3 = a.malloc(256);
            assertEquals(p1, p3);
            assertEquals(3, a.allocationId(p3));
        }
    }
}
