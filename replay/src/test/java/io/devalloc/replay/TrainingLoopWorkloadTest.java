package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.TrainingLoopWorkload.Kind;
import io.devalloc.replay.TrainingLoopWorkload.Operation;
import io.devalloc.replay.TrainingLoopWorkload.Phase;
import io.devalloc.replay.TrainingLoopWorkload.Spec;
import io.devalloc.testkit.AllocatorInvariants;
import io.devalloc.testkit.LiveSet;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TrainingLoopWorkloadTest {

    @Test
    void theSameSpecGivesTheSameOperations() {
        Spec spec = new Spec(12, 5, 7);
        assertEquals(TrainingLoopWorkload.generate(spec).operations(),
                TrainingLoopWorkload.generate(spec).operations());
    }

    @Test
    void anotherSeedGivesOtherOperations() {
        List<Operation> a = TrainingLoopWorkload.generate(new Spec(12, 5, 7)).operations();
        List<Operation> b = TrainingLoopWorkload.generate(new Spec(12, 5, 8)).operations();
        assertNotEquals(a, b);
    }

    @Test
    void theDefaultsHaveTheAdvertisedShape() {
        TrainingLoopWorkload w = TrainingLoopWorkload.generate();
        assertEquals(Spec.defaults(), w.spec());
        assertAll(
                () -> assertTrue(w.allocationCount() >= 3_000 && w.allocationCount() <= 6_000,
                        "allocations: " + w.allocationCount()),
                () -> assertTrue(w.smallestAllocation() >= 128 && w.smallestAllocation() <= 1024,
                        "smallest: " + w.smallestAllocation()),
                () -> assertTrue(w.largestAllocation() >= 10 * ByteSize.MiB
                        && w.largestAllocation() <= 64 * ByteSize.MiB, "largest: " + w.largestAllocation()),
                () -> assertTrue(w.peakLiveBytes() < ByteSize.GiB, "peak live: " + w.peakLiveBytes()),
                () -> assertEquals(2 * w.allocationCount(), w.size()));
        for (int width : w.layerWidths()) {
            assertTrue(width >= TrainingLoopWorkload.MIN_WIDTH && width <= TrainingLoopWorkload.MAX_WIDTH,
                    "width " + width);
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 42, 12345, -9, Long.MAX_VALUE})
    void everyAllocationIsFreedOnceAndTheSummaryMatchesTheOperations(long seed) {
        TrainingLoopWorkload w = TrainingLoopWorkload.generate(new Spec(12, 20, seed));
        Map<Integer, Long> live = new HashMap<>();
        long liveBytes = 0;
        long peak = 0;
        long mallocs = 0;
        long frees = 0;
        long smallest = Long.MAX_VALUE;
        long largest = 0;
        for (Operation op : w.operations()) {
            assertTrue(op.slot() >= 0 && op.slot() < w.slotCount(), "slot out of range: " + op);
            if (op.kind() == Kind.MALLOC) {
                assertTrue(op.bytes() > 0, "empty allocation: " + op);
                Long previous = live.put(op.slot(), op.bytes());
                assertNull(previous, "slot reused while live: " + op);
                mallocs++;
                liveBytes += op.bytes();
                peak = Math.max(peak, liveBytes);
                smallest = Math.min(smallest, op.bytes());
                largest = Math.max(largest, op.bytes());
            } else {
                Long size = live.remove(op.slot());
                assertEquals(op.bytes(), size, "free of a slot that is not live, or with another size: " + op);
                frees++;
                liveBytes -= op.bytes();
            }
        }
        assertEquals(Map.of(), live, "allocations never freed");
        assertEquals(mallocs, frees);
        assertEquals(mallocs, w.allocationCount());
        assertEquals(peak, w.peakLiveBytes());
        assertEquals(smallest, w.smallestAllocation());
        assertEquals(largest, w.largestAllocation());
        // The host provider backs this; even the unluckiest seed must stay far from exhausting a normal machine.
        assertTrue(peak < 2 * ByteSize.GiB, "peak live " + ByteSize.format(peak));
    }

    @Test
    void weightsLiveFromSetupToTeardownAndEveryStepHasAllPhases() {
        TrainingLoopWorkload w = TrainingLoopWorkload.generate(new Spec(4, 3, 99));
        Set<Integer> weightSlots = new HashSet<>();
        Map<Integer, Set<Phase>> phasesByStep = new HashMap<>();
        for (Operation op : w.operations()) {
            switch (op.phase()) {
                case SETUP -> {
                    assertEquals(Kind.MALLOC, op.kind(), "setup only allocates: " + op);
                    assertEquals(-1, op.step());
                    weightSlots.add(op.slot());
                }
                case TEARDOWN -> {
                    assertEquals(Kind.FREE, op.kind(), "teardown only frees: " + op);
                    assertEquals(-1, op.step());
                    assertTrue(weightSlots.contains(op.slot()), "teardown frees a non-weight: " + op);
                }
                default -> {
                    assertTrue(op.step() >= 0 && op.step() < 3, "step out of range: " + op);
                    assertTrue(!weightSlots.contains(op.slot()), "a step touches a weight's slot: " + op);
                    phasesByStep.computeIfAbsent(op.step(), s -> EnumSet.noneOf(Phase.class)).add(op.phase());
                }
            }
        }
        assertEquals(2 * 4, weightSlots.size(), "a weight and a bias per layer");
        Set<Phase> loop = EnumSet.of(Phase.FORWARD, Phase.BACKWARD, Phase.OPTIMIZER);
        assertEquals(Map.of(0, loop, 1, loop, 2, loop), phasesByStep);
    }

    @Test
    void moreStepsMeanMoreAllocations() {
        long three = TrainingLoopWorkload.generate(new Spec(12, 3, 42)).allocationCount();
        long thirty = TrainingLoopWorkload.generate(new Spec(12, 30, 42)).allocationCount();
        assertTrue(thirty > 5 * three, three + " vs " + thirty);
    }

    @Test
    void theSpecRefusesOutOfRangeValues() {
        assertThrows(IllegalArgumentException.class, () -> new Spec(0, 20, 1));
        assertThrows(IllegalArgumentException.class, () -> new Spec(Spec.MAX_LAYERS + 1, 20, 1));
        assertThrows(IllegalArgumentException.class, () -> new Spec(12, 0, 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Spec(12, Spec.MAX_STEPS + 1, 1));
        assertTrue(e.getMessage().contains("steps"), e.getMessage());
    }

    @Test
    void theOperationListIsAReadOnlyView() {
        List<Operation> ops = TrainingLoopWorkload.generate(new Spec(1, 1, 1)).operations();
        assertThrows(UnsupportedOperationException.class, () -> ops.add(ops.getFirst()));
        assertThrows(IndexOutOfBoundsException.class, () -> ops.get(ops.size()));
        assertThrows(IndexOutOfBoundsException.class, () -> ops.get(-1));
    }

    @Test
    void replayOnTheDirectAllocatorMatchesTheWorkload() {
        TrainingLoopWorkload w = TrainingLoopWorkload.generate(new Spec(12, 4, 3));
        try (DeviceAllocator allocator = DeviceAllocators.open("sim:80GiB", "direct", "")) {
            TrainingLoopWorkload.ReplayResult result = w.replay(allocator);
            AllocatorStats s = allocator.stats();
            assertAll(
                    () -> assertEquals(w.allocationCount(), result.mallocs()),
                    () -> assertEquals(w.allocationCount(), result.frees()),
                    () -> assertEquals(0, result.outOfMemoryErrors()),
                    () -> assertEquals(w.allocationCount(), s.allocationCount()),
                    () -> assertEquals(w.allocationCount(), s.freeCount()),
                    () -> assertEquals(0, s.activeAllocations()),
                    // direct keeps nothing cached, so its requested peak is exactly the workload's live peak.
                    () -> assertEquals(w.peakLiveBytes(), s.peakRequestedBytes()),
                    () -> assertEquals(w.largestAllocation(), s.largestAllocation()),
                    () -> assertEquals(w.slotCount(), s.peakActiveAllocations()));
            AllocatorInvariants.check(allocator, new LiveSet());
        }
    }

    @Test
    void replayCountsAllocationsRefusedByALimitAndSkipsTheirFrees() {
        TrainingLoopWorkload w = TrainingLoopWorkload.generate(new Spec(12, 2, 3));
        try (DeviceAllocator allocator = DeviceAllocators.open("sim:80GiB", "direct", "memory_limit_mb:64")) {
            TrainingLoopWorkload.ReplayResult result = w.replay(allocator);
            AllocatorStats s = allocator.stats();
            assertTrue(result.outOfMemoryErrors() > 0, "a 64 MiB limit must refuse some of " + w.peakLiveBytes());
            assertEquals(s.outOfMemoryErrors(), result.outOfMemoryErrors());
            assertEquals(w.allocationCount(), result.mallocs());
            assertEquals(result.mallocs() - result.outOfMemoryErrors(), result.frees());
            assertEquals(result.frees(), s.freeCount());
            assertEquals(0, s.activeAllocations());
            AllocatorInvariants.check(allocator, new LiveSet());
        }
    }

    @Test
    void meanTimeIsPerMallocFreePair() {
        assertEquals(250.0, new TrainingLoopWorkload.ReplayResult(4, 4, 0, 1_000).meanNanosPerMallocFree());
        assertEquals(0.0, new TrainingLoopWorkload.ReplayResult(0, 0, 0, 1_000).meanNanosPerMallocFree());
    }
}
