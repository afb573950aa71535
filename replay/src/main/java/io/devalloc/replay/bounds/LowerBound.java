package io.devalloc.replay.bounds;

import io.devalloc.api.spi.SizeRounding;
import java.util.Objects;

/**
 * The least memory any allocator needs for a trace: the peak of the bytes live at once, as the program requested
 * them, and the same after an allocator's request rounding ({@link SizeRounding}: PyTorch's {@code round_size}, BFC's
 * 256 B), which no allocator that rounds so can go below (at its peak every live block holds at least its rounded
 * size, in disjoint bytes). Counted over the intervals of {@link LiveIntervals}: OOM instants included (getting past
 * the failed request needs its bytes), segment rows ignored; see the
 * {@linkplain io.devalloc.replay.bounds package documentation}.
 *
 * <p>Immutable: thread-safe. {@link #of} is a single sweep over the intervals (O(n), no allocation beyond the rounded
 * sizes).
 *
 * @param requestedPeakBytes the highest sum of the requested sizes of the intervals live at one event
 * @param requestedPeakEvent the first event at which it is reached (an allocation, warm-start block or OOM row);
 *                           -1 when nothing is ever live (no interval, or only empty ones)
 * @param roundedPeakBytes   the highest sum of the rounded sizes live at one event
 * @param roundedPeakEvent   the first event at which that is reached; -1 as above
 * @param refusedByRounding  requests the rounding refused (larger than the allocator accepts): counted at their
 *                           requested size
 * @param saturated          whether a sum did not fit in a {@code long}: the peak that reached it is
 *                           {@link Long#MAX_VALUE}, read "at least that many bytes" (a hostile or corrupt trace)
 */
public record LowerBound(long requestedPeakBytes, long requestedPeakEvent, long roundedPeakBytes,
                         long roundedPeakEvent, long refusedByRounding, boolean saturated) {

    /** The bound of {@code intervals} under {@code rounding}. */
    public static LowerBound of(LiveIntervals intervals, SizeRounding rounding) {
        return of(intervals, RoundedSizes.of(intervals, rounding));
    }

    static LowerBound of(LiveIntervals intervals, RoundedSizes rounded) {
        Objects.requireNonNull(intervals, "intervals");
        long[] roundedBytes = rounded.bytes;
        long liveRequested = 0;
        long liveRounded = 0;
        long peakRequested = 0;
        long peakRounded = 0;
        long requestedEvent = -1;
        long roundedEvent = -1;
        // A sum that stopped at Long.MAX_VALUE has its final peak: nothing is above it, and it is no longer followed.
        boolean requestedSaturated = false;
        boolean roundedSaturated = false;
        int n = intervals.count();
        for (int k = 0; k < n; k++) {
            // The intervals whose end comes at or before interval k's start are gone when it starts.
            for (int p = intervals.endsFrom(k), last = intervals.endsFrom(k + 1); p < last; p++) {
                int gone = intervals.endsAt(p);
                liveRequested -= intervals.requestedSize(gone);
                liveRounded -= roundedBytes[gone];
            }
            if (!requestedSaturated) {
                liveRequested = SaturatingBytes.add(liveRequested, intervals.requestedSize(k));
                if (liveRequested > peakRequested) {
                    peakRequested = liveRequested;
                    requestedEvent = intervals.startEvent(k);
                }
                requestedSaturated = liveRequested == Long.MAX_VALUE;
            }
            if (!roundedSaturated) {
                liveRounded = SaturatingBytes.add(liveRounded, roundedBytes[k]);
                if (liveRounded > peakRounded) {
                    peakRounded = liveRounded;
                    roundedEvent = intervals.startEvent(k);
                }
                roundedSaturated = liveRounded == Long.MAX_VALUE;
            }
        }
        return new LowerBound(peakRequested, requestedEvent, peakRounded, roundedEvent, rounded.refused,
                requestedSaturated || roundedSaturated);
    }
}
