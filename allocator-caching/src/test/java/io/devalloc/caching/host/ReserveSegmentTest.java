package io.devalloc.caching.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code pinned_reserve_segment_size_mb}: PyTorch's bump-allocated reserve segment, never freed. */
class ReserveSegmentTest {

    private static final long MiB = ByteSize.MiB;

    @Test
    void smallRequestsAreCarvedFromTheReserveAndStayCached() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            HostCachingArena a = (HostCachingArena) new CachingHostAllocatorProvider().create(device,
                    "pinned_reserve_segment_size_mb:1");
            assertEquals(0, device.liveAllocations(), "the reserve is made on the first miss, as upstream");

            long p1 = a.malloc(1000);
            assertEquals(1, device.liveAllocations(), "one device allocation: the 1 MiB reserve");
            long base = p1;
            long p2 = a.malloc(5000);
            assertEquals(base + 4096, p2, "1,024 B is carved as 4 KiB");
            long p3 = a.malloc(600 * 1024);
            assertEquals(2, device.liveAllocations(), "a 1 MiB block does not fit in the 1 MiB - 12 KiB left");
            assertNotEquals(base + 4096 + 8192, p3);
            HostArenaInvariants.check(a);

            AllocatorStats s = a.stats();
            Map<String, Long> m = a.hostMemoryStats();
            assertEquals(3, m.get("num_host_alloc"), "as upstream, blocks created (from the reserve or not)");
            assertEquals(1024 + 8192 + MiB, m.get("allocated_bytes.current"), "rounded sizes, as upstream");
            a.free(p1);
            a.free(p2);
            a.free(p3);
            a.emptyCache();
            assertEquals(1, device.liveAllocations(), "reserve pieces are never returned");
            assertEquals(2, a.hostMemoryStats().get("allocations.current"), "they stay cached; p3's block went back");
            assertEquals(p1, a.malloc(700), "so they are reused after empty_cache");
            HostArenaInvariants.check(a);
            a.close();
            assertEquals(0, device.liveAllocations(), "close frees the reserve");
            assertEquals(2 * MiB, s.reservedBytes(), "the reserve and p3's own block");
            assertEquals(4096 + 8192 + MiB, s.allocatedBytes(), "device bytes: the pieces' 4 KiB-rounded extents");
        }
    }

    @Test
    void aSnapshotCarriesTheOptionsInEffectUnderTheirKeys() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             HostCachingAllocator a = new CachingHostAllocatorProvider().create(device,
                     "pinned_reserve_segment_size_mb:1,pinned_round_threshold_mb:16")) {
            Map<String, Object> expected = new LinkedHashMap<>();
            expected.put("configuration", "pinned_reserve_segment_size_mb:1,pinned_round_threshold_mb:16");
            expected.put("pinned_round_threshold_bytes", 16 * MiB);
            expected.put("pinned_reserve_segment_size_bytes", MiB);
            expected.put("pinned_use_background_threads", false);
            expected.put("pinned_use_cuda_host_register", false);
            expected.put("pinned_num_register_threads", 1L);
            expected.put("pinned_free_catch_all", false);
            expected.put("max_round_threshold", -1L);
            expected.put("max_cached_size", -1L);
            assertEquals(expected, a.snapshot().settings());
            assertEquals(List.copyOf(expected.keySet()),
                    List.copyOf(a.snapshot().settings().keySet()));
        }
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             HostCachingAllocator a = new CachingHostAllocatorProvider().create(device,
                     "pinned_max_round_threshold_mb:64,pinned_max_cached_size_mb:128")) {
            assertEquals(64 * MiB, a.snapshot().settings().get("max_round_threshold"), "PyTorch's key and unit");
            assertEquals(128 * MiB, a.snapshot().settings().get("max_cached_size"));
        }
    }

    @Test
    void whenTheReserveIsUsedUpMissesGoToTheDevice() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             HostCachingAllocator a = new CachingHostAllocatorProvider().create(device,
                     "pinned_reserve_segment_size_mb:1")) {
            long p1 = a.malloc(512 * 1024);
            long p2 = a.malloc(256 * 1024);
            long p3 = a.malloc(256 * 1024);
            assertEquals(p1 + 512 * 1024, p2);
            assertEquals(p2 + 256 * 1024, p3);
            assertEquals(1, device.liveAllocations(), "exactly full");
            long p4 = a.malloc(100);
            assertEquals(2, device.liveAllocations(), "the next miss is a device malloc");
            AllocatorStats s = a.stats();
            assertEquals(MiB + 128, s.reservedBytes());
            assertEquals(MiB + 128, s.allocatedBytes());
            assertEquals(0, s.largestFreeBlock());
            Map<String, Long> m = a.hostMemoryStats();
            assertEquals(4, m.get("num_host_alloc"));
            assertEquals(2, m.get("host_alloc_time.count"), "device calls: the reserve and p4");

            MemorySnapshot snap = a.snapshot();
            snap.checkInvariants();
            assertEquals(2, snap.segments().size());
            SegmentSnapshot reserve = snap.segments().stream().filter(x -> x.pool().equals("pinned_reserve"))
                    .findFirst().orElseThrow();
            assertEquals(p1, reserve.address());
            assertEquals(3, reserve.blocks().size());
            a.free(p2);
            a.free(p4);
            a.free(p1);
            a.free(p3);
            HostArenaInvariants.check((HostCachingArena) a);
        }
    }

    @Test
    void theSnapshotShowsTheReserveTiledByItsPiecesAndItsTail() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             HostCachingAllocator a = new CachingHostAllocatorProvider().create(device,
                     "pinned_reserve_segment_size_mb:2")) {
            long p1 = a.malloc(3000);
            long p2 = a.malloc(100_000);
            a.free(p2);
            MemorySnapshot snap = a.snapshot();
            snap.checkInvariants();
            SegmentSnapshot seg = snap.segments().getFirst();
            assertEquals("pinned_reserve", seg.pool());
            assertEquals(2 * MiB, seg.size());
            assertEquals(3, seg.blocks().size());
            BlockSnapshot b1 = seg.blocks().get(0);
            BlockSnapshot b2 = seg.blocks().get(1);
            BlockSnapshot tail = seg.blocks().get(2);
            assertEquals(p1, b1.address());
            assertEquals(4096, b1.size(), "the piece's extent: 4,096 B for the 4,096-byte class");
            assertEquals(BlockState.ALLOCATED, b1.state());
            assertEquals(3000, b1.requestedSize());
            assertEquals(131_072, b2.size());
            assertEquals(BlockState.FREE, b2.state());
            assertEquals(2 * MiB - 4096 - 131_072, tail.size());
            assertEquals(BlockState.FREE, tail.state());
            assertEquals(tail.size(), snap.stats().largestFreeBlock(), "the unused tail can still be carved");
            a.free(p1);
        }
    }

    @Test
    void aRefusedReserveIsSkipped() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             HostCachingAllocator a = new CachingHostAllocatorProvider().create(device,
                     "pinned_reserve_segment_size_mb:4")) {
            device.failNextMallocs(1);
            long p = a.malloc(1000);
            assertNotEquals(0, p);
            assertEquals(1024, a.stats().reservedBytes(), "no reserve: a plain device malloc");
            a.free(p);
            HostArenaInvariants.check((HostCachingArena) a);
        }
    }
}
