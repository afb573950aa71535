package io.devalloc.bfc;

import io.devalloc.api.collect.OrderedHandleSet;

/**
 * TensorFlow's 21 bins of free chunks. Bin {@code b} holds chunks of {@code [256·2^b, 256·2^(b+1))} bytes, bin 20
 * everything from 256 MiB up; each bin is ordered by (size, address), so the first fitting chunk is the best fit and
 * ties go to the lowest address.
 *
 * <p>Each bin is a {@code std::set} upstream and an {@link OrderedHandleSet} of chunk handles here (a B-tree over
 * primitive arrays: O(log n) insert, remove and lower bound however many chunks a bin holds, and no objects);
 * a bitmap of non-empty bins finds the next candidate bin in one step instead of scanning 21 bins. Callers walk a
 * bin by node ({@link #lowerBound}, {@link #first}, {@link #next}) and read the chunk at a node with
 * {@link #chunkAt}. A chunk's size and address are its key: it leaves its bin before they change.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class Bins {

    static final int NUM_BINS = 21;
    static final int MIN_ALLOCATION_BITS = 8;
    static final long MIN_ALLOCATION_SIZE = 1L << MIN_ALLOCATION_BITS;
    /** What the node-returning methods return for "none". */
    static final int NO_NODE = OrderedHandleSet.NO_NODE;

    private final ChunkTable chunks;
    private final OrderedHandleSet[] bins = new OrderedHandleSet[NUM_BINS];
    private int nonEmpty;

    Bins(ChunkTable chunks) {
        this.chunks = chunks;
        for (int b = 0; b < NUM_BINS; b++) {
            bins[b] = new OrderedHandleSet(2, false, 8);
        }
    }

    /** TensorFlow's {@code BinNumForSize}: {@code min(20, floor(log2(max(n, 256) >> 8)))}. */
    static int binFor(long bytes) {
        long units = Math.max(bytes, MIN_ALLOCATION_SIZE) >>> MIN_ALLOCATION_BITS;
        return Math.min(NUM_BINS - 1, 63 - Long.numberOfLeadingZeros(units));
    }

    /** The smallest size bin {@code b} holds. */
    static long binSize(int b) {
        return MIN_ALLOCATION_SIZE << b;
    }

    /** The node of the first chunk of bin {@code b}, or {@link #NO_NODE}. */
    int first(int b) {
        return bins[b].first();
    }

    /** The node of the last chunk of bin {@code b}, or {@link #NO_NODE}. */
    int last(int b) {
        return bins[b].last();
    }

    /** The node after {@code node} in bin {@code b}, or {@link #NO_NODE}. */
    int next(int b, int node) {
        return bins[b].next(node);
    }

    /** The node before {@code node} in bin {@code b}, or {@link #NO_NODE}. */
    int prev(int b, int node) {
        return bins[b].prev(node);
    }

    /** The chunk at {@code node} of bin {@code b}. */
    int chunkAt(int b, int node) {
        return bins[b].handle(node);
    }

    /** The lowest non-empty bin at or above {@code b}, or -1. */
    int nextNonEmpty(int b) {
        if (b >= NUM_BINS) {
            return -1;
        }
        int mask = nonEmpty & (-1 << b);
        return mask == 0 ? -1 : Integer.numberOfTrailingZeros(mask);
    }

    /** The node of the first chunk in bin {@code b} ordered at or after (size, address), or {@link #NO_NODE}. */
    int lowerBound(int b, long size, long address) {
        return bins[b].lowerBound(size, address, 0);
    }

    void insert(int h) {
        int b = binFor(chunks.size[h]);
        bins[b].insert(chunks.size[h], chunks.ptr[h], 0, h);
        nonEmpty |= 1 << b;
        chunks.bin[h] = b;
    }

    void remove(int h) {
        int b = chunks.bin[h];
        OrderedHandleSet bin = b >= 0 && b < NUM_BINS ? bins[b] : null;
        int node = bin == null ? NO_NODE : bin.find(chunks.size[h], chunks.ptr[h], 0);
        if (node == NO_NODE || bin.handle(node) != h) {
            throw new IllegalStateException("chunk " + h + " is not in bin " + b);
        }
        bin.remove(node);
        if (bin.isEmpty()) {
            nonEmpty &= ~(1 << b);
        }
        chunks.bin[h] = ChunkTable.NONE;
    }

    /**
     * Removes the chunk at {@code node} of bin {@code b}: what {@link #remove} does, without searching the bin again
     * for a node the caller is standing on (the best-fit walk).
     */
    void removeAt(int b, int node) {
        OrderedHandleSet bin = bins[b];
        int h = bin.handle(node);
        bin.remove(node);
        if (bin.isEmpty()) {
            nonEmpty &= ~(1 << b);
        }
        chunks.bin[h] = ChunkTable.NONE;
    }

    /** The largest free chunk: the last of the highest non-empty bin (TensorFlow's current rule), or -1. */
    int largest() {
        if (nonEmpty == 0) {
            return -1;
        }
        int b = 31 - Integer.numberOfLeadingZeros(nonEmpty);
        return bins[b].handle(bins[b].last());
    }

    /** Total free chunks. */
    int total() {
        int n = 0;
        for (OrderedHandleSet bin : bins) {
            n += bin.size();
        }
        return n;
    }
}
