package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.sim.DeviceOperation;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code expandable_segments_reserve} and {@code expandable_segments_reserve_by_class} (pytorch#192269): syntax,
 * warn-not-fail, the clamp to 9/8 of the device, per-class reserves, and "one allocation cannot span segments";
 * and the tails of upstream's out-of-memory message with and without expandable segments.
 */
class ExpandableSegmentReserveTest {

    static final long MiB = 1024 * 1024;
    static final long GiB = 1024 * MiB;
    static final long TOTAL = 8 * GiB;

    private final List<CachingArena> arenas = new ArrayList<>();

    private CachingArena arena(SimulatedDevice d, String config) {
        CachingArena a = (CachingArena) new CachingAllocatorProvider(Map.of()).create(d, config);
        arenas.add(a);
        return a;
    }

    @AfterEach
    void invariantsHold() {
        arenas.forEach(CachingInvariants::check);
    }

    private static SimulatedDevice device() {
        return SimulatedDevice.builder().capacity(TOTAL).recordHistory(true).build();
    }

    private static ExpandableSegmentReserve reserveOf(String config) {
        return CachingConfig.parse(config).expandableSegmentsReserve();
    }

    private static List<DeviceOperation> reservations(SimulatedDevice d) {
        return d.history().stream().filter(o -> o.kind() == DeviceOperation.Kind.RESERVE).toList();
    }

    // ------------------------------------------------------------------------------------------------ syntax

    @Test
    void aFractionOrGiB() {
        assertEquals(TOTAL / 2, reserveOf("expandable_segments_reserve:0.5").decision("", TOTAL).reserveBytes());
        assertEquals(40 * GiB, reserveOf("expandable_segments_reserve:40G").decision("x", TOTAL).reserveBytes());
        assertEquals(3 * GiB, reserveOf("expandable_segments_reserve:3g").decision("", TOTAL).reserveBytes());
        assertEquals(GiB / 2, reserveOf("expandable_segments_reserve:0.5G").decision("", TOTAL).reserveBytes());
        assertEquals(Long.MAX_VALUE, reserveOf("expandable_segments_reserve:1e300G").decision("", TOTAL)
                .reserveBytes(), "saturates, as upstream at SIZE_MAX");
        assertEquals(-1, CachingOptions.defaults().expandableSegmentsReserve().decision("", TOTAL).reserveBytes());
        assertFalse(CachingOptions.defaults().expandableSegmentsReserve().isSet());
    }

    private static int occurrences(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "0", "-0.5", "0.5x", "G", "inf", "nan", "0x10", "1e400", "+"})
    void aBadValueWarnsAndIsIgnored(String value) {
        String config = "expandable_segments_reserve:" + value;
        CachingOptions[] parsed = new CachingOptions[1];
        String err = StderrCapture.during(() -> parsed[0] = CachingConfig.parse(config));
        assertEquals(1, occurrences(err, "Ignoring invalid expandable-segment reserve value '" + value + "' in"
                + " PYTORCH_CUDA_ALLOC_CONF (expected a positive, finite fraction like 0.5 or an absolute size like"
                + " 40G); using default."), err);
        assertEquals(ExpandableSegmentReserve.HISTORICAL, parsed[0].expandableSegmentsReserve(),
                "the key keeps its default");
    }

    @Test
    void aBadEntryOfTheListIsSkippedAndTheOthersApply() {
        String config = "expandable_segments_reserve_by_class:[tiny:0.05,big:40G,bad:x,:0.5,alone]";
        CachingOptions[] parsed = new CachingOptions[1];
        String err = StderrCapture.during(() -> parsed[0] = CachingConfig.parse(config));
        assertEquals(1, occurrences(err, "Ignoring invalid expandable-segment reserve value 'x'"), err);
        assertEquals(1, occurrences(err, "Ignoring malformed expandable_segments_reserve_by_class entry 'alone'"), err);
        ExpandableSegmentReserve r = parsed[0].expandableSegmentsReserve();
        assertEquals(List.of("tiny", "big"), List.copyOf(r.byClass().keySet()));
        assertEquals((long) (0.05 * TOTAL), r.decision("tiny", TOTAL).reserveBytes());
        assertTrue(r.decision("tiny", TOTAL).classKnown());
        assertEquals(40 * GiB, r.decision("big", TOTAL).reserveBytes());
        assertEquals(-1, r.decision("", TOTAL).reserveBytes(), "no global reserve: untagged streams keep 9/8");
        assertEquals(ExpandableSegmentReserve.HISTORICAL,
                reserveOf("expandable_segments_reserve_by_class:[]"));
    }

    @Test
    void aClassEntryWinsOverTheGlobalReserve() {
        ExpandableSegmentReserve r = reserveOf(
                "expandable_segments_reserve:0.5,expandable_segments_reserve_by_class:[capture:0.25]");
        assertEquals(TOTAL / 4, r.decision("capture", TOTAL).reserveBytes());
        assertEquals(TOTAL / 2, r.decision("", TOTAL).reserveBytes());
        assertEquals(TOTAL / 2, r.decision("workspace", TOTAL).reserveBytes());
        assertFalse(r.decision("workspace", TOTAL).classKnown());
    }

    @Test
    void theReserveIsClampedToNineEighthsOfTheDevice() {
        long full = TOTAL + TOTAL / 8;
        assertEquals(full, ExpandableSegmentReserve.clamp(
                reserveOf("expandable_segments_reserve:2.0").decision("", TOTAL), full));
        assertEquals(full, ExpandableSegmentReserve.clamp(
                reserveOf("expandable_segments_reserve:100G").decision("", TOTAL), full));
        assertEquals(TOTAL / 2, ExpandableSegmentReserve.clamp(
                reserveOf("expandable_segments_reserve:0.5").decision("", TOTAL), full));
        assertEquals(full, ExpandableSegmentReserve.clamp(new ExpandableSegmentReserve.Decision(-1, false), full));
    }

    // ------------------------------------------------------------------------------------------------ behaviour

    @Test
    void segmentsReserveTheConfiguredAddressSpace() {
        SimulatedDevice d = device();
        CachingArena a = arena(d, "expandable_segments:True,expandable_segments_reserve:0.25");
        long x = a.malloc(GiB, DeviceStream.DEFAULT);
        // ceil(2 GiB / 20 MiB) = 103 pages
        assertEquals(List.of(103 * 20 * MiB), reservations(d).stream().map(DeviceOperation::bytes).toList());
        long y = a.malloc(GiB + 512 * MiB, DeviceStream.DEFAULT); // does not fit the rest: a second segment
        assertEquals(2, reservations(d).size());
        // 1 GiB maps 52 pages of 20 MiB in the first segment, 1.5 GiB maps 77 in the second
        assertEquals((52 + 77) * 20 * MiB, a.stats().reservedBytes());
        a.free(x);
        a.free(y);
    }

    @Test
    void withoutTheKeysSegmentsReserveNineEighths() {
        SimulatedDevice d = device();
        CachingArena a = arena(d, "expandable_segments:True");
        a.free(a.malloc(MiB * 30, DeviceStream.DEFAULT));
        long pages = (TOTAL + TOTAL / 8 + 20 * MiB - 1) / (20 * MiB);
        assertEquals(List.of(pages * 20 * MiB), reservations(d).stream().map(DeviceOperation::bytes).toList());
    }

    @Test
    void oneAllocationCannotSpanSegments() {
        SimulatedDevice d = device();
        CachingArena a = arena(d, "expandable_segments:True,expandable_segments_reserve:0.25");
        AtomicInteger observed = new AtomicInteger();
        a.registerOutOfMemoryObserver((dev, size, allowed, free) -> observed.incrementAndGet());
        OutOfMemoryException e = assertThrows(OutOfMemoryException.class,
                () -> a.malloc(3 * GiB, DeviceStream.DEFAULT));
        assertTrue(e.getMessage().endsWith("is reserved by PyTorch but unallocated. This allocation exceeds the"
                + " expandable-segment reserve of 2.00 GiB for this stream, and a single allocation cannot span"
                + " expandable segments. Raise PYTORCH_CUDA_ALLOC_CONF expandable_segments_reserve or"
                + " expandable_segments_reserve_by_class (or unset it) so that a segment is at least 3.00 GiB."),
                e.getMessage());
        assertEquals(1, a.memoryStats().get("num_ooms"), "the normal out-of-memory path");
        assertEquals(1, observed.get(), "observers are called");
        assertEquals(1, a.memoryStats().get("num_alloc_retries"));
        assertEquals(0, a.stats().reservedBytes());
        assertEquals(0, reservations(d).size(), "no address space left reserved");
        long fits = a.malloc(2 * GiB, DeviceStream.DEFAULT);
        assertNotEquals(0, fits);
        a.free(fits);
    }

    @Test
    void aTaggedStreamGetsItsClassReserve() {
        SimulatedDevice d = device();
        CachingArena a = arena(d, "expandable_segments:True,expandable_segments_reserve_by_class:[tiny:0.05]");
        DeviceStream tiny = d.createStream();
        a.setExpandableSegmentReserveClass(tiny, "tiny");
        assertEquals("tiny", a.expandableSegmentReserveClass(tiny));
        assertEquals("", a.expandableSegmentReserveClass(DeviceStream.DEFAULT));
        OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> a.malloc(GiB, tiny));
        assertTrue(e.getMessage().contains("exceeds the expandable-segment reserve of 409.60 MiB for stream reserve"
                + " class 'tiny'"), e.getMessage());
        long untagged = a.malloc(GiB, DeviceStream.DEFAULT);
        a.free(untagged);
        a.setExpandableSegmentReserveClass(tiny, "");
        long untaggedAgain = a.malloc(GiB, tiny);
        a.free(untaggedAgain);
    }

    @Test
    void aClassWithoutAnEntryWarnsOnceAndUsesTheDefault() {
        SimulatedDevice d = device();
        CachingArena a = arena(d, "expandable_segments:True,expandable_segments_reserve:0.25,"
                + "expandable_segments_reserve_by_class:[tiny:0.05]");
        DeviceStream s = d.createStream();
        DeviceStream t = d.createStream();
        a.setExpandableSegmentReserveClass(s, "other");
        a.setExpandableSegmentReserveClass(t, "other");
        String err = StderrCapture.during(() -> {
            a.free(a.malloc(GiB, s));
            a.free(a.malloc(GiB, t));
        });
        String warning = "expandable_segments reserve class 'other' has no configured reserve in"
                + " expandable_segments_reserve_by_class; using the default reserve.";
        assertEquals(err.indexOf(warning), err.lastIndexOf(warning), "once: " + err);
        assertTrue(err.contains(warning), err);
        assertEquals(2, reservations(d).size());
        assertEquals(103 * 20 * MiB, reservations(d).getFirst().bytes(), "the global 0.25");
    }

    @Test
    void outOfMemoryTailsFollowUpstream() {
        SimulatedDevice small = SimulatedDevice.builder().capacity(GiB).build();
        CachingArena plain = arena(small, "");
        OutOfMemoryException e = assertThrows(OutOfMemoryException.class,
                () -> plain.malloc(2 * GiB, DeviceStream.DEFAULT));
        assertTrue(e.getMessage().endsWith("is reserved by PyTorch but unallocated. If reserved but unallocated memory"
                + " is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See"
                + " documentation for Memory Management "
                + " (https://docs.pytorch.org/docs/stable/notes/cuda.html"
                + "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"),
                e.getMessage());

        CachingArena expandable = arena(SimulatedDevice.builder().capacity(GiB).build(), "expandable_segments:True");
        e = assertThrows(OutOfMemoryException.class, () -> expandable.malloc(2 * GiB, DeviceStream.DEFAULT));
        assertTrue(e.getMessage().endsWith("is reserved by PyTorch but unallocated. expandable_segments is enabled."
                + " If instead the process is running out of virtual address space (VSZ), expandable segments may be"
                + " over-reserving VA (each segment reserves ~9/8 of device memory, times the number of streams);"
                + " reduce it via PYTORCH_CUDA_ALLOC_CONF expandable_segments_reserve /"
                + " expandable_segments_reserve_by_class."), e.getMessage());
        // a request larger than the device: the reserve is not the problem, no reserve hint
        CachingArena reserved = arena(SimulatedDevice.builder().capacity(GiB).build(),
                "expandable_segments:True,expandable_segments_reserve:0.5");
        e = assertThrows(OutOfMemoryException.class, () -> reserved.malloc(2 * GiB, DeviceStream.DEFAULT));
        assertFalse(e.getMessage().contains("exceeds the expandable-segment reserve"), e.getMessage());
        assertTrue(e.getMessage().contains("expandable_segments is enabled."), e.getMessage());
    }
}
