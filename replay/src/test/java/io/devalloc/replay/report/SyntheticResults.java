package io.devalloc.replay.report;

import static io.devalloc.api.units.ByteSize.GiB;
import static io.devalloc.api.units.ByteSize.KiB;
import static io.devalloc.api.units.ByteSize.MiB;

import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.ReplayResult.GroundTruth;
import io.devalloc.replay.ReplayResult.Timeline;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Hand-built results with known figures, for checking the report: every value below is chosen so that the best
 * figure of each column is known. Each call builds new objects from the same numbers.
 */
final class SyntheticResults {

    static final String OPT = "pt-opt-zeroth-order-fl.pickle";
    static final String WARM = "pt-cs336-medium-warm.csv";
    static final long BASE = 0x7f00_0000_0000L;
    static final DeviceDescriptor SIM = new DeviceDescriptor("sim", 0, "simulated GPU (80.00 GiB)",
            DeviceKind.SIMULATED, 80 * GiB);

    private SyntheticResults() {
    }

    /**
     * Three allocators on the OPT trace and two caching set-ups on a second trace. On {@link #OPT}: bfc has the
     * fewest device mallocs and frees, caching the lowest peak reserved and allocated and the most events per
     * second, direct the lowest end reserved and fragmentation; direct and caching tie at no OOM; all three
     * requested the same peak.
     */
    static List<ReplayResult> threeAllocatorsAndAWarmTrace() {
        List<ReplayResult> results = new ArrayList<>();
        results.add(ReplayResult.builder().trace(OPT).allocator("direct").device("sim:80GiB").conf("").events(1_234_567)
                .allocs(617_000).frees(616_990).deviceMallocs(120).deviceFrees(118).peakReservedBytes(2_040_109_465L)
                .peakAllocatedBytes(1_900_000_000L).peakRequestedBytes(1_850_000_000L).requestedFragmentation(0.02)
                .eventsPerSecond(2_100_000)
                .groundTruth(new GroundTruth(61, 59, 1_897_922_560L, false,
                        "device malloc 3: 20.00 MiB, the trace has 2.00 MiB"))
                .timeline(timeline(1_234_567, 2_000, 1_850_000_000L, 1.0, 11)).peakSnapshot(direct(40)).build());
        results.add(ReplayResult.builder().trace(OPT).allocator("bfc").device("sim:80GiB").conf("allow_growth:true")
                .events(1_234_567).allocs(617_000).frees(616_990).deviceMallocs(9)
                .peakReservedBytes(2 * GiB + 512 * MiB).peakAllocatedBytes(1_950_000_000L)
                .peakRequestedBytes(1_850_000_000L).endReservedBytes(2 * GiB + 512 * MiB).ooms(2).allocRetries(3)
                .fragmentation(0.21).requestedFragmentation(0.25).eventsPerSecond(6_200_000)
                .timeline(timeline(1_234_567, 2_000, 1_850_000_000L, 1.3, 12)).peakSnapshot(bfc(1_500)).build());
        results.add(ReplayResult.builder().trace(OPT).allocator("caching").device("sim:80GiB").conf("")
                .events(1_234_567).allocs(617_000).frees(616_990).deviceMallocs(61).deviceFrees(59)
                .peakReservedBytes(1_897_922_560L).peakAllocatedBytes(1_880_000_000L).peakRequestedBytes(1_850_000_000L)
                .endReservedBytes(40 * MiB).fragmentation(0.05).requestedFragmentation(0.07).eventsPerSecond(7_500_000)
                .groundTruth(new GroundTruth(61, 59, 1_897_922_560L, true, null))
                .timeline(timeline(1_234_567, 2_000, 1_850_000_000L, 1.1, 13)).peakSnapshot(caching(60)).build());
        results.add(ReplayResult.builder().trace(WARM).allocator("caching").device("sim:80GiB").conf("").events(40_000)
                .allocs(20_000).frees(20_000).deviceMallocs(30).deviceFrees(2).peakReservedBytes(900 * MiB)
                .peakAllocatedBytes(800 * MiB).peakRequestedBytes(790 * MiB).endReservedBytes(880 * MiB)
                .fragmentation(0.11).requestedFragmentation(0.12).eventsPerSecond(5_000_000)
                .groundTruth(new GroundTruth(30, 2, 900 * MiB, true, null))
                .timeline(timeline(40_000, 500, 790 * MiB, 1.12, 14)).build());
        results.add(ReplayResult.builder().trace(WARM).allocator("caching").device("sim:80GiB")
                .conf("expandable_segments:True,max_split_size_mb:128").events(40_000).allocs(20_000).frees(20_000)
                .deviceMallocs(44).deviceFrees(10).peakReservedBytes(820 * MiB).peakAllocatedBytes(800 * MiB)
                .peakRequestedBytes(790 * MiB).endReservedBytes(800 * MiB).fragmentation(0.02)
                .requestedFragmentation(0.04).eventsPerSecond(4_000_000)
                .groundTruth(new GroundTruth(30, 2, 900 * MiB, false, "device mallocs: 44, the trace has 30"))
                .timeline(timeline(40_000, 500, 790 * MiB, 1.03, 15)).peakSnapshot(expandable()).build());
        return results;
    }

    /**
     * A growth pattern: a quick rise (weights), then a saw-tooth of activations that builds up and drops each
     * step, and at the end everything freed. Reserved follows the running maximum of allocated, scaled by
     * {@code overhead}, in 20 MiB steps; with no overhead
     * reserved is allocated (the direct allocator).
     */
    static Timeline timeline(long events, int samples, long peakRequested, double overhead, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long[] event = new long[samples];
        long[] allocated = new long[samples];
        long[] reserved = new long[samples];
        long high = 0;
        long weights = peakRequested * 2 / 5;
        for (int i = 0; i < samples; i++) {
            double p = (double) i / (samples - 1);
            event[i] = Math.round(p * events);
            long a;
            if (p < 0.03) {
                a = Math.round(weights * p / 0.03);
            } else if (p > 0.98) {
                a = 0;
            } else {
                double phase = (p - 0.03) * 12 % 1.0;
                double ramp = phase < 0.8 ? phase / 0.8 : (1 - phase) / 0.2;
                a = weights + Math.round((peakRequested - weights) * ramp * (0.9 + 0.1 * random.nextDouble()));
            }
            allocated[i] = Math.min(a, peakRequested);
            high = Math.max(high, allocated[i]);
            long wanted = Math.round(high * overhead);
            reserved[i] = overhead == 1.0 ? allocated[i] : (wanted + 20 * MiB - 1) / (20 * MiB) * (20 * MiB);
        }
        return new Timeline(event, allocated, reserved);
    }

    static AllocatorStats stats(long allocated, long requested, long reserved, long mallocs) {
        return new AllocatorStats(100, 90, 10, 12, allocated, allocated, requested, requested, reserved, reserved,
                20 * MiB, 0, mallocs, 0, 0, 0, Long.MAX_VALUE);
    }

    static MemorySnapshot snapshot(String allocator, List<SegmentSnapshot> segments) {
        long allocated = 0;
        long requested = 0;
        long reserved = 0;
        for (SegmentSnapshot s : segments) {
            allocated += s.bytesIn(BlockState.ALLOCATED);
            reserved += s.size();
            for (BlockSnapshot b : s.blocks()) {
                requested += b.requestedSize();
            }
        }
        MemorySnapshot snapshot = new MemorySnapshot(allocator, SIM, segments,
                stats(allocated, requested, reserved, segments.size()));
        snapshot.checkInvariants();
        return snapshot;
    }

    /** A segment at {@code address} tiled by blocks of the given sizes and states, requested = size − slack. */
    static SegmentSnapshot segment(long address, String pool, long[] sizes, BlockState[] states, long slack) {
        List<BlockSnapshot> blocks = new ArrayList<>();
        long cursor = address;
        for (int i = 0; i < sizes.length; i++) {
            long requested = states[i] == BlockState.ALLOCATED || states[i] == BlockState.PENDING_FREE
                    ? Math.max(1, sizes[i] - slack) : 0;
            blocks.add(new BlockSnapshot(cursor, sizes[i], requested, states[i]));
            cursor += sizes[i];
        }
        return new SegmentSnapshot(address, cursor - address, 0, pool, blocks);
    }

    /** The direct allocator: one segment per live allocation. */
    static MemorySnapshot direct(int count) {
        SplittableRandom random = new SplittableRandom(1);
        List<SegmentSnapshot> segments = new ArrayList<>();
        long address = BASE;
        for (int i = 0; i < count; i++) {
            long size = (1 + random.nextInt(96)) * MiB / 2;
            segments.add(segment(address, "direct", new long[] {size}, new BlockState[] {BlockState.ALLOCATED}, 512));
            address += size + 2 * MiB;
        }
        return snapshot("direct", segments);
    }

    /** BFC: one region of many blocks, mostly allocated, free holes, a free tail. */
    static MemorySnapshot bfc(int blocks) {
        SplittableRandom random = new SplittableRandom(2);
        long[] sizes = new long[blocks + 1];
        BlockState[] states = new BlockState[blocks + 1];
        for (int i = 0; i < blocks; i++) {
            sizes[i] = random.nextInt(8) == 0 ? (1 + random.nextInt(20)) * MiB : 256 * (1 + random.nextInt(4096));
            states[i] = random.nextInt(6) == 0 ? BlockState.FREE : BlockState.ALLOCATED;
        }
        sizes[blocks] = 300 * MiB;
        states[blocks] = BlockState.FREE;
        return snapshot("bfc", List.of(segment(BASE, "region", sizes, states, 100)));
    }

    /** The caching allocator: 20 MiB and larger segments in the large pool, 2 MiB ones in the small pool. */
    static MemorySnapshot caching(int segmentCount) {
        SplittableRandom random = new SplittableRandom(3);
        List<SegmentSnapshot> segments = new ArrayList<>();
        long address = BASE;
        for (int s = 0; s < segmentCount; s++) {
            boolean small = s % 5 == 4;
            long segmentSize = small ? 2 * MiB : (1 + random.nextInt(4)) * 20 * MiB;
            List<Long> sizes = new ArrayList<>();
            List<BlockState> states = new ArrayList<>();
            long left = segmentSize;
            while (left > 0) {
                long size = Math.min(left, small ? 512L * (1 + random.nextInt(256)) : MiB * (1 + random.nextInt(24)));
                sizes.add(size);
                int pick = random.nextInt(10);
                states.add(pick < 6 ? BlockState.ALLOCATED : pick < 7 ? BlockState.PENDING_FREE : BlockState.FREE);
                left -= size;
            }
            segments.add(segment(address, small ? "small" : "large",
                    sizes.stream().mapToLong(Long::longValue).toArray(), states.toArray(BlockState[]::new), 64));
            address += segmentSize + 64 * MiB;
        }
        return snapshot("caching", segments);
    }

    /** Expandable segments: mapped blocks at the start of the reservation, unmapped address space after them. */
    static MemorySnapshot expandable() {
        long[] sizes = {300 * MiB, 12 * MiB, 488 * MiB, 4 * MiB, 200 * MiB};
        BlockState[] states = {BlockState.ALLOCATED, BlockState.FREE, BlockState.ALLOCATED, BlockState.FREE,
                BlockState.UNMAPPED};
        return snapshot("caching", List.of(segment(BASE, "large", sizes, states, 4 * KiB)));
    }

    /** A snapshot of {@code segments} segments tiled by {@code blocksPerSegment} blocks of mixed sizes. */
    static MemorySnapshot manyBlocks(int segments, int blocksPerSegment, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<SegmentSnapshot> list = new ArrayList<>();
        long address = BASE;
        BlockState[] all = BlockState.values();
        for (int s = 0; s < segments; s++) {
            long[] sizes = new long[blocksPerSegment];
            BlockState[] states = new BlockState[blocksPerSegment];
            for (int i = 0; i < blocksPerSegment; i++) {
                sizes[i] = random.nextInt(50) == 0 ? (1 + random.nextInt(64)) * MiB : 512L * (1 + random.nextInt(64));
                states[i] = all[random.nextInt(all.length)];
            }
            SegmentSnapshot seg = segment(address, "large", sizes, states, 8);
            list.add(seg);
            address = seg.end() + 2 * MiB;
        }
        return snapshot("stress", list);
    }

    /** A result on {@code trace} with the given set-up and snapshot, and ordinary figures. */
    static ReplayResult withSnapshot(String trace, String allocator, String conf, MemorySnapshot snapshot) {
        return ReplayResult.builder().trace(trace).allocator(allocator).device("sim:80GiB").conf(conf).events(10_000)
                .allocs(5_000).frees(5_000).deviceMallocs(10)
                .peakReservedBytes(snapshot == null ? 0 : snapshot.totalSegmentBytes()).peakAllocatedBytes(1_000)
                .peakRequestedBytes(900).fragmentation(0.1).requestedFragmentation(0.2).eventsPerSecond(1_000_000)
                .timeline(timeline(10_000, 100, 800 * MiB, 1.1, 5)).peakSnapshot(snapshot).build();
    }
}
