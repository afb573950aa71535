package io.devalloc.replay.bounds;

import io.devalloc.api.spi.SizeRounding;
import java.util.Objects;

/**
 * Each interval's request rounded by an allocator's {@link SizeRounding}, once for a bound or a plan. A request the
 * rounding refuses (it throws {@link IllegalArgumentException}: larger than that allocator accepts) keeps its
 * requested size and is counted, so that a figure never silently drops it.
 *
 * <p>Immutable after construction: thread-safe.
 */
final class RoundedSizes {

    /** Per interval, the rounded bytes ({@code >= 0}). */
    final long[] bytes;
    /** Requests the rounding refused, kept at their requested size. */
    final long refused;
    /** The sum of {@link #bytes}, at most {@link Long#MAX_VALUE} (then {@link #saturated}). */
    final long total;
    /** Whether the sum of the rounded sizes does not fit in a {@code long}. */
    final boolean saturated;

    private RoundedSizes(long[] bytes, long refused, long total, boolean saturated) {
        this.bytes = bytes;
        this.refused = refused;
        this.total = total;
        this.saturated = saturated;
    }

    /**
     * The rounded sizes of every interval.
     *
     * @throws IllegalStateException if {@code rounding} returns less than a request it accepted (it breaks
     *                               {@link SizeRounding}'s contract; a bound computed with it would be wrong)
     */
    static RoundedSizes of(LiveIntervals intervals, SizeRounding rounding) {
        Objects.requireNonNull(intervals, "intervals");
        Objects.requireNonNull(rounding, "rounding");
        int n = intervals.count();
        long[] bytes = new long[n];
        long refused = 0;
        long total = 0;
        for (int i = 0; i < n; i++) {
            long requested = intervals.requestedSize(i);
            long rounded;
            try {
                rounded = rounding.roundedSize(requested);
            } catch (IllegalArgumentException tooLarge) {
                refused++;
                rounded = requested;
            }
            if (rounded < requested) {
                throw new IllegalStateException("the size rounding " + rounding + " rounds a request of " + requested
                        + " B down to " + rounded + " B");
            }
            bytes[i] = rounded;
            total = SaturatingBytes.add(total, rounded);
        }
        return new RoundedSizes(bytes, refused, total, total == Long.MAX_VALUE);
    }
}
