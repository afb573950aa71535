package io.devalloc.replay.bounds;

/**
 * The order in which the offline plan ({@link HeapPlacement}) places the intervals, as XLA's
 * {@code GlobalDecreasingSizeBestFitHeap} orders its buffer intervals: neither order is better on every trace, so
 * {@link OfflinePlan} runs both and keeps the lower, as XLA's {@code ChooseBestHeapAlgorithm} does.
 *
 * <p>An enum: thread-safe.
 */
public enum PlanOrder {

    /**
     * Largest rounded size first, then longest lifetime (end event &minus; start event), then the interval that
     * starts first: XLA's {@code kSpatial} order ({@code GetSpatialBufferIntervalCompare}), and TFLite's arena
     * planner's (size descending).
     */
    BY_SIZE,

    /** Longest lifetime first, then largest rounded size, then the interval that starts first: XLA's
     * {@code kTemporal} order ({@code GetTemporalBufferIntervalCompare}). */
    BY_LIFETIME
}
