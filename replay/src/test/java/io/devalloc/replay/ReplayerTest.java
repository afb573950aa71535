package io.devalloc.replay;

import static io.devalloc.replay.TestTraces.MiB;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.replay.ReplayOutcome.WarmStartKind;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.pytorch.PyTorchCsvReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The replay rules on small hand-written traces. */
class ReplayerTest {

    static final long A = TestTraces.A;
    static final long B = TestTraces.B;
    static final long C = TestTraces.C;

    static ReplayOptions options(String allocator, String device) {
        return ReplayOptions.defaults().withAllocator(allocator).withDevice(device);
    }

    static ReplayOutcome replay(ReplayOptions options, TestTraces.Builder trace) throws IOException {
        return new Replayer(options).replay("t", trace.source());
    }

    static TestTraces.Builder warmSample() {
        return TestTraces.warmSample();
    }

    static TestTraces.Builder emptyCacheTrace() {
        return TestTraces.emptyCacheSample();
    }

    @Test
    void allocationsAndFreesMapTraceKeysToOurAddresses() throws IOException {
        TestTraces.Builder t = TestTraces.of(TraceFormat.RMM_CSV)
                .alloc(0x1000, 1000)
                .alloc(0x2000, 3000)
                .free(0x1000)
                .alloc(0x1000, 500)
                .free(0x2000)
                .free(0x1000);
        ReplayOutcome o = replay(options("direct", "sim:1GiB"), t);
        ReplayResult r = o.result();
        assertAll(
                () -> assertEquals("t", r.trace()),
                () -> assertEquals("direct", r.allocator()),
                () -> assertEquals("sim:1GiB", r.device()),
                () -> assertEquals(TraceFormat.RMM_CSV, o.format()),
                () -> assertEquals(6, r.events()),
                () -> assertEquals(3, r.allocs()),
                () -> assertEquals(3, r.frees()),
                () -> assertEquals(0, o.unknownFrees()),
                // direct: one device malloc per allocation, sized to the simulator's 512 B granularity.
                () -> assertEquals(3, r.deviceMallocs()),
                () -> assertEquals(3, r.deviceFrees()),
                () -> assertEquals(4000, r.peakRequestedBytes()),
                () -> assertEquals(1024 + 3072, r.peakAllocatedBytes()),
                () -> assertEquals(1024 + 3072, r.peakReservedBytes()),
                () -> assertEquals(0, r.endReservedBytes()),
                () -> assertEquals(0, r.ooms()),
                () -> assertNull(r.groundTruth(), "only PyTorch traces carry a ground truth"),
                () -> assertTrue(r.eventsPerSecond() > 0),
                () -> assertEquals(WarmStartKind.NONE, o.warmStart()),
                () -> assertTrue(o.notes().isEmpty(), o.notes()::toString));
    }

    @Test
    void unknownFreesAreCountedAndSkippedAndALiveKeyAllocatedAgainFreesTheOlderAllocation() throws IOException {
        TestTraces.Builder t = TestTraces.of(TraceFormat.VALGRIND)
                .free(0x9999)
                .alloc(1, 100)
                .free(1)
                .free(1)
                .alloc(5, 100)
                .alloc(5, 200)
                .free(5)
                // Key 0 (valgrind numbers allocations from 0) cannot go in the hash map itself.
                .alloc(0, 300)
                .free(0);
        ReplayOutcome o = replay(options("direct", "sim:1GiB"), t);
        ReplayResult r = o.result();
        assertAll(
                () -> assertEquals(2, o.unknownFrees()),
                () -> assertEquals(1, o.reallocations()),
                () -> assertEquals(4, r.allocs()),
                () -> assertEquals(3, r.frees()),
                () -> assertEquals(4, r.deviceFrees(), "the older allocation of key 5 was freed too"),
                () -> assertEquals(0, r.endReservedBytes()),
                () -> assertEquals(0, r.timeline().allocated()[r.timeline().size() - 1]),
                () -> assertTrue(o.notes().contains("2 frees of keys that were not live were skipped"),
                        o.notes()::toString),
                () -> assertTrue(o.notes().stream().anyMatch(n -> n.startsWith("1 allocations reused a key")),
                        o.notes()::toString));
    }

    @Test
    void nonDefaultStreamsAreCreatedOnTheDeviceAndKeepTheirOwnCache() throws IOException {
        // A block freed on stream 7 is not reused by the default stream: a second 2 MiB segment.
        ReplayOutcome twoStreams = replay(options("caching", "sim:1GiB"), TestTraces.pytorch()
                .alloc(0x10, 1000, 7)
                .free(0x10, 7)
                .alloc(0x20, 1000, 0)
                .alloc(0x30, 1000, 9));
        assertEquals(2, twoStreams.streams());
        assertEquals(3, twoStreams.result().deviceMallocs());
        ReplayOutcome oneStream = replay(options("caching", "sim:1GiB"), TestTraces.pytorch()
                .alloc(0x10, 1000, 7)
                .free(0x10, 7)
                .alloc(0x20, 1000, 7));
        assertEquals(1, oneStream.streams());
        assertEquals(1, oneStream.result().deviceMallocs());
    }

    @Test
    void outOfMemoryIsCountedAndTheReplayContinues() throws IOException {
        ReplayOutcome direct = replay(options("direct", "sim:1MiB"), TestTraces.of(TraceFormat.RMM_CSV)
                .alloc(1, 600 * 1024)
                .alloc(2, 600 * 1024)
                .free(2)
                .alloc(3, 100 * 1024)
                .free(1)
                .free(3));
        assertAll(
                () -> assertEquals(1, direct.result().ooms()),
                () -> assertEquals(2, direct.result().allocs()),
                () -> assertEquals(2, direct.result().frees()),
                () -> assertEquals(1, direct.failedFrees(), "the free of the failed allocation is skipped"),
                () -> assertEquals(0, direct.unknownFrees()),
                () -> assertEquals(0, direct.result().endReservedBytes()));

        ReplayOutcome caching = replay(options("caching", "sim:64MiB"), TestTraces.pytorch()
                .alloc(1, 40 * MiB)
                .alloc(2, 40 * MiB)
                .alloc(3, 1000)
                .free(3)
                .free(2)
                .free(1));
        assertAll(
                () -> assertEquals(1, caching.result().ooms()),
                () -> assertEquals(2, caching.result().allocs()),
                () -> assertEquals(2, caching.result().frees()),
                () -> assertEquals(42 * MiB, caching.result().peakReservedBytes()));

        // The trace's own failures (an RMM allocate failure, a PyTorch oom row with its request) are asked for
        // again: the program made that request. Here it fails too (40 + 40 MiB on 64), and so does the next one.
        ReplayOutcome recorded = replay(options("caching", "sim:64MiB"), TestTraces.of(TraceFormat.RMM_CSV)
                .alloc(1, 40 * MiB)
                .oom(40 * MiB)
                .alloc(2, 40 * MiB)
                .free(1));
        assertAll(
                () -> assertEquals(4, recorded.result().events()),
                () -> assertEquals(2, recorded.result().ooms()),
                () -> assertEquals(2, recorded.result().firstOom().event(), "the recorded failure fails first"),
                () -> assertTrue(recorded.notes().contains("the trace records 1 out-of-memory failure of the"
                        + " recorded allocator: each request that failed was asked for again here, 0 served (freed"
                        + " at once: the program never had them); this replay had 2 out-of-memory errors in all"),
                        recorded.notes()::toString));
    }

    @Test
    void warmStartRestoresTheSegmentsAtTheScriptedAddressesAndMatchesTheTrace() throws IOException {
        ReplayOutcome o = replay(options("caching", "sim:80GiB").withWarm(true), warmSample());
        ReplayResult r = o.result();
        ReplayResult.GroundTruth g = r.groundTruth();
        assertNotNull(g);
        assertAll(
                () -> assertEquals(WarmStartKind.RESTORED, o.warmStart()),
                () -> assertEquals(2, o.restoredSegments()),
                () -> assertEquals(3, o.restoredBlocks()),
                () -> assertEquals(4, r.allocs(), "prealloc rows were restored, not allocated"),
                () -> assertEquals(3, r.frees()),
                () -> assertEquals(1, o.streams()),
                () -> assertEquals(2, r.deviceMallocs(), "restored segments are not the replay's mallocs"),
                () -> assertEquals(0, r.deviceFrees()),
                () -> assertEquals(54 * MiB, r.peakReservedBytes()),
                () -> assertEquals(22 * MiB, r.timeline().reserved()[0], "event 0: the restored state"),
                () -> assertEquals(2, g.deviceMallocs()),
                () -> assertEquals(0, g.deviceFrees()),
                () -> assertEquals(54 * MiB, g.peakReservedBytes()),
                () -> assertTrue(g.match(), () -> g.firstDifference()),
                () -> assertNull(g.firstDifference()),
                () -> assertTrue(o.notes().getFirst().contains("at their recorded addresses"), o.notes()::toString));
        MemorySnapshot peak = r.peakSnapshot();
        assertNotNull(peak);
        assertEquals(54 * MiB, peak.stats().reservedBytes());
        List<Long> addresses = peak.segments().stream().map(SegmentSnapshot::address).toList();
        assertTrue(addresses.contains(A) && addresses.contains(B), addresses::toString);
        // New segments come top-down from 2^47, above the restored ones.
        assertTrue(addresses.contains(Replayer.WARM_TOP_ADDRESS - 30 * MiB), addresses::toString);
        peak.checkInvariants();
    }

    /**
     * The sample was recorded without expandable segments (it has segment_alloc rows), so a replay with them restores
     * its presegments as ordinary segments and says why (traces recorded with them: ExpandableWindowReplayTest).
     */
    @Test
    void aWarmStartWithExpandableSegmentsSaysThatPresegmentsBecameOrdinarySegments() throws IOException {
        ReplayOutcome o = replay(options("caching", "sim:80GiB").withWarm(true).withConf("expandable_segments:True"),
                warmSample());
        assertEquals(WarmStartKind.RESTORED, o.warmStart());
        assertTrue(o.notes().contains("warm start: the presegments were restored as ordinary (cudaMalloc'd) segments,"
                + " not as mapped ranges of expandable segments: the trace has segment_alloc or segment_free rows: it"
                + " was recorded without expandable segments"), o.notes()::toString);
        ReplayOutcome plain = replay(options("caching", "sim:80GiB").withWarm(true), warmSample());
        assertTrue(plain.notes().stream().noneMatch(n -> n.contains("ordinary (cudaMalloc'd)")),
                plain.notes()::toString);
    }

    @Test
    void onADeviceThatCannotPlaceSegmentsTheWarmStartKeepsEachBlocksOffsetInItsSegment() throws IOException {
        ReplayOutcome o = replay(options("caching", "host").withWarm(true), warmSample());
        assertEquals(WarmStartKind.RESTORED, o.warmStart());
        assertTrue(o.notes().getFirst().contains("blocks keep their offsets within their segments"),
                o.notes()::toString);
        assertEquals(4, o.result().allocs());
        assertEquals(3, o.result().frees());
        assertEquals(0, o.unknownFrees());
        assertTrue(o.result().groundTruth().match(), o.result().groundTruth()::firstDifference);
    }

    @Test
    void warmStartInfersBlockSizesWithPyTorchsSplitRuleAndTheLookAhead() throws IOException {
        TraceScan scan = TraceScan.of("t", warmSample().source());
        try (SimulatedDevice device = SimulatedDevice.builder()
                .topAddress(Replayer.WARM_TOP_ADDRESS).addressSpace(Replayer.WARM_ADDRESS_SPACE)
                .scriptedAddresses(List.of(A, B)).build();
             CachingAllocator caching = new CachingAllocatorProvider()
                     .create(device, "")) {
            KeyMap live = new KeyMap(16);
            List<WarmStart.RestoredBlock> blocks = WarmStart.seed(TestTraces.restore(caching), scan,
                    s -> DeviceStream.DEFAULT, live);
            assertEquals(List.of(WarmStart.SizeRule.TAIL_TO_BOUNDARY, WarmStart.SizeRule.TAIL_TO_FIRST_ALLOC,
                    WarmStart.SizeRule.ROUNDED), blocks.stream().map(WarmStart.RestoredBlock::rule).toList());
            assertEquals(List.of(5_767_168L, 2_621_440L, 1024L),
                    blocks.stream().map(WarmStart.RestoredBlock::blockSize).toList());
            assertEquals(22 * MiB, caching.stats().reservedBytes());
            assertEquals(5_767_168L + 2_621_440L + 1024L, caching.stats().allocatedBytes());
            assertEquals(3, live.size());
            assertEquals(A, live.remove(A, EventDispatch.MISSING), "restored at the recorded address");
        }
        PyTorchStateRestore defaults = TestTraces.defaultCachingRules();
        assertEquals(12 * MiB, WarmStart.inferBlockSize(defaults, 12 * MiB, 13 * MiB + 512, false));
        assertEquals(13 * MiB, WarmStart.inferBlockSize(defaults, 12 * MiB, 13 * MiB, false));
        assertEquals(12 * MiB + MiB / 2, WarmStart.inferBlockSize(defaults, 12 * MiB, 12 * MiB + MiB / 2, false));
        assertEquals(1024, WarmStart.inferBlockSize(defaults, 1024, 1536, true));
    }

    @Test
    void warmStartWithAnAllocatorThatCannotRestoreAllocatesThePreallocBlocksAndSaysSo() throws IOException {
        ReplayOutcome o = replay(options("direct", "sim:80GiB").withWarm(true), warmSample());
        assertEquals(WarmStartKind.MALLOC, o.warmStart());
        assertEquals(3, o.restoredBlocks());
        assertEquals(7, o.result().allocs(), "3 prealloc rows + 4 alloc rows");
        assertEquals(3, o.result().frees());
        assertEquals(0, o.unknownFrees(), "the free of prealloc block A found it");
        assertTrue(o.notes().getFirst().contains("allocated with malloc"), o.notes()::toString);
        ReplayResult.GroundTruth g = o.result().groundTruth();
        assertFalse(g.match());
        assertTrue(g.firstDifference().endsWith("(the trace starts warm: its 22.00 MiB of presegments were not"
                + " restored)"), g.firstDifference());
    }

    @Test
    void aColdReplayOfAWarmTraceAllocatesThePreallocRowsAndSaysHowToRestoreThem() throws IOException {
        ReplayOutcome o = replay(options("caching", "sim:80GiB"), warmSample());
        assertEquals(WarmStartKind.NONE, o.warmStart());
        assertEquals(7, o.result().allocs());
        assertTrue(o.notes().getFirst().startsWith("the trace starts warm (2 presegments, 3 prealloc blocks)"),
                o.notes()::toString);
        assertTrue(o.notes().getFirst().endsWith("--warm restores the recorded state"), o.notes()::toString);

        ReplayOutcome cold = replay(options("caching", "sim:80GiB").withWarm(true), emptyCacheTrace());
        assertEquals(WarmStartKind.NONE, cold.warmStart());
        assertTrue(cold.notes().getFirst().startsWith("--warm: the trace has no presegment or prealloc rows"),
                cold.notes()::toString);
    }

    @Test
    void aWarmStartNeedsItsRowsBeforeTheRecordedEvents() {
        TestTraces.Builder t = TestTraces.pytorch()
                .presegment(A, 20 * MiB)
                .alloc(A + 8 * MiB, 1000)
                .prealloc(A, 1000);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> replay(options("caching", "sim:80GiB").withWarm(true), t));
        assertTrue(e.getMessage().startsWith("t:4: a prealloc row after the recorded events (which start at line 3)"),
                e.getMessage());
        // Without --warm the rows are replayed as they come.
        assertEquals(2, assertDoesNotThrowReplay(options("caching", "sim:80GiB"), t).result().allocs());
    }

    @Test
    void aPreallocOutsideEveryPresegmentIsRefusedWithItsLine() {
        TestTraces.Builder t = TestTraces.pytorch()
                .presegment(A, 20 * MiB)
                .prealloc(B, 1000)
                .alloc(A, 1000);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> replay(options("caching", "sim:80GiB").withWarm(true), t));
        assertTrue(e.getMessage().startsWith("t:3: prealloc block at 0x" + Long.toHexString(B)
                + " lies in no presegment"), e.getMessage());
    }

    static ReplayOutcome assertDoesNotThrowReplay(ReplayOptions options, TestTraces.Builder t) {
        try {
            return replay(options, t);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void emptyCacheAtTheFirstSegmentFreeOfEachRun() throws IOException {
        ReplayOutcome on = replay(options("caching", "sim:1GiB").withEmptyCacheAtSegmentFree(true), emptyCacheTrace());
        assertAll(
                () -> assertEquals(2, on.emptyCacheCalls()),
                () -> assertEquals(2, on.result().deviceFrees()),
                () -> assertEquals(0, on.result().endReservedBytes()),
                () -> assertTrue(on.result().groundTruth().match(), on.result().groundTruth()::firstDifference));

        // A run of two segment_free rows is one empty_cache call.
        TestTraces.Builder run = TestTraces.pytorch()
                .alloc(A, 30 * MiB)
                .alloc(B, 1000)
                .free(A)
                .free(B)
                .segmentFree(A, 30 * MiB)
                .segmentFree(B, 2 * MiB);
        assertEquals(1, replay(options("caching", "sim:1GiB").withEmptyCacheAtSegmentFree(true), run)
                .emptyCacheCalls());

        ReplayOutcome off = replay(options("caching", "sim:1GiB"), emptyCacheTrace());
        assertEquals(0, off.emptyCacheCalls());
        assertEquals(0, off.result().deviceFrees());
        assertEquals(32 * MiB, off.result().endReservedBytes());
        assertEquals("device frees: 0 here, 2 in the trace (where the program called empty_cache,"
                + " --empty-cache-at-segment-free does too)", off.result().groundTruth().firstDifference());
    }

    @Test
    void groundTruthMatchesOrNamesTheFirstDifference() throws IOException {
        ReplayOutcome caching = replay(options("caching", "sim:1GiB").withEmptyCacheAtSegmentFree(true),
                emptyCacheTrace());
        ReplayResult.GroundTruth g = caching.result().groundTruth();
        assertEquals(new ReplayResult.GroundTruth(2, 2, 30 * MiB, true, null), g);

        // direct makes the first segment (30 MiB) like PyTorch, then a 1000 B one where PyTorch made 2 MiB.
        ReplayResult.GroundTruth direct = replay(options("direct", "sim:1GiB"), emptyCacheTrace()).result()
                .groundTruth();
        assertFalse(direct.match());
        assertTrue(direct.firstDifference().matches("device malloc #2: \\d+ B here, 2097152 B in the trace"),
                direct.firstDifference());

        // The trace made a segment the replay did not need.
        TestTraces.Builder extra = TestTraces.pytorch()
                .segmentAlloc(A, 2 * MiB)
                .alloc(A, 1000)
                .segmentAlloc(B, 2 * MiB);
        assertEquals("device malloc #2: none here (this replay made 1), 2097152 B in the trace",
                replay(options("caching", "sim:1GiB"), extra).result().groundTruth().firstDifference());

        // The replay made a segment the trace did not.
        TestTraces.Builder fewer = TestTraces.pytorch()
                .segmentAlloc(A, 2 * MiB)
                .alloc(A, 1000)
                .alloc(B, 2 * MiB);
        assertEquals("device malloc #2: 20971520 B here, none in the trace (it made 1)",
                replay(options("caching", "sim:1GiB"), fewer).result().groundTruth().firstDifference());

        // A PyTorch trace without segment rows (a recording) has no ground truth at all.
        TestTraces.Builder recorded = TestTraces.pytorch()
                .alloc(A, 1000)
                .alloc(B, 2 * MiB);
        assertEquals(null, replay(options("caching", "sim:1GiB"), recorded).result().groundTruth());

        // Same mallocs and frees, a different peak: the trace started with a presegment the cold replay lacks.
        TestTraces.Builder warm = TestTraces.pytorch()
                .presegment(C, 2 * MiB)
                .segmentAlloc(A, 30 * MiB)
                .alloc(A, 30 * MiB);
        assertEquals("peak reserved: 31457280 B here, 33554432 B in the trace (the trace starts warm: its 2.00 MiB"
                        + " of presegments were not restored)",
                replay(options("caching", "sim:1GiB"), warm).result().groundTruth().firstDifference());
    }

    @Test
    void expandableSegmentsCountMapsAsDeviceMallocs() throws IOException {
        TestTraces.Builder t = TestTraces.pytorch()
                .segmentMap(A, 20 * MiB)
                .alloc(A, 12 * MiB)
                .free(A);
        ReplayOutcome o = replay(options("caching", "sim:1GiB").withConf("expandable_segments:True"), t);
        assertEquals("expandable_segments:True", o.result().conf());
        assertEquals(1, o.result().deviceMallocs());
        assertTrue(o.result().groundTruth().match(), o.result().groundTruth()::firstDifference);
    }

    @Test
    void theTimelineIsSampledAndBounded() throws IOException {
        TestTraces.Builder t = TestTraces.of(TraceFormat.RMM_CSV);
        for (int i = 1; i <= 10_000; i++) {
            t.alloc(i, 1000 + i).free(i);
        }
        // Two passes (--warm) know the event count: every 11th event (ceil(20,000 / 1,998)), the first and last.
        ReplayResult.Timeline known = replay(options("caching", "sim:1GiB").withWarm(true), t).result().timeline();
        assertEquals(20_000 / 11 + 2, known.size());
        assertEvenlySpacedFromZeroTo(20_000, 11, known);
        // One pass does not: every event until 2,000 points, then every other one kept and the stride doubled,
        // each time they fill up (at 2,000, 4,000, 8,000 and 16,000 events): every 16th, and the last.
        ReplayResult.Timeline halved = replay(options("caching", "sim:1GiB"), t).result().timeline();
        assertEquals(20_000 / 16 + 1, halved.size());
        assertEvenlySpacedFromZeroTo(20_000, 16, halved);

        // A short trace: every event.
        ReplayResult small = replay(options("caching", "sim:1GiB"), warmSample()).result();
        assertEquals(small.events() + 1, small.timeline().size());
    }

    /**
     * Fragmentation reads the allocated bytes at the peak at the same events in one pass and in two, whatever the
     * timeline's sampling: a short-lived large block between two samples counts in both or in neither.
     */
    @Test
    void fragmentationIsTheSameInOnePassAndInTwo() throws IOException {
        TestTraces.Builder t = TestTraces.pytorch().alloc(1, 512);
        for (int i = 0; i < 10_000; i++) {
            if (i == 1500) {
                t.alloc(2, 1_000_000).free(2);
            }
            t.alloc(10 + i, 4096).free(10 + i);
        }
        for (String allocator : List.of("caching", "bfc")) {
            ReplayResult one = replay(options(allocator, "sim:1GiB"), t).result();
            ReplayResult two = replay(options(allocator, "sim:1GiB").withWarm(true), t).result();
            assertEquals(two.fragmentation(), one.fragmentation(), allocator);
            assertEquals(two.requestedFragmentation(), one.requestedFragmentation(), allocator);
        }
    }

    private static void assertEvenlySpacedFromZeroTo(long last, long stride, ReplayResult.Timeline tl) {
        assertTrue(tl.size() <= Replayer.MAX_TIMELINE_POINTS);
        assertEquals(0, tl.event()[0]);
        assertEquals(last, tl.event()[tl.size() - 1]);
        for (int i = 1; i < tl.size() - 1; i++) {
            assertEquals(i * stride, tl.event()[i], "point " + i);
        }
        for (int i = 1; i < tl.size(); i++) {
            assertTrue(tl.reserved()[i] >= tl.allocated()[i]);
        }
    }

    @Test
    void thePeakSnapshotIsTakenAtTheReservedPeakWhateverTheTiming() throws IOException {
        TestTraces.Builder t = TestTraces.pytorch()
                .alloc(1, 30 * MiB)
                .alloc(2, 30 * MiB)
                .free(1)
                .free(2);
        for (int i = 10; i < 310; i++) {
            t.alloc(i, 30 * MiB).free(i);
        }
        ReplayResult r = replay(options("caching", "sim:1GiB"), t).result();
        assertEquals(60 * MiB, r.peakReservedBytes());
        assertNotNull(r.peakSnapshot());
        assertEquals(2, r.peak().event());
        assertEquals(60 * MiB, r.peakSnapshot().stats().reservedBytes());
        assertEquals(60 * MiB, r.peakSnapshot().stats().allocatedBytes());
        assertEquals(2, r.peakSnapshot().segments().size());
        assertEquals(0.0, r.fragmentation(), 1e-12, "both 30 MiB blocks were live at the peak");
        assertEquals(0.0, r.requestedFragmentation(), 1e-12);

        // direct gives memory back at once: the peak lasts one event, and the snapshot is taken there (a sampled
        // snapshot, once per 1% of the events, missed it and showed 1 MiB).
        TestTraces.Builder brief = TestTraces.of(TraceFormat.RMM_CSV)
                .alloc(1, MiB)
                .alloc(2, MiB)
                .free(2);
        for (int i = 10; i < 310; i++) {
            brief.alloc(i, 1000).free(i);
        }
        ReplayResult d = replay(options("direct", "sim:1GiB"), brief).result();
        assertEquals(2 * MiB, d.peakReservedBytes());
        assertEquals(2, d.peak().event());
        assertEquals(2 * MiB, d.peakSnapshot().stats().reservedBytes());
    }

    @Test
    void fragmentationAtThePeakComparesAllocatedAndRequestedBytesWithReservedBytes() throws IOException {
        // 5 MiB + 1 B rounds to 5 MiB + 512 B, split off a new 20 MiB segment: the peak is that segment's malloc.
        ReplayResult r = replay(options("caching", "sim:1GiB"), TestTraces.pytorch()
                .alloc(1, 5 * MiB + 1)
                .free(1)).result();
        assertEquals(20 * MiB, r.peakReservedBytes());
        assertEquals(1.0 - (5.0 * MiB + 512) / (20 * MiB), r.fragmentation(), 1e-12);
        assertEquals(1.0 - (5.0 * MiB + 1) / (20 * MiB), r.requestedFragmentation(), 1e-12);
    }

    @Test
    void progressIsReportedEveryIntervalAndAtTheEnd() throws IOException {
        TestTraces.Builder t = TestTraces.of(TraceFormat.RMM_CSV);
        for (int i = 1; i <= 35_000; i++) {
            t.alloc(i, 1000).free(i);
        }
        List<long[]> updates = new ArrayList<>();
        AtomicInteger finished = new AtomicInteger();
        ReplayProgress listener = new ReplayProgress() {
            @Override
            public void update(long done, long total) {
                updates.add(new long[] {done, total});
            }

            @Override
            public void finish() {
                finished.incrementAndGet();
            }
        };
        // Two passes: the total is known.
        new Replayer(options("caching", "sim:1GiB").withWarm(true), listener).replay("t", t.source());
        assertEquals(2, updates.size());
        assertEquals(List.of(65_536L, 70_000L), updates.stream().map(u -> u[0]).toList());
        assertEquals(70_000, updates.getFirst()[1]);
        assertEquals(1, finished.get());
        // One pass over a source of unknown size: no estimate until the end.
        updates.clear();
        new Replayer(options("caching", "sim:1GiB"), listener)
                .replay("t", t.source());
        assertEquals(List.of(65_536L, 70_000L), updates.stream().map(u -> u[0]).toList());
        assertEquals(List.of(-1L, 70_000L), updates.stream().map(u -> u[1]).toList());
        assertEquals(2, finished.get());
    }

    @Test
    void aOnePassReplayOfAFileEstimatesItsTotalFromTheBytesRead(
            @TempDir Path dir) throws IOException {
        StringBuilder text = new StringBuilder(PyTorchCsvReader.HEADER).append('\n');
        for (int i = 0; i < 100_000; i++) {
            text.append(2 * i).append(",alloc,").append(139_800_000_000_000L + 4096L * i).append(",4096,0,1\n");
            text.append(2 * i + 1).append(",free_completed,").append(139_800_000_000_000L + 4096L * i)
                    .append(",4096,0,2\n");
        }
        Path file = dir.resolve("t.csv");
        Files.writeString(file, text);
        List<long[]> updates = new ArrayList<>();
        ReplayProgress listener = new ReplayProgress() {
            @Override
            public void update(long done, long total) {
                updates.add(new long[] {done, total});
            }

            @Override
            public void finish() {
            }
        };
        new Replayer(options("caching", "sim:1GiB"), listener)
                .replay("t.csv", TraceSources.of(file));
        assertEquals(4, updates.size(), "every 65,536 events and at the end");
        for (long[] u : updates) {
            assertTrue(u[1] >= u[0] && u[1] > 180_000 && u[1] < 220_000, () -> u[0] + " of " + u[1]);
        }
        assertEquals(200_000, updates.getLast()[1]);
    }

    @Test
    void badAllocatorsDevicesAndConfigurationsFailBeforeTheTraceIsRead() {
        TraceSource unread = () -> {
            throw new AssertionError("the trace must not be read");
        };
        InvalidConfigurationException unknown = assertThrows(InvalidConfigurationException.class,
                () -> new Replayer(options("nope", "sim:1GiB")).replay("t", unread));
        assertTrue(unknown.getMessage().contains("unknown allocator 'nope'"), unknown.getMessage());
        assertThrows(InvalidConfigurationException.class,
                () -> new Replayer(options("caching", "sim:1GiB").withConf("max_split_size_mb:1")).replay("t", unread));
        assertThrows(DeviceUnavailableException.class,
                () -> new Replayer(options("caching", "nodevice:1")).replay("t", unread));
        assertThrows(InvalidConfigurationException.class,
                () -> new Replayer(options("caching", "sim:lots")).replay("t", unread));
    }

    @Test
    void aTraceThatChangesBetweenThePassesIsAnError() {
        AtomicInteger opens = new AtomicInteger();
        TraceSource changing = () -> new ListTraceReader(TraceFormat.RMM_CSV, opens.getAndIncrement() == 0
                ? TestTraces.of(TraceFormat.RMM_CSV).alloc(1, 10).events()
                : TestTraces.of(TraceFormat.RMM_CSV).alloc(1, 10).free(1).events());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> new Replayer(options("direct", "sim:1GiB").withWarm(true)).replay("t", changing));
        assertEquals("t changed while it was replayed: 1 events in the first pass, 2 in the second", e.getMessage());
    }

    @Test
    void everyAllocatorOnTheClassPathReplays() throws IOException {
        for (String name : AllocatorRegistry.load().names()) {
            ReplayOutcome o = replay(options(name, "sim:1GiB"), warmSample());
            assertEquals(7, o.result().allocs() + o.result().ooms(), name);
            assertEquals(name, o.result().allocator());
        }
    }

    /**
     * A malformed row deep in a CSV is found on the reading thread and reported with its line, after the rows
     * before it were replayed; with {@code --warm} the first pass finds it. Either way the replay fails with the
     * reader's message.
     */
    @ParameterizedTest
    @ValueSource(strings = {"6000,alloc,12x,512,0,1", "x,alloc,1,512,0,1",
        "6000,alloc,1,512,0"})
    void aMalformedRowDeepInTheTraceFailsTheReplayWithItsLine(String badRow,
            @TempDir Path dir) throws IOException {
        StringBuilder text = new StringBuilder(PyTorchCsvReader.HEADER).append('\n');
        for (int i = 0; i < 6000; i++) {
            long address = 139_800_000_000_000L + 4096L * (i / 2);
            text.append(i).append(i % 2 == 0 ? ",alloc," : ",free_completed,").append(address)
                    .append(",512,0,1763324225770003\n");
        }
        text.append(badRow).append('\n');
        for (int i = 0; i < 500; i++) {
            text.append(6001 + i).append(",alloc,").append(140_000_000_000_000L + 4096L * i).append(",512,0,1\n");
        }
        Path file = dir.resolve("bad.csv");
        Files.writeString(file, text);
        for (String allocator : List.of("caching", "bfc", "caching --warm")) {
            ReplayOptions o = allocator.endsWith("--warm") ? options("caching", "sim:1GiB").withWarm(true)
                    : options(allocator, "sim:1GiB");
            TraceFormatException e = assertThrows(
                    TraceFormatException.class,
                    () -> new Replayer(o).replay("bad.csv", TraceSources.of(file)));
            assertEquals(6002, e.line(), e.getMessage());
            assertTrue(e.getMessage().startsWith(file + ":6002: "), e.getMessage());
        }
    }
}
