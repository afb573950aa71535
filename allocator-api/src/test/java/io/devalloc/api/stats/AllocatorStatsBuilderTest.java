package io.devalloc.api.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/** {@link AllocatorStats#builder()}: each named setter lands in its own figure, and the defaults are documented. */
class AllocatorStatsBuilderTest {

    @Test
    void everySetterSetsItsOwnFigure() {
        AllocatorStats built = AllocatorStats.builder()
                .allocationCount(1).freeCount(2).activeAllocations(3).peakActiveAllocations(4)
                .allocatedBytes(5).peakAllocatedBytes(6).requestedBytes(7).peakRequestedBytes(8)
                .reservedBytes(9).peakReservedBytes(10).largestAllocation(11).largestFreeBlock(12)
                .deviceMallocs(13).deviceFrees(14).allocationRetries(15).outOfMemoryErrors(16).limitBytes(17)
                .build();
        assertEquals(new AllocatorStats(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), built);
    }

    @Test
    void unsetFiguresAreZeroAndTheLimitIsNone() {
        AllocatorStats built = AllocatorStats.builder().build();
        assertEquals(new AllocatorStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, Long.MAX_VALUE), built);
    }

    @Test
    void theLastValueSetWins() {
        AllocatorStats built = AllocatorStats.builder().reservedBytes(1).reservedBytes(42).build();
        assertEquals(42, built.reservedBytes());
    }

    @Test
    void aBuilderBuildsIndependentValues() {
        AllocatorStats.Builder builder = AllocatorStats.builder().allocatedBytes(100).reservedBytes(300);
        AllocatorStats first = builder.build();
        AllocatorStats second = builder.allocatedBytes(200).build();
        assertEquals(100, first.allocatedBytes());
        assertEquals(200, second.allocatedBytes());
        assertNotEquals(first, second);
        assertEquals(200, first.cachedBytes(), "derived figures read the built values");
    }
}
