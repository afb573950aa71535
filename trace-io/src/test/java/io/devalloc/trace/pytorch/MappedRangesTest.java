package io.devalloc.trace.pytorch;

import static io.devalloc.trace.pytorch.MappedRanges.LARGE_POOL;
import static io.devalloc.trace.pytorch.MappedRanges.SMALL_POOL;
import static io.devalloc.trace.pytorch.MappedRanges.UNKNOWN_POOL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The mapped ranges the pickle reader walks back: which touching ranges merge, and which are two segments. */
class MappedRangesTest {

    private static final long M = 2L << 20;
    private static final long A = 64 * M;

    /** The ranges as {start, end, stream, pool} lists. */
    private static List<List<Long>> ranges(MappedRanges r) {
        List<List<Long>> out = new ArrayList<>();
        for (Map.Entry<Long, long[]> e : r.ranges().entrySet()) {
            out.add(List.of(e.getKey(), e.getValue()[0], e.getValue()[1], e.getValue()[2]));
        }
        return out;
    }

    @Test
    void segmentsOfTheEndThatTouchStayApartAndNothingMergesAcrossWhereTheyMeet() {
        MappedRanges r = new MappedRanges();
        assertTrue(r.addSegment(A, 2 * M, 0, LARGE_POOL));
        assertTrue(r.addSegment(A + 2 * M, 2 * M, 0, LARGE_POOL));
        assertEquals(List.of(List.of(A, A + 2 * M, 0L, (long) LARGE_POOL),
                List.of(A + 2 * M, A + 4 * M, 0L, (long) LARGE_POOL)), ranges(r));
        // The upper one loses its start to an undone map; mapping it again cannot join the lower segment.
        assertTrue(r.remove(A + 2 * M, M));
        assertTrue(r.add(A + 2 * M, M, 0));
        assertEquals(List.of(List.of(A, A + 2 * M, 0L, (long) LARGE_POOL),
                List.of(A + 2 * M, A + 4 * M, 0L, (long) LARGE_POOL)), ranges(r));
        // A range across the boundary cannot be one segment's.
        assertTrue(r.remove(A, 2 * M));
        assertTrue(r.remove(A + 2 * M, 2 * M));
        assertFalse(r.add(A + M, 2 * M, 0));
        assertEquals(List.of(), ranges(r));
    }

    @Test
    void aRangeMappedAgainJoinsItsPoolAndNeverJoinsTwoPools() {
        MappedRanges r = new MappedRanges();
        r.addSegment(A, 2 * M, 0, SMALL_POOL);
        r.addSegment(A + 4 * M, 10 * M, 0, LARGE_POOL);
        // Touching both: the lower keeps it, and the upper touching point becomes a boundary.
        assertTrue(r.add(A + 2 * M, 2 * M, 0));
        assertEquals(List.of(List.of(A, A + 4 * M, 0L, (long) SMALL_POOL),
                List.of(A + 4 * M, A + 14 * M, 0L, (long) LARGE_POOL)), ranges(r));
        r.remove(A + 4 * M, 10 * M);
        r.add(A + 6 * M, 2 * M, 0);
        assertTrue(r.add(A + 4 * M, 2 * M, 0), "touches the boundary below and a range above");
        assertEquals(List.of(List.of(A, A + 4 * M, 0L, (long) SMALL_POOL),
                List.of(A + 4 * M, A + 8 * M, 0L, (long) UNKNOWN_POOL)), ranges(r));
    }

    @Test
    void aRangeOfNoKnownPoolTakesThePoolOfWhatItJoinsAndRemovalsKeepIt() {
        MappedRanges r = new MappedRanges();
        r.addSegment(A + 2 * M, 2 * M, 0, LARGE_POOL);
        assertTrue(r.add(A, 2 * M, 0));
        assertTrue(r.add(A + 4 * M, 2 * M, 0));
        assertEquals(List.of(List.of(A, A + 6 * M, 0L, (long) LARGE_POOL)), ranges(r));
        assertTrue(r.remove(A + 2 * M, 2 * M));
        assertEquals(List.of(List.of(A, A + 2 * M, 0L, (long) LARGE_POOL),
                List.of(A + 4 * M, A + 6 * M, 0L, (long) LARGE_POOL)), ranges(r));
        // Another stream's range never joins.
        assertTrue(r.add(A + 6 * M, 2 * M, 7));
        assertEquals(3, r.ranges().size());
    }

    @Test
    void overlapsAndRangesBeyondTwoToThe64AreRefused() {
        MappedRanges r = new MappedRanges();
        r.addSegment(A, 4 * M, 0, LARGE_POOL);
        assertFalse(r.addSegment(A + 2 * M, 4 * M, 0, LARGE_POOL));
        assertFalse(r.add(A - 2 * M, 4 * M, 0));
        assertFalse(r.add(-2 * M, 4 * M, 0));
        assertFalse(r.add(A + 8 * M, 0, 0));
        assertFalse(r.remove(A + 2 * M, 4 * M));
        assertEquals(List.of(List.of(A, A + 4 * M, 0L, (long) LARGE_POOL)), ranges(r));
    }
}
