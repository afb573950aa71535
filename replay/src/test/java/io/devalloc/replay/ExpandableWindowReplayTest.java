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
import io.devalloc.trace.pytorch.PyTorchSnapshots;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots written by devalloc's own caching allocator with {@code expandable_segments:True} whose history is a
 * window that starts after many allocations (a ring of a few hundred entries, or history turned on late), read back
 * by the pickle reader and replayed {@code --warm} with expandable segments: the warm start rebuilds the expandable
 * segments of the window's start ({@link ExpandableLayout}) and the replay matches every recorded map and unmap.
 */
class ExpandableWindowReplayTest {

    private static final long MiB = 1L << 20;
    private static final long CAPACITY = 8L << 30;
    private static final String CONF = "expandable_segments:True";

    /** A seeded random workload on {@code streams} streams: sizes from 1 B to {@code maxLarge}, some emptyCache. */
    static Consumer<CachingAllocator> random(long seed, int streams, long maxLarge) {
        return a -> {
            Random r = new Random(seed);
            DeviceStream[] on = new DeviceStream[streams];
            on[0] = DeviceStream.DEFAULT;
            for (int k = 1; k < streams; k++) {
                on[k] = a.device().createStream();
            }
            List<Long> live = new ArrayList<>();
            for (int i = 0; i < 3000; i++) {
                int roll = r.nextInt(100);
                if (roll < 2) {
                    a.releaseCachedMemory();
                } else if (live.isEmpty() || roll < 52) {
                    long size = 1 + (r.nextInt(6) == 0 ? r.nextLong(maxLarge) : r.nextLong(3 * MiB));
                    live.add(a.malloc(size, on[r.nextInt(streams)]));
                } else {
                    a.free(live.remove(r.nextInt(live.size())));
                }
            }
        };
    }

    /**
     * Runs {@code workload} on a fresh allocator with a history ring of {@code window} entries; returns the history.
     */
    static List<TraceEntry> record(Consumer<CachingAllocator> workload, int window, Path pickle) throws IOException {
        SimulatedDevice device = SimulatedDevice.builder().capacity(CAPACITY).build();
        try (CachingAllocator a = new CachingAllocatorProvider().create(device, CONF)) {
            a.recordHistory(window);
            workload.accept(a);
            if (pickle != null) {
                try (OutputStream out = Files.newOutputStream(pickle)) {
                    PyTorchSnapshots.writePickle(a.snapshotDict(), out);
                }
            }
            return a.history();
        }
    }

    static ReplayOutcome replayWarm(Path pickle, String device) throws IOException {
        return new Replayer(ReplayOptions.defaults().withDevice(device).withConf(CONF).withEmptyCacheAtSegmentFree(true)
                .withWarm(true)).replay(pickle.getFileName().toString(), TraceSources.of(pickle));
    }

    static ExpandableLayout layout(Path pickle) throws IOException {
        TraceScan scan = TraceScan.of("t", TraceSources.of(pickle));
        try (SimulatedDevice d = SimulatedDevice.builder().capacity(CAPACITY).build();
             CachingAllocator a = new CachingAllocatorProvider().create(d, CONF)) {
            return ExpandableLayout.plan(TestTraces.restore(a), scan, Replayer.WARM_SPACE);
        }
    }

    private record Case(long seed, int streams, long maxLarge, int window) {
    }

    @Test
    void randomWindowedHistoriesReplayToMatchWarm(@TempDir Path dir) throws IOException {
        List<Case> cases = new ArrayList<>();
        long[] maxLarge = {80 * MiB, 200 * MiB, 320 * MiB};
        int[] windows = {250, 350, 450};
        for (int i = 0; i < 12; i++) {
            cases.add(new Case(100 + i, 1 + i % 2, maxLarge[i % 3], windows[(i / 2) % 3]));
        }
        List<Executable> checks = new ArrayList<>();
        int lowered = 0;
        int unmappedBefore = 0;
        for (Case c : cases) {
            Path pickle = dir.resolve("w" + c.seed() + ".pickle");
            Consumer<CachingAllocator> workload = random(c.seed(), c.streams(), c.maxLarge());
            List<TraceEntry> window = record(workload, c.window(), pickle);
            // The whole history of the same workload: the window starts late, after unmaps that left holes.
            List<TraceEntry> full = record(workload, 1_000_000, null);
            List<TraceEntry> before = full.subList(0, full.size() - window.size());
            if (before.stream().anyMatch(e -> e.action() == TraceAction.SEGMENT_UNMAP)) {
                unmappedBefore++;
            }
            ExpandableLayout layout = layout(pickle);
            lowered += (int) layout.segments().stream()
                    .filter(s -> s.recordedBase() != s.ranges().getFirst().address()).count();
            ReplayOutcome o = replayWarm(pickle, "sim:8GiB");
            ReplayResult.GroundTruth g = o.result().groundTruth();
            String name = c.toString();
            checks.add(() -> assertAll(name,
                    () -> assertEquals(window.size(), c.window(), "the ring is full: the window starts late"),
                    () -> assertTrue(before.size() > 1000, () -> before.size() + " entries before the window"),
                    () -> assertEquals(null, layout.ordinaryReason()),
                    () -> assertTrue(layout.segments().stream().anyMatch(ExpandableLayout.Segment::small)
                            && layout.segments().stream().anyMatch(s -> !s.small()), "both pools at the start"),
                    () -> assertTrue(layout.segments().stream().allMatch(ExpandableLayout.Segment::placed)),
                    () -> assertEquals(ReplayOutcome.WarmStartKind.RESTORED, o.warmStart()),
                    () -> assertTrue(o.notes().getFirst().contains("at their recorded addresses, the presegments as"
                            + " the mapped ranges of " + layout.segments().size() + " expandable segments"),
                            o.notes()::toString),
                    () -> assertTrue(g.deviceMallocs() > 0, "the window maps"),
                    () -> assertTrue(g.match(), g::firstDifference)));
        }
        assertAll(checks);
        int l = lowered;
        int u = unmappedBefore;
        assertAll(
                () -> assertTrue(l >= 2, () -> "bases below the lowest range (a hole the window maps into): " + l),
                () -> assertTrue(u >= cases.size() - 1, () -> "windows after unmaps: " + u));
    }

    /**
     * A scripted window. Before it: a 120 MiB map cut into blocks, a middle page unmapped (a split), the lowest page
     * unmapped (a hole at the segment's base, below a free 15 MiB block), and 20 small blocks of 1 MiB freed again
     * (a 20 MiB small-pool range with no live block: only its first alloc in the window tells its pool). In it: a
     * small alloc in that range, and a 30 MiB alloc that PyTorch makes by mapping the one page of the hole and joining
     * the free block above it.
     */
    static void scripted(CachingAllocator a) {
        DeviceStream s = DeviceStream.DEFAULT;
        a.free(a.malloc(120 * MiB, s));
        long p = a.malloc(20 * MiB, s);
        long q = a.malloc(15 * MiB, s);
        long c = a.malloc(25 * MiB, s);
        long e = a.malloc(20 * MiB, s);
        long f = a.malloc(40 * MiB, s);
        a.free(e);
        a.releaseCachedMemory(); // e's page: the range splits in two
        a.free(p);
        a.free(q);
        a.releaseCachedMemory(); // p's page: a hole at the base; q's 15 MiB stay mapped and free
        List<Long> small = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            small.add(a.malloc(MiB, s));
        }
        small.forEach(a::free);

        a.recordHistory(1000); // the window starts here
        long v = a.malloc(500 * 1024, s);
        long w = a.malloc(30 * MiB, s);
        a.free(w);
        a.free(c);
        a.free(v);
        a.releaseCachedMemory();
        long x = a.malloc(70 * MiB, s);
        a.free(x);
        a.free(f);
    }

    @Test
    void aScriptedWindowWithAHoleBelowItsFirstRangeAndAFreeSmallRangeReplaysToMatch(@TempDir Path dir)
            throws IOException {
        Path pickle = dir.resolve("scripted.pickle");
        record(ExpandableWindowReplayTest::scripted, 1000, pickle);
        ExpandableLayout layout = layout(pickle);
        List<ExpandableLayout.Segment> segments = layout.segments();
        assertEquals(2, segments.size(), segments::toString);
        ExpandableLayout.Segment small = segments.stream().filter(ExpandableLayout.Segment::small).findFirst()
                .orElseThrow();
        ExpandableLayout.Segment large = segments.stream().filter(s -> !s.small()).findFirst().orElseThrow();
        assertAll(
                () -> assertEquals(List.of(20 * MiB), small.ranges().stream().map(TraceScan.Pre::size).toList(),
                        "20 MiB of free small pages: small by its first alloc, not by its size"),
                () -> assertEquals(List.of(40 * MiB, 40 * MiB), large.ranges().stream().map(TraceScan.Pre::size)
                        .toList(), "the range split by the unmap"),
                () -> assertEquals(large.ranges().getFirst().address() - 20 * MiB, large.recordedBase(),
                        "the base is the hole the window maps into"));

        ReplayOutcome o = replayWarm(pickle, "sim:8GiB");
        ReplayResult.GroundTruth g = o.result().groundTruth();
        assertAll(
                () -> assertTrue(g.match(), g::firstDifference),
                () -> assertEquals(2, g.deviceMallocs(), "the hole's page and the 70 MiB"),
                () -> assertTrue(g.deviceFrees() > 0),
                () -> assertEquals(3, o.restoredSegments()),
                () -> assertEquals(2, o.restoredBlocks()));
    }

    @Test
    void onADeviceThatCannotPlaceReservationsRangesKeepTheirOffsets(@TempDir Path dir) throws IOException {
        Path pickle = dir.resolve("scripted.pickle");
        record(ExpandableWindowReplayTest::scripted, 1000, pickle);
        ReplayOutcome o = replayWarm(pickle, "host");
        ReplayResult.GroundTruth g = o.result().groundTruth();
        assertAll(
                () -> assertEquals(ReplayOutcome.WarmStartKind.RESTORED, o.warmStart()),
                () -> assertTrue(o.notes().getFirst().contains("the presegments as the mapped ranges of 2 expandable"
                        + " segments; this device cannot place segments at the recorded addresses"),
                        o.notes()::toString),
                // One segment per (stream, pool): the offsets inside it are all that the search looks at.
                () -> assertTrue(g.match(), g::firstDifference),
                () -> assertEquals(0, o.unknownFrees()));
    }
}
