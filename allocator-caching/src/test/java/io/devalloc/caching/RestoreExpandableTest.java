package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.sim.DeviceOperation;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Restoring the expandable segments of a trace's start ({@code restoreExpandableSegment},
 * {@code restoreExpandableRange}) and live blocks inside them ({@code restoreAllocation}): the restored state is
 * the one PyTorch's allocator would have (mapped free ranges merged, pieces of a carved range still mapped and
 * expandable, no inactive-split stats), it behaves as an allocator that mapped those ranges itself, and each bad
 * call fails with a clear message and changes nothing.
 */
class RestoreExpandableTest {

    static final long MiB = 1L << 20;
    static final long GiB = 1L << 30;
    static final long PAGE = 20 * MiB;
    /** A recorded base, 2 MiB aligned, inside the simulator's default address space. */
    static final long BASE = 0x7E00_0000_0000L;
    static final String EXPANDABLE = "expandable_segments:True";

    private final List<CachingArena> arenas = new ArrayList<>();

    private CachingArena arena(SimulatedDevice d, String config) {
        CachingArena a = (CachingArena) new CachingAllocatorProvider(Map.of()).create(d, config);
        arenas.add(a);
        return a;
    }

    /** The arena's warm-start restore, reached as a replay reaches it. */
    private static PyTorchStateRestore restore(CachingArena a) {
        return a.unwrap(PyTorchStateRestore.class).orElseThrow();
    }

    @AfterEach
    void invariantsHold() {
        arenas.forEach(CachingInvariants::check);
    }

    private static SimulatedDevice device(long... scripted) {
        List<Long> addresses = new ArrayList<>();
        for (long s : scripted) {
            addresses.add(s);
        }
        return SimulatedDevice.builder().capacity(8 * GiB).recordHistory(true).scriptedAddresses(addresses).build();
    }

    private static List<DeviceOperation> ops(SimulatedDevice d, DeviceOperation.Kind kind) {
        return d.history().stream().filter(o -> o.kind() == kind).toList();
    }

    private static List<Map<String, Object>> segments(CachingArena a) {
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> segments = (List<Map<String, Object>>) a.snapshotDict().get("segments");
        return segments;
    }

    private static List<List<Object>> blocks(Map<String, Object> segment) {
        List<List<Object>> out = new ArrayList<>();
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> blocks = (List<Map<String, Object>>) segment.get("blocks");
        for (Map<String, Object> b : blocks) {
            out.add(List.of(b.get("address"), b.get("size"), b.get("state")));
        }
        return out;
    }

    @Test
    void restoredRangesAreMappedFreeRangesOfOneSegmentAtTheScriptedBase() {
        SimulatedDevice d = device(BASE);
        CachingArena a = arena(d, EXPANDABLE);
        a.recordHistory(100);
        long full = restore(a).expandableSegmentSize(DeviceStream.DEFAULT, false);
        assertEquals((9 * GiB + PAGE - 1) / PAGE * PAGE, full, "whole pages of 9/8 of the device");

        assertEquals(BASE, restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, false, 0));
        restore(a).restoreExpandableRange(BASE + 40 * MiB, 60 * MiB);
        restore(a).restoreExpandableRange(BASE + 200 * MiB, 20 * MiB);

        Map<String, Long> stats = a.memoryStats();
        List<TraceAction> history = a.history().stream().map(TraceEntry::action).toList();
        List<Map<String, Object>> segments = segments(a);
        assertAll(
                () -> assertEquals(List.of(full), ops(d, DeviceOperation.Kind.RESERVE).stream()
                        .map(DeviceOperation::bytes).toList()),
                () -> assertEquals(List.of(60 * MiB, 20 * MiB), ops(d, DeviceOperation.Kind.MAP).stream()
                        .map(DeviceOperation::bytes).toList(), "one device map per range"),
                () -> assertEquals(80 * MiB, a.stats().reservedBytes()),
                () -> assertEquals(2, stats.get("num_device_alloc"), "counted as map_block counts a map"),
                () -> assertEquals(2, a.stats().deviceMallocs()),
                () -> assertEquals(0, stats.get("segment.all.current"), "maps make no segment, as upstream"),
                () -> assertEquals(List.of(TraceAction.SEGMENT_MAP, TraceAction.SEGMENT_MAP), history),
                () -> assertEquals(List.of(BASE + 40 * MiB, BASE + 200 * MiB),
                        segments.stream().map(s -> s.get("address")).toList()),
                () -> assertTrue(segments.stream().allMatch(s -> Boolean.TRUE.equals(s.get("is_expandable"))
                        && "large".equals(s.get("segment_type")))),
                () -> assertEquals(List.of(List.of(BASE + 40 * MiB, 60 * MiB, "inactive")), blocks(segments.get(0))));

        // It behaves as a segment the allocator mapped itself: best fit in the mapped ranges, then a map into the
        // unmapped hole at the segment's base, which joins the range above it.
        long x = a.malloc(50 * MiB, DeviceStream.DEFAULT);
        assertEquals(BASE + 40 * MiB, x);
        long y = a.malloc(30 * MiB, DeviceStream.DEFAULT);
        assertEquals(BASE, y);
        assertEquals(40 * MiB, ops(d, DeviceOperation.Kind.MAP).getLast().bytes());
        assertEquals(List.of(BASE, BASE + 200 * MiB), segments(a).stream().map(s -> s.get("address")).toList());
        CachingInvariants.check(a);

        // Freed and emptied, everything is unmapped and the segment given back.
        a.free(x);
        a.free(y);
        a.emptyCache();
        assertEquals(0, a.stats().reservedBytes());
        assertEquals(List.of(BASE), ops(d, DeviceOperation.Kind.RELEASE).stream().map(DeviceOperation::address)
                .toList());
    }

    @Test
    void adjacentRestoredRangesMergeIntoOneFreeBlock() {
        CachingArena a = arena(device(BASE), EXPANDABLE);
        restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, false, 0);
        restore(a).restoreExpandableRange(BASE + 20 * MiB, 20 * MiB);
        restore(a).restoreExpandableRange(BASE, 20 * MiB);
        List<Map<String, Object>> segments = segments(a);
        assertEquals(1, segments.size());
        assertEquals(List.of(List.of(BASE, 40 * MiB, "inactive")), blocks(segments.getFirst()));
        assertEquals(40 * MiB, a.stats().largestFreeBlock());
    }

    @Test
    void restoreAllocationInsideARangeLeavesMappedExpandablePiecesAndNoInactiveSplits() {
        SimulatedDevice d = device(BASE, BASE - 10 * GiB);
        CachingArena a = arena(d, EXPANDABLE);
        restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, false, 0);
        restore(a).restoreExpandableRange(BASE, 60 * MiB);
        restore(a).restoreAllocation(BASE + 20 * MiB, 10 * MiB, 10 * MiB - 100, DeviceStream.DEFAULT);
        long small = restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, true, 0);
        assertEquals(BASE - 10 * GiB, small);
        restore(a).restoreExpandableRange(small, 2 * MiB);
        restore(a).restoreAllocation(small + 512, 1024, 1000, DeviceStream.DEFAULT);
        CachingInvariants.check(a);

        Map<String, Long> stats = a.memoryStats();
        List<Map<String, Object>> segments = segments(a);
        assertAll(
                () -> assertEquals(0, stats.get("inactive_split.all.current"), "expandable segments count none"),
                () -> assertEquals(0, stats.get("inactive_split_bytes.all.current")),
                () -> assertEquals(10 * MiB + 1024, a.stats().allocatedBytes()),
                () -> assertEquals(2, segments.size()),
                () -> assertEquals(List.of(List.of(small, 512L, "inactive"), List.of(small + 512, 1024L,
                        "active_allocated"), List.of(small + 1536, 2 * MiB - 1536, "inactive")),
                        blocks(segments.get(0))),
                () -> assertEquals(List.of(List.of(BASE, 20 * MiB, "inactive"), List.of(BASE + 20 * MiB, 10 * MiB,
                        "active_allocated"), List.of(BASE + 30 * MiB, 30 * MiB, "inactive")),
                        blocks(segments.get(1))));

        // The pieces are mapped pages of the segment: empty_cache unmaps them (whole pages only) and keeps the
        // live block's pages, then the freed block joins them and everything goes.
        a.emptyCache();
        assertEquals(20 * MiB + 2 * MiB, a.stats().reservedBytes(), "the pages under the live blocks stay mapped");
        a.free(BASE + 20 * MiB);
        a.free(small + 512);
        CachingInvariants.check(a);
        a.emptyCache();
        assertEquals(0, a.stats().reservedBytes());
        assertEquals(2, ops(d, DeviceOperation.Kind.RELEASE).size());
    }

    @Test
    void maxReserveBytesCapsTheReservationInWholePages() {
        SimulatedDevice d = device(BASE, BASE + GiB);
        CachingArena a = arena(d, EXPANDABLE);
        assertEquals(BASE, restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, false, 5 * PAGE + MiB));
        assertEquals(BASE + GiB, restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, true, 3 * MiB));
        assertEquals(List.of(5 * PAGE, 2 * MiB), ops(d, DeviceOperation.Kind.RESERVE).stream()
                .map(DeviceOperation::bytes).toList());
        restore(a).restoreExpandableRange(BASE + 4 * PAGE, PAGE);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> restore(a).restoreExpandableRange(BASE + 5 * PAGE, PAGE));
        assertTrue(e.getMessage().startsWith("no expandable segment of allocator 'caching'"), e.getMessage());
    }

    @Test
    void theSegmentSizeFollowsTheConfiguredReserveAndIsZeroWithoutExpandableSegments() {
        CachingArena reserved = arena(device(), EXPANDABLE + ",expandable_segments_reserve:0.03");
        long bytes = (long) (0.03 * 8 * GiB);
        assertEquals((bytes + PAGE - 1) / PAGE * PAGE,
                restore(reserved).expandableSegmentSize(DeviceStream.DEFAULT, false));
        assertEquals((bytes + 2 * MiB - 1) / (2 * MiB) * 2 * MiB,
                restore(reserved).expandableSegmentSize(DeviceStream.DEFAULT, true));
        assertEquals(0, restore(arena(device(), "")).expandableSegmentSize(DeviceStream.DEFAULT, false));
    }

    // ------------------------------------------------------------------------------------------------ errors

    /** Runs {@code call}, which must fail with {@code type} and a message containing {@code text}, changing nothing. */
    private static <T extends RuntimeException> void refused(CachingArena a, SimulatedDevice d, Class<T> type,
                                                            String text, Executable call) {
        long reserved = a.stats().reservedBytes();
        long maps = a.memoryStats().get("num_device_alloc");
        int ops = d.history().size();
        T e = assertThrows(type, call);
        assertTrue(e.getMessage().contains(text), e::getMessage);
        assertEquals(reserved, a.stats().reservedBytes());
        assertEquals(maps, a.memoryStats().get("num_device_alloc"));
        assertEquals(ops, d.history().size(), "no device call");
        CachingInvariants.check(a);
    }

    @Test
    void anAllocatorWithoutExpandableSegmentsRefusesToRestoreOne() {
        SimulatedDevice d = device();
        CachingArena a = arena(d, "");
        refused(a, d, IllegalStateException.class, "runs without expandable segments; restore the segment with"
                + " restoreSegment", () -> restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, false, 0));
    }

    @Test
    void aReserveCapBelowOnePageIsRefused() {
        SimulatedDevice d = device(BASE);
        CachingArena a = arena(d, EXPANDABLE);
        refused(a, d, IllegalArgumentException.class, "maxReserveBytes 20971519 holds no whole page of 20971520 B",
                () -> restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, false, PAGE - 1));
    }

    @Test
    void aRefusedReservationIsAnError() {
        // 2 GiB of address space: the first 1.125 GiB reservation fits, a second one does not.
        SimulatedDevice d = SimulatedDevice.builder().capacity(GiB).addressSpace(2 * GiB + 2 * MiB)
                .recordHistory(true).build();
        CachingArena a = arena(d, EXPANDABLE);
        restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, false, 0);
        refused(a, d, IllegalStateException.class, "the device refused to reserve a restored expandable segment",
                () -> restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, false, 0));
    }

    @Test
    void aRangeMustBeWholeUnmappedPagesOfARestoredSegment() {
        SimulatedDevice d = device(BASE);
        CachingArena a = arena(d, EXPANDABLE);
        restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, false, 10 * PAGE);
        restore(a).restoreExpandableRange(BASE + 2 * PAGE, 2 * PAGE);
        refused(a, d, IllegalArgumentException.class, "a restored mapped range must have a positive size, got 0",
                () -> restore(a).restoreExpandableRange(BASE, 0));
        refused(a, d, IllegalArgumentException.class, "no expandable segment of allocator 'caching'",
                () -> restore(a).restoreExpandableRange(BASE - PAGE, PAGE));
        refused(a, d, IllegalArgumentException.class, "is not whole pages of 20971520 B inside the expandable"
                + " segment at 0x" + Long.toHexString(BASE),
                () -> restore(a).restoreExpandableRange(BASE + 2 * MiB, PAGE));
        refused(a, d, IllegalArgumentException.class, "is not whole pages",
                () -> restore(a).restoreExpandableRange(BASE, PAGE + 2 * MiB));
        refused(a, d, IllegalArgumentException.class, "is not whole pages",
                () -> restore(a).restoreExpandableRange(BASE + 9 * PAGE, 2 * PAGE));
        refused(a, d, IllegalArgumentException.class, "is not inside one unmapped range of the expandable segment"
                + " at 0x" + Long.toHexString(BASE) + ": part of it is mapped already",
                () -> restore(a).restoreExpandableRange(BASE + PAGE, 2 * PAGE));
        refused(a, d, IllegalArgumentException.class, "part of it is mapped already",
                () -> restore(a).restoreExpandableRange(BASE + 3 * PAGE, PAGE));
    }

    @Test
    void aRefusedMapChangesNothingAndTheRangeCanBeRestoredLater() {
        SimulatedDevice d = device(BASE);
        CachingArena a = arena(d, EXPANDABLE);
        restore(a).restoreExpandableSegment(DeviceStream.DEFAULT, false, 0);
        d.setLimitBytes(PAGE);
        refused(a, d, IllegalStateException.class, "the device refused to map a restored range of 41943040 bytes",
                () -> restore(a).restoreExpandableRange(BASE + PAGE, 2 * PAGE));
        d.setLimitBytes(Long.MAX_VALUE);
        restore(a).restoreExpandableRange(BASE + PAGE, 2 * PAGE);
        assertEquals(2 * PAGE, a.stats().reservedBytes());
    }
}
