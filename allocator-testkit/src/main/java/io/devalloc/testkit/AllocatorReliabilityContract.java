package io.devalloc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.devalloc.api.Allocation;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.stats.AllocatorStats;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reliability suites every allocator configuration passes, beyond {@link DeviceAllocatorContract}:
 * <ul>
 *   <li><b>model-based long run</b> ({@link ModelRun}): seeded random operations, every invariant and the stats
 *       checked against a model after every operation; {@value #OPS_PROPERTY} operations (200,000 by default);</li>
 *   <li><b>fault injection</b>: the same run with a device fault of a random kind (running out, or a device error)
 *       armed before 20% of the operations, {@value #FAULT_OPS_PROPERTY} operations (30,000 by default); after each
 *       failure the allocator is usable and its books equal the device's; nothing leaks at close;</li>
 *   <li><b>races</b>: allocations, frees and handle closes from three threads against cache releases, peak resets
 *       and snapshots (every handle freed exactly once, though two threads close each), and against
 *       {@link DeviceAllocator#close()} (only the exceptions the contract allows; the device empty afterwards);</li>
 *   <li><b>heap</b>: a long run with history off keeps the Java heap flat; with history on, bounded by its
 *       {@code max_entries}.</li>
 * </ul>
 * Each run logs its figures at INFO (logger {@code io.devalloc.testkit}); {@code docs/testing.md} gives the command
 * for a 10-million-operation run.
 *
 * <p>Subclass it per configuration with a device, its {@link DeviceProbe} and an allocator factory. A configuration
 * that hits a known defect overrides the test with {@code @Disabled} naming it.
 */
public abstract class AllocatorReliabilityContract {

    /** System property: operations of the model-based run. */
    public static final String OPS_PROPERTY = "devalloc.longRun.ops";
    /** System property: operations of the fault-injection run. */
    public static final String FAULT_OPS_PROPERTY = "devalloc.faultRun.ops";
    /**
     * System property: operations between two full checks of the snapshot ({@link AllocatorInvariants}); the model's
     * checks run after every operation, and the full check after every fault too.
     */
    public static final String FULL_CHECK_PROPERTY = "devalloc.longRun.fullCheckEvery";
    /** System property: the seed of both runs. */
    public static final String SEED_PROPERTY = "devalloc.longRun.seed";

    private static final Logger LOG = LoggerFactory.getLogger(AllocatorReliabilityContract.class);
    private static final int MAX_LIVE = 200;
    private static final int FAULTS_PER_MILLE = 200;
    private static final int WORKERS = 3;
    private static final int SHARED_HANDLES = 32;
    private static final long HEAP_TOLERANCE = 24L << 20;

    /** For subclasses: one per allocator configuration. */
    protected AllocatorReliabilityContract() {
    }

    /** A fresh device with at least 256 MiB of capacity (closed by the suite). */
    protected abstract DeviceMemory openDevice();

    /** A fresh allocator over {@code device} with the configuration under test; it must not own the device. */
    protected abstract DeviceAllocator createAllocator(DeviceMemory device);

    /** The device's books and faults; by default what the port tells ({@link DeviceProbe#portOnly}). */
    protected DeviceProbe probe(DeviceMemory device) {
        return DeviceProbe.portOnly(device);
    }

    /** The configuration's name in the logged figures. */
    protected String configuration() {
        return getClass().getSimpleName();
    }

    /** Whether every allocation is served from mapped virtual memory (checked on the device after each operation). */
    protected boolean liveBlocksMapped() {
        return false;
    }

    /**
     * Whether reserved bytes count the sizes the allocator asked of the device rather than what the device rounded
     * them to (PyTorch's host allocator does); then the device may hold up to its alignment more per allocation.
     */
    protected boolean reservedExcludesDeviceRounding() {
        return false;
    }

    /**
     * Turns on the allocator's history of at most {@code maxEntries} entries (PyTorch's
     * {@code _record_memory_history(max_entries=...)}), returning false when the allocator keeps none.
     */
    protected boolean recordHistory(DeviceAllocator allocator, int maxEntries) {
        return false;
    }

    private static int fullCheckEvery() {
        return Integer.getInteger(FULL_CHECK_PROPERTY, 64);
    }

    private static long seed() {
        return Long.getLong(SEED_PROPERTY, 0x15_0015L);
    }

    @Test
    protected void modelBasedLongRun() {
        RunReport report = runModel(Long.getLong(OPS_PROPERTY, 200_000), 0);
        assertEquals(0, report.violations(), report::details);
    }

    @Test
    protected void faultInjection() {
        DeviceMemory device = openDevice();
        try {
            Assumptions.assumeFalse(probe(device).faultKinds().isEmpty(), "this device cannot inject faults");
        } finally {
            device.close();
        }
        RunReport report = runModel(Long.getLong(FAULT_OPS_PROPERTY, 30_000), FAULTS_PER_MILLE);
        assertEquals(0, report.violations(), report::details);
        assertTrue(report.faultsInjected() > 0, () -> "no injected fault fired: " + report.summary());
    }

    private RunReport runModel(long operations, int faultsPerMille) {
        DeviceMemory device = openDevice();
        DeviceMemory otherDevice = openDevice();
        DeviceAllocator other = createAllocator(otherDevice);
        try {
            DeviceProbe probe = probe(device);
            Allocation foreign = other.allocate(4096);
            DeviceAllocator allocator = createAllocator(device);
            RunReport report;
            try {
                report = new ModelRun(configuration() + (faultsPerMille > 0 ? " with faults" : ""), allocator, probe,
                        foreign, options(operations, faultsPerMille, fullCheckEvery())).run();
            } finally {
                allocator.close();
            }
            LOG.info("{}", report.summary());
            checkDeviceEmpty(probe, "after close");
            other.free(foreign);
            return report;
        } finally {
            other.close();
            otherDevice.close();
            device.close();
        }
    }

    private static void checkDeviceEmpty(DeviceProbe probe, String when) {
        assertEquals(0, probe.bytesInUse(), "device bytes in use " + when);
        int events = probe.liveEvents();
        assertTrue(events <= 0, () -> events + " device events still live " + when);
    }

    /**
     * Three threads allocate and free (raw and through handles) while a fourth releases the cache, resets the peaks
     * and takes snapshots; all four close the same shared handles, so each is freed exactly once.
     */
    @Test
    protected void racesAgainstCacheOperations() throws Exception {
        race(40, r -> {
            AllocatorStats before = r.allocator().stats();
            AtomicBoolean workersDone = new AtomicBoolean();
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < WORKERS; t++) {
                long seed = r.number() * 31L + t;
                futures.add(r.pool().submit(() -> {
                    r.start().await();
                    work(r.allocator(), new Random(seed), 1500, r.problems(), false, true);
                    return null;
                }));
            }
            long adminSeed = r.number();
            futures.add(r.pool().submit(() -> {
                r.start().await();
                closeShared(r.shared(), r.closes(), new Random(adminSeed), r.problems(), false);
                while (!workersDone.get()) {
                    administer(r.allocator(), r.problems());
                }
                return null;
            }));
            for (int t = 0; t < WORKERS; t++) {
                futures.get(t).get(60, TimeUnit.SECONDS);
            }
            workersDone.set(true);
            futures.get(WORKERS).get(60, TimeUnit.SECONDS);
            r.checkSharedFrees(true);
            AllocatorStats after = r.allocator().stats();
            if (after.freeCount() != after.allocationCount() || after.activeAllocations() != 0
                    || after.freeCount() - before.freeCount() < SHARED_HANDLES) {
                r.problems().add("round " + r.number() + ": after every free, stats say " + after);
            }
            try {
                AllocatorInvariants.check(r.allocator(), new LiveSet());
            } catch (AssertionError e) {
                r.problems().add("round " + r.number() + ": " + e.getMessage());
            }
            r.allocator().close();
        });
    }

    /**
     * Three threads allocate and free raw addresses while a fourth takes snapshots, releases the cache and then
     * closes the allocator, with live handles: a malloc, free or cache call after close may throw
     * {@link IllegalStateException} and nothing else, and the device ends empty (close freed what was live).
     */
    @Test
    protected void racesAgainstClose() throws Exception {
        raceClose(false, false);
    }

    /**
     * {@link #racesAgainstClose()} with every thread closing the shared handles too: a handle's close racing the
     * allocator's frees the allocation once or does nothing, never throws.
     */
    @Test
    protected void handleClosesRaceAgainstClose() throws Exception {
        raceClose(true, false);
    }

    /**
     * {@link #racesAgainstClose()} with handle allocations too: an {@link DeviceAllocator#allocate} racing close must
     * return a handle or throw {@link IllegalStateException}.
     */
    @Test
    protected void allocateRacesAgainstClose() throws Exception {
        raceClose(false, true);
    }

    private void raceClose(boolean closeSharedHandles, boolean allocateHandles) throws Exception {
        race(200, r -> {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < WORKERS; t++) {
                long seed = r.number() * 31L + t;
                futures.add(r.pool().submit(() -> {
                    r.start().await();
                    Random random = new Random(seed);
                    if (closeSharedHandles) {
                        closeShared(r.shared(), r.closes(), random, r.problems(), true);
                    }
                    work(r.allocator(), random, 300, r.problems(), true, allocateHandles);
                    return null;
                }));
            }
            int spins = r.number() % 20;
            futures.add(r.pool().submit(() -> {
                r.start().await();
                for (int i = 0; i < spins; i++) {
                    administer(r.allocator(), r.problems());
                }
                r.allocator().close();
                return null;
            }));
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
            r.checkSharedFrees(false);
        });
    }

    /**
     * One round of a race: a fresh allocator with the {@link #SHARED_HANDLES shared handles} allocated, how often
     * each was freed, the barrier that starts the {@link #WORKERS} threads and the one beside them together, and the
     * problems found so far (every round's).
     */
    private record RaceRound(int number, DeviceAllocator allocator, List<Allocation> shared, AtomicIntegerArray closes,
            CyclicBarrier start, ExecutorService pool, Queue<String> problems) {

        /** Notes a shared handle freed more than once, or with {@code exactlyOnce}, not freed exactly once. */
        void checkSharedFrees(boolean exactlyOnce) {
            for (int i = 0; i < SHARED_HANDLES; i++) {
                if (closes.get(i) > 1 || (exactlyOnce && closes.get(i) != 1)) {
                    problems.add("round " + number + ": shared handle " + i + " freed " + closes.get(i) + " times");
                }
            }
        }
    }

    /** What a race does in one round; it closes the allocator or leaves it open as it tests. */
    @FunctionalInterface
    private interface RaceBody {
        void run(RaceRound round) throws Exception;
    }

    /**
     * Runs {@code body} round after round on one device, each round on a fresh allocator, until {@code rounds} rounds
     * or the first round with a problem; the device must be empty after each round. Fails with the problems found.
     */
    private void race(int rounds, RaceBody body) throws Exception {
        Queue<String> problems = new ConcurrentLinkedQueue<>();
        DeviceMemory device = openDevice();
        ExecutorService pool = Executors.newFixedThreadPool(WORKERS + 1);
        try {
            DeviceProbe probe = probe(device);
            for (int round = 0; round < rounds && problems.isEmpty(); round++) {
                DeviceAllocator allocator = createAllocator(device);
                body.run(new RaceRound(round, allocator, allocateShared(allocator),
                        new AtomicIntegerArray(SHARED_HANDLES), new CyclicBarrier(WORKERS + 1), pool, problems));
                checkDeviceEmpty(probe, "after round " + round);
            }
        } finally {
            pool.shutdownNow();
            device.close();
        }
        if (!problems.isEmpty()) {
            fail(problems.size() + " problems, the first: " + String.join("\n", first(problems, 5)));
        }
    }

    /** The handles that every racing thread closes: {@link #SHARED_HANDLES} of different sizes, 4 KiB apart. */
    private static List<Allocation> allocateShared(DeviceAllocator allocator) {
        List<Allocation> shared = new ArrayList<>();
        for (int i = 0; i < SHARED_HANDLES; i++) {
            shared.add(allocator.allocate(1 + 4096L * i));
        }
        return shared;
    }

    /** Each thread closes every shared handle, in its own order; exactly one close of each may succeed. */
    private static void closeShared(List<Allocation> shared, AtomicIntegerArray closes, Random random,
            Queue<String> problems, boolean racingClose) {
        List<Integer> indices = new ArrayList<>();
        for (int i = 0; i < shared.size(); i++) {
            indices.add(i);
        }
        Collections.shuffle(indices, random);
        for (int i : indices) {
            Allocation a = shared.get(i);
            boolean openBefore = !a.allocator().isClosed();
            try {
                a.close();
                if (openBefore && !a.allocator().isClosed()) {
                    closes.incrementAndGet(i); // freed by this close (after the allocator's close it frees nothing)
                }
            } catch (InvalidFreeException e) {
                if (e.reason() != InvalidFreeException.Reason.DOUBLE_FREE) {
                    problems.add("closing a shared handle: " + describe(e));
                }
            } catch (RuntimeException e) {
                problems.add(handleCloseFailure(racingClose) + describe(e));
            }
        }
    }

    /**
     * Random raw allocations and frees, and with {@code allocateHandles} handle allocations and closes; with
     * {@code racingClose}, tolerating a closed allocator.
     */
    private static void work(DeviceAllocator allocator, Random random, int operations, Queue<String> problems,
            boolean racingClose, boolean allocateHandles) {
        List<Long> raw = new ArrayList<>();
        List<Allocation> handles = new ArrayList<>();
        for (int i = 0; i < operations; i++) {
            try {
                int dice = random.nextInt(4);
                if (dice == 0 && !raw.isEmpty()) {
                    allocator.free(raw.remove(raw.size() - 1));
                } else if (dice == 1 && !handles.isEmpty()) {
                    handles.remove(handles.size() - 1).close();
                } else if (dice == 2 && allocateHandles) {
                    handles.add(allocator.allocate(1 + random.nextInt(1 << 20)));
                } else {
                    raw.add(allocator.malloc(1 + random.nextInt(1 << 20)));
                }
            } catch (OutOfMemoryException e) {
                // a full device is an allowed answer
            } catch (IllegalStateException e) {
                if (!racingClose || !allocator.isClosed()) {
                    problems.add("IllegalStateException from an open allocator: " + describe(e));
                    return;
                }
            } catch (RuntimeException e) {
                problems.add("a worker got " + describe(e));
                return;
            }
        }
        for (long a : raw) {
            try {
                allocator.free(a);
            } catch (IllegalStateException e) {
                if (!racingClose || !allocator.isClosed()) {
                    problems.add("IllegalStateException from an open allocator: " + describe(e));
                }
            } catch (RuntimeException e) {
                problems.add("freeing at the end: " + describe(e));
            }
        }
        for (Allocation h : handles) {
            try {
                h.close();
            } catch (RuntimeException e) {
                problems.add(handleCloseFailure(racingClose) + describe(e));
            }
        }
    }

    /** One round of the administrative calls; after close only {@link IllegalStateException} is allowed. */
    private static void administer(DeviceAllocator allocator, Queue<String> problems) {
        try {
            allocator.releaseCachedMemory();
            allocator.resetPeakStats();
            MemorySnapshot snapshot = allocator.snapshot();
            snapshot.checkInvariants();
            AllocatorInvariants.checkStats(allocator.stats());
        } catch (IllegalStateException e) {
            if (!allocator.isClosed()) {
                problems.add("administrative call on an open allocator: " + describe(e));
            }
        } catch (RuntimeException | AssertionError e) {
            problems.add("administrative call: " + describe(e));
        }
    }

    private static String handleCloseFailure(boolean racingClose) {
        return racingClose ? "a handle's close racing the allocator's threw " : "a handle's close threw ";
    }

    private ModelRun.Options options(long operations, int faultsPerMille, int fullCheckEvery) {
        return new ModelRun.Options(seed(), operations, faultsPerMille, MAX_LIVE, fullCheckEvery, liveBlocksMapped(),
                reservedExcludesDeviceRounding());
    }

    /** The exception and where it came from (the first frames), for a problem's message. */
    private static String describe(Throwable e) {
        StringBuilder b = new StringBuilder(e.toString());
        StackTraceElement[] frames = e.getStackTrace();
        for (int i = 0; i < Math.min(4, frames.length); i++) {
            b.append(" at ").append(frames[i]);
        }
        return b.toString();
    }

    private static List<String> first(Queue<String> problems, int n) {
        List<String> out = new ArrayList<>();
        for (String p : problems) {
            if (out.size() == n) {
                break;
            }
            out.add(p);
        }
        return out;
    }

    /** A long run with history off: the heap retained after a collection stays within a tolerance of its start. */
    @Test
    protected void heapStaysFlatWithHistoryOff() {
        heapRun(false, 0);
    }

    /** With history on and {@code max_entries} 2,000, the retained heap stays flat once the ring is full. */
    @Test
    protected void heapBoundedByMaxEntriesWithHistoryOn() {
        heapRun(true, 2000);
    }

    /**
     * PyTorch's default {@code max_entries} is {@code sys.maxsize}: a huge limit means "grow as needed", and the
     * allocator stays usable.
     */
    @Test
    protected void hugeMaxEntriesGrowsAsNeeded() {
        DeviceMemory device = openDevice();
        try {
            DeviceProbe probe = probe(device);
            DeviceAllocator allocator = createAllocator(device);
            try {
                Assumptions.assumeTrue(recordHistory(allocator, Integer.MAX_VALUE), "this allocator keeps no history");
                RunReport report = new ModelRun(configuration() + " with history of max_entries 2^31-1", allocator,
                        probe, null, options(5_000, 0, 1)).run();
                assertEquals(0, report.violations(), report::details);
            } finally {
                allocator.close();
            }
            checkDeviceEmpty(probe, "after close");
        } finally {
            device.close();
        }
    }

    private void heapRun(boolean history, int maxEntries) {
        DeviceMemory device = openDevice();
        try {
            DeviceProbe probe = probe(device);
            DeviceAllocator allocator = createAllocator(device);
            try {
                if (history) {
                    Assumptions.assumeTrue(recordHistory(allocator, maxEntries), "this allocator keeps no history");
                }
                ModelRun run = new ModelRun(configuration() + (history ? " with history" : ""), allocator, probe, null,
                        options(Long.MAX_VALUE, 0, 64));
                run.begin();
                int chunk = 10_000;
                int chunks = 8;
                run.perform(chunk);
                long baseline = RetainedHeap.measure();
                long highest = baseline;
                for (int i = 0; i < chunks; i++) {
                    run.perform(chunk);
                    highest = Math.max(highest, RetainedHeap.measure());
                }
                RunReport report = run.finish();
                assertEquals(0, report.violations(), report::details);
                long growth = highest - baseline;
                LOG.info("{}: retained heap {} B after {} operations, at most {} B more over the next {}",
                        report.configuration(), baseline, chunk, growth, chunks * chunk);
                assertTrue(growth < HEAP_TOLERANCE, () -> "the retained heap grew by " + growth + " B (from "
                        + baseline + " B) over " + chunks * chunk + " operations");
            } finally {
                allocator.close();
            }
            checkDeviceEmpty(probe, "after close");
        } finally {
            device.close();
        }
    }
}
