package io.devalloc.replay;

import io.devalloc.api.collect.LongLongHashMap;

/**
 * Trace key → value, with no boxing: {@link LongLongHashMap} plus the one key it cannot store, 0 (valgrind traces
 * number their allocations from 0). Not thread-safe.
 */
final class KeyMap {

    private final LongLongHashMap map;
    private boolean hasZero;
    private long zeroValue;

    KeyMap(int expected) {
        map = new LongLongHashMap(expected);
    }

    /** Associates {@code value} with {@code key}; returns the previous value, or {@code missing}. */
    long put(long key, long value, long missing) {
        if (key != 0) {
            return map.put(key, value, missing);
        }
        long old = hasZero ? zeroValue : missing;
        hasZero = true;
        zeroValue = value;
        return old;
    }

    /** Removes {@code key}; returns its value, or {@code missing}. */
    long remove(long key, long missing) {
        if (key != 0) {
            return map.remove(key, missing);
        }
        if (!hasZero) {
            return missing;
        }
        hasZero = false;
        return zeroValue;
    }

    int size() {
        return map.size() + (hasZero ? 1 : 0);
    }
}
