package io.devalloc.api.observe;

/**
 * Told when a watched byte figure crosses one of its levels, once per crossing in each direction, as cuDF's
 * {@code RmmEventHandler.onAllocThreshold}/{@code onDeallocThreshold} are. A figure that jumps over several levels
 * in one call crosses each of them, in the order of the jump (rising levels from low to high, falling from high to
 * low).
 *
 * <p>Called on the thread whose call moved the figure, after the call returned and with no allocator lock held.
 * Under concurrency each crossing is still reported exactly once, but two threads' reports may interleave; the
 * {@code bytes} given is the figure as that thread read it. A listener that throws is logged and ignored.
 */
public interface ThresholdListener {

    /**
     * The figure rose from below {@code level} to {@code level} or above.
     *
     * @param gauge which figure
     * @param level the level crossed
     * @param bytes the figure after the call
     */
    void crossedUp(MemoryGauge gauge, long level, long bytes);

    /**
     * The figure fell from {@code level} or above to below it.
     *
     * @param gauge which figure
     * @param level the level crossed
     * @param bytes the figure after the call
     */
    void crossedDown(MemoryGauge gauge, long level, long bytes);
}
