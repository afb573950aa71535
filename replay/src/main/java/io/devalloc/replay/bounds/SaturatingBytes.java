package io.devalloc.replay.bounds;

/**
 * Sums of byte counts that stop at {@link Long#MAX_VALUE} instead of wrapping: a stranger's trace may ask for sizes
 * whose sum does not fit in a {@code long}, and a wrapped sum would be a negative peak. A figure at
 * {@code Long.MAX_VALUE} reads "at least 2^63 - 1 bytes", and the results that can reach it say so with a flag.
 *
 * <p>Static arithmetic only: thread-safe.
 */
final class SaturatingBytes {

    private SaturatingBytes() {
    }

    /** {@code a + b} for non-negative {@code a} and {@code b}, or {@link Long#MAX_VALUE} when it overflows. */
    static long add(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }
}
