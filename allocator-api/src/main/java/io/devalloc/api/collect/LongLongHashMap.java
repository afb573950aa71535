package io.devalloc.api.collect;

import java.util.Arrays;

/**
 * An open-addressing hash map from {@code long} to {@code long} with no boxing, for address tables on allocation
 * hot paths. Key 0 cannot be stored (it marks empty slots; address 0 is never handed out). Linear probing with
 * backward-shift deletion keeps lookups short without tombstones.
 *
 * <p>Not thread-safe: owners guard it with their own lock.
 */
public final class LongLongHashMap {

    private static final int MIN_CAPACITY = 16;

    private long[] keys;
    private long[] values;
    private int size;
    private int mask;

    public LongLongHashMap() {
        this(MIN_CAPACITY);
    }

    /** @param expected how many entries to size for before the first resize */
    public LongLongHashMap(int expected) {
        int capacity = Integer.highestOneBit(Math.max(MIN_CAPACITY, expected * 2 - 1)) << 1;
        keys = new long[capacity];
        values = new long[capacity];
        mask = capacity - 1;
    }

    private static int mix(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    /** Number of entries. */
    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** The value for {@code key}, or {@code missing} when absent. */
    public long get(long key, long missing) {
        if (key == 0) {
            return missing;
        }
        int i = slot(key);
        return keys[i] == key ? values[i] : missing;
    }

    public boolean containsKey(long key) {
        return key != 0 && keys[slot(key)] == key;
    }

    /**
     * Associates {@code value} with {@code key}.
     *
     * @return the previous value, or {@code missing} when there was none
     * @throws IllegalArgumentException if {@code key == 0}
     */
    public long put(long key, long value, long missing) {
        if (key == 0) {
            throw new IllegalArgumentException("key 0 cannot be stored");
        }
        int i = slot(key);
        if (keys[i] == key) {
            long old = values[i];
            values[i] = value;
            return old;
        }
        keys[i] = key;
        values[i] = value;
        if (++size * 2 > keys.length) {
            grow();
        }
        return missing;
    }

    /** Removes {@code key}, returning its value, or {@code missing} when absent. */
    public long remove(long key, long missing) {
        if (key == 0) {
            return missing;
        }
        int i = slot(key);
        if (keys[i] != key) {
            return missing;
        }
        long old = values[i];
        shiftBack(i);
        size--;
        return old;
    }

    /** The slot that holds {@code key} (not 0), or the empty slot where the probe for it ends. */
    private int slot(long key) {
        int i = mix(key) & mask;
        while (keys[i] != key && keys[i] != 0) {
            i = (i + 1) & mask;
        }
        return i;
    }

    private void shiftBack(int hole) {
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            long k = keys[i];
            if (k == 0) {
                break;
            }
            int home = mix(k) & mask;
            // Move k into the hole if its home slot is not in (hole, i] cyclically.
            boolean between = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
            if (!between) {
                keys[hole] = k;
                values[hole] = values[i];
                hole = i;
            }
        }
        keys[hole] = 0;
        values[hole] = 0;
    }

    private void grow() {
        long[] oldKeys = keys;
        long[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new long[oldValues.length * 2];
        mask = keys.length - 1;
        for (int j = 0; j < oldKeys.length; j++) {
            long k = oldKeys[j];
            if (k != 0) {
                int i = slot(k);
                keys[i] = k;
                values[i] = oldValues[j];
            }
        }
    }

    /** The keys, sorted ascending (a copy). */
    public long[] sortedKeys() {
        long[] out = new long[size];
        int n = 0;
        for (long k : keys) {
            if (k != 0) {
                out[n++] = k;
            }
        }
        Arrays.sort(out);
        return out;
    }

    /** Removes every entry. */
    public void clear() {
        Arrays.fill(keys, 0);
        Arrays.fill(values, 0);
        size = 0;
    }
}
