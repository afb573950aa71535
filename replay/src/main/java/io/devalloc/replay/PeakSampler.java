package io.devalloc.replay;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.stats.AllocatorStats;
import java.util.Arrays;

/**
 * Samples the allocator's figures while a replay runs: the reserved peak with the highest allocated and requested
 * bytes seen at it (for fragmentation at the peak), the allocator's snapshot at the peak, and the timeline of
 * allocated and reserved bytes. The rules, the same in one pass and in two, are the package's (see
 * {@link io.devalloc.replay}); this class applies them after every event.
 *
 * <p>{@link #afterEvent} is on the replay's hot loop: it reads the device's counters and, at the rules' strides
 * only, the allocator's stats and snapshot; it creates no objects of its own. Not thread-safe: the replaying
 * thread only.
 */
final class PeakSampler {

    /**
     * In a one-pass replay, whose event count is not known in advance: at most once per this many timeline strides
     * (about 1% of the events replayed so far, as the stride doubles with them).
     */
    static final int SNAPSHOT_SAMPLES = 20;
    /**
     * Allocated and requested bytes at the reserved peak are read every this many events (a power of two) in the
     * first 32,768 events, then every 1/1024 of the events replayed so far (rounded down to a power of two), besides
     * after every device malloc: the fragmentation figures are sampled, the same way in one pass and in two, about a
     * thousand times per doubling of the events (an allocator's stats can cost time proportional to its free blocks).
     */
    static final int OBSERVE_INTERVAL = 32;

    private final DeviceAllocator allocator;
    private final ObservedDevice device;

    // Peak tracking.
    private long seenGrows;
    private long seenShrinks;
    private long peakReserved;
    private long allocatedAtPeak;
    private long requestedAtPeak;
    private boolean atPeak;
    private MemorySnapshot peakSnapshot;
    private long snapshotReserved = -1;
    private long snapshotEvent;
    /** Fixed when the event count is known in advance (two passes), else follows the timeline's stride. */
    private long snapshotStride;
    private long snapshotEndNanos;
    private long snapshotCostNanos;

    // Timeline.
    private long sampleStride;
    private long nextSample;
    private final long[] sampleEvent = new long[Replayer.MAX_TIMELINE_POINTS];
    private final long[] sampleAllocated = new long[Replayer.MAX_TIMELINE_POINTS];
    private final long[] sampleReserved = new long[Replayer.MAX_TIMELINE_POINTS];
    private int samples;

    /**
     * A sampler of {@code allocator} over {@code device}, whose counting has started.
     *
     * @param totalEvents the trace's event count when known in advance (two passes), else -1
     */
    PeakSampler(DeviceAllocator allocator, ObservedDevice device, long totalEvents) {
        this.allocator = allocator;
        this.device = device;
        // The event count is known with two passes; in one pass the timeline halves its points (doubling its
        // stride) whenever they fill up.
        if (totalEvents >= 0) {
            snapshotStride = Math.max(1, totalEvents * Replayer.SNAPSHOT_STRIDE_PERCENT / 100);
            sampleStride = Math.max(1, (totalEvents + Replayer.MAX_TIMELINE_POINTS - 3)
                    / (Replayer.MAX_TIMELINE_POINTS - 2));
        } else {
            sampleStride = 1;
            snapshotStride = SNAPSHOT_SAMPLES;
        }
        snapshotEvent = -snapshotStride;
        nextSample = sampleStride;
    }

    /** Samples the state before the first event (after a warm start): event 0. */
    void start() {
        AllocatorStats initial = allocator.stats();
        observe(initial);
        record(0, initial);
        maybeSnapshot(0);
    }

    /** Samples after event {@code i} (1-based), as the rules say. */
    void afterEvent(long i) {
        seenShrinksCheck();
        if (device.grows() != seenGrows) {
            seenGrows = device.grows();
            observe(allocator.stats());
        } else if ((i & (Math.max(OBSERVE_INTERVAL, Long.highestOneBit(i) >>> 10) - 1)) == 0) {
            observe(allocator.stats());
        }
        maybeSnapshot(i);
        if (i == nextSample) {
            record(i, allocator.stats());
            nextSample = i + sampleStride;
        }
    }

    /**
     * Samples the end state after the last event {@code i}: the peak, a last snapshot if the state is at a peak not
     * yet taken (or none was taken), and the timeline's last point.
     *
     * @return the allocator's stats at the end
     */
    AllocatorStats finish(long i) {
        AllocatorStats end = allocator.stats();
        seenShrinksCheck();
        seenGrows = device.grows();
        observe(end);
        if ((snapshotReserved < peakReserved && atPeak) || peakSnapshot == null) {
            takeSnapshot(i);
        }
        if (samples == 0 || sampleEvent[samples - 1] != i) {
            record(i, end);
        }
        return end;
    }

    /** The highest reserved bytes read from the allocator's stats. */
    long peakReserved() {
        return peakReserved;
    }

    /** At the reserved peak: 1 − allocated / reserved (0 when nothing was reserved). */
    double fragmentation() {
        return peakReserved <= 0 ? 0.0 : 1.0 - (double) allocatedAtPeak / peakReserved;
    }

    /** At the reserved peak: 1 − requested / reserved (0 when nothing was reserved). */
    double requestedFragmentation() {
        return peakReserved <= 0 ? 0.0 : 1.0 - (double) requestedAtPeak / peakReserved;
    }

    /** The snapshot taken at the peak (after {@link #finish}, never null). */
    MemorySnapshot peakSnapshot() {
        return peakSnapshot;
    }

    /** The timeline's points, in event order. */
    ReplayResult.Timeline timeline() {
        return new ReplayResult.Timeline(Arrays.copyOf(sampleEvent, samples), Arrays.copyOf(sampleAllocated, samples),
                Arrays.copyOf(sampleReserved, samples));
    }

    private void seenShrinksCheck() {
        if (device.shrinks() != seenShrinks) {
            seenShrinks = device.shrinks();
            atPeak = false;
        }
    }

    /**
     * Called with fresh stats whenever reserved bytes may have grown (a new peak, or back at the peak), at the
     * {@link #OBSERVE_INTERVAL} stride, at the start and at the end (the same events whether the replay makes one
     * pass or two): keeps the peak, and the highest allocated and requested bytes seen at it.
     */
    private void observe(AllocatorStats s) {
        long reserved = s.reservedBytes();
        if (reserved > peakReserved) {
            peakReserved = reserved;
            allocatedAtPeak = s.allocatedBytes();
            requestedAtPeak = s.requestedBytes();
        } else if (reserved == peakReserved) {
            allocatedAtPeak = Math.max(allocatedAtPeak, s.allocatedBytes());
            requestedAtPeak = Math.max(requestedAtPeak, s.requestedBytes());
        }
        atPeak = reserved == peakReserved;
    }

    /**
     * The snapshot rule: when the current state is at the reserved peak and the last snapshot is below it, take
     * one, unless one was taken in the last {@link Replayer#SNAPSHOT_STRIDE_PERCENT}% of the events or less than
     * {@link Replayer#SNAPSHOT_TIME_FACTOR} times its own cost ago; the check repeats after every event while the
     * state stays at the peak, and at the end.
     */
    private void maybeSnapshot(long i) {
        if (atPeak && snapshotReserved < peakReserved && peakReserved > 0 && i - snapshotEvent >= snapshotStride
                && System.nanoTime() - snapshotEndNanos >= Replayer.SNAPSHOT_TIME_FACTOR * snapshotCostNanos) {
            takeSnapshot(i);
        }
    }

    private void takeSnapshot(long i) {
        long start = System.nanoTime();
        peakSnapshot = allocator.snapshot();
        snapshotReserved = peakSnapshot.stats().reservedBytes();
        snapshotEvent = i;
        snapshotEndNanos = System.nanoTime();
        snapshotCostNanos = snapshotEndNanos - start;
    }

    private void record(long i, AllocatorStats s) {
        if (samples == sampleEvent.length) {
            halveTimeline();
        }
        sampleEvent[samples] = i;
        sampleAllocated[samples] = s.allocatedBytes();
        sampleReserved[samples] = s.reservedBytes();
        samples++;
    }

    /**
     * Keeps every other point (the first among them) and doubles the stride: the points stay evenly spaced, and
     * there are never more than {@link Replayer#MAX_TIMELINE_POINTS}. Only a one-pass replay, which does not know
     * its event count, gets here.
     */
    private void halveTimeline() {
        int kept = 0;
        for (int k = 0; k < samples; k += 2) {
            sampleEvent[kept] = sampleEvent[k];
            sampleAllocated[kept] = sampleAllocated[k];
            sampleReserved[kept] = sampleReserved[k];
            kept++;
        }
        samples = kept;
        sampleStride *= 2;
        snapshotStride = SNAPSHOT_SAMPLES * sampleStride;
    }
}
