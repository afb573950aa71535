package io.devalloc.api.collect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class HandleTableTest {

    /** The smallest table: one link column, as the allocators' tables link free rows through {@code next}. */
    private static final class Links extends HandleTable {

        int[] next;
        int grows;

        Links(int initialCapacity) {
            super(initialCapacity);
            next = new int[capacity()];
        }

        int take() {
            return takeHandle();
        }

        void give(int h) {
            returnHandle(h);
        }

        @Override
        protected int freeLink(int h) {
            return next[h];
        }

        @Override
        protected void setFreeLink(int h, int link) {
            next[h] = link;
        }

        @Override
        protected void growColumns(int newCapacity) {
            grows++;
            next = Arrays.copyOf(next, newCapacity);
        }
    }

    @Test
    void handsOutFreshHandlesInOrderAndDoublesWhenFull() {
        Links t = new Links(3);
        assertEquals(16, t.capacity(), "16 rows at least");
        for (int i = 0; i < 17; i++) {
            assertEquals(i, t.take());
        }
        assertEquals(1, t.grows);
        assertEquals(32, t.capacity());
        assertEquals(32, t.next.length);
        assertEquals(17, t.liveCount());
    }

    @Test
    void reusesReturnedHandlesLastInFirstOut() {
        Links t = new Links(16);
        for (int i = 0; i < 5; i++) {
            t.take();
        }
        t.give(1);
        t.give(3);
        t.give(2);
        assertEquals(2, t.liveCount());
        assertEquals(2, t.take());
        assertEquals(3, t.take());
        assertEquals(1, t.take());
        assertEquals(5, t.take(), "the free list is empty again");
        assertEquals(6, t.liveCount());
    }

    @Test
    void returningEveryHandleStartsAfreshButKeepsTheColumns() {
        Links t = new Links(16);
        for (int i = 0; i < 20; i++) {
            t.take();
        }
        t.give(4);
        t.returnAllHandles();
        assertEquals(0, t.liveCount());
        assertEquals(0, t.take());
        assertEquals(32, t.capacity());
        assertEquals(1, t.grows);
    }
}
