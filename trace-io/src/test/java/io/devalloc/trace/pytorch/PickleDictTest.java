package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PickleDictTest {

    /** Random puts of a few keys or many, against a HashMap: the same contents, lookups, equality and hash. */
    @Test
    void behavesLikeAHashMapSmallAndLarge() {
        Random r = new Random(5);
        for (int keys : new int[] {3, PickleDict.LINEAR_LIMIT, PickleDict.LINEAR_LIMIT + 1, 200}) {
            PickleDict d = new PickleDict();
            Map<Object, Object> ref = new HashMap<>();
            for (int i = 0; i < 2000; i++) {
                Object k = r.nextInt(10) == 0 ? null : "k" + r.nextInt(keys);
                Object v = r.nextInt(10) == 0 ? null : (long) i;
                assertEquals(ref.put(k, v), d.put(k, v));
                Object probe = "k" + r.nextInt(keys + 2);
                assertEquals(ref.containsKey(probe), d.containsKey(probe));
                assertEquals(ref.get(probe), d.get(probe));
                assertEquals(ref.size(), d.size());
            }
            assertEquals(ref, d);
            assertEquals(d, ref);
            assertEquals(ref.hashCode(), d.hashCode());
            assertEquals(ref.entrySet(), d.entrySet());
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
    }
}
