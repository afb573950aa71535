package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The unpickler's memo table agrees with a {@link HashMap} through puts, replacements and removals. */
class MemoTableTest {

    @Test
    void agreesWithAHashMapThroughGrowthAndRemovals() {
        MemoTable table = new MemoTable();
        Map<Integer, Object> model = new HashMap<>();
        SplittableRandom random = new SplittableRandom(7);
        for (int step = 0; step < 200_000; step++) {
            // Few distinct keys at first (long probe runs, removals in them), then many (growth).
            int key = step < 100_000 ? random.nextInt(-300, 300) : random.nextInt();
            int what = random.nextInt(10);
            if (what < 6) {
                Object value = random.nextInt(8) == 0 ? null : "v" + step;
                table.put(key, value);
                model.put(key, value);
            } else {
                table.remove(key);
                model.remove(key);
            }
            if (step % 997 == 0) {
                for (Map.Entry<Integer, Object> e : model.entrySet()) {
                    assertTrue(table.containsKey(e.getKey()), "key " + e.getKey());
                    assertEquals(e.getValue(), table.get(e.getKey()));
                }
                assertEquals(model.size(), table.size());
            }
        }
    }

    @Test
    void aNullValueIsKeptAndExtremeKeysWork() {
        MemoTable table = new MemoTable();
        table.put(Integer.MIN_VALUE, null);
        table.put(Integer.MAX_VALUE, "max");
        table.put(0, "zero");
        assertTrue(table.containsKey(Integer.MIN_VALUE));
        assertNull(table.get(Integer.MIN_VALUE));
        assertEquals("max", table.get(Integer.MAX_VALUE));
        table.remove(Integer.MIN_VALUE);
        assertFalse(table.containsKey(Integer.MIN_VALUE));
        assertEquals("zero", table.get(0));
        table.clear();
        assertEquals(0, table.size());
        assertFalse(table.containsKey(0));
    }
}
