package io.devalloc.bfc;

import io.devalloc.api.collect.HandleTable;
import java.util.Arrays;

/**
 * Chunks as columns of primitive arrays indexed by handle, as TensorFlow stores them in a vector: no object per
 * chunk, so allocate and free create no garbage. Unused handles form a LIFO free list linked through
 * {@link #next}, like TensorFlow's {@code free_chunks_list_} ({@link HandleTable} hands them out).
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class ChunkTable extends HandleTable {

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

    ChunkTable(int initialCapacity) {
        super(initialCapacity);
        int capacity = capacity();
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
        int h = takeHandle();
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
        return h;
    }

    /** Returns a handle to the pool. */
    void release(int h) {
        allocationId[h] = -1;
        bin[h] = NONE;
        size[h] = 0;
        returnHandle(h);
    }

    boolean inUse(int h) {
        return allocationId[h] != -1;
    }

    /** Handles currently describing chunks. */
    int liveHandles() {
        return liveCount();
    }

    @Override
    protected int freeLink(int h) {
        return next[h];
    }

    @Override
    protected void setFreeLink(int h, int link) {
        next[h] = link;
    }

    @Override
    protected void growColumns(int c) {
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
    }
}
