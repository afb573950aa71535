package io.devalloc.replay;

import static io.devalloc.replay.TestTraces.MiB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.trace.TraceFormat;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The peak is the exact moment (read after every event through {@link io.devalloc.api.spi.LiveBytes}), whatever the
 * timing: its snapshot is taken there, the same in every run; and the first out-of-memory error is recorded, with
 * {@link ReplayOptions#stopAtFirstOom()} the end of the replay.
 */
class ExactPeakTest {

    private static ReplayOptions options(String allocator, String device) {
        return ReplayOptions.defaults().withAllocator(allocator).withDevice(device);
    }

    private static ReplayOutcome replay(ReplayOptions options, TestTraces.Builder trace) throws IOException {
        return new Replayer(options).replay("t", trace.source());
    }

    /**
     * A 20 MiB segment, then 2 MiB blocks allocated and freed in it; at event 36 (between two of the 32-event
     * strides the sampled peak used) a 10 MiB block fills it to 15 MiB for one event. That is the peak's fullest
     * moment.
     */
    private static TestTraces.Builder briefFill() {
        TestTraces.Builder t = TestTraces.pytorch().alloc(1, 5 * MiB);
        for (int k = 0; k < 17; k++) {
            t.alloc(100 + k, 2 * MiB).free(100 + k);
        }
        t.alloc(2, 10 * MiB).free(2);
        for (int k = 0; k < 50; k++) {
            t.alloc(200 + k, 2 * MiB).free(200 + k);
        }
        return t.free(1);
    }

    @ParameterizedTest
    @CsvSource({"caching,", "caching,expandable_segments:True", "bfc,allow_growth:true"})
    void theFullestMomentOfThePeakIsFoundWhereverItFalls(String allocator, String conf) throws IOException {
        for (boolean warm : List.of(false, true)) {
            ReplayResult r = replay(options(allocator, "sim:1GiB").withConf(conf == null ? "" : conf).withWarm(warm),
                    briefFill()).result();
            ReplayResult.Peak peak = r.peak();
            String what = allocator + ":" + conf + " warm=" + warm;
            assertTrue(peak.exact(), what);
            assertEquals(36, peak.event(), what);
            assertEquals(r.peakReservedBytes(), peak.reservedBytes(), what);
            assertEquals(15 * MiB, peak.requestedBytes(), what);
            assertEquals(1.0 - (double) peak.allocatedBytes() / peak.reservedBytes(), r.fragmentation(), 1e-15);
            assertEquals(1.0 - 15.0 * MiB / peak.reservedBytes(), r.requestedFragmentation(), 1e-15);
            // The snapshot is that moment's: the 10 MiB block is in it.
            MemorySnapshot s = r.peakSnapshot();
            assertEquals(peak.reservedBytes(), s.stats().reservedBytes(), what);
            assertEquals(peak.allocatedBytes(), s.stats().allocatedBytes(), what);
            assertEquals(15 * MiB, s.stats().requestedBytes(), what);
            assertTrue(s.segments().stream().flatMap(g -> g.blocks().stream())
                    .anyMatch(b -> b.state() == BlockState.ALLOCATED && b.requestedSize() == 10 * MiB), what);
        }
    }

    /** Three identical runs of the OPT trace give the same peak and the same segment map there, block by block. */
    @ParameterizedTest
    @CsvSource({"caching,", "caching,expandable_segments:True", "bfc,allow_growth:true", "caching-host,"})
    void threeIdenticalRunsGiveTheSameSnapshotAtThePeak(String allocator, String conf) throws IOException {
        Path file = SharedTraceReplayTest.opt("memory.csv");
        ReplayOptions o = options(allocator, "sim:80GiB").withConf(conf == null ? "" : conf);
        CompactTrace compact = CompactTrace.read(file);
        ReplayResult first = new Replayer(o).replay("memory.csv", TraceSources.of(file)).result();
        ReplayResult second = new Replayer(o).replay("memory.csv", TraceSources.of(file)).result();
        ReplayResult third = new Replayer(o).replay(compact).result();
        for (ReplayResult r : List.of(first, second, third)) {
            assertEquals(first.peak(), r.peak());
            assertEquals(first.peakSnapshot().segments(), r.peakSnapshot().segments());
            assertEquals(first.peakSnapshot().stats(), r.peakSnapshot().stats());
        }
        MemorySnapshot s = first.peakSnapshot();
        assertEquals(first.peakReservedBytes(), s.stats().reservedBytes(), "the snapshot is at the reserved peak");
        assertEquals(first.peak().allocatedBytes(), s.stats().allocatedBytes());
        assertEquals(first.peak().requestedBytes(), s.stats().requestedBytes());
        assertTrue(first.peak().event() > 0);
    }

    @Test
    void withoutAPeakSnapshotTheResultHasThePeakButNoMapAndNoWaste() throws IOException {
        ReplayResult r = replay(options("caching", "sim:1GiB").withPeakSnapshot(false), briefFill()).result();
        assertNull(r.peakSnapshot());
        assertEquals(36, r.peak().event());
        assertNull(r.peak().waste());
    }

    /** 40 MiB, then another 40 MiB on a 64 MiB device: the second fails, with 40 MiB reserved and allocated. */
    private static TestTraces.Builder secondRequestFails() {
        return TestTraces.pytorch()
                .alloc(1, 40 * MiB)
                .alloc(2, 40 * MiB)
                .alloc(3, 1000)
                .free(3)
                .alloc(4, 50 * MiB)
                .free(1);
    }

    @Test
    void theFirstOutOfMemoryErrorIsRecordedAndTheReplayGoesOnByDefault() throws IOException {
        ReplayOptions defaults = options("caching", "sim:64MiB");
        assertFalse(defaults.stopAtFirstOom());
        ReplayResult r = replay(defaults, secondRequestFails()).result();
        assertEquals(new ReplayResult.OomPoint(2, 40 * MiB, 40 * MiB, 40 * MiB), r.firstOom());
        assertFalse(r.stoppedAtOom());
        assertEquals(6, r.events());
        assertEquals(2, r.ooms(), "the 50 MiB request fails too");
    }

    @Test
    void stopAtFirstOomEndsTheReplayThereAndSaysSo() throws IOException {
        ReplayOptions stop = options("caching", "sim:64MiB").withStopAtFirstOom(true);
        ReplayOutcome o = replay(stop, secondRequestFails());
        ReplayResult r = o.result();
        assertEquals(new ReplayResult.OomPoint(2, 40 * MiB, 40 * MiB, 40 * MiB), r.firstOom());
        assertTrue(r.stoppedAtOom());
        assertEquals(2, r.events());
        assertEquals(1, r.ooms());
        assertEquals(1, r.allocs());
        assertNull(r.groundTruth(), "the ground truth of a replay cut short is not compared");
        assertTrue(o.notes().stream().anyMatch(n -> n.startsWith("stopped at the first out-of-memory error, event 2")),
                o.notes()::toString);
        // The same from a compact trace.
        CompactTrace c = CompactTrace.read("t", secondRequestFails().source());
        ReplayOutcome fromCompact = new Replayer(stop).replay(c);
        CompactTraceTest.assertSameFigures(o, fromCompact, "stop at first oom");

        // A run with no failure has no out-of-memory point.
        ReplayResult fits = replay(options("caching", "sim:1GiB").withStopAtFirstOom(true), secondRequestFails())
                .result();
        assertNull(fits.firstOom());
        assertFalse(fits.stoppedAtOom());
        assertEquals(6, fits.events());
    }

    @Test
    void aDirectAllocatorsFailureReportsItsBytesAfterTheFailure() throws IOException {
        ReplayResult r = replay(options("direct", "sim:1MiB").withStopAtFirstOom(true),
                TestTraces.of(TraceFormat.RMM_CSV)
                        .alloc(1, 600 * 1024)
                        .alloc(2, 600 * 1024)
                        .free(1)).result();
        assertEquals(new ReplayResult.OomPoint(2, 600 * 1024, 600 * 1024, 600 * 1024), r.firstOom());
        assertEquals(2, r.events());
        assertNotNull(r.peakSnapshot());
        BlockSnapshot only = r.peakSnapshot().segments().getFirst().blocks().getFirst();
        assertEquals(600 * 1024, only.requestedSize());
    }
}
