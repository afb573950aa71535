package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PickleDictTest {

    /**
     * Random puts, removes and removals through the iterator, with a few keys or many, against a LinkedHashMap (a
     * Python dict's order): the same contents in the same order, lookups, equality and hash.
     */
    @Test
    void behavesLikeALinkedHashMapSmallAndLarge() {
        Random r = new Random(5);
        for (int keys : new int[] {3, PickleDict.LINEAR_LIMIT, PickleDict.LINEAR_LIMIT + 1, 200}) {
            PickleDict d = new PickleDict();
            Map<Object, Object> ref = new LinkedHashMap<>();
            for (int i = 0; i < 3000; i++) {
                Object k = r.nextInt(10) == 0 ? null : "k" + r.nextInt(keys);
                Object v = r.nextInt(10) == 0 ? null : (long) i;
                switch (r.nextInt(8)) {
                    case 0 -> assertEquals(ref.remove(k), d.remove(k));
                    case 1 -> {
                        // Remove the entries with odd values through each one's iterator.
                        ref.entrySet().removeIf(e -> e.getValue() instanceof Long l && l % 2 == 1);
                        for (Iterator<Map.Entry<Object, Object>> it = d.entrySet().iterator(); it.hasNext(); ) {
                            if (it.next().getValue() instanceof Long l && l % 2 == 1) {
                                it.remove();
                            }
                        }
                    }
                    default -> assertEquals(ref.put(k, v), d.put(k, v));
                }
                Object probe = "k" + r.nextInt(keys + 2);
                assertEquals(ref.containsKey(probe), d.containsKey(probe));
                assertEquals(ref.get(probe), d.get(probe));
                assertEquals(ref.size(), d.size());
            }
            assertEquals(ref, d);
            assertEquals(d, ref);
            assertEquals(ref.hashCode(), d.hashCode());
            assertEquals(new ArrayList<>(ref.keySet()), new ArrayList<>(d.keySet()), "insertion order");
            d.clear();
            assertTrue(d.isEmpty());
            assertEquals(Map.of(), d);
        }
    }

    @Test
    void anEmptyDictHasNothing() {
        PickleDict d = new PickleDict();
        assertTrue(d.isEmpty());
        assertFalse(d.containsKey("a"));
        assertNull(d.get("a"));
        Iterator<Map.Entry<Object, Object>> it = d.entrySet().iterator();
        assertFalse(it.hasNext());
        assertThrows(NoSuchElementException.class, it::next);
        assertThrows(IllegalStateException.class, it::remove);
    }

    @Test
    void entriesWriteThroughAndViewsFollowTheDictAcrossItsGrowth() {
        PickleDict d = new PickleDict();
        d.put("a", 1L);
        d.entrySet().iterator().next().setValue(2L);
        assertEquals(2L, d.get("a"));
        Set<Map.Entry<Object, Object>> view = d.entrySet();
        for (int i = 0; i < PickleDict.LINEAR_LIMIT + 4; i++) {
            d.put("k" + i, (long) i);
        }
        assertEquals(PickleDict.LINEAR_LIMIT + 5, view.size(), "a view taken before the dict grew");
        List<Object> keys = new ArrayList<>();
        view.forEach(e -> keys.add(e.getKey()));
        assertEquals("a", keys.get(0));
        assertEquals("k" + (PickleDict.LINEAR_LIMIT + 3), keys.get(keys.size() - 1));
    }

    @Test
    void iteratorsFailFastWhenTheDictChangesElsewhere() {
        PickleDict d = new PickleDict();
        d.put("a", 1L);
        d.put("b", 2L);
        Iterator<Map.Entry<Object, Object>> it = d.entrySet().iterator();
        Map.Entry<Object, Object> a = it.next();
        d.remove("a");
        assertThrows(ConcurrentModificationException.class, it::next);
        assertThrows(ConcurrentModificationException.class, () -> a.setValue(3L));
        Iterator<Map.Entry<Object, Object>> before = d.entrySet().iterator();
        for (int i = 0; i < PickleDict.LINEAR_LIMIT + 1; i++) {
            d.put("k" + i, (long) i);
        }
        assertThrows(ConcurrentModificationException.class, before::next);
    }
}
