package io.devalloc.caching;

import io.devalloc.api.collect.HandleTable;
import io.devalloc.api.snapshot.BlockState;
import java.util.Arrays;

/**
 * Blocks as columns of primitive arrays indexed by handle, so that allocate and free create no objects. A block is
 * PyTorch's {@code Block}: a piece of a segment, allocated or free, linked to its address-order neighbours in the
 * same segment. Unused handles form a LIFO free list through {@link #next} ({@link HandleTable} hands them out).
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class BlockTable extends HandleTable {

    long[] ptr;
    long[] size;
    /** The size the caller last asked for (kept after a free, as upstream). */
    long[] requested;
    /** The stream the block belongs to (its pool's stream). */
    long[] stream;
    boolean[] allocated;
    boolean[] small;
    /** False only for address ranges of an expandable segment with no memory mapped behind them. */
    boolean[] mapped;
    int[] prev;
    int[] next;
    /** Events still outstanding for a freed block used on other streams. */
    int[] eventCount;
    /** The pool's GC clock when the block was last inserted into it. */
    long[] gcCountBase;
    /** The expandable segment the block belongs to, or {@link #NONE}. */
    int[] expandable;
    /** Whether the block has streams recorded with recordStream (kept in a side table). */
    boolean[] hasStreamUses;

    BlockTable(int initialCapacity) {
        super(initialCapacity);
        int capacity = capacity();
        ptr = new long[capacity];
        size = new long[capacity];
        requested = new long[capacity];
        stream = new long[capacity];
        allocated = new boolean[capacity];
        small = new boolean[capacity];
        mapped = new boolean[capacity];
        prev = new int[capacity];
        next = new int[capacity];
        eventCount = new int[capacity];
        gcCountBase = new long[capacity];
        expandable = new int[capacity];
        hasStreamUses = new boolean[capacity];
    }

    /** A new block. */
    int create(long address, long bytes, long streamHandle, boolean smallPool) {
        int h = takeHandle();
        ptr[h] = address;
        size[h] = bytes;
        requested[h] = 0;
        stream[h] = streamHandle;
        allocated[h] = false;
        small[h] = smallPool;
        mapped[h] = true;
        prev[h] = NONE;
        next[h] = NONE;
        eventCount[h] = 0;
        gcCountBase[h] = 0;
        expandable[h] = NONE;
        hasStreamUses[h] = false;
        return h;
    }

    void delete(int h) {
        size[h] = 0;
        returnHandle(h);
    }

    /** Deletes every block at once (the allocator closed); the arrays are kept. */
    void clear() {
        returnAllHandles();
    }

    boolean isSplit(int h) {
        return prev[h] != NONE || next[h] != NONE;
    }

    /**
     * Whether block {@code h} exists and could be handed out or merged: free, with no event outstanding and no
     * stream recorded (PyTorch's test before merging or growing into a neighbour).
     */
    boolean isAllocatable(int h) {
        return h != NONE && !allocated[h] && eventCount[h] == 0 && !hasStreamUses[h];
    }

    /** The state of block {@code h} as snapshots report it. */
    BlockState stateOf(int h) {
        if (allocated[h]) {
            return BlockState.ALLOCATED;
        }
        if (eventCount[h] > 0 || hasStreamUses[h]) {
            return BlockState.PENDING_FREE;
        }
        return mapped[h] ? BlockState.FREE : BlockState.UNMAPPED;
    }

    int liveBlocks() {
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
        stream = Arrays.copyOf(stream, c);
        allocated = Arrays.copyOf(allocated, c);
        small = Arrays.copyOf(small, c);
        mapped = Arrays.copyOf(mapped, c);
        prev = Arrays.copyOf(prev, c);
        next = Arrays.copyOf(next, c);
        eventCount = Arrays.copyOf(eventCount, c);
        gcCountBase = Arrays.copyOf(gcCountBase, c);
        expandable = Arrays.copyOf(expandable, c);
        hasStreamUses = Arrays.copyOf(hasStreamUses, c);
    }
}
