package io.devalloc.api.collect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LongLongHashMapTest {

    @Test
    void behavesLikeAHashMapUnderRandomOperations() {
        Random r = new Random(7);
        LongLongHashMap m = new LongLongHashMap(4);
        Map<Long, Long> ref = new HashMap<>();
        for (int i = 0; i < 200_000; i++) {
            // Small key range forces collisions, clustering and backward shifts.
            long key = 1 + r.nextInt(3000) * 512L;
            long expected = ref.containsKey(key) ? ref.get(key) : -1L;
            switch (r.nextInt(3)) {
                case 0 -> {
                    assertEquals(expected, m.put(key, i, -1));
                    ref.put(key, (long) i);
                }
                case 1 -> {
                    assertEquals(expected, m.remove(key, -1));
                    ref.remove(key);
                }
                default -> {
                    assertEquals(expected, m.get(key, -1));
                    assertEquals(ref.containsKey(key), m.containsKey(key));
                }
            }
            assertEquals(ref.size(), m.size());
        }
        long[] keys = ref.keySet().stream().mapToLong(Long::longValue).sorted().toArray();
        assertArrayEquals(keys, m.sortedKeys());
        m.clear();
        assertEquals(0, m.size());
        assertEquals(-1, m.get(keys.length > 0 ? keys[0] : 1, -1));
    }

    @Test
    void keyZeroIsNotStorable() {
        LongLongHashMap m = new LongLongHashMap();
        assertThrows(IllegalArgumentException.class, () -> m.put(0, 1, -1));
        assertEquals(-1, m.get(0, -1));
        assertEquals(-1, m.remove(0, -1));
    }
}
