package io.devalloc.replay;

import io.devalloc.api.snapshot.MemorySnapshot;
import java.util.Arrays;
import java.util.Objects;

/**
 * What one replay of one trace through one allocator gave.
 *
 * @param trace                  the trace file's name
 * @param allocator              the allocator's name
 * @param device                 the device spec
 * @param conf                   the allocator configuration as a user reads it: the string given, then what the
 *                               allocator's provider took from environment variables, each part followed by
 *                               {@code (from VARIABLE)} (see {@link io.devalloc.api.spi.EnvironmentConfig#describe});
 *                               empty for the allocator's defaults
 * @param events                 events read from the trace
 * @param allocs                 allocations replayed
 * @param frees                  frees replayed
 * @param deviceMallocs          device mallocs (and virtual-memory maps) the allocator made
 * @param deviceFrees            device frees (and unmaps)
 * @param peakReservedBytes      highest bytes held from the device
 * @param peakAllocatedBytes     highest bytes in live blocks, as the allocator sized them
 * @param peakRequestedBytes     highest bytes live, as requested
 * @param endReservedBytes       bytes held from the device at the end
 * @param ooms                   allocations that failed with out of memory (the replay carries on, unless it stops
 *                               at the first: {@link ReplayOptions#stopAtFirstOom()})
 * @param allocRetries           allocations that needed a retry
 * @param fragmentation          at the reserved peak: 1 − allocated / reserved
 * @param requestedFragmentation at the reserved peak: 1 − requested / reserved
 * @param eventsPerSecond        events replayed per second of wall time
 * @param groundTruth            what the original allocator did (PyTorch traces), or null
 * @param timeline               allocated and reserved bytes over the replay, sampled
 * @param peakSnapshot           the allocator's segments and blocks at the reserved peak ({@link Peak#event()}), or
 *                               null when none was asked for ({@link ReplayOptions#peakSnapshot()})
 * @param peak                   the moment of the reserved peak and the figures there; null only in results built
 *                               without one (the reports' tests)
 * @param firstOom               where the first allocation failed with out of memory, or null when none did
 * @param stoppedAtOom           whether the replay stopped there ({@link ReplayOptions#stopAtFirstOom()}): then
 *                               {@code events} ends with that event and the figures describe the replay up to it
 */
public record ReplayResult(String trace, String allocator, String device, String conf, long events, long allocs,
                           long frees, long deviceMallocs, long deviceFrees, long peakReservedBytes,
                           long peakAllocatedBytes, long peakRequestedBytes, long endReservedBytes, long ooms,
                           long allocRetries, double fragmentation, double requestedFragmentation,
                           double eventsPerSecond, GroundTruth groundTruth, Timeline timeline,
                           MemorySnapshot peakSnapshot, Peak peak, OomPoint firstOom, boolean stoppedAtOom) {

    public ReplayResult {
        Objects.requireNonNull(trace, "trace");
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(conf, "conf");
        Objects.requireNonNull(timeline, "timeline");
        if (stoppedAtOom && firstOom == null) {
            throw new IllegalArgumentException("a replay that stopped at an out-of-memory error says where");
        }
    }

    /**
     * A builder of a result with nothing set: the trace, allocator, device, configuration and timeline must be set,
     * every count and figure not set is 0, and every other part null (none), as the components say.
     */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this result, to make one that differs in a few parts. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.trace = trace;
        b.allocator = allocator;
        b.device = device;
        b.conf = conf;
        b.events = events;
        b.allocs = allocs;
        b.frees = frees;
        b.deviceMallocs = deviceMallocs;
        b.deviceFrees = deviceFrees;
        b.peakReservedBytes = peakReservedBytes;
        b.peakAllocatedBytes = peakAllocatedBytes;
        b.peakRequestedBytes = peakRequestedBytes;
        b.endReservedBytes = endReservedBytes;
        b.ooms = ooms;
        b.allocRetries = allocRetries;
        b.fragmentation = fragmentation;
        b.requestedFragmentation = requestedFragmentation;
        b.eventsPerSecond = eventsPerSecond;
        b.groundTruth = groundTruth;
        b.timeline = timeline;
        b.peakSnapshot = peakSnapshot;
        b.peak = peak;
        b.firstOom = firstOom;
        b.stoppedAtOom = stoppedAtOom;
        return b;
    }

    /**
     * Builds a {@link ReplayResult} part by part, each part named as its component (the record's parameters say what
     * each holds). Not thread-safe; {@link #build()} may be called again after changes.
     */
    public static final class Builder {

        private String trace;
        private String allocator;
        private String device;
        private String conf;
        private long events;
        private long allocs;
        private long frees;
        private long deviceMallocs;
        private long deviceFrees;
        private long peakReservedBytes;
        private long peakAllocatedBytes;
        private long peakRequestedBytes;
        private long endReservedBytes;
        private long ooms;
        private long allocRetries;
        private double fragmentation;
        private double requestedFragmentation;
        private double eventsPerSecond;
        private GroundTruth groundTruth;
        private Timeline timeline;
        private MemorySnapshot peakSnapshot;
        private Peak peak;
        private OomPoint firstOom;
        private boolean stoppedAtOom;

        private Builder() {
        }

        /** Sets {@link ReplayResult#trace()}. */
        public Builder trace(String trace) {
            this.trace = trace;
            return this;
        }

        /** Sets {@link ReplayResult#allocator()}. */
        public Builder allocator(String allocator) {
            this.allocator = allocator;
            return this;
        }

        /** Sets {@link ReplayResult#device()}. */
        public Builder device(String device) {
            this.device = device;
            return this;
        }

        /** Sets {@link ReplayResult#conf()}. */
        public Builder conf(String conf) {
            this.conf = conf;
            return this;
        }

        /** Sets {@link ReplayResult#events()}. */
        public Builder events(long events) {
            this.events = events;
            return this;
        }

        /** Sets {@link ReplayResult#allocs()}. */
        public Builder allocs(long allocs) {
            this.allocs = allocs;
            return this;
        }

        /** Sets {@link ReplayResult#frees()}. */
        public Builder frees(long frees) {
            this.frees = frees;
            return this;
        }

        /** Sets {@link ReplayResult#deviceMallocs()}. */
        public Builder deviceMallocs(long deviceMallocs) {
            this.deviceMallocs = deviceMallocs;
            return this;
        }

        /** Sets {@link ReplayResult#deviceFrees()}. */
        public Builder deviceFrees(long deviceFrees) {
            this.deviceFrees = deviceFrees;
            return this;
        }

        /** Sets {@link ReplayResult#peakReservedBytes()}. */
        public Builder peakReservedBytes(long peakReservedBytes) {
            this.peakReservedBytes = peakReservedBytes;
            return this;
        }

        /** Sets {@link ReplayResult#peakAllocatedBytes()}. */
        public Builder peakAllocatedBytes(long peakAllocatedBytes) {
            this.peakAllocatedBytes = peakAllocatedBytes;
            return this;
        }

        /** Sets {@link ReplayResult#peakRequestedBytes()}. */
        public Builder peakRequestedBytes(long peakRequestedBytes) {
            this.peakRequestedBytes = peakRequestedBytes;
            return this;
        }

        /** Sets {@link ReplayResult#endReservedBytes()}. */
        public Builder endReservedBytes(long endReservedBytes) {
            this.endReservedBytes = endReservedBytes;
            return this;
        }

        /** Sets {@link ReplayResult#ooms()}. */
        public Builder ooms(long ooms) {
            this.ooms = ooms;
            return this;
        }

        /** Sets {@link ReplayResult#allocRetries()}. */
        public Builder allocRetries(long allocRetries) {
            this.allocRetries = allocRetries;
            return this;
        }

        /** Sets {@link ReplayResult#fragmentation()}. */
        public Builder fragmentation(double fragmentation) {
            this.fragmentation = fragmentation;
            return this;
        }

        /** Sets {@link ReplayResult#requestedFragmentation()}. */
        public Builder requestedFragmentation(double requestedFragmentation) {
            this.requestedFragmentation = requestedFragmentation;
            return this;
        }

        /** Sets {@link ReplayResult#eventsPerSecond()}. */
        public Builder eventsPerSecond(double eventsPerSecond) {
            this.eventsPerSecond = eventsPerSecond;
            return this;
        }

        /** Sets {@link ReplayResult#groundTruth()}. */
        public Builder groundTruth(GroundTruth groundTruth) {
            this.groundTruth = groundTruth;
            return this;
        }

        /** Sets {@link ReplayResult#timeline()}. */
        public Builder timeline(Timeline timeline) {
            this.timeline = timeline;
            return this;
        }

        /** Sets {@link ReplayResult#peakSnapshot()}. */
        public Builder peakSnapshot(MemorySnapshot peakSnapshot) {
            this.peakSnapshot = peakSnapshot;
            return this;
        }

        /** Sets {@link ReplayResult#peak()}. */
        public Builder peak(Peak peak) {
            this.peak = peak;
            return this;
        }

        /** Sets {@link ReplayResult#firstOom()}. */
        public Builder firstOom(OomPoint firstOom) {
            this.firstOom = firstOom;
            return this;
        }

        /** Sets {@link ReplayResult#stoppedAtOom()}. */
        public Builder stoppedAtOom(boolean stoppedAtOom) {
            this.stoppedAtOom = stoppedAtOom;
            return this;
        }

        /**
         * The result.
         *
         * @throws IllegalStateException when the trace, allocator, device, configuration or timeline is not set
         * @throws IllegalArgumentException when the parts contradict each other (see the record's constructor)
         */
        public ReplayResult build() {
            requireSet(trace, "trace");
            requireSet(allocator, "allocator");
            requireSet(device, "device");
            requireSet(conf, "conf");
            requireSet(timeline, "timeline");
            return new ReplayResult(trace, allocator, device, conf, events, allocs, frees, deviceMallocs,
                    deviceFrees, peakReservedBytes, peakAllocatedBytes, peakRequestedBytes, endReservedBytes, ooms,
                    allocRetries, fragmentation, requestedFragmentation, eventsPerSecond, groundTruth, timeline,
                    peakSnapshot, peak, firstOom, stoppedAtOom);
        }

        private static void requireSet(Object part, String name) {
            if (part == null) {
                throw new IllegalStateException("a replay result needs its " + name + ": call " + name + "(...)"
                        + " before build()");
            }
        }
    }

    /**
     * The moment of the reserved peak: the first event after which the reserved bytes stood at their highest and,
     * among those, the allocated bytes at theirs (the fullest moment of the peak). Events are numbered from 1 in the
     * trace's order; event 0 is the state before the first (after a warm start). The fragmentation figures are these
     * bytes'.
     *
     * @param event          the event after which the peak was reached (0: before the first)
     * @param reservedBytes  bytes held from the device then
     * @param allocatedBytes bytes in live blocks then, as the allocator sized them
     * @param requestedBytes bytes live then, as requested
     * @param exact          true when the allocator's bytes were read after every event (it offers
     *                       {@link io.devalloc.api.spi.LiveBytes}); false when they were sampled (the package
     *                       documentation says when), so that the peak is the fullest sampled moment
     * @param waste          where reserved bytes went at that moment, from the peak snapshot; null without one
     */
    public record Peak(long event, long reservedBytes, long allocatedBytes, long requestedBytes, boolean exact,
                       WasteAtPeak waste) {
    }

    /**
     * The first allocation that failed with out of memory, and the allocator's state right after the failure (after
     * its retry ladder freed what it could, as PyTorch's out-of-memory message reports it).
     *
     * @param event          the failing event, numbered from 1 in the trace's order
     * @param requestBytes   the bytes it asked for
     * @param reservedBytes  bytes held from the device then
     * @param allocatedBytes bytes in live blocks then
     */
    public record OomPoint(long event, long requestBytes, long reservedBytes, long allocatedBytes) {
    }

    /**
     * What the recorded allocator did, from the trace's own {@code segment_*} rows, and whether the replay matched.
     *
     * @param deviceMallocs     segment allocations (and maps) in the trace
     * @param deviceFrees       segment frees (and unmaps) in the trace
     * @param peakReservedBytes peak reserved bytes implied by the trace's segment rows (warm start included)
     * @param match             whether device mallocs, frees, peak reserved and the sequence of segment sizes match
     * @param firstDifference   the first difference, or null when they match
     */
    public record GroundTruth(long deviceMallocs, long deviceFrees, long peakReservedBytes, boolean match,
                              String firstDifference) {
    }

    /**
     * Samples of the replay, at most a few thousand, in event order.
     *
     * @param event     event index of each sample
     * @param allocated allocated bytes at that point
     * @param reserved  reserved bytes at that point
     */
    @SuppressWarnings("ArrayRecordComponent") // copied in and out; the indexed accessors read without copying
    public record Timeline(long[] event, long[] allocated, long[] reserved) {

        public Timeline {
            if (event.length != allocated.length || event.length != reserved.length) {
                throw new IllegalArgumentException("timeline columns differ in length");
            }
            event = event.clone();
            allocated = allocated.clone();
            reserved = reserved.clone();
        }

        /** A copy of the event indices. */
        @Override
        public long[] event() {
            return event.clone();
        }

        /** A copy of the allocated bytes. */
        @Override
        public long[] allocated() {
            return allocated.clone();
        }

        /** A copy of the reserved bytes. */
        @Override
        public long[] reserved() {
            return reserved.clone();
        }

        /** The event index of sample {@code i}. */
        public long eventAt(int i) {
            return event[i];
        }

        /** The allocated bytes at sample {@code i}. */
        public long allocatedAt(int i) {
            return allocated[i];
        }

        /** The reserved bytes at sample {@code i}. */
        public long reservedAt(int i) {
            return reserved[i];
        }

        /** The number of samples. */
        public int size() {
            return event.length;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Timeline t && Arrays.equals(event, t.event) && Arrays.equals(allocated, t.allocated)
                    && Arrays.equals(reserved, t.reserved);
        }

        @Override
        public int hashCode() {
            return 31 * (31 * Arrays.hashCode(event) + Arrays.hashCode(allocated)) + Arrays.hashCode(reserved);
        }

        @Override
        public String toString() {
            return "Timeline[" + event.length + " samples]";
        }
    }
}
