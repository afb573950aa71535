package io.devalloc.replay;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.spi.LiveBytes;
import io.devalloc.api.stats.AllocatorStats;
import java.util.Arrays;

/**
 * Watches the allocator's figures while a replay runs: the moment of the reserved peak (the first event after which
 * the reserved bytes are at their highest and, among those, the allocated bytes at theirs) with the allocated and
 * requested bytes there, and the timeline of allocated and reserved bytes. The rules, the same in one pass and in
 * two, are the package's (see {@link io.devalloc.replay}); this class applies them after every event.
 *
 * <p>With an allocator that offers {@link LiveBytes} the bytes are read after every event, so the peak is exact. With
 * any other, they are read from its stats at the events the package documentation names (after every device malloc,
 * and at a stride), so the peak is the fullest of those moments.
 *
 * <p>{@link #afterEvent} is on the replay's hot loop: it reads the allocator's counters (or, without
 * {@link LiveBytes}, the device's, and the allocator's stats at the rules' strides only); it creates no objects of
 * its own. Not thread-safe: the replaying thread only.
 */
final class PeakSampler {

    /**
     * Without {@link LiveBytes}: allocated and requested bytes are read every this many events (a power of two) in
     * the first 32,768 events, then every 1/1024 of the events replayed so far (rounded down to a power of two),
     * besides after every device malloc: the peak is found among those moments, the same way in one pass and in two,
     * about a thousand times per doubling of the events (an allocator's stats can cost time proportional to its free
     * blocks).
     */
    static final int OBSERVE_INTERVAL = 32;

    private final DeviceAllocator allocator;
    /** The allocator's counters, or null: then its stats are sampled. */
    private final LiveBytes live;
    private final ObservedDevice device;

    // The peak.
    private long seenGrows;
    private long peakEvent;
    private long peakReserved;
    private long allocatedAtPeak;
    private long requestedAtPeak;

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
        this.live = allocator.unwrap(LiveBytes.class).orElse(null);
        this.device = device;
        // The event count is known with two passes; in one pass the timeline halves its points (doubling its
        // stride) whenever they fill up.
        if (totalEvents >= 0) {
            sampleStride = Math.max(1, (totalEvents + Replayer.MAX_TIMELINE_POINTS - 3)
                    / (Replayer.MAX_TIMELINE_POINTS - 2));
        } else {
            sampleStride = 1;
        }
        nextSample = sampleStride;
    }

    /** Samples the state before the first event (after a warm start): event 0, the peak until another is higher. */
    void start() {
        if (live != null) {
            peakReserved = live.reservedBytes();
            allocatedAtPeak = live.allocatedBytes();
            requestedAtPeak = live.requestedBytes();
            record(0, allocatedAtPeak, peakReserved);
        } else {
            AllocatorStats initial = allocator.stats();
            peakReserved = initial.reservedBytes();
            allocatedAtPeak = initial.allocatedBytes();
            requestedAtPeak = initial.requestedBytes();
            record(0, initial.allocatedBytes(), initial.reservedBytes());
        }
        peakEvent = 0;
    }

    /** Samples after event {@code i} (1-based), as the rules say. */
    void afterEvent(long i) {
        if (live != null) {
            long reserved = live.reservedBytes();
            if (reserved >= peakReserved) {
                observe(i, reserved, live.allocatedBytes(), live);
            }
            if (i == nextSample) {
                record(i, live.allocatedBytes(), reserved);
                nextSample = i + sampleStride;
            }
            return;
        }
        if (device.grows() != seenGrows) {
            seenGrows = device.grows();
            observe(i, allocator.stats());
        } else if ((i & (Math.max(OBSERVE_INTERVAL, Long.highestOneBit(i) >>> 10) - 1)) == 0) {
            observe(i, allocator.stats());
        }
        if (i == nextSample) {
            AllocatorStats s = allocator.stats();
            record(i, s.allocatedBytes(), s.reservedBytes());
            nextSample = i + sampleStride;
        }
    }

    /**
     * Samples the end state after the last event {@code i}: the peak and the timeline's last point.
     *
     * @return the allocator's stats at the end
     */
    AllocatorStats finish(long i) {
        AllocatorStats end = allocator.stats();
        if (live == null) {
            seenGrows = device.grows();
            observe(i, end);
        }
        if (samples == 0 || sampleEvent[samples - 1] != i) {
            record(i, end.allocatedBytes(), end.reservedBytes());
        }
        return end;
    }

    /** The reserved bytes now (after the last event applied). */
    long reservedNow() {
        return live != null ? live.reservedBytes() : allocator.stats().reservedBytes();
    }

    /** The allocated bytes now (after the last event applied). */
    long allocatedNow() {
        return live != null ? live.allocatedBytes() : allocator.stats().allocatedBytes();
    }

    /** Whether the peak is exact (read after every event) rather than the fullest sampled moment. */
    boolean exact() {
        return live != null;
    }

    /** The event after which the peak was reached (0: before the first event). */
    long peakEvent() {
        return peakEvent;
    }

    /** The highest reserved bytes read. */
    long peakReserved() {
        return peakReserved;
    }

    /** The allocated bytes at the peak. */
    long allocatedAtPeak() {
        return allocatedAtPeak;
    }

    /** The requested bytes at the peak. */
    long requestedAtPeak() {
        return requestedAtPeak;
    }

    /** At the reserved peak: 1 − allocated / reserved (0 when nothing was reserved). */
    double fragmentation() {
        return peakReserved <= 0 ? 0.0 : 1.0 - (double) allocatedAtPeak / peakReserved;
    }

    /** At the reserved peak: 1 − requested / reserved (0 when nothing was reserved). */
    double requestedFragmentation() {
        return peakReserved <= 0 ? 0.0 : 1.0 - (double) requestedAtPeak / peakReserved;
    }

    /** The timeline's points, in event order. */
    ReplayResult.Timeline timeline() {
        return new ReplayResult.Timeline(Arrays.copyOf(sampleEvent, samples), Arrays.copyOf(sampleAllocated, samples),
                Arrays.copyOf(sampleReserved, samples));
    }

    private void observe(long i, AllocatorStats s) {
        long reserved = s.reservedBytes();
        if (reserved > peakReserved || (reserved == peakReserved && s.allocatedBytes() > allocatedAtPeak)) {
            peakEvent = i;
            peakReserved = reserved;
            allocatedAtPeak = s.allocatedBytes();
            requestedAtPeak = s.requestedBytes();
        }
    }

    /** With {@code reserved} at least the peak: a new peak, or a fuller moment of it. */
    private void observe(long i, long reserved, long allocated, LiveBytes bytes) {
        if (reserved > peakReserved || allocated > allocatedAtPeak) {
            peakEvent = i;
            peakReserved = reserved;
            allocatedAtPeak = allocated;
            requestedAtPeak = bytes.requestedBytes();
        }
    }

    private void record(long i, long allocated, long reserved) {
        if (samples == sampleEvent.length) {
            halveTimeline();
        }
        sampleEvent[samples] = i;
        sampleAllocated[samples] = allocated;
        sampleReserved[samples] = reserved;
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
    }
}
