package io.devalloc.replay.bounds;

import static io.devalloc.replay.bounds.BoundsFixtures.EXACT;
import static io.devalloc.replay.bounds.BoundsFixtures.PYTORCH;
import static io.devalloc.replay.bounds.BoundsFixtures.intervals;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.spi.SizeRounding;
import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.TestTraces;
import io.devalloc.trace.TraceEvent.Kind;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The offline plan: hand-placed small cases (offsets worked out in the comments), each order beating the other, the
 * same offsets as a naive XLA-style best fit on random traces, validity, determinism, never below the rounded bound,
 * stacking when nothing is freed, and the invariants on the shipped OPT trace and the shared traces.
 */
class OfflinePlanTest {

    private static long[] offsets(HeapPlacement p) {
        long[] out = new long[p.count()];
        for (int i = 0; i < out.length; i++) {
            out[i] = p.offset(i);
        }
        return out;
    }

    /** Intervals (event ranges): A = 5 B [0, 4), B = 5 B [1, 6), C = 3 B [2, 3), D = 6 B [5, 7). Peak 13 at event 2. */
    private static TestTraces.Builder lifetimeWins() {
        return TestTraces.pytorch().alloc(1, 5).alloc(2, 5).alloc(3, 3).free(3).free(1).alloc(4, 6).free(2).free(4);
    }

    /** A = 5 B [0, 2), B = 5 B [1, 4), C = 5 B [3, 6), D = 6 B [5, 7). Peak 11 at event 5 (C and D). */
    private static TestTraces.Builder sizeWins() {
        return TestTraces.pytorch().alloc(1, 5).alloc(2, 5).free(1).alloc(3, 5).free(2).alloc(4, 6).free(3).free(4);
    }

    @Test
    void orderingByLifetimeBeatsOrderingBySize() {
        LiveIntervals iv = intervals(lifetimeWins());
        // By size: D (6) at 0; B (5, lives longer than A) overlaps D: on top, 6..11; A overlaps B only: the gap
        // 0..6 holds it, at 0; C overlaps A and B: the gap 5..6 is too small and there is no room below 11: 11..14.
        assertArrayEquals(new long[] {0, 6, 11, 0}, offsets(HeapPlacement.of(iv, EXACT, PlanOrder.BY_SIZE)));
        // By lifetime: B (5 events) at 0; A (4) on top, 5..10; D (2 events, 6 B) overlaps B: the room 5..10 is too
        // small, on top of B at 5..11; C (1 event) overlaps A and B: 10..13, the peak: optimal.
        assertArrayEquals(new long[] {5, 0, 10, 5}, offsets(HeapPlacement.of(iv, EXACT, PlanOrder.BY_LIFETIME)));
        OfflinePlan plan = OfflinePlan.of(iv, EXACT);
        assertEquals(new OfflinePlan(14, 13, 0, 0, false), plan);
        assertEquals(13, plan.bytes());
        assertEquals(PlanOrder.BY_LIFETIME, plan.bestOrder());
        assertEquals(13, LowerBound.of(iv, EXACT).roundedPeakBytes());
    }

    @Test
    void orderingBySizeBeatsOrderingByLifetime() {
        LiveIntervals iv = intervals(sizeWins());
        // By size: D (6) at 0; B (5, 3 events; C ties and starts later) overlaps nothing placed: the room 0..6
        // holds it, at 0; C overlaps B and D: on top, 6..11; A overlaps B: the room 5..11 holds it, at 5.
        assertArrayEquals(new long[] {5, 0, 6, 0}, offsets(HeapPlacement.of(iv, EXACT, PlanOrder.BY_SIZE)));
        // By lifetime: B (3 events; C ties in lifetime and size, and starts later) at 0; C overlaps B: on top,
        // 5..10; D (2 events, 6 B) before A (2 events, 5 B): D overlaps C only, and the gap 0..5 below C is too
        // small: on top, 10..16; A overlaps B only: the room 5..16 holds it, at 5.
        assertArrayEquals(new long[] {5, 0, 5, 10}, offsets(HeapPlacement.of(iv, EXACT, PlanOrder.BY_LIFETIME)));
        OfflinePlan plan = OfflinePlan.of(iv, EXACT);
        assertEquals(new OfflinePlan(11, 16, 0, 0, false), plan);
        assertEquals(PlanOrder.BY_SIZE, plan.bestOrder());
        assertEquals(11, LowerBound.of(iv, EXACT).roundedPeakBytes());
    }

    @Test
    void aPlanOfTwoPlacementsMadeApartIsThePlanOfBoth() {
        LiveIntervals iv = intervals(sizeWins());
        HeapPlacement bySize = HeapPlacement.of(iv, EXACT, PlanOrder.BY_SIZE);
        HeapPlacement byLifetime = HeapPlacement.of(iv, EXACT, PlanOrder.BY_LIFETIME);
        assertEquals(OfflinePlan.of(iv, EXACT), OfflinePlan.of(bySize, byLifetime));
        IllegalArgumentException swapped = assertThrows(IllegalArgumentException.class,
                () -> OfflinePlan.of(byLifetime, bySize));
        assertTrue(swapped.getMessage().contains("one placement by size and one by lifetime"), swapped.getMessage());
        HeapPlacement other = HeapPlacement.of(intervals(lifetimeWins().alloc(9, 1)), EXACT, PlanOrder.BY_LIFETIME);
        assertThrows(IllegalArgumentException.class, () -> OfflinePlan.of(bySize, other));
    }

    @Test
    void aBlockReusesTheBytesOfOneFreedBeforeItStarts() {
        // A = 4 B [0, 2), B = 2 B [1, 5), C = 3 B [3, 5): peak 6 at event 1.
        LiveIntervals iv = intervals(TestTraces.pytorch().alloc(1, 4).alloc(2, 2).free(1).alloc(3, 3).free(2)
                .free(3));
        // By size: A at 0; C does not overlap A: the room 0..4 holds it, at 0; B overlaps both: on top, 4..6.
        HeapPlacement p = HeapPlacement.of(iv, EXACT, PlanOrder.BY_SIZE);
        assertArrayEquals(new long[] {0, 4, 0}, offsets(p));
        assertEquals(6, p.heapBytes());
        assertEquals(6, OfflinePlan.of(iv, EXACT).bytes());
    }

    @Test
    void theRoomUpToThePlansHeightBeatsALargerGapBelow() {
        // A = 5 B [0, 9), B = 1 B [1, 2), C = 3 B [3, 8), D = 6 B [4, 6), E = 6 B [5, 7).
        LiveIntervals iv = intervals(TestTraces.pytorch().alloc(1, 5).alloc(2, 1).free(2).alloc(3, 3).alloc(4, 6)
                .alloc(5, 6).free(4).free(5).free(3).free(1));
        // By size: D at 0..6 (it ties with E and starts first); E over D, 6..12; A over both, 12..17; C over all
        // three, 17..20. B overlaps A alone: the gap 0..12 below A holds it, but so does the room from A's end (17)
        // to the plan's height (20), which is smaller: B goes to 17, as XLA's FindChunkCandidate counts that room
        // as a free chunk. (TFLite's arena, which does not, would put it at 0; the height is 20 either way.)
        HeapPlacement p = HeapPlacement.of(iv, EXACT, PlanOrder.BY_SIZE);
        assertArrayEquals(new long[] {12, 17, 17, 0, 6}, offsets(p));
        assertEquals(20, p.heapBytes());
    }

    @Test
    void aSmallerGapBelowBeatsTheRoomUpToThePlansHeight() {
        // A = 7 B [0, 4), B = 6 B [1, 6), C = 8 B [2, 5), D = 7 B [3, 8), E = 5 B [7, 9).
        LiveIntervals iv = intervals(TestTraces.pytorch().alloc(1, 7).alloc(2, 6).alloc(3, 8).alloc(4, 7).free(1)
                .free(3).free(2).alloc(5, 5).free(4).free(5));
        // By size: C at 0..8; D (7 B, lives longer than A) over C, 8..15; A over both, 15..22; B over all, 22..28.
        // E overlaps D alone: the gap 0..8 (8 B) and the room 15..28 (13 B) both hold it; the gap is smaller.
        HeapPlacement p = HeapPlacement.of(iv, EXACT, PlanOrder.BY_SIZE);
        assertArrayEquals(new long[] {15, 22, 0, 8, 0}, offsets(p));
        assertEquals(28, p.heapBytes());
    }

    @Test
    void theValidityCheckCatchesBlocksThatShareBytesWhileBothLive() {
        LiveIntervals iv = intervals(TestTraces.pytorch().alloc(1, 8).alloc(2, 8).free(1).alloc(3, 8).free(2)
                .free(3));
        // Interval 0 [0, 2), 1 [1, 4), 2 [3, 5): 0 and 2 never meet, 1 meets both.
        assertTrue(HeapPlacement.withOffsets(iv, EXACT, PlanOrder.BY_SIZE, new long[] {0, 8, 0}).isValid());
        HeapPlacement clash = HeapPlacement.withOffsets(iv, EXACT, PlanOrder.BY_SIZE, new long[] {0, 4, 16});
        IllegalStateException e = assertThrows(IllegalStateException.class, clash::checkValid);
        assertTrue(e.getMessage().contains("interval 1") && e.getMessage().contains("interval 0"), e.getMessage());
        assertFalse(HeapPlacement.withOffsets(iv, EXACT, PlanOrder.BY_SIZE, new long[] {0, 8, 12}).isValid());
    }

    @Test
    void oomInstantsAreInThePlanToo() {
        LiveIntervals iv = intervals(TestTraces.pytorch().alloc(1, 3000).add(Kind.OOM, 1024, 8192, 0).free(1));
        OfflinePlan plan = OfflinePlan.of(iv, EXACT);
        assertEquals(11_192, plan.bytes());
    }

    @Test
    void aTraceThatNeverFreesStacksEveryBlock() {
        TestTraces.Builder trace = TestTraces.pytorch();
        SplittableRandom random = new SplittableRandom(7);
        long sum = 0;
        for (int i = 0; i < 200_000; i++) {
            long size = 1 + random.nextInt(1 << 20);
            trace.alloc(i + 1, size);
            sum += PYTORCH.roundedSize(size);
        }
        LiveIntervals iv = intervals(trace);
        OfflinePlan plan = OfflinePlan.of(iv, PYTORCH);
        assertEquals(new OfflinePlan(sum, sum, 0, 0, false), plan);
        assertEquals(sum, LowerBound.of(iv, PYTORCH).roundedPeakBytes());
    }

    /** The shortcut for intervals that all overlap gives the offsets the search would give. */
    @Test
    void aSmallTraceThatNeverFreesIsPlacedAsTheSearchPlacesIt() {
        TestTraces.Builder trace = TestTraces.pytorch();
        SplittableRandom random = new SplittableRandom(5);
        for (int i = 0; i < 300; i++) {
            trace.alloc(i + 1, random.nextInt(5) == 0 ? 4096 : random.nextInt(100_000));
        }
        LiveIntervals iv = intervals(trace);
        RoundedSizes sizes = RoundedSizes.of(iv, PYTORCH);
        for (PlanOrder order : PlanOrder.values()) {
            long[] naive = NaiveBestFit.place(iv, sizes.bytes, order);
            assertArrayEquals(Arrays.copyOf(naive, iv.count()),
                    offsets(HeapPlacement.of(iv, PYTORCH, order)));
        }
    }

    /**
     * The index's limits, forced low: lists of 2 runs, searches of 2 runs, or no work budget at all (every interval
     * on top of those it overlaps). Each keeps the plan valid and never below the bound, and says it approximated.
     */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2})
    void plansUnderForcedLimitsStayValidAndSaySo(int limit) {
        LiveIntervals iv = intervals(randomTrace(21, 2000));
        RoundedSizes sizes = RoundedSizes.of(iv, PYTORCH);
        long bound = LowerBound.of(iv, sizes).roundedPeakBytes();
        for (PlanOrder order : PlanOrder.values()) {
            HeapPlacement exact = HeapPlacement.of(iv, sizes, order);
            HeapPlacement p = switch (limit) {
                case 0 -> HeapPlacement.of(iv, sizes, order, 2, TimeOffsetIndex.MAX_SCANNED_RUNS,
                        TimeOffsetIndex.WORK_PER_INTERVAL_LEVEL);
                case 1 -> HeapPlacement.of(iv, sizes, order, TimeOffsetIndex.MAX_RUNS, 2,
                        TimeOffsetIndex.WORK_PER_INTERVAL_LEVEL);
                default -> HeapPlacement.of(iv, sizes, order, TimeOffsetIndex.MAX_RUNS,
                        TimeOffsetIndex.MAX_SCANNED_RUNS, 0);
            };
            p.checkValid();
            assertTrue(p.approximations() > 0, p.toString());
            assertEquals(limit == 2, p.stacking());
            assertTrue(p.heapBytes() >= bound);
            assertEquals(0, exact.approximations());
            assertFalse(exact.stacking());
        }
    }

    @Test
    void sizesThatAddUpBeyondALongSaturateThePlan() {
        LiveIntervals iv = intervals(TestTraces.pytorch().alloc(1, Long.MAX_VALUE / 2).free(1)
                .alloc(2, Long.MAX_VALUE / 2).free(2).alloc(3, Long.MAX_VALUE / 2));
        OfflinePlan plan = OfflinePlan.of(iv, EXACT);
        assertTrue(plan.saturated());
        assertEquals(Long.MAX_VALUE, plan.bytes());
        assertThrows(IllegalStateException.class, HeapPlacement.of(iv, EXACT, PlanOrder.BY_SIZE)::checkValid);
    }

    /**
     * Random traces of a few hundred blocks, some sizes repeated (exact fits, ties) and some not, lifetimes short and
     * long: the index places every block where the naive best fit does, in both orders.
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void theIndexPlacesExactlyWhereANaiveBestFitPlaces(long seed) {
        LiveIntervals iv = intervals(randomTrace(seed, 400));
        for (SizeRounding rounding : List.of(EXACT, PYTORCH)) {
            RoundedSizes sizes = RoundedSizes.of(iv, rounding);
            for (PlanOrder order : PlanOrder.values()) {
                HeapPlacement p = HeapPlacement.of(iv, rounding, order);
                long[] naive = NaiveBestFit.place(iv, sizes.bytes, order);
                long[] expected = Arrays.copyOf(naive, iv.count());
                assertArrayEquals(expected, offsets(p), order + " seed " + seed);
                assertEquals(naive[iv.count()], p.heapBytes());
                assertEquals(0, p.approximations());
                p.checkValid();
            }
        }
    }

    @Test
    void thePlanIsDeterministic() {
        LiveIntervals iv = intervals(randomTrace(11, 3000));
        for (PlanOrder order : PlanOrder.values()) {
            assertArrayEquals(offsets(HeapPlacement.of(iv, PYTORCH, order)),
                    offsets(HeapPlacement.of(intervals(randomTrace(11, 3000)), PYTORCH, order)));
        }
    }

    /**
     * The shipped OPT trace: both orders valid and exact, never below the rounded bound, and the figures of
     * docs/benchmarks.md: largest first reaches the rounded bound (an optimal plan), longest-lived first 1% above.
     */
    @ParameterizedTest
    @ValueSource(strings = {"memory.csv", "memory.pickle"})
    void theOptTracesPlanKeepsTheInvariants(String file) throws IOException {
        Path trace = BoundsFixtures.opt(file);
        assertInvariants(trace);
        LiveIntervals iv = LiveIntervals.of(CompactTrace.read(trace));
        assertEquals(new OfflinePlan(1_783_665_152L, 1_802_539_520L, 0, 0, false), OfflinePlan.of(iv, PYTORCH));
        assertEquals(new LowerBound(1_783_664_516L, 7_624, 1_783_665_152L, 7_624, 0, false),
                LowerBound.of(iv, PYTORCH));
    }

    @ParameterizedTest
    @ValueSource(strings = {"pt-cnn-eor-small/snapshot.pickle",
            "pt-cs336-medium/medium_1024_training_memory_snapshot.pickle",
            "pt-cs336-medium/medium_1024_inference_memory_snapshot.csv",
            "malloc-weealloc-valgrind/gcc-hello.trace", "malloc-weealloc-valgrind/dogfood.trace"})
    void sharedTracesPlansKeepTheInvariants(String relative) throws IOException {
        assertInvariants(BoundsFixtures.shared(relative));
    }

    private static void assertInvariants(Path trace) throws IOException {
        LiveIntervals iv = LiveIntervals.of(CompactTrace.read(trace));
        LowerBound bound = LowerBound.of(iv, PYTORCH);
        List<Long> heights = new ArrayList<>();
        for (PlanOrder order : PlanOrder.values()) {
            HeapPlacement p = HeapPlacement.of(iv, PYTORCH, order);
            assertAll(trace + " " + order,
                    p::checkValid,
                    () -> assertEquals(0, p.approximations()),
                    () -> assertTrue(p.heapBytes() >= bound.roundedPeakBytes(),
                            p.heapBytes() + " < " + bound.roundedPeakBytes()));
            heights.add(p.heapBytes());
        }
        OfflinePlan plan = OfflinePlan.of(iv, PYTORCH);
        assertEquals(new OfflinePlan(heights.get(0), heights.get(1), 0, 0, false), plan);
        assertTrue(bound.roundedPeakBytes() >= bound.requestedPeakBytes());
    }

    /**
     * A trace of {@code blocks} allocations: up to 60 live at once, each freed after a random number of later
     * allocations (a few live to the end), sizes drawn from a handful of repeated values or at random.
     */
    static TestTraces.Builder randomTrace(long seed, int blocks) {
        SplittableRandom random = new SplittableRandom(seed);
        long[] common = {512, 1024, 4096, 1 << 20, 3 << 20};
        TestTraces.Builder trace = TestTraces.pytorch();
        List<long[]> live = new ArrayList<>();
        for (int i = 0; i < blocks; i++) {
            long size = random.nextBoolean() ? common[random.nextInt(common.length)] : 1 + random.nextInt(4 << 20);
            long key = i + 1;
            trace.alloc(key, size);
            int lifetime = random.nextInt(10) == 0 ? blocks : 1 + random.nextInt(random.nextBoolean() ? 4 : 60);
            live.add(new long[] {key, i + lifetime});
            for (int j = live.size() - 1; j >= 0; j--) {
                if (live.get(j)[1] <= i) {
                    trace.free(live.remove(j)[0]);
                }
            }
        }
        return trace;
    }
}
