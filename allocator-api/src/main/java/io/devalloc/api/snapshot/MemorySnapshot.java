package io.devalloc.api.snapshot;

import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.stats.AllocatorStats;
import java.util.List;
import java.util.Objects;

/**
 * What an allocator holds at one moment: its segments and their blocks, and its stats. Both algorithms fill it
 * in, so reports and checks work the same on each.
 *
 * @param allocator the allocator's name, e.g. {@code "direct"}, {@code "bfc"}, {@code "caching"}
 * @param device    the device it allocates from
 * @param segments  segments in address order
 * @param stats     the stats at the moment of the snapshot
 */
public record MemorySnapshot(String allocator, DeviceDescriptor device, List<SegmentSnapshot> segments,
                             AllocatorStats stats) {

    public MemorySnapshot {
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(stats, "stats");
        segments = List.copyOf(segments);
    }

    /** Sum of segment sizes. */
    public long totalSegmentBytes() {
        long sum = 0;
        for (SegmentSnapshot s : segments) {
            sum += s.size();
        }
        return sum;
    }

    /** Bytes in blocks of the given state, over all segments. */
    public long bytesIn(BlockState state) {
        long sum = 0;
        for (SegmentSnapshot s : segments) {
            sum += s.bytesIn(state);
        }
        return sum;
    }

    /**
     * Checks the snapshot's structural invariants: every segment tiled exactly by its blocks, segments in
     * address order and disjoint.
     *
     * @throws IllegalStateException naming the first violation
     */
    public void checkInvariants() {
        long previousEnd = Long.MIN_VALUE;
        for (SegmentSnapshot s : segments) {
            if (s.address() < previousEnd) {
                throw new IllegalStateException("segment 0x" + Long.toHexString(s.address())
                        + " overlaps or precedes the previous segment");
            }
            s.checkTiling();
            previousEnd = s.end();
        }
    }
}
