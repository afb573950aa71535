package io.devalloc.caching;

import java.util.Arrays;

/**
 * One of PyTorch's {@code BlockPool}s (small or large): the free mapped blocks ordered by (stream, size, address),
 * so that a lower bound on (stream, size, 0) finds the best fit on the stream, ties going to the lowest address;
 * and the unmapped ranges of expandable segments ordered by (stream, address). Both are sorted {@code int} arrays
 * of handles (binary search and an array copy; no objects). The pool also keeps the GC clock.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class BlockPool {

    final boolean small;
    private final BlockTable blocks;
    private int[] free = new int[64];
    private int freeCount;
    private int[] unmapped = new int[8];
    private int unmappedCount;
    /** PyTorch's {@code get_free_blocks_call_count}: the GC clock. */
    long freeBlocksCallCount;

    BlockPool(boolean small, BlockTable blocks) {
        this.small = small;
        this.blocks = blocks;
    }

    int freeCount() {
        return freeCount;
    }

    int freeAt(int i) {
        return free[i];
    }

    int unmappedCount() {
        return unmappedCount;
    }

    int unmappedAt(int i) {
        return unmapped[i];
    }

    /** Index of the first free block ordered at or after (stream, size, address). */
    int lowerBound(long stream, long size, long address) {
        int lo = 0;
        int hi = freeCount;
        long[] st = blocks.stream;
        long[] sz = blocks.size;
        long[] pt = blocks.ptr;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int h = free[mid];
            int c = Long.compare(st[h], stream);
            if (c == 0) {
                c = Long.compare(sz[h], size);
            }
            if (c == 0) {
                c = Long.compare(pt[h], address);
            }
            if (c < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Inserts a free mapped block and stamps it with the GC clock (PyTorch's {@code insert_into_blocks}). */
    void insert(int h) {
        blocks.gcCountBase[h] = freeBlocksCallCount;
        int i = lowerBound(blocks.stream[h], blocks.size[h], blocks.ptr[h]);
        if (freeCount == free.length) {
            free = Arrays.copyOf(free, freeCount * 2);
        }
        System.arraycopy(free, i, free, i + 1, freeCount - i);
        free[i] = h;
        freeCount++;
    }

    void removeAt(int i) {
        System.arraycopy(free, i + 1, free, i, freeCount - i - 1);
        freeCount--;
    }

    void remove(int h) {
        int i = lowerBound(blocks.stream[h], blocks.size[h], blocks.ptr[h]);
        if (i >= freeCount || free[i] != h) {
            throw new IllegalStateException("block " + h + " is not in the " + (small ? "small" : "large") + " pool");
        }
        removeAt(i);
    }

    boolean contains(int h) {
        int i = lowerBound(blocks.stream[h], blocks.size[h], blocks.ptr[h]);
        return i < freeCount && free[i] == h;
    }

    private int unmappedLowerBound(long stream, long address) {
        int lo = 0;
        int hi = unmappedCount;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int h = unmapped[mid];
            int c = Long.compare(blocks.stream[h], stream);
            if (c == 0) {
                c = Long.compare(blocks.ptr[h], address);
            }
            if (c < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The first unmapped range of {@code stream} at or after {@code address}, as an index, or -1. */
    int firstUnmapped(long stream, long address) {
        int i = unmappedLowerBound(stream, address);
        return i < unmappedCount && blocks.stream[unmapped[i]] == stream ? i : -1;
    }

    void insertUnmapped(int h) {
        int i = unmappedLowerBound(blocks.stream[h], blocks.ptr[h]);
        if (unmappedCount == unmapped.length) {
            unmapped = Arrays.copyOf(unmapped, unmappedCount * 2);
        }
        System.arraycopy(unmapped, i, unmapped, i + 1, unmappedCount - i);
        unmapped[i] = h;
        unmappedCount++;
    }

    void removeUnmapped(int h) {
        int i = unmappedLowerBound(blocks.stream[h], blocks.ptr[h]);
        if (i >= unmappedCount || unmapped[i] != h) {
            throw new IllegalStateException("block " + h + " is not an unmapped range of the pool");
        }
        System.arraycopy(unmapped, i + 1, unmapped, i, unmappedCount - i - 1);
        unmappedCount--;
    }
}
