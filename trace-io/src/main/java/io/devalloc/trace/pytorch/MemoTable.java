package io.devalloc.trace.pytorch;

import java.util.Arrays;

/**
 * The unpickler's memo: memo keys ({@code int}) to the objects set under them, in open addressing with linear
 * probing and backward-shift deletion, with no boxed key and no node per entry (a {@code HashMap<Integer, Object>}
 * took about 48 bytes an entry and a new {@link Integer} for most reads; here 16 to 32 bytes an entry and none).
 * Any key, negative ones too; {@code null} values (Python's {@code None}) are kept. Not thread-safe: one loading
 * thread.
 */
final class MemoTable {

    private static final int MIN_CAPACITY = 16;
    /** Stands for a {@code null} value, so that a slot's {@code null} means empty. */
    private static final Object NULL = new Object();

    private int[] keys = new int[MIN_CAPACITY];
    private Object[] values = new Object[MIN_CAPACITY];
    private int size;

    /** Entries held. */
    int size() {
        return size;
    }

    private static int slot(int key, int mask) {
        int h = key * 0x9E3779B9;
        return (h ^ (h >>> 16)) & mask;
    }

    /** Whether {@code key} is set. */
    boolean containsKey(int key) {
        return indexOf(key) >= 0;
    }

    /** The value set under {@code key}, or null when it is not set (or set to null: see {@link #containsKey}). */
    Object get(int key) {
        int i = indexOf(key);
        return i < 0 || values[i] == NULL ? null : values[i];
    }

    private int indexOf(int key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); values[i] != null; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return i;
            }
        }
        return -1;
    }

    /** Sets {@code key} to {@code value}, replacing what it held. */
    void put(int key, Object value) {
        Object stored = value == null ? NULL : value;
        int mask = keys.length - 1;
        int i = slot(key, mask);
        for (; values[i] != null; i = (i + 1) & mask) {
            if (keys[i] == key) {
                values[i] = stored;
                return;
            }
        }
        keys[i] = key;
        values[i] = stored;
        if (++size * 2 > keys.length) {
            grow();
        }
    }

    /** Unsets {@code key}, if set. */
    void remove(int key) {
        int i = indexOf(key);
        if (i < 0) {
            return;
        }
        int mask = keys.length - 1;
        // Backward shift: move later entries of the probe run into the hole, so that no lookup stops early.
        int hole = i;
        for (int j = (hole + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            if (((j - home) & mask) >= ((j - hole) & mask)) {
                keys[hole] = keys[j];
                values[hole] = values[j];
                hole = j;
            }
        }
        values[hole] = null;
        size--;
    }

    /** Unsets every key. */
    void clear() {
        Arrays.fill(values, null);
        size = 0;
    }

    private void grow() {
        int[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new int[oldKeys.length * 2];
        values = new Object[oldValues.length * 2];
        int mask = keys.length - 1;
        for (int j = 0; j < oldKeys.length; j++) {
            if (oldValues[j] != null) {
                int i = slot(oldKeys[j], mask);
                while (values[i] != null) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                values[i] = oldValues[j];
            }
        }
    }
}
