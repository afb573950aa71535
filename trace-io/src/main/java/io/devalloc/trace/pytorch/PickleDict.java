package io.devalloc.trace.pytorch;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;

/**
 * The dict of an unpickled snapshot: its keys and values in two arrays, searched in order, with no node per entry.
 * A PyTorch snapshot is a million small dicts (a trace entry has six to ten keys); as {@link HashMap}s they took
 * about 400 bytes each, as these about half that, which is what lets a large snapshot load in a bounded heap. Past
 * {@value #LINEAR_LIMIT} entries the dict moves into a {@link HashMap}, so that a large dict is not searched
 * linearly.
 *
 * <p>A mutable {@link Map} with {@code null} keys and values allowed, {@code equals} and {@code hashCode} as every
 * map's; it does not support removal through its views. Not thread-safe: built by the loading thread, read after.
 */
final class PickleDict extends AbstractMap<Object, Object> {

    static final int LINEAR_LIMIT = 16;

    private Object[] keys = new Object[8];
    private Object[] values = new Object[8];
    private int size;
    /** Every entry, once there are more than {@link #LINEAR_LIMIT}; null before. */
    private HashMap<Object, Object> large;

    @Override
    public int size() {
        return large != null ? large.size() : size;
    }

    private int indexOf(Object key) {
        for (int i = 0; i < size; i++) {
            if (Objects.equals(keys[i], key)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public boolean containsKey(Object key) {
        return large != null ? large.containsKey(key) : indexOf(key) >= 0;
    }

    @Override
    public Object get(Object key) {
        if (large != null) {
            return large.get(key);
        }
        int i = indexOf(key);
        return i < 0 ? null : values[i];
    }

    @Override
    public Object put(Object key, Object value) {
        if (large != null) {
            return large.put(key, value);
        }
        int i = indexOf(key);
        if (i >= 0) {
            Object old = values[i];
            values[i] = value;
            return old;
        }
        if (size == LINEAR_LIMIT) {
            large = new HashMap<>();
            for (int j = 0; j < size; j++) {
                large.put(keys[j], values[j]);
            }
            keys = null;
            values = null;
            size = 0;
            return large.put(key, value);
        }
        if (size == keys.length) {
            keys = Arrays.copyOf(keys, size * 2);
            values = Arrays.copyOf(values, size * 2);
        }
        keys[size] = key;
        values[size] = value;
        size++;
        return null;
    }

    @Override
    public Set<Map.Entry<Object, Object>> entrySet() {
        if (large != null) {
            return large.entrySet();
        }
        return new AbstractSet<>() {
            @Override
            public int size() {
                return size;
            }

            @Override
            public Iterator<Map.Entry<Object, Object>> iterator() {
                return new Iterator<>() {
                    private int next;

                    @Override
                    public boolean hasNext() {
                        return next < size;
                    }

                    @Override
                    public Map.Entry<Object, Object> next() {
                        if (next >= size) {
                            throw new NoSuchElementException();
                        }
                        int i = next++;
                        return new SimpleImmutableEntry<>(keys[i], values[i]);
                    }
                };
            }
        };
    }
}
