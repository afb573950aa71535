package io.devalloc.caching.host;

import java.util.Arrays;

/**
 * Free lists keyed by exact size, for sizes that are not powers of two (only with {@code pinned_round_threshold_mb}):
 * a sorted array of sizes and one {@link BlockStack} per size.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class SizeLists {

    long[] sizes = new long[8];
    BlockStack[] stacks = new BlockStack[8];
    int count;

    /** The stack of blocks of exactly {@code size} bytes, or null. */
    BlockStack get(long size) {
        int i = Arrays.binarySearch(sizes, 0, count, size);
        return i >= 0 ? stacks[i] : null;
    }

    /** The stack of blocks of exactly {@code size} bytes, made if there is none. */
    BlockStack getOrCreate(long size) {
        int i = Arrays.binarySearch(sizes, 0, count, size);
        if (i >= 0) {
            return stacks[i];
        }
        int at = -i - 1;
        if (count == sizes.length) {
            sizes = Arrays.copyOf(sizes, count * 2);
            stacks = Arrays.copyOf(stacks, count * 2);
        }
        System.arraycopy(sizes, at, sizes, at + 1, count - at);
        System.arraycopy(stacks, at, stacks, at + 1, count - at);
        sizes[at] = size;
        stacks[at] = new BlockStack();
        count++;
        return stacks[at];
    }

    /** Drops the sizes whose stack is empty. */
    void compact() {
        int kept = 0;
        for (int i = 0; i < count; i++) {
            if (stacks[i].count > 0) {
                sizes[kept] = sizes[i];
                stacks[kept++] = stacks[i];
            }
        }
        Arrays.fill(stacks, kept, count, null);
        count = kept;
    }

    /** Forgets every size. */
    void clear() {
        count = 0;
        Arrays.fill(stacks, null);
    }
}
