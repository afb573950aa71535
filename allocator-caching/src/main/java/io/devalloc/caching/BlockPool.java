package io.devalloc.caching;

import io.devalloc.api.collect.OrderedHandleSet;

/**
 * One of PyTorch's {@code BlockPool}s (small or large): the free mapped blocks ordered by (stream, size, address),
 * PyTorch's {@code BlockComparatorSize}, so that a lower bound on (stream, size, 0) finds the best fit on the stream,
 * ties going to the lowest address; and the unmapped ranges of expandable segments ordered by (stream, address),
 * {@code BlockComparatorAddress}. Both are {@code std::set}s upstream and {@link OrderedHandleSet}s here (B-trees
 * over primitive arrays: O(log n) insert, remove and lower bound however many blocks are free, and no
 * objects). Streams and addresses compare as signed {@code long}s, as they always have here; upstream compares
 * stream ids and pointers, which orders the same for the handles and addresses devalloc hands out.
 *
 * <p>Callers walk a set by node ({@link #lowerBound}, {@link #nextFree}, {@link #prevFree}) and read the block at a
 * node with {@link #blockAt}. A node stays valid until its block leaves the pool. A block's stream, size and
 * address must not change while it is in the pool (they are its key): remove it first, insert it again after.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class BlockPool {

    /** What the node-returning methods return for "none". */
    static final int NO_NODE = OrderedHandleSet.NO_NODE;

    final boolean small;
    private final BlockTable blocks;
    private final OrderedHandleSet free = new OrderedHandleSet(3, false, 64);
    private final OrderedHandleSet unmapped = new OrderedHandleSet(2, false, 8);
    /** PyTorch's {@code get_free_blocks_call_count}: the GC clock. */
    long freeBlocksCallCount;

    BlockPool(boolean small, BlockTable blocks) {
        this.small = small;
        this.blocks = blocks;
    }

    int freeCount() {
        return free.size();
    }

    /** The node of the first free block in (stream, size, address) order, or {@link #NO_NODE}. */
    int firstFree() {
        return free.first();
    }

    /** The free block at {@code node}. */
    int blockAt(int node) {
        return free.handle(node);
    }

    int nextFree(int node) {
        return free.next(node);
    }

    int prevFree(int node) {
        return free.prev(node);
    }

    /** The node of the last free block in (stream, size, address) order, or {@link #NO_NODE}. */
    int lastFree() {
        return free.last();
    }

    /** The node of the first free block ordered at or after (stream, size, address), or {@link #NO_NODE}. */
    int lowerBound(long stream, long size, long address) {
        return free.lowerBound(stream, size, address);
    }

    /** Inserts a free mapped block and stamps it with the GC clock (PyTorch's {@code insert_into_blocks}). */
    void insert(int h) {
        free.insert(blocks.stream[h], blocks.size[h], blocks.ptr[h], h);
        blocks.gcCountBase[h] = freeBlocksCallCount;
    }

    /** Removes the free block at {@code node}. */
    void removeNode(int node) {
        free.remove(node);
    }

    void remove(int h) {
        int n = free.find(blocks.stream[h], blocks.size[h], blocks.ptr[h]);
        if (n == NO_NODE || free.handle(n) != h) {
            throw new IllegalStateException("block " + h + " is not in the " + (small ? "small" : "large") + " pool");
        }
        free.remove(n);
    }

    boolean contains(int h) {
        int n = free.find(blocks.stream[h], blocks.size[h], blocks.ptr[h]);
        return n != NO_NODE && free.handle(n) == h;
    }

    /** The node of the first unmapped range in (stream, address) order, or {@link #NO_NODE}. */
    int firstUnmappedNode() {
        return unmapped.first();
    }

    /** The unmapped range at {@code node}. */
    int unmappedAt(int node) {
        return unmapped.handle(node);
    }

    int nextUnmapped(int node) {
        return unmapped.next(node);
    }

    /** The node of the first unmapped range of {@code stream} at or after {@code address}, or {@link #NO_NODE}. */
    int firstUnmapped(long stream, long address) {
        int n = unmapped.lowerBound(stream, address, 0);
        return n != NO_NODE && blocks.stream[unmapped.handle(n)] == stream ? n : NO_NODE;
    }

    /** Forgets every block (the allocator closed and gave their memory back). */
    void clear() {
        free.clear();
        unmapped.clear();
    }

    void insertUnmapped(int h) {
        unmapped.insert(blocks.stream[h], blocks.ptr[h], 0, h);
    }

    void removeUnmapped(int h) {
        int n = unmapped.find(blocks.stream[h], blocks.ptr[h], 0);
        if (n == NO_NODE || unmapped.handle(n) != h) {
            throw new IllegalStateException("block " + h + " is not an unmapped range of the pool");
        }
        unmapped.remove(n);
    }
}
