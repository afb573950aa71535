package io.devalloc.caching.host;

import java.util.Arrays;

/**
 * A last-in-first-out stack of free blocks (PyTorch's {@code FreeBlockList}, used from the back).
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class BlockStack {

    Block[] items = new Block[4];
    int count;

    void push(Block b) {
        if (count == items.length) {
            items = Arrays.copyOf(items, count * 2);
        }
        items[count++] = b;
    }

    Block pop() {
        Block b = items[--count];
        items[count] = null;
        return b;
    }

    /**
     * pytorch#192722's {@code get_free_block}: the most recently freed block of at least {@code minSize} bytes,
     * scanning from the most recently freed end, or null. The blocks above it keep their order. When every block
     * has one size (always, unless a {@code pinned_max_*} limit leaves requests unrounded) the first candidate
     * fits, so this is {@link #pop()}'s O(1).
     */
    Block takeLastFitting(long minSize) {
        for (int i = count - 1; i >= 0; i--) {
            Block b = items[i];
            if (b.size >= minSize) {
                System.arraycopy(items, i + 1, items, i, count - 1 - i);
                items[--count] = null;
                return b;
            }
        }
        return null;
    }
}
