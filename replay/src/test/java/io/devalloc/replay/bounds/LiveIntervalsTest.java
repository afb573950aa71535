package io.devalloc.replay.bounds;

import static io.devalloc.replay.bounds.BoundsFixtures.intervals;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.devalloc.replay.TestTraces;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import org.junit.jupiter.api.Test;

/** Rows to intervals, rule by rule, on hand-written traces (event indices counted by hand in the comments). */
class LiveIntervalsTest {

    private static void assertInterval(LiveIntervals iv, int i, long start, long end, long size, Kind kind) {
        assertAll("interval " + i,
                () -> assertEquals(start, iv.startEvent(i), "start"),
                () -> assertEquals(end, iv.endEvent(i), "end"),
                () -> assertEquals(size, iv.requestedSize(i), "size"),
                () -> assertEquals(kind, iv.kind(i), "kind"));
    }

    @Test
    void anAllocationLivesFromItsRowToItsFreeAndSegmentRowsAreIgnored() {
        LiveIntervals iv = intervals(TestTraces.pytorch()
                .segmentAlloc(0x1000, 2 << 20)   // 0
                .alloc(0x1000, 100)               // 1
                .alloc(0x2000, 300)               // 2
                .free(0x1000)                     // 3
                .segmentFree(0x1000, 2 << 20)     // 4
                .free(0x2000));                   // 5
        assertEquals(2, iv.count());
        assertEquals(6, iv.events());
        assertInterval(iv, 0, 1, 3, 100, Kind.ALLOC);
        assertInterval(iv, 1, 2, 5, 300, Kind.ALLOC);
        assertEquals(new IntervalCounts(2, 0, 0, 0, 0, 0, 0, 0), iv.counts());
    }

    @Test
    void warmStartBlocksComeFirstAndABlockNeverFreedLivesToTheEnd() {
        LiveIntervals iv = intervals(TestTraces.pytorch()
                .presegment(0x1000, 2 << 20)      // 0
                .prealloc(0x1000, 700)            // 1
                .prealloc(0x2000, 800)            // 2
                .alloc(0x3000, 50)                // 3
                .free(0x1000));                   // 4
        assertInterval(iv, 0, 1, 4, 700, Kind.PREALLOC);
        assertInterval(iv, 1, 2, 5, 800, Kind.PREALLOC);
        assertInterval(iv, 2, 3, 5, 50, Kind.ALLOC);
        assertEquals(new IntervalCounts(1, 2, 0, 0, 0, 0, 2, 0), iv.counts());
    }

    @Test
    void anOomWithItsRequestIsAnInstantAndOneWithoutIsOnlyCounted() {
        LiveIntervals iv = intervals(TestTraces.pytorch()
                .alloc(0x1000, 100)                                        // 0
                .add(Kind.OOM, 4096, 1 << 30, 0)                           // 1: a pickle's oom: 1 GiB asked
                .add(Kind.OOM, TraceEvent.FREE_BYTES_UNKNOWN, 0, 0)        // 2: a CSV's oom: no request
                .free(0x1000));                                            // 3
        assertEquals(2, iv.count());
        assertInterval(iv, 1, 1, 2, 1 << 30, Kind.OOM);
        assertEquals(new IntervalCounts(1, 0, 1, 1, 0, 0, 0, 0), iv.counts());
    }

    @Test
    void aKeyAllocatedAgainWhileLiveEndsTheOlderIntervalThereAndUnknownFreesAreIgnored() {
        LiveIntervals iv = intervals(TestTraces.pytorch()
                .free(0x9000)                     // 0: never allocated
                .alloc(0x1000, 100)               // 1
                .alloc(0x1000, 200)               // 2: the trace lost the free of the first
                .free(0x1000)                     // 3: frees the second
                .free(0x1000));                   // 4: nothing live under that key any more
        assertInterval(iv, 0, 1, 2, 100, Kind.ALLOC);
        assertInterval(iv, 1, 2, 3, 200, Kind.ALLOC);
        assertEquals(new IntervalCounts(2, 0, 0, 0, 2, 1, 0, 0), iv.counts());
        // The older interval ends where the newer starts: they never overlap.
        assertEquals(1, iv.endRank(0));
    }

    @Test
    void keyZeroIsAKeyLikeAnyOther() {
        LiveIntervals iv = intervals(TestTraces.pytorch()
                .alloc(0, 10)                     // 0: valgrind numbers allocations from 0
                .alloc(1, 20)                     // 1
                .free(0)                          // 2
                .free(0));                        // 3
        assertInterval(iv, 0, 0, 2, 10, Kind.ALLOC);
        assertInterval(iv, 1, 1, 4, 20, Kind.ALLOC);
        assertEquals(1, iv.counts().unknownFrees());
    }

    @Test
    void negativeSizesCountAsNothingAndAreCounted() {
        LiveIntervals iv = intervals(TestTraces.pytorch()
                .alloc(0x1000, -5)                // 0
                .add(Kind.OOM, 0, -7, 0)          // 1
                .free(0x1000));                   // 2
        assertEquals(1, iv.count());
        assertInterval(iv, 0, 0, 2, 0, Kind.ALLOC);
        assertEquals(new IntervalCounts(1, 0, 0, 1, 0, 0, 0, 2), iv.counts());
    }

    @Test
    void endRanksCountTheIntervalsStartedBeforeTheEnd() {
        LiveIntervals iv = intervals(TestTraces.pytorch()
                .alloc(1, 1)                      // 0: interval 0
                .alloc(2, 1)                      // 1: interval 1
                .free(1)                          // 2: interval 0 ends after 2 starts
                .alloc(3, 1)                      // 3: interval 2
                .free(3)                          // 4
                .free(2));                        // 5
        assertEquals(2, iv.endRank(0));
        assertEquals(3, iv.endRank(1));
        assertEquals(3, iv.endRank(2));
        assertEquals(0, iv.endsFrom(2));
        assertEquals(1, iv.endsFrom(3));
        assertEquals(0, iv.endsAt(0));
    }

    @Test
    void anEmptyTraceHasNoInterval() {
        LiveIntervals iv = intervals(TestTraces.pytorch());
        assertEquals(0, iv.count());
        assertEquals(new IntervalCounts(0, 0, 0, 0, 0, 0, 0, 0), iv.counts());
    }
}
