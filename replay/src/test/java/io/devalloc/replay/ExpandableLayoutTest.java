package io.devalloc.replay;

import static io.devalloc.replay.TestTraces.A;
import static io.devalloc.replay.TestTraces.MiB;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.TraceEvent.Kind;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The plan of a warm start with expandable segments ({@link ExpandableLayout}) on hand-written traces: pools,
 * segments, bases and reserves, the traces restored as ordinary segments and why, and the errors.
 */
class ExpandableLayoutTest {

    static final String CONF = "expandable_segments:True";
    static final long PAGE = 20 * MiB;
    static final long GiB = 1L << 30;

    static ExpandableLayout plan(TestTraces.Builder t, long capacity) throws IOException {
        TraceScan scan = TraceScan.of("t", t.source());
        try (SimulatedDevice d = SimulatedDevice.builder().capacity(capacity).build();
             CachingAllocator a = new CachingAllocatorProvider().create(d, CONF)) {
            return ExpandableLayout.plan(TestTraces.restore(a), scan, Replayer.WARM_SPACE);
        }
    }

    static ExpandableLayout plan(TestTraces.Builder t) throws IOException {
        return plan(t, 80 * GiB);
    }

    static ReplayOutcome replay(TestTraces.Builder t, String device, String conf) throws IOException {
        return new Replayer(ReplayOptions.defaults().withDevice(device).withConf(conf).withWarm(true))
                .replay("t", t.source());
    }

    static List<Long> bases(ExpandableLayout layout) {
        return layout.segments().stream().map(ExpandableLayout.Segment::recordedBase).toList();
    }

    @Test
    void theBaseGoesDownToAMapBelowTheLowestRangeOfItsOwnStreamAndPool() throws IOException {
        TestTraces.Builder below = TestTraces.pytorch()
                .presegment(A + 2 * PAGE, PAGE)
                .prealloc(A + 2 * PAGE, 10 * MiB)
                .segmentMap(A, PAGE)
                .alloc(A, 15 * MiB);
        assertEquals(List.of(A), bases(plan(below)));
        ReplayOutcome o = replay(below, "sim:80GiB", CONF);
        assertTrue(o.result().groundTruth().match(), o.result().groundTruth()::firstDifference);

        TestTraces.Builder otherStream = TestTraces.pytorch()
                .presegment(A + 2 * PAGE, PAGE)
                .prealloc(A + 2 * PAGE, 10 * MiB)
                .add(Kind.SEGMENT_MAP, A, PAGE, 7)
                .add(Kind.ALLOC, A, 15 * MiB, 7);
        TestTraces.Builder otherPool = TestTraces.pytorch()
                .presegment(A + 2 * PAGE, PAGE)
                .prealloc(A + 2 * PAGE, 10 * MiB)
                .segmentMap(A, 2 * MiB)
                .alloc(A, 1000);
        TestTraces.Builder notWholePages = TestTraces.pytorch()
                .presegment(A + 2 * PAGE, PAGE)
                .prealloc(A + 2 * PAGE, 10 * MiB)
                .segmentMap(A + 2 * MiB, PAGE)
                .alloc(A + 2 * MiB, 15 * MiB);
        TestTraces.Builder rangeBetween = TestTraces.pytorch()
                .presegment(A + PAGE, 2 * MiB)
                .prealloc(A + PAGE, 1000)
                .presegment(A + 2 * PAGE, PAGE)
                .prealloc(A + 2 * PAGE, 10 * MiB)
                .segmentMap(A, PAGE)
                .alloc(A, 15 * MiB);
        assertAll(
                () -> assertEquals(List.of(A + 2 * PAGE), bases(plan(otherStream))),
                () -> assertEquals(List.of(A + 2 * PAGE), bases(plan(otherPool))),
                () -> assertEquals(List.of(A + 2 * PAGE), bases(plan(notWholePages))),
                () -> assertEquals(List.of(A + PAGE, A + 2 * PAGE), bases(plan(rangeBetween))));
    }

    @Test
    void rangesThatTouchOrAreNotWholePagesApartBelongToDifferentSegments() throws IOException {
        ExpandableLayout oneSegment = plan(TestTraces.pytorch()
                .presegment(A, PAGE)
                .presegment(A + 3 * PAGE, PAGE));
        ExpandableLayout touching = plan(TestTraces.pytorch()
                .presegment(A, PAGE)
                .presegment(A + PAGE, PAGE));
        ExpandableLayout between = plan(TestTraces.pytorch()
                .presegment(A, PAGE)
                .presegment(A + PAGE + 10 * MiB, PAGE));
        ExpandableLayout twoStreams = plan(TestTraces.pytorch()
                .presegment(A, PAGE)
                .add(Kind.PRESEGMENT, A + 3 * PAGE, PAGE, 7));
        assertAll(
                () -> assertEquals(List.of(A), bases(oneSegment)),
                () -> assertEquals(2, oneSegment.segments().getFirst().ranges().size()),
                () -> assertEquals(List.of(A, A + PAGE), bases(touching)),
                () -> assertEquals(List.of(A, A + PAGE + 10 * MiB), bases(between)),
                () -> assertEquals(List.of(A, A + 3 * PAGE), bases(twoStreams)));
    }

    @Test
    void segmentsCloserThanAReserveReserveTheDistanceBetweenThem() throws IOException {
        TestTraces.Builder t = TestTraces.pytorch()
                .presegment(A, 2 * MiB)
                .prealloc(A, 1000)
                .presegment(A + GiB, PAGE)
                .prealloc(A + GiB, 5 * MiB)
                .alloc(A + 1024, 1000)
                .alloc(A + GiB + 5 * MiB, 10 * MiB)
                .free(A);
        ExpandableLayout layout = plan(t);
        assertAll(
                () -> assertEquals(List.of(true, false), layout.segments().stream()
                        .map(ExpandableLayout.Segment::small).toList()),
                () -> assertEquals(GiB, layout.segments().get(0).maxReserveBytes(), "up to the next segment"),
                () -> assertEquals(90 * GiB, layout.segments().get(1).maxReserveBytes(),
                        "the full reserve: whole pages of 9/8 of 80 GiB"),
                () -> assertEquals(List.of(A, A + GiB), layout.scriptedAddresses()),
                () -> assertTrue(layout.notes().isEmpty()));
        ReplayOutcome o = replay(t, "sim:80GiB", CONF);
        assertTrue(o.result().groundTruth() == null || o.result().groundTruth().match());
        assertEquals(0, o.unknownFrees());
        assertTrue(o.notes().getFirst().endsWith("at their recorded addresses, the presegments as the mapped ranges of"
                + " 2 expandable segments"), o.notes()::toString);
    }

    @Test
    void aSegmentWhoseBaseCannotBePlacedIsReservedElsewhereAndSaysSo() throws IOException {
        // Below the simulated address space, which starts at 2 MiB.
        long low = MiB;
        TestTraces.Builder t = TestTraces.pytorch()
                .presegment(low, 2 * PAGE)
                .prealloc(low + PAGE, 5 * MiB)
                .presegment(A, PAGE)
                .prealloc(A, 5 * MiB)
                .alloc(low + PAGE + 5 * MiB, 10 * MiB)
                .free(low + PAGE);
        ExpandableLayout layout = plan(t);
        assertAll(
                () -> assertEquals(List.of(A, low), bases(layout), "the placed one first"),
                () -> assertEquals(List.of(A), layout.scriptedAddresses()),
                () -> assertEquals(List.of(true, false), layout.segments().stream()
                        .map(ExpandableLayout.Segment::placed).toList()),
                () -> assertEquals(0, layout.segments().get(1).maxReserveBytes(), "the full reserve, anywhere"),
                () -> assertEquals(List.of("warm start: the expandable segment of stream 0's large pool recorded at 0x"
                        + Long.toHexString(low) + " could not be reserved there (it lies outside the simulated"
                        + " address space [0x200000, 0x800000000000)): the device put it elsewhere, its mapped ranges"
                        + " keep their offsets from its base, and ties between equal free blocks or unmapped ranges"
                        + " may go elsewhere than in the recording"), layout.notes()));
        ReplayOutcome o = replay(t, "sim:80GiB", CONF);
        assertTrue(o.notes().contains(layout.notes().getFirst()), o.notes()::toString);
        assertEquals(0, o.unknownFrees(), "the prealloc block was restored at its offset and freed");
        assertEquals(1, o.result().frees());
    }

    @Test
    void tracesRecordedWithoutExpandableSegmentsAreRestoredAsOrdinarySegmentsAndSayWhy() throws IOException {
        ExpandableLayout allocs = plan(TestTraces.warmSample());
        ExpandableLayout notWholePages = plan(TestTraces.pytorch()
                .presegment(A, 30 * MiB)
                .prealloc(A, 25 * MiB));
        assertAll(
                () -> assertEquals("the trace has segment_alloc or segment_free rows: it was recorded without"
                        + " expandable segments", allocs.ordinaryReason()),
                () -> assertEquals("the presegment at 0x" + Long.toHexString(A) + " (31457280 B, large pool) is not"
                        + " whole pages of 20971520 B, as every mapped range of an expandable segment is: the trace"
                        + " was recorded without expandable segments", notWholePages.ordinaryReason()),
                () -> assertTrue(notWholePages.segments().isEmpty()));
        ReplayOutcome o = replay(TestTraces.pytorch().presegment(A, 30 * MiB).prealloc(A, 25 * MiB)
                .alloc(A + 25 * MiB, 1000), "sim:80GiB", CONF);
        assertTrue(o.notes().contains("warm start: the presegments were restored as ordinary (cudaMalloc'd)"
                + " segments, not as mapped ranges of expandable segments: " + notWholePages.ordinaryReason()),
                o.notes()::toString);
        assertEquals(1, o.restoredSegments());
    }

    @Test
    void aReplayWithoutExpandableSegmentsOfATraceThatMapsSaysItsPresegmentsBecameOrdinarySegments()
            throws IOException {
        TestTraces.Builder t = TestTraces.pytorch()
                .presegment(A, PAGE)
                .prealloc(A, 5 * MiB)
                .segmentMap(A + PAGE, PAGE)
                .alloc(A + PAGE, 18 * MiB);
        ReplayOutcome plain = replay(t, "sim:80GiB", "");
        assertTrue(plain.notes().contains("warm start: the trace maps and unmaps expandable segments, but this replay"
                + " runs without them: its presegments were restored as ordinary (cudaMalloc'd) segments"),
                plain.notes()::toString);
        ReplayOutcome expandable = replay(t, "sim:80GiB", CONF);
        assertTrue(expandable.notes().stream().noneMatch(n -> n.contains("ordinary")), expandable.notes()::toString);
        assertTrue(expandable.result().groundTruth().match(), expandable.result().groundTruth()::firstDifference);
    }

    @Test
    void aRangeOfNoLiveBlockTakesThePoolOfItsFirstAllocElseOfItsSize() throws IOException {
        ExpandableLayout byAlloc = plan(TestTraces.pytorch()
                .presegment(A, PAGE)
                .alloc(A, 1000));
        ExpandableLayout afterUnmap = plan(TestTraces.pytorch()
                .presegment(A, PAGE)
                .segmentUnmap(A, PAGE)
                .alloc(A, 1000));
        ExpandableLayout bySize = plan(TestTraces.pytorch()
                .presegment(A, 4 * MiB)
                .presegment(A + GiB, PAGE));
        assertAll(
                () -> assertTrue(byAlloc.isSmall(A)),
                () -> assertTrue(!afterUnmap.isSmall(A), "an alloc after an unmap touched it says nothing"),
                () -> assertTrue(bySize.isSmall(A)),
                () -> assertTrue(!bySize.isSmall(A + GiB)));
    }

    @Test
    void blocksOfExpandableSegmentsSplitEveryRemainderOf512BOrMore() {
        PyTorchStateRestore defaults = TestTraces.defaultCachingRules();
        assertEquals(12 * MiB, WarmStart.inferBlockSize(defaults, 12 * MiB, 12 * MiB + MiB / 2, false, true));
        assertEquals(12 * MiB + MiB / 2, WarmStart.inferBlockSize(defaults, 12 * MiB, 12 * MiB + MiB / 2, false,
                false), "an ordinary large segment keeps a tail of at most 1 MiB");
        assertEquals(12 * MiB, WarmStart.inferBlockSize(defaults, 12 * MiB, 12 * MiB, false, true));
    }

    // ------------------------------------------------------------------------------------------------ errors

    @Test
    void liveBlocksOfBothPoolsInOnePresegmentAreAnError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> replay(TestTraces.pytorch()
                .presegment(A, PAGE)
                .prealloc(A, 1000)
                .prealloc(A + 2 * MiB, 5 * MiB)
                .alloc(A + PAGE - MiB, 1000), "sim:80GiB", CONF));
        assertEquals("t:4: the prealloc block at 0x" + Long.toHexString(A + 2 * MiB) + " (5242880 B) and the one at 0x"
                + Long.toHexString(A) + " (1000 B) are of different pools, but lie in one presegment (0x"
                + Long.toHexString(A) + ", 20971520 B); a segment belongs to one pool", e.getMessage());
    }

    @Test
    void aPresegmentLargerThanAReserveIsAnError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> replay(TestTraces.pytorch()
                .presegment(A, 60 * PAGE)
                .alloc(A, 5 * MiB), "sim:1GiB", CONF));
        assertEquals("t:2: the presegment of 1258291200 B at 0x" + Long.toHexString(A) + " is larger than an"
                + " expandable segment of the large pool reserves here (1216348160 B): replay with the recording's"
                + " expandable_segments_reserve, or the trace joined mapped ranges of two segments that lay side by"
                + " side", e.getMessage());
    }

    @Test
    void aSegmentTheAllocatorCannotRestoreIsAnErrorNamingItsFirstRange() throws IOException {
        TestTraces.Builder t = TestTraces.pytorch()
                .presegment(A, PAGE)
                .prealloc(A, 5 * MiB);
        ExpandableLayout layout = plan(t);
        TraceScan scan = TraceScan.of("t", t.source());
        try (SimulatedDevice d = SimulatedDevice.builder().capacity(80 * GiB).build();
             CachingAllocator plain = new CachingAllocatorProvider().create(d, "")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> WarmStart.seed(TestTraces.restore(plain), scan, layout,
                            s -> DeviceStream.DEFAULT, new KeyMap(4)));
            assertTrue(e.getMessage().startsWith("t:2: cannot restore the expandable segment (large pool) recorded at"
                    + " 0x" + Long.toHexString(A) + ": allocator 'caching' on sim:0 runs without expandable segments"),
                    e.getMessage());
            assertEquals(0, plain.stats().reservedBytes());
        }
    }

    @Test
    void aRangeTheAllocatorCannotRestoreIsAnErrorNamingItsRow() {
        // Two presegments that overlap: the second cannot be mapped again.
        IllegalArgumentException overlap = assertThrows(IllegalArgumentException.class, () -> replay(
                TestTraces.pytorch().presegment(A, 2 * PAGE).presegment(A + PAGE, PAGE).alloc(A, 5 * MiB),
                "sim:80GiB", CONF));
        assertTrue(overlap.getMessage().startsWith("t:3: cannot restore the presegment of 20971520 B at 0x"
                + Long.toHexString(A + PAGE) + " as a mapped range of the expandable segment recorded at 0x"
                + Long.toHexString(A) + ": "), overlap.getMessage());
        assertTrue(overlap.getMessage().endsWith("part of it is mapped already"), overlap.getMessage());
        // More than the device holds.
        IllegalArgumentException full = assertThrows(IllegalArgumentException.class, () -> replay(
                TestTraces.pytorch().presegment(A, 55 * PAGE).alloc(A, 5 * MiB), "sim:1GiB", CONF));
        assertTrue(full.getMessage().startsWith("t:2: cannot restore the presegment of 1153433600 B"),
                full.getMessage());
        assertTrue(full.getMessage().endsWith("the device refused to map a restored range of 1153433600 bytes at 0x"
                + Long.toHexString(A)), full.getMessage());
    }
}
