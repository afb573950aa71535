package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.sim.DeviceOperation;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The golden scenarios of PyTorch's devlog "When does fragmentation occur in the CUDA caching allocator?"
 * (2026-06-01; spec upstream-2026 §1, items 1–7) with their exact reserved bytes, and the expandable-segment rule
 * that one {@code map_block} is one device map of the whole run of pages (and one unmap per {@code unmap_block},
 * whatever the map calls that mapped the range).
 */
class FragmentationScenariosTest {

    static final long MiB = 1024 * 1024;
    static final long GiB = 1024 * MiB;

    private final List<CachingArena> arenas = new ArrayList<>();

    private CachingArena arena(SimulatedDevice device, String config) {
        CachingArena a = (CachingArena) new CachingAllocatorProvider(Map.of()).create(device, config);
        arenas.add(a);
        return a;
    }

    @AfterEach
    void invariantsHold() {
        for (CachingArena a : arenas) {
            CachingInvariants.check(a);
        }
    }

    private static SimulatedDevice device() {
        return SimulatedDevice.builder().capacity(80 * GiB).recordHistory(true).build();
    }

    private static long reserved(CachingArena a) {
        return a.memoryStats().get("reserved_bytes.all.current");
    }

    private static long[] mallocs(CachingArena a, int n, long bytes) {
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            p[i] = a.malloc(bytes, DeviceStream.DEFAULT);
        }
        return p;
    }

    private static void freeAll(CachingArena a, long... ptrs) {
        for (long p : ptrs) {
            a.free(p);
        }
    }

    private static List<DeviceOperation> ops(SimulatedDevice d, DeviceOperation.Kind kind) {
        return d.history().stream().filter(o -> o.kind() == kind).toList();
    }

    /** 1. Not expandable: 8×16 MiB, free all, 4×32 MiB: the 16 MiB segments cannot serve 32 MiB: 256 MiB. */
    @Test
    void smallSegmentsCannotServeLargerRequests() {
        CachingArena a = arena(device(), "");
        freeAll(a, mallocs(a, 8, 16 * MiB));
        assertEquals(128 * MiB, reserved(a));
        mallocs(a, 4, 32 * MiB);
        assertEquals(256 * MiB, reserved(a));
        assertEquals(12, a.memoryStats().get("segment.all.current"));
    }

    /** 2. Not expandable: 4×32 MiB, free all, 8×16 MiB: each 32 MiB segment splits 16 + 16: 128 MiB. */
    @Test
    void largeSegmentsSplitForSmallerRequests() {
        CachingArena a = arena(device(), "");
        freeAll(a, mallocs(a, 4, 32 * MiB));
        mallocs(a, 8, 16 * MiB);
        assertEquals(128 * MiB, reserved(a));
        assertEquals(4, a.memoryStats().get("segment.all.current"));
    }

    /** 3. Expandable: 8×16 MiB one after another map 20 MiB pages as needed; the 5th fits the leftover. */
    @Test
    void expandableGrowsPageByPage() {
        CachingArena a = arena(device(), "expandable_segments:True");
        long[] expected = {20, 40, 60, 80, 80, 100, 120, 140};
        long previous = -1;
        for (long mib : expected) {
            long p = a.malloc(16 * MiB, DeviceStream.DEFAULT);
            if (previous >= 0) {
                assertEquals(previous + 16 * MiB, p, "tiled contiguously");
            }
            previous = p;
            assertEquals(mib * MiB, reserved(a));
        }
        assertEquals(0, a.memoryStats().get("segment.all.current"), "expandable maps are not segments");
    }

    /** 4. Expandable: then free all and allocate 4×32 MiB: one merged free block, no new pages. */
    @Test
    void expandableFreeBlocksMergeIntoOne() {
        SimulatedDevice d = device();
        CachingArena a = arena(d, "expandable_segments:True");
        long[] p = mallocs(a, 8, 16 * MiB);
        long maps = a.memoryStats().get("num_device_alloc");
        freeAll(a, p);
        assertEquals(1, a.snapshot().segments().size());
        assertEquals(1, a.snapshot().segments().getFirst().blocks().size(), "one merged free block");
        mallocs(a, 4, 32 * MiB);
        assertEquals(140 * MiB, reserved(a));
        assertEquals(maps, a.memoryStats().get("num_device_alloc"), "no new pages");
    }

    /** 5. Expandable: 4×16 MiB, free #0 and #2, 32 MiB must grow the segment; after freeing all it fits without. */
    @Test
    void expandableHolesSmallerThanTheRequestGrowTheSegment() {
        CachingArena a = arena(device(), "expandable_segments:True");
        long[] p = mallocs(a, 4, 16 * MiB);
        assertEquals(80 * MiB, reserved(a));
        freeAll(a, p[0], p[2]);
        long big = a.malloc(32 * MiB, DeviceStream.DEFAULT);
        assertEquals(p[3] + 16 * MiB, big, "placed after the last block, where the segment grows");
        assertEquals(100 * MiB, reserved(a));
        freeAll(a, p[1], p[3], big);
        long again = a.malloc(32 * MiB, DeviceStream.DEFAULT);
        assertEquals(p[0], again);
        assertEquals(100 * MiB, reserved(a), "fits without growth");
    }

    /** 6. The "1 MiB loophole": 2 MiB is a large-pool request; 0.5 MiB needs a small page of its own: 22 MiB. */
    @Test
    void smallRequestAfterALargeOneMapsASmallPage() {
        CachingArena a = arena(device(), "expandable_segments:True");
        a.free(a.malloc(2 * MiB, DeviceStream.DEFAULT));
        a.malloc(512 * 1024, DeviceStream.DEFAULT);
        assertEquals(22 * MiB, reserved(a));
        assertEquals(2 * MiB, a.memoryStats().get("reserved_bytes.small_pool.current"));
        assertEquals(20 * MiB, a.memoryStats().get("reserved_bytes.large_pool.current"));

        CachingArena b = arena(device(), "expandable_segments:True");
        b.free(b.malloc(2 * MiB, DeviceStream.DEFAULT));
        b.malloc(2 * MiB, DeviceStream.DEFAULT);
        assertEquals(20 * MiB, reserved(b));
    }

    /** 7. Not expandable: 32 MiB, free, 2×16 MiB, free #0: an inactive split that merges back when both are free. */
    @Test
    void inactiveSplitMergesBackWhenItsNeighbourIsFreed() {
        CachingArena a = arena(device(), "");
        a.free(a.malloc(32 * MiB, DeviceStream.DEFAULT));
        long[] p = mallocs(a, 2, 16 * MiB);
        a.free(p[0]);
        assertEquals(32 * MiB, reserved(a));
        assertEquals(2, a.snapshot().segments().getFirst().blocks().size());
        assertEquals(1, a.memoryStats().get("inactive_split.all.current"));
        assertEquals(16 * MiB, a.memoryStats().get("inactive_split_bytes.all.current"));
        a.free(p[1]);
        assertEquals(1, a.snapshot().segments().size());
        assertEquals(1, a.snapshot().segments().getFirst().blocks().size(), "merged back to one 32 MiB block");
        assertEquals(32 * MiB, a.snapshot().segments().getFirst().blocks().getFirst().size());
        assertEquals(0, a.memoryStats().get("inactive_split.all.current"));
        assertEquals(32 * MiB, reserved(a));
    }

    /** A 600 MiB request on an empty expandable segment is one device map of 600 MiB (30 pages), counted once. */
    @Test
    void oneMapForAWholeRunOfPages() {
        SimulatedDevice d = device();
        CachingArena a = arena(d, "expandable_segments:True");
        a.recordHistory(100);
        long p = a.malloc(600 * MiB, DeviceStream.DEFAULT);
        List<DeviceOperation> maps = ops(d, DeviceOperation.Kind.MAP);
        assertEquals(List.of(new DeviceOperation(DeviceOperation.Kind.MAP, p, 600 * MiB)), maps);
        assertEquals(1, a.memoryStats().get("num_device_alloc"));
        assertEquals(1, a.stats().deviceMallocs());
        List<TraceEntry> segmentMaps = a.history().stream()
                .filter(e -> e.action() == TraceAction.SEGMENT_MAP).toList();
        assertEquals(1, segmentMaps.size());
        assertEquals(p, segmentMaps.getFirst().address());
        assertEquals(600 * MiB, segmentMaps.getFirst().size());
        assertEquals(600 * MiB, reserved(a));
    }

    /** Freed parts of a range mapped in one call are unmapped on their own, one device unmap per unmap_block. */
    @Test
    void unmapsSplitARangeMappedInOneCall() {
        SimulatedDevice d = device();
        CachingArena a = arena(d, "expandable_segments:True");
        a.recordHistory(100);
        long whole = a.malloc(600 * MiB, DeviceStream.DEFAULT);
        a.free(whole);
        long low = a.malloc(100 * MiB, DeviceStream.DEFAULT); // [0, 100)
        long middle = a.malloc(200 * MiB, DeviceStream.DEFAULT); // [100, 300)
        long high = a.malloc(300 * MiB, DeviceStream.DEFAULT); // [300, 600)
        assertEquals(whole, low);
        a.free(middle);
        a.emptyCache(); // pages wholly inside [100, 300): [100, 300) exactly (100 and 300 are page edges)
        assertEquals(List.of(new DeviceOperation(DeviceOperation.Kind.UNMAP, whole + 100 * MiB, 200 * MiB)),
                ops(d, DeviceOperation.Kind.UNMAP));
        assertEquals(400 * MiB, reserved(a));
        assertEquals(2, a.snapshot().segments().size(), "two mapped runs, one segment each in the snapshot");
        assertEquals(1, a.memoryStats().get("num_device_free"));
        TraceEntry unmap = a.history().stream().filter(e -> e.action() == TraceAction.SEGMENT_UNMAP).toList().getLast();
        assertEquals(whole + 100 * MiB, unmap.address());
        assertEquals(200 * MiB, unmap.size());

        a.free(low);
        a.emptyCache(); // [0, 100) from the same original map
        assertEquals(300 * MiB, reserved(a));
        // mapping again the hole left by two unmaps: one map of 300 MiB over what was unmapped in two calls
        long again = a.malloc(300 * MiB, DeviceStream.DEFAULT);
        assertEquals(whole, again);
        assertEquals(new DeviceOperation(DeviceOperation.Kind.MAP, whole, 300 * MiB),
                ops(d, DeviceOperation.Kind.MAP).getLast());
        a.free(high);
        a.free(again);
        a.emptyCache(); // [0, 600) in one unmap, over two separate maps
        assertEquals(new DeviceOperation(DeviceOperation.Kind.UNMAP, whole, 600 * MiB),
                ops(d, DeviceOperation.Kind.UNMAP).getLast());
        assertEquals(0, reserved(a));
        assertEquals(2, a.memoryStats().get("num_device_alloc"));
        assertEquals(3, a.memoryStats().get("num_device_free"));
        assertEquals(0, d.virtualMemory().orElseThrow().mappedBytes());
        assertNotEquals(0, high);
    }
}
