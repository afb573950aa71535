package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The history ring grows by doubling up to its limit, then drops the oldest entries (issue 15, defect 1). */
class TraceRingTest {

    private static void record(TraceRing ring, int from, int count) {
        for (int k = from; k < from + count; k++) {
            ring.record(TraceAction.ALLOC, k, k, 0);
        }
    }

    @Test
    void startsSmallAndDoublesUpToTheLimit() {
        TraceRing ring = new TraceRing();
        ring.configure(Integer.MAX_VALUE);
        assertEquals(TraceRing.INITIAL_LENGTH, ring.length(), "a huge limit allocates only the first size");
        record(ring, 0, TraceRing.INITIAL_LENGTH);
        assertEquals(TraceRing.INITIAL_LENGTH, ring.length(), "grows only when an entry does not fit");
        record(ring, TraceRing.INITIAL_LENGTH, 1);
        assertEquals(2 * TraceRing.INITIAL_LENGTH, ring.length());
        record(ring, TraceRing.INITIAL_LENGTH + 1, 3 * TraceRing.INITIAL_LENGTH - 1);
        assertEquals(4 * TraceRing.INITIAL_LENGTH, ring.length(), "4 * INITIAL entries fit in 4 * INITIAL");
        record(ring, 4 * TraceRing.INITIAL_LENGTH, 1);
        assertEquals(8 * TraceRing.INITIAL_LENGTH, ring.length());
        List<TraceEntry> all = ring.entries();
        assertEquals(4 * TraceRing.INITIAL_LENGTH + 1, all.size());
        for (int k = 0; k < all.size(); k++) {
            assertEquals(k, all.get(k).address(), "kept in order across growth");
        }
    }

    @Test
    void stopsAtALimitThatIsNoPowerOfTwoAndWrapsThere() {
        TraceRing ring = new TraceRing();
        int limit = TraceRing.INITIAL_LENGTH + 500;
        ring.configure(limit);
        record(ring, 0, 5 * limit + 7);
        assertEquals(limit, ring.length());
        List<TraceEntry> kept = ring.entries();
        assertEquals(limit, kept.size());
        assertEquals(5L * limit + 7 - limit, kept.getFirst().address(), "the oldest entries were dropped");
        assertEquals(5L * limit + 6, kept.getLast().address());
    }

    @Test
    void aSmallLimitNeverGrows() {
        TraceRing ring = new TraceRing();
        ring.configure(3);
        record(ring, 0, 10);
        assertEquals(3, ring.length());
        assertEquals(List.of(7L, 8L, 9L), ring.entries().stream().map(TraceEntry::address).toList());
    }

    @Test
    void offAndRefusedValues() {
        TraceRing ring = new TraceRing();
        ring.configure(5);
        record(ring, 0, 2);
        assertThrows(IllegalArgumentException.class, () -> ring.configure(-1));
        assertEquals(2, ring.entries().size(), "a refused value changes nothing");
        assertTrue(ring.enabled());
        ring.configure(0);
        record(ring, 0, 2);
        assertFalse(ring.enabled());
        assertTrue(ring.entries().isEmpty());
    }
}
