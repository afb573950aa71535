package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.caching.TraceAction;
import io.devalloc.caching.TraceEntry;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.pytorch.PyTorchPickleReader;
import io.devalloc.trace.pytorch.PyTorchSnapshots;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A snapshot written by devalloc's own caching allocator with {@code expandable_segments:True} and history on from
 * the start, read back by {@link PyTorchPickleReader} and replayed through the same allocator: it starts empty (no
 * presegment, no prealloc row) and the replay matches the recorded segment events, cold and {@code --warm}. The
 * workloads grow segments, unmap a middle part with {@code emptyCache} (splitting a mapped range in two) and refill
 * holes below a mapped range (a map that moves a range's start down); the test checks that each history has them.
 */
class ExpandableHistoryRoundTripTest {

    private static final long MiB = 1L << 20;
    private static final long CAPACITY = 8L << 30;
    private static final String CONF = "expandable_segments:True";

    /** What a history contains, found by replaying its map and unmap entries over a set of mapped ranges. */
    record Shapes(int maps, int unmaps, int growths, int splits, int mapsBelow) {
    }

    static Shapes shapes(List<TraceEntry> history) {
        TreeMap<Long, Long> mapped = new TreeMap<>(); // start -> end
        int maps = 0;
        int unmaps = 0;
        int growths = 0;
        int splits = 0;
        int below = 0;
        for (TraceEntry e : history) {
            long start = e.address();
            long end = start + e.size();
            if (e.action() == TraceAction.SEGMENT_MAP) {
                maps++;
                Map.Entry<Long, Long> lower = mapped.floorEntry(start);
                Long upperEnd = mapped.get(end);
                if (lower != null && lower.getValue() == start) {
                    growths++;
                    start = lower.getKey();
                    mapped.remove(lower.getKey());
                }
                if (upperEnd != null) {
                    below++;
                    mapped.remove(end);
                    end = upperEnd;
                }
                mapped.put(start, end);
            } else if (e.action() == TraceAction.SEGMENT_UNMAP) {
                unmaps++;
                Map.Entry<Long, Long> holder = mapped.floorEntry(start);
                assertTrue(holder != null && holder.getValue() >= end, "an unmap inside a mapped range: " + e);
                mapped.remove(holder.getKey());
                if (holder.getKey() < start) {
                    mapped.put(holder.getKey(), start);
                }
                if (end < holder.getValue()) {
                    mapped.put(end, holder.getValue());
                }
                if (holder.getKey() < start && end < holder.getValue()) {
                    splits++;
                }
            }
        }
        return new Shapes(maps, unmaps, growths, splits, below);
    }

    /**
     * A scripted workload: one map of 180 MiB cut into three blocks, the middle one unmapped (a split), the lower one
     * unmapped, the hole below the upper range mapped again (the range grows down), then growth at the end.
     */
    static void scripted(CachingAllocator a) {
        a.free(a.malloc(180 * MiB, DeviceStream.DEFAULT)); // one map; x, y and z are carved from it
        long x = a.malloc(60 * MiB, DeviceStream.DEFAULT);
        long y = a.malloc(60 * MiB, DeviceStream.DEFAULT);
        long z = a.malloc(60 * MiB, DeviceStream.DEFAULT);
        a.free(y);
        a.releaseCachedMemory(); // y's pages: a middle part of the mapped range
        a.free(x);
        a.releaseCachedMemory(); // x's pages: the range now starts at z
        long w = a.malloc(120 * MiB, DeviceStream.DEFAULT); // maps the whole hole below z's range: the range grows down
        long u = a.malloc(60 * MiB, DeviceStream.DEFAULT); // the range grows at its end
        a.free(z);
        a.free(w);
        a.free(u);
        a.releaseCachedMemory();
        long v = a.malloc(30 * MiB, DeviceStream.DEFAULT);
        a.free(v);
    }

    /** A seeded random workload with occasional emptyCache calls, sizes from 1 B to 200 MiB. */
    static void random(CachingAllocator a, long seed) {
        Random r = new Random(seed);
        List<Long> live = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            int roll = r.nextInt(100);
            if (roll < 2) {
                a.releaseCachedMemory();
            } else if (live.isEmpty() || roll < 52) {
                long size = 1 + (r.nextInt(8) == 0 ? r.nextLong(200 * MiB) : r.nextLong(4 * MiB));
                live.add(a.malloc(size, DeviceStream.DEFAULT));
            } else {
                a.free(live.remove(r.nextInt(live.size())));
            }
        }
    }

    /** Records {@code workload} from an empty allocator into a pickle; returns its history. */
    static List<TraceEntry> record(Path pickle, long seed) throws IOException {
        SimulatedDevice device = SimulatedDevice.builder().capacity(CAPACITY).build();
        try (CachingAllocator a = new CachingAllocatorProvider().create(device, CONF)) {
            a.recordHistory(1_000_000);
            if (seed < 0) {
                scripted(a);
            } else {
                random(a, seed);
            }
            try (OutputStream out = Files.newOutputStream(pickle)) {
                PyTorchSnapshots.writePickle(a.snapshotDict(), out);
            }
            return a.history();
        }
    }

    @ParameterizedTest(name = "seed {0} (-1: scripted)")
    @ValueSource(longs = {-1, 1, 2, 3})
    void aHistoryRecordedFromEmptyReplaysToMatchColdAndWarm(long seed, @TempDir Path dir) throws IOException {
        Path pickle = dir.resolve("expandable.pickle");
        List<TraceEntry> history = record(pickle, seed);
        Shapes shapes = shapes(history);
        assertTrue(shapes.growths() > 0 && shapes.unmaps() > 0, shapes::toString);
        if (seed < 0) {
            // The scripted workload has each shape the warm-start analysis must undo.
            assertAll(
                    () -> assertTrue(shapes.splits() > 0, () -> "an unmap splits a mapped range: " + shapes),
                    () -> assertTrue(shapes.mapsBelow() > 0, () -> "a map just below a mapped range: " + shapes));
        }

        // Read back: recorded from empty, so nothing existed before the first event.
        List<TraceEvent> events = new ArrayList<>();
        try (PyTorchPickleReader reader = new PyTorchPickleReader(pickle)) {
            for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                events.add(e);
            }
        }
        assertTrue(events.stream().noneMatch(e -> e.kind() == TraceEvent.Kind.PRESEGMENT
                || e.kind() == TraceEvent.Kind.PREALLOC), () -> "warm-start rows of an empty start: "
                + events.stream().filter(e -> e.kind() == TraceEvent.Kind.PRESEGMENT
                        || e.kind() == TraceEvent.Kind.PREALLOC).toList());

        for (boolean warm : new boolean[] {false, true}) {
            ReplayOutcome o = new Replayer(ReplayOptions.defaults().withDevice("sim:8GiB").withConf(CONF)
                    .withEmptyCacheAtSegmentFree(true).withWarm(warm)).replay("expandable.pickle",
                    TraceSources.of(pickle));
            ReplayResult.GroundTruth g = o.result().groundTruth();
            assertAll("warm " + warm,
                    () -> assertEquals(TraceFormat.PYTORCH_PICKLE, o.format()),
                    () -> assertTrue(g.match(), g::firstDifference),
                    () -> assertEquals(shapes.maps(), g.deviceMallocs()),
                    () -> assertEquals(shapes.unmaps(), g.deviceFrees()),
                    // Nothing to restore: a warm replay starts from the same empty allocator as a cold one.
                    () -> assertEquals(ReplayOutcome.WarmStartKind.NONE, o.warmStart()),
                    () -> assertEquals(0, o.restoredSegments()));
        }
    }
}
