package io.devalloc.caching.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * devalloc's answer to pytorch/pytorch#150517 ("power-of-two rounding of pinned memory can use up to twice the
 * RAM": 20.4 GiB pinned as 32 GiB): {@code pinned_round_threshold_mb}, scaled down from GiB to MiB.
 */
class RoundThresholdTest {

    private static final long MiB = ByteSize.MiB;
    /** 20.4 MiB, the issue's 20.4 GiB scaled down. */
    private static final long SIZE_20_4 = 21_390_950;

    /** 20 large pinned buffers: 10 of 20.4 MiB, 5 of 33 MiB, 5 of 65 MiB (727,711,740 bytes requested in all). */
    private static List<Long> workload() {
        List<Long> sizes = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            sizes.add(SIZE_20_4);
        }
        for (int i = 0; i < 5; i++) {
            sizes.add(33 * MiB);
            sizes.add(65 * MiB);
        }
        return sizes;
    }

    /** Allocates the workload on a fresh allocator and returns the stats with every buffer live. */
    private static AllocatorStats run(String config) {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(8 * ByteSize.GiB);
             HostCachingAllocator a = new CachingHostAllocatorProvider().create(device, config)) {
            List<Long> addresses = new ArrayList<>();
            for (long size : workload()) {
                addresses.add(a.malloc(size));
            }
            AllocatorStats stats = a.stats();
            Map<String, Long> host = a.hostMemoryStats();
            assertEquals(stats.reservedBytes(), host.get("allocated_bytes.current"));
            assertEquals(20, host.get("num_host_alloc"));
            assertEquals(stats.reservedBytes(), device.counters().bytesInUse(), "what the device really holds");
            for (long address : addresses) {
                a.free(address);
            }
            HostArenaInvariants.check((HostCachingArena) a);
            return stats;
        }
    }

    @Test
    void theThresholdSavesAlmostHalfThePinnedMemoryOfLargeBuffers() {
        AllocatorStats upstream = run("");
        AllocatorStats thresholded = run("pinned_round_threshold_mb:16");
        long requested = 10 * SIZE_20_4 + 5 * 33 * MiB + 5 * 65 * MiB;
        assertEquals(727_711_740L, requested);
        assertEquals(requested, upstream.requestedBytes());
        assertEquals(requested, thresholded.requestedBytes());

        // PyTorch: 20.4 -> 32, 33 -> 64, 65 -> 128 MiB.
        assertEquals((10 * 32 + 5 * 64 + 5 * 128) * MiB, upstream.reservedBytes());
        assertEquals(1_342_177_280L, upstream.reservedBytes());
        assertEquals(614_465_540L, upstream.reservedBytes() - requested, "84% more than requested");
        // With the threshold: 20.4 -> 22, 33 -> 34, 65 -> 66 MiB.
        assertEquals((10 * 22 + 5 * 34 + 5 * 66) * MiB, thresholded.reservedBytes());
        assertEquals(754_974_720L, thresholded.reservedBytes());
        assertEquals(27_262_980L, thresholded.reservedBytes() - requested, "under 4% more than requested");

        assertEquals(560 * MiB, upstream.reservedBytes() - thresholded.reservedBytes(), "560 MiB less page-locked RAM");
        assertEquals(0.4375, 1.0 - (double) thresholded.reservedBytes() / upstream.reservedBytes(), 1e-12);
    }

    @Test
    void theIssuesExampleScaledDown() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            for (String config : new String[] {"", "pinned_round_threshold_mb:16"}) {
                try (HostCachingAllocator a = new CachingHostAllocatorProvider().create(device, config)) {
                    a.malloc(SIZE_20_4);
                    assertEquals(config.isEmpty() ? 32 * MiB : 22 * MiB, a.stats().reservedBytes(), config);
                }
            }
        }
    }

    @Test
    void smallRequestsKeepPowerOfTwoClassesAndLargeBlocksAreReusedByExactSize() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(4 * ByteSize.GiB);
             HostCachingAllocator a = new CachingHostAllocatorProvider().create(device,
                     "pinned_round_threshold_mb:16")) {
            long small = a.malloc(9 * MiB);
            assertEquals(16 * MiB, a.stats().reservedBytes(), "9 MiB -> 16 MiB, as PyTorch: under the threshold");
            long b22 = a.malloc(SIZE_20_4);
            long b34 = a.malloc(33 * MiB);
            long b32 = a.malloc(31 * MiB);
            assertEquals((16 + 22 + 34 + 32) * MiB, a.stats().reservedBytes(), "31 MiB -> 32 MiB, a 2 MiB multiple");
            a.free(small);
            a.free(b22);
            a.free(b34);
            a.free(b32);

            assertEquals(b22, a.malloc(21 * MiB), "21 MiB rounds to 22 MiB: the cached 22 MiB block");
            assertEquals(b32, a.malloc(32 * MiB), "32 MiB is served by the 32 MiB block");
            assertEquals(b34, a.malloc(34 * MiB));
            assertEquals(small, a.malloc(12 * MiB));
            assertEquals(4, a.hostMemoryStats().get("num_host_alloc"), "every request was a hit");
            HostArenaInvariants.check((HostCachingArena) a);
        }
    }

    @Test
    void freeingAndReallocatingTheWorkloadReusesEveryBuffer() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(8 * ByteSize.GiB);
             HostCachingAllocator a = new CachingHostAllocatorProvider().create(device,
                     "pinned_round_threshold_mb:16")) {
            Set<Long> first = new HashSet<>();
            for (long size : workload()) {
                first.add(a.malloc(size));
            }
            for (long address : first) {
                a.free(address);
            }
            Set<Long> second = new HashSet<>();
            for (long size : workload()) {
                second.add(a.malloc(size));
            }
            assertEquals(first, second);
            assertEquals(20, a.hostMemoryStats().get("num_host_alloc"));
            for (SegmentSnapshot s : a.snapshot().segments()) {
                assertEquals(1, s.blocks().size());
            }
            HostArenaInvariants.check((HostCachingArena) a);
        }
    }

    /** The cost, shown honestly: exact 2 MiB classes serve fewer different sizes than a power-of-two class. */
    @Test
    void theTradeOffIsLessReuseAcrossNearbySizes() {
        for (String config : new String[] {"", "pinned_round_threshold_mb:16"}) {
            try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
                 HostCachingAllocator a = new CachingHostAllocatorProvider().create(device, config)) {
                long buffer = a.malloc(SIZE_20_4);
                a.free(buffer);
                long bigger = a.malloc(23 * MiB);
                if (config.isEmpty()) {
                    assertEquals(buffer, bigger, "the 32 MiB class serves 23 MiB too");
                } else {
                    assertNotEquals(buffer, bigger, "22 MiB and 24 MiB are different classes");
                    assertTrue(a.stats().reservedBytes() == 46 * MiB);
                }
            }
        }
    }
}
