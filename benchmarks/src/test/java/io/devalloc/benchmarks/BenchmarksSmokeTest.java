package io.devalloc.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.JobAdvice;
import io.devalloc.advisor.TrustLine;
import io.devalloc.api.internal.ObservedAllocator;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.units.ByteSize;
import io.devalloc.micrometer.DevallocMetrics;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceFile;
import io.devalloc.replay.TraceSources;
import io.devalloc.replay.bounds.LowerBound;
import io.devalloc.replay.bounds.OfflinePlan;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Runs each benchmark body a few times outside JMH: the build checks they work, never how fast. */
class BenchmarksSmokeTest {

    /** Every allocator of the cached benchmark, devalloc's and the peers', makes pairs at every size it is run at. */
    @ParameterizedTest
    @CsvSource({"bfc,256", "bfc,4194304", "caching,256", "caching,4194304", "direct,4194304",
            "netty-pooled,256", "netty-pooled,65536", "netty-pooled,4194304",
            "netty-adaptive,256", "netty-adaptive,65536", "netty-adaptive,4194304",
            "ffm-confined,256", "ffm-confined,4194304"})
    void cachedAllocFreeLeavesNothingLive(String allocator, long size) {
        CachedAllocFreeBenchmark b = new CachedAllocFreeBenchmark();
        b.allocator = allocator;
        b.size = size;
        b.setUp();
        for (int i = 0; i < 100; i++) {
            assertNotEquals(0L, b.allocateFree());
        }
        if (b.alloc instanceof DevallocPairAllocator devalloc) {
            assertEquals(0, devalloc.allocator().stats().activeAllocations());
            assertEquals(101, devalloc.allocator().stats().allocationCount(), "setup's pair and 100 measured");
        }
        b.tearDown();
    }

    /**
     * The observability benchmark's cached pair, for every observer: nothing wrapped with {@code none}, the
     * decorator with the others; no device call after setup's pair (so no listener call); the Micrometer counters
     * agree with {@code stats()}.
     */
    @ParameterizedTest
    @CsvSource({"caching,none", "caching,listener", "caching,micrometer", "caching,jfr",
            "bfc,none", "bfc,listener", "bfc,micrometer", "bfc,jfr"})
    void observedCachedPairCallsTheDeviceOnlyInSetup(String allocator, String observer) {
        ObservabilityBenchmark.Cached s = new ObservabilityBenchmark.Cached();
        s.allocator = allocator;
        s.observer = observer;
        s.setUp();
        try {
            assertEquals(!observer.equals("none"),
                    s.alloc.unwrap(ObservedAllocator.class).isPresent(),
                    observer + ": " + s.alloc);
            long deviceMallocs = s.alloc.stats().deviceMallocs();
            assertEquals(1, deviceMallocs, "setup's pair reserved one segment or region");
            ObservabilityBenchmark b = new ObservabilityBenchmark();
            for (int i = 0; i < 100; i++) {
                assertNotEquals(0L, b.cachedPair(s));
            }
            var stats = s.alloc.stats();
            assertEquals(0, stats.activeAllocations());
            assertEquals(101, stats.allocationCount(), "setup's pair and 100 measured");
            assertEquals(deviceMallocs, stats.deviceMallocs(), "a cached pair never calls the device");
            assertEquals(observer.equals("micrometer") ? 1.0 : 0.0, deviceCalls(s, "malloc"));
        } finally {
            s.tearDown();
        }
    }

    /** The observability benchmark's device pair: every malloc and free is a device call, each counted once. */
    @ParameterizedTest
    @ValueSource(strings = {"none", "listener", "micrometer", "jfr"})
    void observedDevicePairCallsTheDeviceTwice(String observer) {
        ObservabilityBenchmark.Uncached s = new ObservabilityBenchmark.Uncached();
        s.observer = observer;
        s.setUp();
        try {
            ObservabilityBenchmark b = new ObservabilityBenchmark();
            for (int i = 0; i < 100; i++) {
                assertNotEquals(0L, b.devicePair(s));
            }
            var stats = s.alloc.stats();
            assertEquals(0, stats.activeAllocations());
            assertEquals(101, stats.deviceMallocs(), "setup's pair and 100 measured");
            assertEquals(101, stats.deviceFrees());
            if (observer.equals("micrometer")) {
                assertEquals(101.0, deviceCalls(s, "malloc"));
                assertEquals(101.0, deviceCalls(s, "free"));
            }
        } finally {
            s.tearDown();
        }
    }

    @Test
    void anUnknownObserverIsRefusedWithTheKnownOnes() {
        ObservabilityBenchmark.Uncached s = new ObservabilityBenchmark.Uncached();
        s.observer = "prometheus";
        IllegalArgumentException e = Assertions.assertThrows(IllegalArgumentException.class,
                s::setUp);
        assertTrue(e.getMessage().contains("micrometer"), e.getMessage());
    }

    /** The Micrometer observer's count of successful device calls {@code op}; 0 for the other observers. */
    private static double deviceCalls(ObservabilityBenchmark.Observed s, String op) {
        if (s.registry == null) {
            return 0;
        }
        return s.registry.get(DevallocMetrics.DEVICE_CALLS)
                .tag(DevallocMetrics.TAG_OP, op)
                .tag(DevallocMetrics.TAG_OUTCOME, "success").functionCounter().count();
    }

    @Test
    void anUnknownAllocatorIsRefusedWithTheKnownNames() {
        IllegalArgumentException e = Assertions.assertThrows(IllegalArgumentException.class,
                () -> PairAllocator.open("jemalloc"));
        assertTrue(e.getMessage().contains("netty-adaptive"), e.getMessage());
    }

    /**
     * The two-thread variant's states, run on two real threads at once for a moment: each thread makes pairs of its
     * own size (and, for devalloc's allocators, on its own stream) from the one shared allocator, and the shared
     * teardown finds nothing live.
     */
    @ParameterizedTest
    @ValueSource(strings = {"bfc", "caching", "direct", "netty-pooled", "netty-adaptive", "ffm-confined"})
    void twoThreadsShareOneAllocator(String allocator) throws InterruptedException {
        CachedAllocFreeTwoThreadsBenchmark.Shared shared = new CachedAllocFreeTwoThreadsBenchmark.Shared();
        shared.allocator = allocator;
        shared.size = 65536;
        shared.setUp();
        CachedAllocFreeTwoThreadsBenchmark b = new CachedAllocFreeTwoThreadsBenchmark();
        CyclicBarrier start = new CyclicBarrier(2);
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        long[] pairs = new long[2];
        Thread[] threads = new Thread[2];
        for (int t = 0; t < 2; t++) {
            int index = t;
            threads[t] = new Thread(() -> {
                try {
                    var mine = new CachedAllocFreeTwoThreadsBenchmark.PerThread();
                    start.await();
                    mine.open(shared, index);
                    for (int i = 0; i < 20_000; i++) {
                        assertNotEquals(0L, b.allocateFree(mine));
                        pairs[index]++;
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "pairs-" + t);
            threads[t].start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertTrue(failures.isEmpty(), failures.toString());
        assertEquals(20_000, pairs[0]);
        assertEquals(20_000, pairs[1]);
        if (shared.alloc instanceof DevallocPairAllocator devalloc) {
            var stats = devalloc.allocator().stats();
            assertEquals(0, stats.activeAllocations());
            assertEquals(2 * 20_001, stats.allocationCount(), "each thread's setup pair and 20,000 measured");
            if (allocator.equals("caching")) {
                // Two streams, two sizes: each thread's block stays cached in its own stream's pool.
                long streams = devalloc.allocator().snapshot().segments().stream()
                        .map(SegmentSnapshot::stream).distinct().count();
                assertEquals(2, streams, devalloc.allocator().snapshot().segments().toString());
            }
        }
        shared.tearDown();
    }

    @Test
    void theSecondThreadAllocatesAnotherSize() {
        assertEquals(256, CachedAllocFreeTwoThreadsBenchmark.sizeOf(256, 0));
        assertEquals(384, CachedAllocFreeTwoThreadsBenchmark.sizeOf(256, 1));
        assertEquals(6 * ByteSize.MiB, CachedAllocFreeTwoThreadsBenchmark.sizeOf(4 * ByteSize.MiB, 1));
    }

    /** The pool-scale setup leaves the probe cached: every pair gets the same block back, and teardown frees all. */
    @ParameterizedTest
    @ValueSource(strings = {"caching", "bfc", "caching-host"})
    void poolScaleReusesOneCachedBlock(String allocator) {
        PoolScaleBenchmark b = new PoolScaleBenchmark();
        b.allocator = allocator;
        b.freeBlocks = 1024;
        b.setUp();
        long free = b.alloc.snapshot().segments().stream().flatMap(s -> s.blocks().stream())
                .filter(x -> x.state() == BlockState.FREE).count();
        assertTrue(free > 1024, free + " free blocks");
        long first = b.allocateFree();
        assertNotEquals(0L, first);
        for (int i = 0; i < 100; i++) {
            assertEquals(first, b.allocateFree());
        }
        b.tearDown();
    }

    @ParameterizedTest
    @CsvSource({"1000,1", "1000,4", "1000,64", "10000,1", "10000,4", "10000,64", "100000,1", "100000,4",
            "100000,64"})
    void everySequenceMakesExactlyNAllocations(int n, int maxMiB) {
        RandomAllocationsPlan plan = RandomAllocationsPlan.generate(n, maxMiB, RandomAllocationsBenchmark.SEED);
        assertEquals(n, plan.allocations);
        assertEquals(2L * n, plan.operations());
        assertTrue(plan.peakLiveBytes < RandomAllocationsPlan.MAX_USAGE);
        long frees = 0;
        for (long size : plan.size) {
            assertTrue(size >= 0 && size <= maxMiB * ByteSize.MiB);
            frees += size == 0 ? 1 : 0;
        }
        assertEquals(n, frees + plan.leftover.length);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bfc", "caching", "direct"})
    void randomAllocationsReplayTwiceAndLeaveNothingLive(String allocator) {
        RandomAllocationsBenchmark.N1000 s = new RandomAllocationsBenchmark.N1000();
        s.allocator = allocator;
        s.maxMiB = 64;
        s.setUp();
        RandomAllocationsBenchmark b = new RandomAllocationsBenchmark();
        // Start from an empty cache (setUp warms it), so that both replays start from the same state.
        s.alloc.releaseCachedMemory();
        long first = b.n1000(s);
        assertEquals(0, s.alloc.stats().activeAllocations());
        // Back to the start state (a caching allocator keeps its segments otherwise).
        s.alloc.releaseCachedMemory();
        assertEquals(first, b.n1000(s), "the same sequence on the same start state gives the same addresses");
        s.tearDown();
    }

    /** The N = 100,000 benchmark replays one whole sequence of 100,000 allocations and frees (bfc, max 64 MiB). */
    @Test
    void randomAllocationsAtN100000MakesThatManyAllocations() {
        RandomAllocationsBenchmark.N100000 s = new RandomAllocationsBenchmark.N100000();
        s.allocator = "bfc";
        s.maxMiB = 64;
        s.setUp();
        assertNotEquals(0L, new RandomAllocationsBenchmark().n100000(s));
        assertEquals(0, s.alloc.stats().activeAllocations());
        assertEquals(1 + 100_000, s.alloc.stats().allocationCount(), "setup's warm-up and the sequence");
        s.tearDown();
    }

    /**
     * The end-to-end replay's workloads, small: the repeated OPT trace's first repetition is the OPT trace itself
     * (with its leftovers freed), so the caching allocator matches PyTorch's ground truth on it; every file has
     * exactly the events asked for.
     */
    @Test
    void endToEndWorkloadsHaveTheirEventsAndTheFirstOptRepetitionMatchesPyTorch(
            @TempDir Path dir) throws IOException {
        Path opt = Path.of("..", "traces", "pt-opt-zeroth-order-fl", "memory.csv");
        List<String> lines = Files.readAllLines(opt);
        List<String> rows = lines.subList(1, lines.size());
        int oneRepetition = 7946 + 7549 + 61 + 397;
        Path repeated = dir.resolve("opt.csv");
        ReplayEndToEndBenchmark.writeRepeated(repeated, rows, oneRepetition);
        ReplayResult r = new Replayer(
                ReplayOptions.defaults().withAllocator("caching"))
                .replay("opt.csv", TraceSources.of(repeated)).result();
        assertEquals(oneRepetition, r.events());
        assertEquals(1_897_922_560L, r.peakReservedBytes());
        assertTrue(r.groundTruth().match(), r.groundTruth().toString());
        assertEquals(61, r.deviceMallocs());

        Path longer = dir.resolve("opt3.csv");
        ReplayEndToEndBenchmark.writeRepeated(longer, rows, 3 * oneRepetition - 1000);
        Path random = dir.resolve("random.csv");
        ReplayEndToEndBenchmark.write(random, 20_000, 1);
        Path rmm = dir.resolve("random-rmm.csv");
        ReplayEndToEndBenchmark.writeRmm(rmm, 20_000, 1);
        for (var file : Map.of(longer, 3 * oneRepetition - 1000, random, 20_000, rmm, 20_000).entrySet()) {
            for (String allocator : List.of("caching", "bfc")) {
                ReplayResult result = new Replayer(
                        ReplayOptions.defaults().withAllocator(allocator))
                        .replay("t.csv", TraceSources.of(file.getKey())).result();
                assertEquals((long) file.getValue(), result.events(), file.getKey() + " " + allocator);
                assertEquals(0, result.ooms());
            }
        }
    }

    /** Each setting replays the whole OPT trace from its compact form, twice with the same figures. */
    @ParameterizedTest
    @ValueSource(strings = {"caching", "caching-expandable", "bfc-growth"})
    void compactTraceReplaysTheWholeOptTrace(String setting) throws IOException {
        ReplayCompactTraceBenchmark b = new ReplayCompactTraceBenchmark();
        b.setting = setting;
        b.peakSnapshot = true;
        b.readTrace(Path.of("..", "traces", "pt-opt-zeroth-order-fl", "memory.csv"));
        ReplayResult first = b.replay().result();
        ReplayResult second = b.replay().result();
        assertEquals(first.peak(), second.peak());
        assertEquals(0, first.ooms());
        assertTrue(first.peakReservedBytes() > 0);
        if (setting.startsWith("caching")) {
            assertTrue(first.groundTruth() != null);
        }
    }

    /** The advisor's default grid on the shipped OPT pickle, read once and read again, gives one recommendation. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void adviseRunsTheDefaultGridOnTheOptPickle(int threads) throws IOException {
        AdviseBenchmark b = new AdviseBenchmark();
        b.threads = threads;
        b.readTrace(Path.of("..", "traces", "pt-opt-zeroth-order-fl", "memory.pickle"));
        Advice inMemory = b.advise();
        Advice read = b.readAndAdvise();
        assertEquals(inMemory.recommendation().env(), read.recommendation().env());
        assertEquals(inMemory.runs(), read.runs());
        assertEquals(threads, inMemory.threads());
        assertTrue(inMemory.trust().verdict() == TrustLine.Verdict.MATCH, inMemory.trust()
                .toString());
    }

    /**
     * The bounds benchmark's bodies on its smallest trace: exactly the events asked for, a plan never below the
     * rounded bound, the same figures twice.
     */
    @Test
    void offlinePlanBenchmarkBoundsTheTrainingLikeTrace() {
        OfflinePlanBenchmark b = new OfflinePlanBenchmark();
        b.events = 1000;
        b.readTrace();
        assertEquals(1000, b.trace.events());
        assertEquals(b.intervals.count(), b.intervals().count());
        LowerBound bound = b.lowerBound();
        OfflinePlan plan = b.plan();
        assertTrue(bound.requestedPeakBytes() > 0);
        assertTrue(plan.bytes() >= bound.roundedPeakBytes(), plan + " " + bound);
        assertEquals(0, plan.approximations());
        assertEquals(plan, b.plan());
        assertEquals(bound, b.lowerBound());
    }

    /**
     * The long-snapshot benchmark's bodies on a small snapshot of its generator: the read gives the one device with
     * every entry's event, and the advice of the trace in memory recommends a setting with the trust line matching.
     */
    @Test
    void longSnapshotReadsAndAdvisesASmallSnapshot(@TempDir Path dir)
            throws IOException {
        LongSnapshotBenchmark b = new LongSnapshotBenchmark();
        b.entries = 3000;
        b.threads = 2;
        LongSnapshot.Written written = LongSnapshot.write(b.entries, dir.resolve("long.pickle"));
        b.setUp(written.file());
        TraceFile read = b.read();
        assertEquals(1, read.devices().size());
        // Every alloc, free_completed and segment_alloc is an event; free_requested is not.
        long events = read.devices().getFirst().trace().events();
        assertEquals(written.entries() - written.frees(), events);
        JobAdvice advice = b.advise();
        Advice only = advice.only();
        assertTrue(only.trust().verdict() == TrustLine.Verdict.MATCH, only.trust().toString());
        assertEquals(2, advice.threads());
    }
}
