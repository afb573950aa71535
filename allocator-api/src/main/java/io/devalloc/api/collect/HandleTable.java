package io.devalloc.api.collect;

/**
 * The handles of a table whose rows are columns of primitive arrays indexed by handle (bfc's chunks, caching's
 * blocks), so that taking and returning a row creates no object. Returned handles form a LIFO free list linked
 * through a column of the subclass's (its {@code next} links, unused while a row is free), as TensorFlow's
 * {@code free_chunks_list_} is; when every handle is in use the subclass doubles its columns.
 *
 * <p>The subclass owns the columns and what a row means; this class only decides which handle a new row gets, so
 * that both algorithms reuse handles in the same order.
 *
 * <p>Not thread-safe: the owner's lock guards it.
 */
public abstract class HandleTable {

    /** No handle: the end of a link, or a field that names no row. */
    public static final int NONE = -1;

    private int capacity;
    private int used;
    private int freeList = NONE;
    private int live;

    /** Room for {@code initialCapacity} rows, 16 at least; the subclass sizes its columns by {@link #capacity()}. */
    protected HandleTable(int initialCapacity) {
        capacity = Math.max(16, initialCapacity);
    }

    /** How many rows the columns hold. */
    protected final int capacity() {
        return capacity;
    }

    /**
     * A handle for a new row: the one returned last, else the first never used, after doubling the columns when they
     * are full. Its fields hold whatever they held: the caller sets every one.
     */
    protected final int takeHandle() {
        int h;
        if (freeList != NONE) {
            h = freeList;
            freeList = freeLink(h);
        } else {
            if (used == capacity) {
                int c = capacity * 2;
                growColumns(c);
                capacity = c;
            }
            h = used++;
        }
        live++;
        return h;
    }

    /** Puts handle {@code h} on the free list; its row's link column now links free handles. */
    protected final void returnHandle(int h) {
        setFreeLink(h, freeList);
        freeList = h;
        live--;
    }

    /** Returns every handle at once; the columns are kept. */
    protected final void returnAllHandles() {
        used = 0;
        freeList = NONE;
        live = 0;
    }

    /** Handles currently taken. */
    protected final int liveCount() {
        return live;
    }

    /** The free handle after {@code h} on the free list: the link column's value at {@code h}. */
    protected abstract int freeLink(int h);

    /** Links free handle {@code h} to {@code next} in the link column. */
    protected abstract void setFreeLink(int h, int next);

    /** Copies every column into arrays of {@code newCapacity} rows. */
    protected abstract void growColumns(int newCapacity);
}
