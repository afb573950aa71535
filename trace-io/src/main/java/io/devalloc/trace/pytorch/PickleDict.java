package io.devalloc.trace.pytorch;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;

/**
 * The dict of an unpickled snapshot: its keys and values in two arrays, searched in order, with no node per entry,
 * iterated in insertion order as a Python dict is. A PyTorch snapshot is a million small dicts (a trace entry has six
 * to ten keys); as {@link HashMap}s they took about 400 bytes each, as these about half that, which is what lets a
 * large snapshot load in a bounded heap. Past {@value #LINEAR_LIMIT} entries the dict moves into a
 * {@link LinkedHashMap}, so that a large dict is not searched linearly.
 *
 * <p>A mutable {@link Map}: {@code null} keys and values allowed, removal through {@link #remove}, {@link #clear}
 * and the entry set's iterator, {@code setValue} on its entries, iterators that fail fast on a change made
 * elsewhere; {@code equals} and {@code hashCode} as every map's. Not thread-safe: built by the loading thread, read
 * after. {@link #shared()} is a note the unpickler keeps, not part of the dict's value.
 */
final class PickleDict extends AbstractMap<Object, Object> {

    static final int LINEAR_LIMIT = 16;

    /**
     * Shared by every dict until its first entry: an empty dict is then about 40 bytes, not 140 (a pickle of
     * 1-byte {@code EMPTY_DICT}s builds one per byte).
     */
    private static final Object[] NONE = {};
    /** The first arrays' length: most snapshot dicts have up to eight keys. */
    private static final int FIRST_LENGTH = 8;

    private Object[] keys = NONE;
    private Object[] values = NONE;
    private int size;
    /** Every entry, once there have been more than {@link #LINEAR_LIMIT}; null before. */
    private LinkedHashMap<Object, Object> large;
    /** Changes of the arrays' entries (adds, removes, the move to {@link #large}), for fail-fast iterators. */
    private int modCount;
    /**
     * The unpickler's note that something other than its container may reach this dict (the memo kept it, or it was
     * duplicated on the stack): not part of its value ({@code equals} and {@code hashCode} ignore it).
     */
    private boolean shared;

    /** Whether something other than its container may reach it ({@link RestrictedUnpickler}'s note). */
    boolean shared() {
        return shared;
    }

    /** Notes that something other than its container may reach it. */
    void share() {
        shared = true;
    }

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
        modCount++;
        if (size == LINEAR_LIMIT) {
            LinkedHashMap<Object, Object> all = new LinkedHashMap<>(4 * LINEAR_LIMIT);
            for (int j = 0; j < size; j++) {
                all.put(keys[j], values[j]);
            }
            all.put(key, value);
            large = all;
            keys = null;
            values = null;
            size = 0;
            return null;
        }
        if (size == keys.length) {
            int length = Math.max(FIRST_LENGTH, size * 2);
            keys = Arrays.copyOf(keys, length);
            values = Arrays.copyOf(values, length);
        }
        keys[size] = key;
        values[size] = value;
        size++;
        return null;
    }

    @Override
    public Object remove(Object key) {
        if (large != null) {
            return large.remove(key);
        }
        int i = indexOf(key);
        if (i < 0) {
            return null;
        }
        Object old = values[i];
        removeAt(i);
        return old;
    }

    private void removeAt(int i) {
        modCount++;
        int tail = size - i - 1;
        System.arraycopy(keys, i + 1, keys, i, tail);
        System.arraycopy(values, i + 1, values, i, tail);
        size--;
        keys[size] = null;
        values[size] = null;
    }

    @Override
    public void clear() {
        if (large != null) {
            large.clear();
            return;
        }
        modCount++;
        Arrays.fill(keys, 0, size, null);
        Arrays.fill(values, 0, size, null);
        size = 0;
    }

    /** A view: what it shows follows the dict, also across the move to {@link #large}. */
    @Override
    public Set<Map.Entry<Object, Object>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public int size() {
                return PickleDict.this.size();
            }

            @Override
            public Iterator<Map.Entry<Object, Object>> iterator() {
                return large != null ? large.entrySet().iterator() : new ArrayIterator();
            }
        };
    }

    /** Iterates the arrays; fails fast when the dict changes other than through it (or moves to a map). */
    private final class ArrayIterator implements Iterator<Map.Entry<Object, Object>> {
        private int next;
        private int last = -1;
        private int expectedModCount = modCount;

        @Override
        public boolean hasNext() {
            return next < size && large == null;
        }

        @Override
        public Map.Entry<Object, Object> next() {
            checkUnchanged();
            if (next >= size) {
                throw new NoSuchElementException();
            }
            last = next++;
            return new Entry(last);
        }

        @Override
        public void remove() {
            if (last < 0) {
                throw new IllegalStateException("next() was not called, or the entry was already removed");
            }
            checkUnchanged();
            removeAt(last);
            next = last;
            last = -1;
            expectedModCount = modCount;
        }

        private void checkUnchanged() {
            if (modCount != expectedModCount || large != null) {
                throw new ConcurrentModificationException();
            }
        }
    }

    /** An entry of the arrays; {@code setValue} writes through while no entry was added or removed since. */
    private final class Entry extends SimpleEntry<Object, Object> {
        private static final long serialVersionUID = 1L;
        private final int index;
        private final int expectedModCount = modCount;

        Entry(int index) {
            super(keys[index], values[index]);
            this.index = index;
        }

        @Override
        public Object setValue(Object value) {
            if (large != null || modCount != expectedModCount) {
                throw new ConcurrentModificationException();
            }
            values[index] = value;
            return super.setValue(value);
        }
    }
}
