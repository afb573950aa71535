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
 * @param ooms                   allocations that failed with out of memory (the replay carries on)
 * @param allocRetries           allocations that needed a retry
 * @param fragmentation          at the reserved peak: 1 − allocated / reserved
 * @param requestedFragmentation at the reserved peak: 1 − requested / reserved
 * @param eventsPerSecond        events replayed per second of wall time
 * @param groundTruth            what the original allocator did (PyTorch traces), or null
 * @param timeline               allocated and reserved bytes over the replay, sampled
 * @param peakSnapshot           the allocator's segments and blocks at the reserved peak, or null
 */
public record ReplayResult(String trace, String allocator, String device, String conf, long events, long allocs,
                           long frees, long deviceMallocs, long deviceFrees, long peakReservedBytes,
                           long peakAllocatedBytes, long peakRequestedBytes, long endReservedBytes, long ooms,
                           long allocRetries, double fragmentation, double requestedFragmentation,
                           double eventsPerSecond, GroundTruth groundTruth, Timeline timeline,
                           MemorySnapshot peakSnapshot) {

    public ReplayResult {
        Objects.requireNonNull(trace, "trace");
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(conf, "conf");
        Objects.requireNonNull(timeline, "timeline");
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
