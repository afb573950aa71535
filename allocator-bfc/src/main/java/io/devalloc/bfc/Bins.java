package io.devalloc.bfc;

import java.util.Arrays;

/**
 * TensorFlow's 21 bins of free chunks. Bin {@code b} holds chunks of {@code [256·2^b, 256·2^(b+1))} bytes, bin 20
 * everything from 256 MiB up; each bin is ordered by (size, address), so the first fitting chunk is the best fit and
 * ties go to the lowest address.
 *
 * <p>Each bin is a sorted array of handles (binary search, then an array copy to insert or remove: a few hundred
 * nanoseconds even for thousands of free chunks, and no objects), and a bitmap of non-empty bins finds the next
 * candidate bin in one step instead of scanning 21 bins.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class Bins {

    static final int NUM_BINS = 21;
    static final int MIN_ALLOCATION_BITS = 8;
    static final long MIN_ALLOCATION_SIZE = 1L << MIN_ALLOCATION_BITS;

    private final ChunkTable chunks;
    private final int[][] items = new int[NUM_BINS][];
    private final int[] counts = new int[NUM_BINS];
    private int nonEmpty;

    Bins(ChunkTable chunks) {
        this.chunks = chunks;
        for (int b = 0; b < NUM_BINS; b++) {
            items[b] = new int[8];
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

    int count(int b) {
        return counts[b];
    }

    int get(int b, int i) {
        return items[b][i];
    }

    /** The lowest non-empty bin at or above {@code b}, or -1. */
    int nextNonEmpty(int b) {
        if (b >= NUM_BINS) {
            return -1;
        }
        int mask = nonEmpty & (-1 << b);
        return mask == 0 ? -1 : Integer.numberOfTrailingZeros(mask);
    }

    /** Index of the first chunk in bin {@code b} ordered at or after (size, address). */
    int lowerBound(int b, long size, long address) {
        int[] a = items[b];
        int lo = 0;
        int hi = counts[b];
        long[] sizes = chunks.size;
        long[] ptrs = chunks.ptr;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int h = a[mid];
            long s = sizes[h];
            if (s < size || (s == size && ptrs[h] < address)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    void insert(int h) {
        int b = binFor(chunks.size[h]);
        int i = lowerBound(b, chunks.size[h], chunks.ptr[h]);
        int n = counts[b];
        int[] a = items[b];
        if (n == a.length) {
            a = items[b] = Arrays.copyOf(a, n * 2);
        }
        System.arraycopy(a, i, a, i + 1, n - i);
        a[i] = h;
        counts[b] = n + 1;
        nonEmpty |= 1 << b;
        chunks.bin[h] = b;
    }

    void remove(int h) {
        int b = chunks.bin[h];
        int i = lowerBound(b, chunks.size[h], chunks.ptr[h]);
        int[] a = items[b];
        int n = counts[b];
        if (i >= n || a[i] != h) {
            throw new IllegalStateException("chunk " + h + " is not in bin " + b);
        }
        System.arraycopy(a, i + 1, a, i, n - i - 1);
        counts[b] = n - 1;
        if (n == 1) {
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
        return items[b][counts[b] - 1];
    }

    /** Total free chunks. */
    int total() {
        int n = 0;
        for (int c : counts) {
            n += c;
        }
        return n;
    }
}
