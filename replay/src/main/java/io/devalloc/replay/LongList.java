package io.devalloc.replay;

import java.util.Arrays;

/** A growable list of primitive longs. Not thread-safe. */
final class LongList {

    private long[] values = new long[16];
    private int size;

    void add(long value) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = value;
    }

    void addAll(LongList other) {
        if (size + other.size > values.length) {
            values = Arrays.copyOf(values, Math.max(values.length * 2, size + other.size));
        }
        System.arraycopy(other.values, 0, values, size, other.size);
        size += other.size;
    }

    long get(int index) {
        if (index >= size) {
            throw new IndexOutOfBoundsException(index);
        }
        return values[index];
    }

    int size() {
        return size;
    }
}
