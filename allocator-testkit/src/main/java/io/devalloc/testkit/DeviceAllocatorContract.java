package io.devalloc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.Allocation;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.error.UnknownStreamException;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.stats.AllocatorStats;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link DeviceAllocator} passes: no two live allocations overlap under a long random
 * workload (checked by address arithmetic and, on host-addressable devices, by writing and re-reading patterns),
 * stats and snapshots stay consistent with what is live, bad input is refused and changes nothing, and close
 * releases everything.
 *
 * <p>Subclass it with a device and an allocator factory. The suite owns both and closes them.
 */
public abstract class DeviceAllocatorContract {

    /** For subclasses: one per allocator and configuration under test. */
    protected DeviceAllocatorContract() {
    }

    /** A fresh device with at least 256 MiB of capacity. */
    protected abstract DeviceMemory openDevice();

    /** A fresh allocator over {@code device}, with the configuration under test. It must not own the device. */
    protected abstract DeviceAllocator createAllocator(DeviceMemory device);

    /** The largest single request of the random workload. */
    protected long maxRequest() {
        return 4L << 20;
    }

    /** Operations in the long random workload. */
    protected int workloadOperations() {
        return 20_000;
    }

    /**
     * Whether {@link DeviceAllocator#releaseCachedMemory()} returns every byte when nothing is live. True for
     * {@code direct} and {@code caching}; an allocator that keeps memory by design overrides it.
     */
    protected boolean releasesEverythingWhenIdle() {
        return true;
    }

    protected DeviceMemory device;
    protected DeviceAllocator allocator;

    @BeforeEach
    void setUpAllocator() {
        device = openDevice();
        allocator = createAllocator(device);
    }

    @AfterEach
    void tearDownAllocator() {
        try {
            allocator.close();
        } finally {
            device.close();
        }
    }

    @Test
    void zeroBytesIsTheNullAllocationAndChangesNothing() {
        AllocatorStats before = allocator.stats();
        assertEquals(DeviceMemory.NULL, allocator.malloc(0));
        assertEquals(DeviceMemory.NULL, allocator.malloc(0, DeviceStream.DEFAULT));
        allocator.free(0);
        try (Allocation a = allocator.allocate(0)) {
            assertEquals(0, a.address());
        }
        assertEquals(before, allocator.stats());
    }

    @Test
    void negativeSizesAreRefusedAndChangeNothing() {
        AllocatorStats before = allocator.stats();
        assertThrows(IllegalArgumentException.class, () -> allocator.malloc(-1));
        assertThrows(IllegalArgumentException.class, () -> allocator.malloc(Long.MIN_VALUE));
        assertThrows(IllegalArgumentException.class, () -> allocator.allocate(-4096));
        assertEquals(before, allocator.stats());
    }

    @Test
    void absurdSizesAreOutOfMemoryWithFiguresAndChangeNothing() {
        long keep = allocator.malloc(4096);
        LiveSet live = new LiveSet();
        live.add(keep, 4096);
        AllocatorStats before = allocator.stats();
        long total = device.descriptor().totalBytes();
        for (long size : new long[] {Long.MAX_VALUE, Long.MAX_VALUE - 1, Long.MAX_VALUE - 511, 1L << 62, total + 1,
                total * 2}) {
            OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> allocator.malloc(size),
                    "malloc(" + size + ")");
            assertEquals(size, e.requestedBytes());
            assertEquals(total, e.deviceTotalBytes());
            assertTrue(e.reason() == OutOfMemoryException.Reason.REQUEST_TOO_LARGE
                    || e.reason() == OutOfMemoryException.Reason.LIMIT_REACHED, "reason " + e.reason());
            // The figures travel in the exception's fields; the text may follow an upstream template (PyTorch's names
            // the segment size it tried to obtain rather than the request).
            assertTrue(e.getMessage() != null && e.getMessage().contains("memory"), "a message: " + e.getMessage());
        }
        assertSameIgnoringOomCounters(before, allocator.stats());
        AllocatorInvariants.check(allocator, live);
        long again = allocator.malloc(4096);
        assertNotEquals(0, again, "usable after refusals");
        allocator.free(again);
        allocator.free(keep);
    }

    @Test
    void invalidFreesAreRefusedAndChangeNothing() {
        Allocation a = allocator.allocate(10_000);
        long raw = allocator.malloc(3000);
        LiveSet live = new LiveSet();
        live.add(a.address(), 10_000);
        live.add(raw, 3000);
        AllocatorStats before = allocator.stats();
        MemorySnapshot snapBefore = allocator.snapshot();

        InvalidFreeException unknown = assertThrows(InvalidFreeException.class, () -> allocator.free(raw + 512));
        assertEquals(InvalidFreeException.Reason.UNKNOWN_ADDRESS, unknown.reason());
        assertThrows(InvalidFreeException.class, () -> allocator.free(0x1000L));
        assertThrows(InvalidFreeException.class, () -> allocator.recordStream(raw + 512, DeviceStream.DEFAULT));
        assertEquals(before, allocator.stats());
        assertEquals(snapBefore.segments(), allocator.snapshot().segments());

        allocator.free(raw);
        live.remove(raw);
        AllocatorStats afterFree = allocator.stats();
        InvalidFreeException twice = assertThrows(InvalidFreeException.class, () -> allocator.free(raw));
        assertTrue(twice.getMessage().contains(Long.toHexString(raw)), twice.getMessage());
        assertEquals(afterFree, allocator.stats());

        a.close();
        live.remove(a.address());
        AllocatorStats afterClose = allocator.stats();
        InvalidFreeException doubleFree = assertThrows(InvalidFreeException.class, a::close);
        assertEquals(InvalidFreeException.Reason.DOUBLE_FREE, doubleFree.reason());
        assertEquals(afterClose, allocator.stats());
        AllocatorInvariants.check(allocator, live);
    }

    @Test
    void aStaleHandleNeverFreesANewerAllocation() {
        Allocation handle = allocator.allocate(4096);
        allocator.free(handle.address());
        LiveSet live = new LiveSet();
        List<Long> newer = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            long a = allocator.malloc(4096);
            newer.add(a);
            live.add(a, 4096);
        }
        AllocatorStats before = allocator.stats();
        InvalidFreeException e = assertThrows(InvalidFreeException.class, handle::close);
        assertEquals(InvalidFreeException.Reason.DOUBLE_FREE, e.reason());
        assertEquals(before, allocator.stats(), "the newer allocations, one possibly at the same address, stay live");
        AllocatorInvariants.check(allocator, live);
        for (long a : newer) {
            allocator.free(a);
        }
    }

    @Test
    void anotherAllocatorsAllocationIsRefused() {
        DeviceMemory otherDevice = openDevice();
        DeviceAllocator other = createAllocator(otherDevice);
        try {
            Allocation foreign = other.allocate(4096);
            AllocatorStats before = allocator.stats();
            InvalidFreeException e = assertThrows(InvalidFreeException.class, () -> allocator.free(foreign));
            assertEquals(InvalidFreeException.Reason.WRONG_ALLOCATOR, e.reason());
            assertFalse(foreign.isFreed());
            assertEquals(before, allocator.stats());
            other.free(foreign);
            assertTrue(foreign.isFreed());
        } finally {
            other.close();
            otherDevice.close();
        }
    }

    @Test
    void tryWithResourcesFrees() {
        try (Allocation a = allocator.allocate(1 << 20); Allocation b = allocator.allocate(123, DeviceStream.DEFAULT)) {
            assertNotEquals(0, a.address());
            assertNotEquals(0, b.address());
            assertSame(allocator, a.allocator());
            assertEquals(2, allocator.stats().activeAllocations());
        }
        assertEquals(0, allocator.stats().activeAllocations());
        assertEquals(0, allocator.stats().requestedBytes());
    }

    @Test
    void allocationsOnAnotherStreamAndRecordStream() {
        DeviceStream s = device.createStream();
        try {
            long a = allocator.malloc(1 << 16, s);
            long b = allocator.malloc(1 << 16);
            allocator.recordStream(b, s);
            allocator.free(a);
            allocator.free(b);
            device.synchronize();
            long c = allocator.malloc(1 << 16, s);
            allocator.free(c);
            LiveSet none = new LiveSet();
            AllocatorInvariants.check(allocator, none);
        } finally {
            device.synchronize();
            allocator.releaseCachedMemory();
            device.destroyStream(s);
        }
    }

    /**
     * Issue 15, defect 11: what a refused allocation may change and what it never changes
     * ({@link DeviceAllocator}'s "What a refusal changes"). With cached memory around, an allocation the device can
     * never serve (more than it has free even after the cache went back) is refused; the live allocations, their
     * addresses and sizes, and every figure about them stay as they were; the cache may shrink (or, with
     * expandable segments, hold pages mapped on the way), and the refusal counts itself.
     */
    @Test
    void aRefusedAllocationMayReleaseTheCacheButNeverTouchesLiveAllocations() {
        LiveSet live = new LiveSet();
        List<Long> cached = new ArrayList<>();
        long total = device.descriptor().totalBytes();
        // Sizes in proportion to the device (devices of a few MiB included): 36 units of 1/128 of it in all.
        long unit = Math.max(4096, total / 128 & -4096);
        for (int i = 0; i < 8; i++) {
            long size = unit * (1 + i);
            long a = allocator.malloc(size);
            if (i % 2 == 0) {
                cached.add(a);
            } else {
                live.add(a, size);
            }
        }
        for (long a : cached) {
            allocator.free(a);
        }
        AllocatorStats before = allocator.stats();
        List<BlockSnapshot> liveBefore = liveBlocks(allocator.snapshot());
        // Never servable: with the live bytes held, the device cannot have this much free, cache released or not.
        long request = total - before.allocatedBytes() / 2;
        OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> allocator.malloc(request));
        assertEquals(request, e.requestedBytes());
        AllocatorStats after = allocator.stats();
        for (String never : new String[] {"allocation_count", "free_count", "active_allocations",
                "peak_active_allocations", "allocated_bytes", "peak_allocated_bytes", "requested_bytes",
                "peak_requested_bytes", "largest_allocation", "limit_bytes"}) {
            assertEquals(before.asMap().get(never), after.asMap().get(never), never + " never changes on a refusal");
        }
        assertEquals(before.outOfMemoryErrors() + 1, after.outOfMemoryErrors(), "the refusal counts itself");
        assertEquals(liveBefore, liveBlocks(allocator.snapshot()), "the live blocks, addresses and sizes stay");
        assertTrue(after.reservedBytes() >= after.allocatedBytes(), "the cache is what may change");
        AllocatorInvariants.check(allocator, live);
        long again = allocator.malloc(unit);
        live.add(again, unit);
        AllocatorInvariants.check(allocator, live);
        for (long a : live.asMap().keySet()) {
            allocator.free(a);
        }
        AllocatorInvariants.check(allocator, new LiveSet());
    }

    private static List<BlockSnapshot> liveBlocks(MemorySnapshot snapshot) {
        List<BlockSnapshot> blocks = new ArrayList<>();
        for (SegmentSnapshot s : snapshot.segments()) {
            for (BlockSnapshot b : s.blocks()) {
                if (b.state() == BlockState.ALLOCATED) {
                    blocks.add(b);
                }
            }
        }
        blocks.sort(Comparator.comparingLong(BlockSnapshot::address));
        return blocks;
    }

    /**
     * Issue 15, defect 2: {@code recordStream} refuses, with a typed error and changing nothing, a stream the device
     * never created and one it destroyed; the allocation stays freeable.
     */
    @Test
    void recordStreamRefusesAStreamTheDeviceDoesNotHave() {
        long a = allocator.malloc(1 << 16);
        DeviceStream dead = device.createStream();
        device.destroyStream(dead);
        AllocatorStats before = allocator.stats();
        MemorySnapshot snapBefore = allocator.snapshot();
        DeviceStream madeUp = new DeviceStream(0x7A11_0000_0000_0001L);
        UnknownStreamException foreign = assertThrows(UnknownStreamException.class,
                () -> allocator.recordStream(a, madeUp));
        assertEquals(madeUp, foreign.stream());
        assertTrue(foreign.getMessage().contains(madeUp.toString()), foreign.getMessage());
        assertThrows(UnknownStreamException.class, () -> allocator.recordStream(a, dead));
        assertThrows(InvalidFreeException.class, () -> allocator.recordStream(a + 512, madeUp),
                "an unknown address is reported first");
        allocator.recordStream(0, madeUp);
        assertEquals(before, allocator.stats());
        assertEquals(snapBefore.segments(), allocator.snapshot().segments());
        allocator.recordStream(a, DeviceStream.DEFAULT);
        allocator.free(a);
        assertEquals(0, allocator.stats().activeAllocations());
        AllocatorInvariants.check(allocator, new LiveSet());
    }

    /**
     * Issue 15, defect 2 (and 3 for expandable segments): a stream destroyed after {@code recordStream}, or after an
     * allocation on it, never makes an allocation unfreeable nor poisons the cache release; the frees wait for the
     * device instead of recording an event on the dead stream.
     */
    @Test
    void aStreamDestroyedAfterUseNeverStrandsMemory() {
        DeviceStream s = device.createStream();
        long used = allocator.malloc(1 << 16);
        long onS = allocator.malloc(3 << 20, s);
        long small = allocator.malloc(4096, s);
        allocator.recordStream(used, s);
        device.destroyStream(s);
        allocator.free(used);
        allocator.free(onS);
        allocator.free(small);
        AllocatorStats after = allocator.stats();
        assertEquals(0, after.activeAllocations());
        assertEquals(0, after.requestedBytes());
        allocator.releaseCachedMemory();
        allocator.releaseCachedMemory();
        if (releasesEverythingWhenIdle()) {
            assertEquals(0, allocator.stats().reservedBytes(), "the dead stream's cached memory went back too");
        }
        long again = allocator.malloc(3 << 20);
        LiveSet live = new LiveSet();
        live.add(again, 3 << 20);
        AllocatorInvariants.check(allocator, live);
        allocator.free(again);
    }

    @Test
    void peakStatsReset() {
        long a = allocator.malloc(1 << 20);
        long b = allocator.malloc(2 << 20);
        allocator.free(b);
        AllocatorStats s = allocator.stats();
        assertTrue(s.peakRequestedBytes() >= (3 << 20));
        allocator.resetPeakStats();
        AllocatorStats r = allocator.stats();
        assertEquals(r.requestedBytes(), r.peakRequestedBytes());
        assertEquals(r.allocatedBytes(), r.peakAllocatedBytes());
        assertEquals(r.reservedBytes(), r.peakReservedBytes());
        assertEquals(r.activeAllocations(), r.peakActiveAllocations());
        allocator.free(a);
    }

    @Test
    void longRandomWorkloadKeepsEveryInvariant() {
        runRandomWorkload(0xDEA110CL, workloadOperations());
    }

    @Test
    void anotherSeed() {
        runRandomWorkload(42, workloadOperations() / 4);
    }

    /** Random sizes (log-uniform up to {@link #maxRequest()}), frees of random live allocations, checks throughout. */
    protected void runRandomWorkload(long seed, int operations) {
        Random r = new Random(seed);
        LiveSet live = new LiveSet();
        Map<Long, Byte> patterns = new HashMap<>();
        List<Long> order = new ArrayList<>();
        DeviceStream side = device.createStream();
        long logMax = 64L - Long.numberOfLeadingZeros(maxRequest());
        for (int op = 0; op < operations; op++) {
            boolean allocate = order.isEmpty() || r.nextInt(100) < 55;
            if (allocate) {
                long size = 1 + r.nextLong(1L << (1 + r.nextInt((int) logMax)));
                size = Math.min(size, maxRequest());
                DeviceStream stream = r.nextInt(8) == 0 ? side : DeviceStream.DEFAULT;
                long address;
                try {
                    address = allocator.malloc(size, stream);
                } catch (OutOfMemoryException e) {
                    AllocatorInvariants.check(allocator, live);
                    continue;
                }
                live.add(address, size);
                order.add(address);
                byte p = (byte) r.nextInt();
                patterns.put(address, p);
                HostPatterns.write(device, address, size, p);
                if (r.nextInt(50) == 0) {
                    allocator.recordStream(address, r.nextBoolean() ? side : DeviceStream.DEFAULT);
                }
            } else {
                int index = r.nextInt(order.size());
                long address = order.get(index);
                order.set(index, order.get(order.size() - 1));
                order.remove(order.size() - 1);
                long size = live.asMap().get(address);
                HostPatterns.assertIntact(device, address, size, patterns.remove(address));
                live.remove(address);
                allocator.free(address);
            }
            if (op % 97 == 0) {
                AllocatorInvariants.check(allocator, live);
            }
            if (op % 5000 == 4999) {
                device.synchronize();
                allocator.releaseCachedMemory();
                AllocatorInvariants.check(allocator, live);
            }
        }
        AllocatorInvariants.check(allocator, live);
        for (long address : order) {
            HostPatterns.assertIntact(device, address, live.asMap().get(address), patterns.get(address));
            allocator.free(address);
        }
        device.synchronize();
        allocator.releaseCachedMemory();
        AllocatorStats end = allocator.stats();
        assertEquals(0, end.activeAllocations());
        assertEquals(0, end.allocatedBytes());
        assertEquals(0, end.requestedBytes());
        if (releasesEverythingWhenIdle()) {
            assertEquals(0, end.reservedBytes(), "nothing reserved after releasing the cache with nothing live");
        }
        AllocatorInvariants.check(allocator, new LiveSet());
        device.destroyStream(side);
    }

    @Test
    void concurrentThreadsNeverGetOverlappingMemory() throws Exception {
        int threads = 4;
        // Every live allocation of every thread, checked for overlap as it is added (works without a host view).
        LiveSet shared = new LiveSet();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<long[]>>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                futures.add(pool.submit(() -> {
                    Random r = new Random(seed);
                    List<long[]> mine = new ArrayList<>();
                    for (int i = 0; i < 3000; i++) {
                        if (mine.isEmpty() || r.nextBoolean()) {
                            long size = 1 + r.nextLong(maxRequest() / 4);
                            long a;
                            try {
                                a = allocator.malloc(size);
                            } catch (OutOfMemoryException e) {
                                continue;
                            }
                            synchronized (shared) {
                                shared.add(a, size);
                            }
                            byte p = (byte) (seed * 64 + i);
                            HostPatterns.write(device, a, size, p);
                            mine.add(new long[] {a, size, p});
                        } else {
                            long[] k = mine.remove(r.nextInt(mine.size()));
                            HostPatterns.assertIntact(device, k[0], k[1], (byte) k[2]);
                            synchronized (shared) {
                                shared.remove(k[0]);
                            }
                            allocator.free(k[0]);
                        }
                    }
                    return mine;
                }));
            }
            List<long[]> remaining = new ArrayList<>();
            for (Future<List<long[]>> f : futures) {
                remaining.addAll(f.get(120, TimeUnit.SECONDS));
            }
            AllocatorInvariants.check(allocator, shared);
            for (long[] k : remaining) {
                HostPatterns.assertIntact(device, k[0], k[1], (byte) k[2]);
                allocator.free(k[0]);
            }
            AllocatorInvariants.check(allocator, new LiveSet());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void closeReleasesEverything() {
        long freeBefore = device.memoryInfo().freeBytes();
        DeviceAllocator fresh = createAllocator(device);
        Allocation handle = fresh.allocate(1 << 20);
        fresh.malloc(5 << 20);
        fresh.malloc(700);
        long freeAfter = fresh.malloc(1);
        fresh.free(freeAfter);
        fresh.close();
        assertTrue(fresh.isClosed());
        fresh.close();
        assertEquals(freeBefore, device.memoryInfo().freeBytes(), "every byte went back to the device");
        assertThrows(IllegalStateException.class, () -> fresh.malloc(4096));
        handle.close();
        assertTrue(handle.isFreed());
    }

    /**
     * After {@code close()} returned everything, stats describe what the allocator holds: nothing live, nothing
     * reserved, nothing cached. Peaks and the cumulative counts of calls made stay (issue 15, defect 4: {@code caching}
     * went on reporting the live and reserved bytes of before the close).
     */
    @Test
    void statsAfterCloseDescribeNothingHeld() {
        DeviceAllocator fresh = createAllocator(device);
        Allocation handle = fresh.allocate(1 << 20);
        fresh.malloc(5 << 20);
        fresh.malloc(700);
        fresh.free(fresh.malloc(3000));   // something cached, where the allocator caches
        AllocatorStats open = fresh.stats();
        assertTrue(open.reservedBytes() > 0 && open.activeAllocations() == 3, open::toString);
        fresh.close();
        AllocatorStats closed = fresh.stats();
        assertEquals(0, closed.activeAllocations(), closed::toString);
        assertEquals(0, closed.allocatedBytes(), closed::toString);
        assertEquals(0, closed.requestedBytes(), closed::toString);
        assertEquals(0, closed.reservedBytes(), closed::toString);
        assertEquals(0, closed.cachedBytes(), closed::toString);
        assertEquals(0, closed.largestFreeBlock(), closed::toString);
        assertEquals(open.peakActiveAllocations(), closed.peakActiveAllocations(), "peaks stay");
        assertEquals(open.peakAllocatedBytes(), closed.peakAllocatedBytes(), "peaks stay");
        assertEquals(open.peakRequestedBytes(), closed.peakRequestedBytes(), "peaks stay");
        assertEquals(open.peakReservedBytes(), closed.peakReservedBytes(), "peaks stay");
        assertEquals(open.allocationCount(), closed.allocationCount(), "counts of calls made stay");
        assertEquals(open.largestAllocation(), closed.largestAllocation());
        assertEquals(open.deviceMallocs(), closed.deviceMallocs());
        assertTrue(closed.deviceFrees() > open.deviceFrees(), "close gave memory back to the device");
        assertTrue(closed.freeCount() >= open.freeCount());
        MemorySnapshot snapshot = fresh.snapshot();
        assertTrue(snapshot.segments().isEmpty(), () -> "segments after close: " + snapshot.segments());
        assertEquals(closed, snapshot.stats(), "the snapshot's stats are the stats");
        handle.close();
        assertEquals(closed, fresh.stats(), "closing a handle after its allocator closed changes nothing");
    }

    /** Rounds of {@link #handleClosesRacingTheAllocatorsCloseNeverThrow()}, each a fresh allocator. */
    protected int closeRaceRounds() {
        return 300;
    }

    /**
     * Handles closed while their allocator closes, all threads released by one barrier: no handle's close throws (the
     * first close of a handle after its allocator closed does nothing), every byte goes back to the device exactly
     * once, and a second close of each handle is {@code DOUBLE_FREE} (issue 15, defect 5: a handle that saw the
     * allocator open, then reached its lock after the close, threw {@link IllegalStateException}).
     */
    @Test
    void handleClosesRacingTheAllocatorsCloseNeverThrow() throws Exception {
        int handles = 6;
        long freeBefore = device.memoryInfo().freeBytes();
        ExecutorService pool = Executors.newFixedThreadPool(handles + 1);
        try {
            for (int round = 0; round < closeRaceRounds(); round++) {
                DeviceAllocator fresh = createAllocator(device);
                List<Allocation> open = new ArrayList<>();
                for (int i = 0; i < handles; i++) {
                    open.add(fresh.allocate(Math.min(maxRequest(), 4096L << (2 * i))));   // 4 KiB to 4 MiB
                }
                CyclicBarrier start = new CyclicBarrier(handles + 1);
                List<Future<?>> racers = new ArrayList<>();
                // Each racer waits a different few spins after the barrier, so that over the rounds the handles'
                // closes land before, during and after the allocator's.
                Random jitter = new Random(round);
                List<AutoCloseable> closing = new ArrayList<>();
                closing.add(fresh);
                closing.addAll(open);
                for (AutoCloseable c : closing) {
                    int delay = jitter.nextInt(64);
                    racers.add(pool.submit(() -> {
                        start.await();
                        spin(delay);
                        c.close();
                        return null;
                    }));
                }
                for (Future<?> racer : racers) {
                    try {
                        racer.get(30, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        throw new AssertionError("round " + round + ": a close threw " + e.getCause(), e.getCause());
                    }
                }
                assertTrue(fresh.isClosed());
                for (Allocation handle : open) {
                    assertTrue(handle.isFreed(), "round " + round);
                    InvalidFreeException twice = assertThrows(InvalidFreeException.class, handle::close);
                    assertEquals(InvalidFreeException.Reason.DOUBLE_FREE, twice.reason());
                }
                assertEquals(0, fresh.stats().activeAllocations(), "round " + round);
                assertEquals(freeBefore, device.memoryInfo().freeBytes(), "round " + round + ": every byte went back");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static void spin(int times) {
        for (int i = 0; i < times; i++) {
            Thread.onSpinWait();
        }
    }

    private static void assertSameIgnoringOomCounters(AllocatorStats a, AllocatorStats b) {
        Map<String, Long> x = new HashMap<>(a.asMap());
        Map<String, Long> y = new HashMap<>(b.asMap());
        for (String k : new String[] {"out_of_memory_errors", "allocation_retries"}) {
            x.remove(k);
            y.remove(k);
        }
        assertEquals(x, y, "stats other than OOM and retry counters are unchanged");
    }
}
