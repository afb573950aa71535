package io.devalloc.replay;

import static io.devalloc.replay.TestTraces.A;
import static io.devalloc.replay.TestTraces.B;
import static io.devalloc.replay.TestTraces.C;
import static io.devalloc.replay.TestTraces.MiB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How a trace's runs of segment frees are told apart (the program's {@code empty_cache()} or the allocator's own
 * flush inside malloc), what capacity a trace tells, and how a replay applies both: figures worked out by hand on
 * small traces.
 */
class CacheFlushesTest {

    /** Events with a line each, and flags on the segment frees. */
    private static final class Events {
        private final List<TraceEvent> list = new ArrayList<>();

        Events add(Kind kind, long key, long size) {
            return add(kind, key, size, 0);
        }

        Events add(Kind kind, long key, long size, int flags) {
            list.add(new TraceEvent(kind, key, size, 0, 0, list.size() + 2, flags));
            return this;
        }

        CompactTrace compact() throws IOException {
            List<TraceEvent> copy = List.copyOf(list);
            return CompactTrace.read("t.csv", () -> new ListTraceReader(TraceFormat.PYTORCH_CSV, copy));
        }
    }

    @Test
    void framesTellTheAllocatorsFlushFromTheProgramsEmptyCache() throws IOException {
        // Two runs, each followed by a segment alloc: one recorded inside the malloc (same frames), one not.
        CompactTrace t = new Events()
                .add(Kind.SEGMENT_ALLOC, A, 100 * MiB).add(Kind.ALLOC, A, 100 * MiB).add(Kind.FREE, A, 0)
                .add(Kind.SEGMENT_FREE, A, 100 * MiB, TraceEvent.FLUSH_IN_MALLOC)
                .add(Kind.SEGMENT_ALLOC, B, 120 * MiB).add(Kind.ALLOC, B, 120 * MiB).add(Kind.FREE, B, 0)
                .add(Kind.SEGMENT_FREE, B, 120 * MiB, TraceEvent.FLUSH_ELSEWHERE)
                .add(Kind.SEGMENT_ALLOC, C, 50 * MiB).add(Kind.ALLOC, C, 50 * MiB).compact();
        CacheFlushes f = t.cacheFlushes();
        assertEquals(1, f.programCalls());
        assertEquals(1, f.allocatorFlushes());
        assertEquals(2, f.byFrames());
        // The allocator's flush bounds the capacity: 100 MiB reserved before it, plus the 120 MiB malloc that failed.
        RecordedCapacity c = f.capacity();
        assertNotNull(c);
        assertEquals(RecordedCapacity.Source.RETRY_FLUSHES, c.source());
        assertEquals(220 * MiB - 1, c.bytes());
    }

    @Test
    void withoutFramesAnOomAfterTheRunOrThePressureTells() throws IOException {
        // No frames anywhere (a CSV), no oom: a run followed by a device malloc cannot be told apart, and is taken
        // as the program's (an empty_cache() at the end of a step holds the peak in the cache, and the next malloc
        // goes above it just as a flush at the capacity would); one not followed by a device malloc is the program's.
        CompactTrace t = new Events()
                .add(Kind.SEGMENT_ALLOC, A, 100 * MiB).add(Kind.ALLOC, A, 100 * MiB)
                .add(Kind.SEGMENT_ALLOC, B, 50 * MiB).add(Kind.ALLOC, B, 50 * MiB).add(Kind.FREE, B, 0)
                .add(Kind.SEGMENT_FREE, B, 50 * MiB)
                .add(Kind.SEGMENT_ALLOC, C, 40 * MiB).add(Kind.ALLOC, C, 40 * MiB).add(Kind.FREE, C, 0)
                .add(Kind.SEGMENT_FREE, C, 40 * MiB)
                .add(Kind.ALLOC, A + MiB, 10)
                .compact();
        CacheFlushes f = t.cacheFlushes();
        assertEquals(0, f.allocatorFlushes());
        assertEquals(2, f.programCalls());
        assertEquals(1, f.assumedProgram());
        assertEquals(1, f.byNoDeviceMalloc());
        assertNull(f.capacity(), "nothing tells the capacity");

        // An oom after a run: the allocator's; its device_free tells the capacity (reserved then + free).
        CompactTrace oom = new Events()
                .add(Kind.SEGMENT_ALLOC, A, 100 * MiB).add(Kind.ALLOC, A, 100 * MiB)
                .add(Kind.SEGMENT_ALLOC, B, 50 * MiB).add(Kind.ALLOC, B, 50 * MiB).add(Kind.FREE, B, 0)
                .add(Kind.SEGMENT_FREE, B, 50 * MiB)
                .add(Kind.OOM, 30 * MiB, 200 * MiB).compact();
        CacheFlushes g = oom.cacheFlushes();
        assertEquals(1, g.allocatorFlushes());
        assertEquals(1, g.byOutOfMemory());
        assertEquals(RecordedCapacity.Source.OOM, g.capacity().source());
        // 100 MiB reserved at the oom (the 50 MiB segment went in the flush) + 30 MiB free = 130, below the peak of
        // 150 the allocator held: raised to that.
        assertEquals(150 * MiB, g.capacity().bytes());
        assertTrue(g.capacity().reason().contains("raised to the trace's peak reserved"), g.capacity().reason());

        // With the capacity an oom tells, a run is the allocator's only if its malloc would pass that capacity.
        CompactTrace bounded = new Events()
                .add(Kind.SEGMENT_ALLOC, A, 100 * MiB).add(Kind.ALLOC, A, 100 * MiB).add(Kind.FREE, A, 0)
                .add(Kind.SEGMENT_FREE, A, 100 * MiB)
                .add(Kind.SEGMENT_ALLOC, B, 110 * MiB).add(Kind.ALLOC, B, 110 * MiB)
                .add(Kind.OOM, 500 * MiB, 800 * MiB).compact();
        CacheFlushes h = bounded.cacheFlushes();
        assertEquals(610 * MiB, h.capacity().bytes(), "110 reserved + 500 free");
        assertEquals(1, h.programCalls(), "100 + 110 = 210 fits 610: that malloc needed no flush");
        assertEquals(1, h.byCapacity());
        // And one whose malloc could not have fitted that capacity is the allocator's.
        CompactTrace tight = new Events()
                .add(Kind.SEGMENT_ALLOC, A, 100 * MiB).add(Kind.ALLOC, A, 100 * MiB).add(Kind.FREE, A, 0)
                .add(Kind.SEGMENT_FREE, A, 100 * MiB)
                .add(Kind.SEGMENT_ALLOC, B, 110 * MiB).add(Kind.ALLOC, B, 110 * MiB)
                .add(Kind.OOM, 90 * MiB, 800 * MiB).compact();
        assertEquals(200 * MiB, tight.cacheFlushes().capacity().bytes(), "110 reserved + 90 free");
        assertEquals(1, tight.cacheFlushes().allocatorFlushes(), "100 + 110 = 210 > 200: the malloc failed first");
    }

    @Test
    void aWarmReplayReproducesTheAllocatorsFlushAndTheOomAColdOneLeavesThemToTheAllocator() throws IOException {
        // A malloc that needed a flush (same frames), then one the recorded allocator could not serve at all.
        CompactTrace t = new Events()
                .add(Kind.SEGMENT_ALLOC, A, 100 * MiB).add(Kind.ALLOC, A, 100 * MiB).add(Kind.FREE, A, 0)
                .add(Kind.SEGMENT_FREE, A, 100 * MiB, TraceEvent.FLUSH_IN_MALLOC)
                .add(Kind.SEGMENT_ALLOC, B, 120 * MiB).add(Kind.ALLOC, B, 120 * MiB)
                .add(Kind.OOM, 10 * MiB, 200 * MiB).compact();
        ReplayOutcome warm = new Replayer(new ReplayOptions("caching", "sim:80GiB", "", true, true)).replay(t);
        ReplayResult.GroundTruth g = warm.result().groundTruth();
        assertTrue(g.match(), g::firstDifference);
        assertEquals(1, warm.result().deviceFrees(), "the flush made here too, by the allocator's own ladder");
        assertEquals(1, warm.flushes().reproducedFlushes());
        assertEquals(1, warm.flushes().reproducedOoms());
        assertEquals(1, warm.result().ooms(), "a reproduced failure fails this replay too, and is counted");
        assertEquals(7, warm.result().firstOom().event(), "the oom row, the 7th event");
        assertEquals(200 * MiB, warm.result().firstOom().requestBytes());
        assertEquals(0, warm.emptyCacheCalls(), "the allocator's flush is not an empty_cache()");
        assertEquals(2, warm.result().allocRetries(), "the ladder's retries, as PyTorch counts them: the flush's and"
                + " the failed request's");

        // Cold, on 80 GiB: no flush is needed, and the failed 200 MiB request is served (and freed at once).
        ReplayOutcome cold = new Replayer(new ReplayOptions("caching", "sim:80GiB", "", false, true)).replay(t);
        assertEquals(0, cold.result().deviceFrees());
        assertEquals(0, cold.result().ooms());
        assertEquals(1, cold.flushes().failedRequestsServed());
        assertEquals(420 * MiB, cold.result().peakReservedBytes(), "100 + 120 + the 200 MiB request");

        // Cold on 219 MiB: the allocator flushes on its own for the 120 MiB malloc (100 + 120 do not fit), and the
        // 200 MiB request fails after a second retry.
        ReplayOutcome capped = new Replayer(new ReplayOptions("caching", "sim:" + 219 * MiB + "B", "", false, true))
                .replay(t);
        assertEquals(1, capped.result().deviceFrees());
        assertEquals(2, capped.result().allocRetries());
        assertEquals(1, capped.result().ooms());
        assertEquals(7, capped.result().firstOom().event(), "the oom row, the 7th event");
        assertEquals(200 * MiB, capped.result().firstOom().requestBytes());
    }

    @Test
    void anOomEntryWithoutTheFreeBytesBoundsTheCapacityByTheSegmentThatFailed() throws IOException {
        assertEquals(2 * MiB, FlushRuns.failedSegment(512 * 1024), "the small pool's 2 MiB segment");
        assertEquals(20 * MiB, FlushRuns.failedSegment(5 * MiB), "a 20 MiB large-pool segment");
        assertEquals(40 * MiB, FlushRuns.failedSegment(25 * MiB), "26 MiB, or two 20 MiB pages when expandable");
        // 120 MiB reserved, then a 30 MiB request that failed: below 120 + 40 MiB.
        CompactTrace t = new Events()
                .add(Kind.SEGMENT_ALLOC, A, 120 * MiB).add(Kind.ALLOC, A, 120 * MiB)
                .add(Kind.OOM, TraceEvent.FREE_BYTES_UNKNOWN, 30 * MiB).compact();
        RecordedCapacity c = t.cacheFlushes().capacity();
        assertEquals(RecordedCapacity.Source.OOM_REQUEST, c.source());
        assertEquals(160 * MiB - 1, c.bytes());
        assertEquals(1, t.oomEntries());
        RecordedOom o = t.recordedOoms().getFirst();
        assertEquals(new RecordedOom(3, 30 * MiB, 120 * MiB, 120 * MiB, -1), o);
        assertEquals(-1, o.capacityBytes());
    }

    @Test
    void theProgramsEmptyCacheIsReplayedWhereItWasCalledAndOnlyThere() throws IOException {
        CompactTrace t = new Events()
                .add(Kind.SEGMENT_ALLOC, A, 100 * MiB).add(Kind.ALLOC, A, 100 * MiB).add(Kind.FREE, A, 0)
                .add(Kind.SEGMENT_FREE, A, 100 * MiB, TraceEvent.FLUSH_ELSEWHERE)
                .add(Kind.SEGMENT_ALLOC, B, 100 * MiB).add(Kind.ALLOC, B, 100 * MiB).add(Kind.FREE, B, 0)
                .add(Kind.SEGMENT_FREE, B, 100 * MiB, TraceEvent.FLUSH_IN_MALLOC)
                .add(Kind.SEGMENT_ALLOC, C, 150 * MiB).add(Kind.ALLOC, C, 150 * MiB).compact();
        ReplayOutcome cold = new Replayer(new ReplayOptions("caching", "sim:80GiB", "", false, true)).replay(t);
        assertEquals(1, cold.emptyCacheCalls(), "the program's call; not the allocator's flush");
        assertEquals(1, cold.result().deviceFrees());
        assertEquals(250 * MiB, cold.result().peakReservedBytes(), "the second 100 MiB segment stays cached");
        ReplayOutcome warm = new Replayer(new ReplayOptions("caching", "sim:80GiB", "", true, true)).replay(t);
        assertTrue(warm.result().groundTruth().match(), warm.result().groundTruth()::firstDifference);
        assertEquals(2, warm.result().deviceFrees());
        assertEquals(1, warm.emptyCacheCalls());
        assertEquals(1, warm.flushes().reproducedFlushes());
    }

    @Test
    void aTraceOfItsStartStateOnlyIsNeverAMatch() throws IOException {
        CompactTrace t = new Events().add(Kind.PRESEGMENT, A, 20 * MiB).add(Kind.PREALLOC, A, 1000).compact();
        assertTrue(!t.hasHistory());
        ReplayOutcome warm = new Replayer(new ReplayOptions("caching", "sim:80GiB", "", true, true)).replay(t);
        assertNull(warm.result().groundTruth(), "nothing recorded after the start state: nothing to compare");
        assertEquals(20 * MiB, warm.result().peakReservedBytes(), "the restored state");
    }
}
