package io.devalloc.bfc;

import java.util.Arrays;

/**
 * Chunks as columns of primitive arrays indexed by handle, as TensorFlow stores them in a vector: no object per
 * chunk, so allocate and free create no garbage. Unused handles form a LIFO free list linked through
 * {@link #next}, like TensorFlow's {@code free_chunks_list_}.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class ChunkTable {

    static final int NONE = -1;

    long[] ptr;
    long[] size;
    long[] requested;
    /** -1 when free; otherwise unique and increasing from 1. */
    long[] allocationId;
    /** Physically adjacent chunks in the same region, or {@link #NONE}. */
    int[] prev;
    int[] next;
    /** The bin a free chunk sits in, or {@link #NONE}. */
    int[] bin;
    /** Timestamped mode: the free counter when the chunk was freed; 0 means safe to reuse and merge. */
    long[] freedAtCount;
    /** The stream the chunk was allocated on (its memory is stream-ordered on it). */
    long[] stream;
    /** Whether the chunk was used on streams other than {@link #stream} (recordStream). */
    boolean[] crossStream;

    private int capacity;
    private int used;
    private int freeList = NONE;
    private int live;

    ChunkTable(int initialCapacity) {
        capacity = Math.max(16, initialCapacity);
        ptr = new long[capacity];
        size = new long[capacity];
        requested = new long[capacity];
        allocationId = new long[capacity];
        prev = new int[capacity];
        next = new int[capacity];
        bin = new int[capacity];
        freedAtCount = new long[capacity];
        stream = new long[capacity];
        crossStream = new boolean[capacity];
    }

    /** A fresh handle with every field reset: free, unbinned, unlinked. */
    int allocate() {
        int h;
        if (freeList != NONE) {
            h = freeList;
            freeList = next[h];
        } else {
            if (used == capacity) {
                grow();
            }
            h = used++;
        }
        ptr[h] = 0;
        size[h] = 0;
        requested[h] = 0;
        allocationId[h] = -1;
        prev[h] = NONE;
        next[h] = NONE;
        bin[h] = NONE;
        freedAtCount[h] = 0;
        stream[h] = 0;
        crossStream[h] = false;
        live++;
        return h;
    }

    /** Returns a handle to the pool. */
    void release(int h) {
        allocationId[h] = -1;
        bin[h] = NONE;
        size[h] = 0;
        next[h] = freeList;
        freeList = h;
        live--;
    }

    boolean inUse(int h) {
        return allocationId[h] != -1;
    }

    /** Handles currently describing chunks. */
    int liveHandles() {
        return live;
    }

    private void grow() {
        int c = capacity * 2;
        ptr = Arrays.copyOf(ptr, c);
        size = Arrays.copyOf(size, c);
        requested = Arrays.copyOf(requested, c);
        allocationId = Arrays.copyOf(allocationId, c);
        prev = Arrays.copyOf(prev, c);
        next = Arrays.copyOf(next, c);
        bin = Arrays.copyOf(bin, c);
        freedAtCount = Arrays.copyOf(freedAtCount, c);
        stream = Arrays.copyOf(stream, c);
        crossStream = Arrays.copyOf(crossStream, c);
        capacity = c;
    }
}
