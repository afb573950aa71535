package io.devalloc.replay.bounds;

import static io.devalloc.replay.bounds.BoundsFixtures.EXACT;
import static io.devalloc.replay.bounds.BoundsFixtures.PYTORCH;
import static io.devalloc.replay.bounds.BoundsFixtures.intervals;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.spi.SizeRounding;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.TestTraces;
import io.devalloc.replay.TraceSources;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The lower bound: hand-computed peaks, the rules for OOM instants, warm starts, lost and unknown frees and hostile
 * sizes, and on real traces the same peaks as an independent sweep of the trace's rows (a {@link HashMap} over the
 * reader's events, in this test) and as {@code pickle_to_csv.py}'s summary.
 */
class LowerBoundTest {

    @Test
    void thePeakIsTheMostBytesLiveAtOnceAndTheRoundingIsPyTorchs() {
        LowerBound b = LowerBound.of(intervals(TestTraces.pytorch()
                .alloc(1, 100)                    // 0: 100 live (rounded 512)
                .alloc(2, 1000)                   // 1: 1,100 (1,536)
                .free(1)                          // 2: 1,000 (1,024)
                .alloc(3, 200)                    // 3: 1,200 (1,536): the requested peak, rounded ties
                .free(2)                          // 4
                .free(3)), PYTORCH);              // 5
        assertEquals(new LowerBound(1200, 3, 1536, 1, 0, false), b);
    }

    @Test
    void theRealCachingAllocatorsRoundingGivesTheSameBound() {
        TestTraces.Builder trace = TestTraces.pytorch()
                .alloc(1, 1).alloc(2, 513).alloc(3, 1 << 20).free(2).alloc(4, 511).free(1).free(3).free(4);
        try (DeviceAllocator allocator = new CachingAllocatorProvider(Map.of())
                .create(SimulatedDevice.ofCapacity(1L << 30), "")) {
            SizeRounding caching = allocator.unwrap(SizeRounding.class).orElseThrow();
            assertEquals(LowerBound.of(intervals(trace), PYTORCH), LowerBound.of(intervals(trace), caching));
            assertEquals(512 + 1024 + (1 << 20), LowerBound.of(intervals(trace), caching).roundedPeakBytes());
        }
    }

    @Test
    void anOomNeedsItsRequestForAnInstant() {
        LowerBound b = LowerBound.of(intervals(TestTraces.pytorch()
                .alloc(1, 3000)                   // 0: 3,000 live
                .add(Kind.OOM, 1024, 8192, 0)     // 1: 8,192 more were asked and refused: 11,192 to get past it
                .alloc(2, 4000)                   // 2: 7,000
                .free(1)
                .free(2)), EXACT);
        assertEquals(11_192, b.requestedPeakBytes());
        assertEquals(1, b.requestedPeakEvent());
    }

    @Test
    void warmStartBlocksAreLiveFromTheStart() {
        LowerBound b = LowerBound.of(intervals(TestTraces.pytorch()
                .presegment(0x1000, 1 << 20)      // 0
                .prealloc(0x1000, 600)            // 1: 600
                .prealloc(0x2000, 400)            // 2: 1,000
                .free(0x1000)                     // 3: 400
                .alloc(0x3000, 500)), EXACT);     // 4: 900
        assertEquals(new LowerBound(1000, 2, 1000, 2, 0, false), b);
    }

    @Test
    void aLostFreeEndsTheOlderBlockAndUnknownFreesChangeNothing() {
        LowerBound b = LowerBound.of(intervals(TestTraces.pytorch()
                .alloc(1, 100)                    // 0: 100
                .alloc(1, 150)                    // 1: the first is taken as freed: 150, not 250
                .free(7)                          // 2: unknown: ignored
                .alloc(2, 50)                     // 3: 200
                .free(1).free(1).free(2)), EXACT);
        assertEquals(new LowerBound(200, 3, 200, 3, 0, false), b);
    }

    @Test
    void nothingLiveHasNoPeakEvent() {
        assertEquals(new LowerBound(0, -1, 0, -1, 0, false), LowerBound.of(intervals(TestTraces.pytorch()), EXACT));
        // A 0-byte request is still a block once rounded.
        assertEquals(new LowerBound(0, -1, 512, 0, 0, false),
                LowerBound.of(intervals(TestTraces.pytorch().alloc(1, 0).free(1)), PYTORCH));
    }

    @Test
    void sumsThatOverflowSaturateAndSaySo() {
        LowerBound b = LowerBound.of(intervals(TestTraces.pytorch()
                .alloc(1, 100)
                .alloc(2, Long.MAX_VALUE - 10)    // 1: the sum passes 2^63 - 1
                .free(2)
                .alloc(3, 5)
                .alloc(4, -20)), EXACT);          // 4: negative: 0 bytes
        assertAll(
                () -> assertEquals(Long.MAX_VALUE, b.requestedPeakBytes()),
                () -> assertEquals(1, b.requestedPeakEvent()),
                () -> assertEquals(Long.MAX_VALUE, b.roundedPeakBytes()),
                () -> assertTrue(b.saturated()));
    }

    @Test
    void aRequestTheRoundingRefusesKeepsItsSizeAndIsCounted() {
        SizeRounding upToAGiB = requested -> {
            if (requested >= 1L << 30) {
                throw new IllegalArgumentException("too large");
            }
            return (requested + 255) / 256 * 256;
        };
        LowerBound b = LowerBound.of(intervals(TestTraces.pytorch()
                .alloc(1, 100).alloc(2, 3L << 30).free(1).free(2)), upToAGiB);
        assertEquals(new LowerBound((3L << 30) + 100, 1, (3L << 30) + 256, 1, 1, false), b);
    }

    @Test
    void aRoundingThatRoundsDownIsRefused() {
        LiveIntervals iv = intervals(TestTraces.pytorch().alloc(1, 100));
        assertThrows(IllegalStateException.class, () -> LowerBound.of(iv, requested -> requested / 2));
    }

    /** The shipped OPT trace: the same peaks as the sweep below and as the figures its summary recorded. */
    @ParameterizedTest
    @ValueSource(strings = {"memory.csv", "memory.pickle"})
    void theOptTraceHasThePeaksOfAnIndependentSweepAndOfItsSummary(String file) throws IOException {
        Path trace = BoundsFixtures.opt(file);
        LowerBound b = LowerBound.of(LiveIntervals.of(CompactTrace.read(trace)), PYTORCH);
        assertArrayEquals(sweep(trace, EXACT), new long[] {b.requestedPeakBytes(), b.requestedPeakEvent()});
        assertArrayEquals(sweep(trace, PYTORCH), new long[] {b.roundedPeakBytes(), b.roundedPeakEvent()});
        Path summary = BoundsFixtures.opt("memory.summary.json");
        assertEquals(BoundsFixtures.summary(summary, "peak_live_bytes_with_prealloc"), b.requestedPeakBytes());
        assertEquals(BoundsFixtures.summary(summary, "peak_active_bytes_round512"), b.roundedPeakBytes());
        assertEquals(1_783_664_516L, b.requestedPeakBytes());
    }

    /** The shared PyTorch traces (skipped when absent), warm starts included, from the CSV and the pickle. */
    @ParameterizedTest
    @ValueSource(strings = {"pt-cnn-eor-small/snapshot", "pt-cs336-medium/medium_1024_training_memory_snapshot",
            "pt-cs336-medium/medium_128_training_memory_snapshot",
            "pt-cs336-medium/medium_1024_inference_memory_snapshot"})
    void sharedTracesHaveThePeaksOfAnIndependentSweepAndOfTheirSummaries(String name) throws IOException {
        Path summary = BoundsFixtures.shared(name + ".summary.json");
        for (String extension : new String[] {".csv", ".pickle"}) {
            Path trace = BoundsFixtures.shared(name + extension);
            LowerBound b = LowerBound.of(LiveIntervals.of(CompactTrace.read(trace)), PYTORCH);
            long[] requested = sweep(trace, EXACT);
            long[] rounded = sweep(trace, PYTORCH);
            assertAll(trace.toString(),
                    () -> assertEquals(requested[0], b.requestedPeakBytes()),
                    () -> assertEquals(requested[1], b.requestedPeakEvent()),
                    () -> assertEquals(rounded[0], b.roundedPeakBytes()),
                    () -> assertEquals(rounded[1], b.roundedPeakEvent()),
                    () -> assertEquals(BoundsFixtures.summary(summary, "peak_live_bytes_with_prealloc"),
                            b.requestedPeakBytes()),
                    () -> assertEquals(BoundsFixtures.summary(summary, "peak_active_bytes_round512"),
                            b.roundedPeakBytes()));
        }
    }

    /**
     * The peak and its first event straight from the reader's events: a map of the live keys' sizes, updated row by
     * row (an allocation of a live key replaces it; an OOM with a request adds it for its row only).
     */
    private static long[] sweep(Path trace, SizeRounding rounding) throws IOException {
        Map<Long, Long> live = new HashMap<>();
        long current = 0;
        long peak = 0;
        long peakEvent = -1;
        long index = 0;
        try (TraceReader reader = TraceSources.open(trace)) {
            for (TraceEvent e = reader.next(); e != null; e = reader.next(), index++) {
                long at = current;
                if (e.kind() == Kind.ALLOC || e.kind() == Kind.PREALLOC) {
                    long bytes = rounding.roundedSize(Math.max(0, e.size()));
                    Long older = live.put(e.key(), bytes);
                    current += bytes - (older == null ? 0 : older);
                    at = current;
                } else if (e.kind() == Kind.FREE) {
                    Long freed = live.remove(e.key());
                    current -= freed == null ? 0 : freed;
                } else if (e.kind() == Kind.OOM && e.size() > 0) {
                    at = current + rounding.roundedSize(e.size());
                }
                if (at > peak) {
                    peak = at;
                    peakEvent = index;
                }
            }
        }
        return new long[] {peak, peakEvent};
    }
}
