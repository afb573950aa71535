package io.devalloc.api.internal;

import io.devalloc.api.observe.MemoryGauge;
import io.devalloc.api.observe.ThresholdListener;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@link ThresholdListener} and the levels it watches on one gauge: remembers how many levels the figure is at or
 * above (its band) and, when a figure read after a call falls outside the band, tells the listener of every level
 * crossed, once. The check when nothing was crossed is two comparisons.
 *
 * <p>Thread-safe: the band moves under this object's lock, so two threads that see the same crossing report it once;
 * the listener is called after the lock is released, so it may use the allocator. The figure is read afresh inside
 * the lock and once more after the band moved: a thread whose figure is stale (another thread's call moved it since)
 * then catches up, so that once the calls stop the band is the band of the figure (without that second read, a
 * thread that read a figure before another thread's free could set the band after that thread found nothing to
 * report, and the band would stay off until the next call).
 */
public final class ThresholdWatch {

    private static final Logger LOG = LoggerFactory.getLogger(ThresholdWatch.class);

    private final MemoryGauge gauge;
    private final long[] levels;
    private final ThresholdListener listener;
    /** Whether the listener threw before (racy on purpose: at worst a second WARN). */
    private volatile boolean failedBefore;
    /** How many levels are at or below the figure last seen. */
    private volatile int band;

    /**
     * @param gauge    the figure watched
     * @param listener told of crossings
     * @param levels   positive byte levels, in any order, no two equal
     * @throws IllegalArgumentException no levels, a level below 1, or a level given twice
     */
    public ThresholdWatch(MemoryGauge gauge, ThresholdListener listener, long... levels) {
        this.gauge = Objects.requireNonNull(gauge, "gauge");
        this.listener = Objects.requireNonNull(listener, "listener");
        if (levels.length == 0) {
            throw new IllegalArgumentException("a threshold needs at least one level (bytes)");
        }
        long[] sorted = levels.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            if (sorted[i] < 1) {
                throw new IllegalArgumentException("threshold level " + sorted[i] + " of " + gauge
                        + ": levels are byte counts of at least 1");
            }
            if (i > 0 && sorted[i] == sorted[i - 1]) {
                throw new IllegalArgumentException("threshold level " + sorted[i] + " of " + gauge
                        + " given twice");
            }
        }
        this.levels = sorted;
    }

    /** A new watch of the same gauge, levels and listener, not started. */
    public ThresholdWatch copy() {
        return new ThresholdWatch(gauge, listener, levels);
    }

    /** The figure watched. */
    public MemoryGauge gauge() {
        return gauge;
    }

    /** Starts from {@code bytes} without telling the listener anything (the figure when the watch is attached). */
    public void start(long bytes) {
        band = bandOf(bytes);
    }

    /**
     * Tells the listener of every level crossed since the figure last seen, reading the figure from {@code figure}:
     * once (two comparisons when nothing was crossed), then, on a crossing, again inside the lock and after the band
     * moved until the band holds the figure (see the class documentation).
     */
    public void update(LongSupplier figure) {
        if (inBand(band, figure.getAsLong())) {
            return;
        }
        while (true) {
            long bytes;
            int from;
            int to;
            synchronized (this) {
                bytes = figure.getAsLong();
                from = band;
                to = bandOf(bytes);
                band = to;
            }
            report(from, to, bytes);
            if (inBand(band, figure.getAsLong())) {
                return;
            }
        }
    }

    private boolean inBand(int b, long bytes) {
        return (b == 0 || bytes >= levels[b - 1]) && (b == levels.length || bytes < levels[b]);
    }

    private void report(int from, int to, long bytes) {
        try {
            if (to > from) {
                for (int i = from; i < to; i++) {
                    listener.crossedUp(gauge, levels[i], bytes);
                }
            } else {
                for (int i = from - 1; i >= to; i--) {
                    listener.crossedDown(gauge, levels[i], bytes);
                }
            }
        } catch (RuntimeException | AssertionError | LinkageError e) {
            // As GuardedListener: the first failure at WARN, later ones at DEBUG, so that a listener that throws at
            // every crossing does not flood the log.
            if (!failedBefore) {
                failedBefore = true;
                LOG.warn("Threshold listener {} of {} threw; ignored (later failures are logged at DEBUG)", listener,
                        gauge, e);
            } else {
                LOG.debug("Threshold listener {} of {} threw; ignored", listener, gauge, e);
            }
        }
    }

    private int bandOf(long bytes) {
        int i = Arrays.binarySearch(levels, bytes);
        return i >= 0 ? i + 1 : -i - 1;
    }

    @Override
    public String toString() {
        return "ThresholdWatch[" + gauge + " " + Arrays.toString(levels) + "]";
    }
}
