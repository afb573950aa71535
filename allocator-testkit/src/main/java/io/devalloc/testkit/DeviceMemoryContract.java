package io.devalloc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link DeviceMemory} adapter passes. Subclass it in the adapter's tests and return a fresh
 * device from {@link #openDevice()}; the suite closes it. Devices with a CPU view ({@link DeviceMemory#hostView})
 * also get their memory written and read back; devices with virtual memory get it exercised.
 */
public abstract class DeviceMemoryContract {

    /** For subclasses: one per device adapter under test. */
    protected DeviceMemoryContract() {
    }

    /** A fresh device, with at least {@link #testCapacityFloor()} bytes of capacity. */
    protected abstract DeviceMemory openDevice();

    /** The smallest capacity the suite assumes (it allocates at most a quarter of it at once). */
    protected long testCapacityFloor() {
        return 64L << 20;
    }

    /**
     * Arms {@link #device} so that the next {@link VirtualMemory#unmap} it accepts fails in the device: it throws a
     * {@link DeviceException}, and only that one call fails. Called only for devices with virtual memory, after a
     * range was mapped. Every such adapter owes the port's duty that a failed unmap leaves its range unmapped, so
     * every adapter with virtual memory overrides this: with a hook into its fault injection or its (simulated)
     * driver, or with {@link UnmapFailure#impossible} and why its unmap cannot fail (the check is then skipped,
     * naming the reason). The default fails the check, so that a new adapter cannot pass the suite without an answer.
     */
    protected UnmapFailure armUnmapFailure() {
        return fail("a device with virtual memory must say how its unmap is made to fail: override armUnmapFailure()"
                + " with a hook into its fault injection, or return UnmapFailure.impossible(why)");
    }

    protected DeviceMemory device;

    @BeforeEach
    void openTheDevice() {
        device = openDevice();
    }

    @AfterEach
    void closeTheDevice() {
        device.close();
    }

    @Test
    void describesItself() {
        assertNotEquals("", device.descriptor().provider());
        assertTrue(device.descriptor().totalBytes() > 0, "total bytes");
        assertEquals(1, Long.bitCount(device.alignment()), "alignment is a power of two");
        MemoryInfo info = device.memoryInfo();
        assertEquals(device.descriptor().totalBytes(), info.totalBytes());
        assertTrue(info.freeBytes() <= info.totalBytes());
    }

    @Test
    void mallocReturnsAlignedDisjointRangesAndFreeGivesThemBack() {
        long before = device.memoryInfo().freeBytes();
        long[] sizes = {1, 255, 256, 257, 4096, 65_537, 1 << 20, 3 << 20};
        long[] addresses = new long[sizes.length];
        LiveSet live = new LiveSet();
        for (int i = 0; i < sizes.length; i++) {
            addresses[i] = device.malloc(sizes[i]);
            assertNotEquals(DeviceMemory.NULL, addresses[i], "malloc(" + sizes[i] + ")");
            assertEquals(0, addresses[i] % device.alignment(), "alignment of " + Long.toHexString(addresses[i]));
            live.add(addresses[i], sizes[i]);
        }
        long total = 0;
        for (long s : sizes) {
            total += s;
        }
        assertTrue(device.memoryInfo().freeBytes() <= before - total, "free memory went down by at least the sizes");
        for (int i = 0; i < sizes.length; i++) {
            writeAndCheck(addresses[i], sizes[i], i);
        }
        for (long a : addresses) {
            device.free(a);
        }
        assertEquals(before, device.memoryInfo().freeBytes(), "every byte came back");
    }

    @Test
    void badSizesAreRefusedAndChangeNothing() {
        long before = device.memoryInfo().freeBytes();
        assertThrows(IllegalArgumentException.class, () -> device.malloc(0));
        assertThrows(IllegalArgumentException.class, () -> device.malloc(-1));
        assertThrows(IllegalArgumentException.class, () -> device.malloc(Long.MIN_VALUE));
        assertEquals(DeviceMemory.NULL, device.malloc(Long.MAX_VALUE), "Long.MAX_VALUE cannot be served");
        assertEquals(DeviceMemory.NULL, device.malloc(Long.MAX_VALUE - 1), "no overflow when rounding");
        assertEquals(DeviceMemory.NULL, device.malloc(device.descriptor().totalBytes() + 1), "more than the device");
        assertEquals(before, device.memoryInfo().freeBytes());
        long a = device.malloc(4096);
        assertNotEquals(DeviceMemory.NULL, a, "still usable after refusals");
        device.free(a);
    }

    @Test
    void badFreesAreRefusedAndChangeNothing() {
        long a = device.malloc(8192);
        long before = device.memoryInfo().freeBytes();
        InvalidFreeException unknown =
                assertThrows(InvalidFreeException.class, () -> device.free(a + device.alignment()));
        assertEquals(InvalidFreeException.Reason.UNKNOWN_ADDRESS, unknown.reason());
        assertThrows(InvalidFreeException.class, () -> device.free(0x1234_5600L));
        assertEquals(before, device.memoryInfo().freeBytes());
        device.free(a);
        InvalidFreeException twice = assertThrows(InvalidFreeException.class, () -> device.free(a));
        assertTrue(twice.getMessage().contains(Long.toHexString(a)),
                "message names the address: " + twice.getMessage());
        long b = device.malloc(8192);
        assertNotEquals(DeviceMemory.NULL, b);
        device.free(b);
    }

    @Test
    void exhaustionReturnsNullAndLeavesTheDeviceUsable() {
        long total = device.descriptor().totalBytes();
        if (total > (4L << 30)) {
            // Exhausting a large real device would take its memory from everyone; a capacity test for such devices
            // belongs to the adapter's own tests, with a small configured capacity.
            return;
        }
        List<Long> held = new ArrayList<>();
        long chunk = Math.max(device.alignment(), total / 8);
        long a;
        while ((a = device.malloc(chunk)) != DeviceMemory.NULL) {
            held.add(a);
            assertTrue(held.size() <= 16, "a device of " + total + " bytes handed out more than 16 x " + chunk);
        }
        for (long h : held) {
            device.free(h);
        }
        long again = device.malloc(chunk);
        assertNotEquals(DeviceMemory.NULL, again, "memory came back after freeing");
        device.free(again);
    }

    @Test
    void streamsAndEvents() {
        DeviceStream s = device.createStream();
        assertFalse(s.isDefault());
        DeviceStream t = device.createStream();
        assertNotEquals(s, t);
        DeviceEvent e = device.createEvent();
        assertTrue(device.isEventComplete(e), "an event never recorded counts as complete");
        device.recordEvent(e, s);
        device.synchronizeEvent(e);
        assertTrue(device.isEventComplete(e), "complete after synchronizing on it");
        device.recordEvent(e, DeviceStream.DEFAULT);
        device.synchronize();
        assertTrue(device.isEventComplete(e), "complete after a device synchronize");
        device.destroyEvent(e);
        assertThrows(IllegalArgumentException.class, () -> device.isEventComplete(e), "destroyed event");
        assertThrows(IllegalArgumentException.class, () -> device.destroyStream(DeviceStream.DEFAULT));
        assertTrue(device.hasStream(DeviceStream.DEFAULT), "the default stream is always live");
        assertTrue(device.hasStream(s));
        device.destroyStream(s);
        assertFalse(device.hasStream(s), "a destroyed stream is no longer the device's");
        assertTrue(device.hasStream(t));
        device.destroyStream(t);
        assertThrows(IllegalArgumentException.class, () -> device.destroyStream(s), "destroyed twice");
        assertFalse(device.hasStream(new DeviceStream(0x7A11_0000_0000_0001L)), "a handle it never made");
    }

    @Test
    void virtualMemoryWhenOffered() {
        Optional<VirtualMemory> vm = device.virtualMemory();
        if (vm.isEmpty()) {
            return;
        }
        VirtualMemory v = vm.get();
        long g = v.granularity();
        assertEquals(1, Long.bitCount(g));
        long freeBefore = device.memoryInfo().freeBytes();
        long base = v.reserve(8 * g);
        assertNotEquals(DeviceMemory.NULL, base);
        assertEquals(0, base % g);
        assertEquals(freeBefore, device.memoryInfo().freeBytes(), "reserving costs no memory");
        assertTrue(v.map(base, 2 * g));
        assertTrue(v.map(base + 4 * g, g));
        assertEquals(3 * g, v.mappedBytes());
        assertEquals(freeBefore - 3 * g, device.memoryInfo().freeBytes());
        assertThrows(IllegalArgumentException.class, () -> v.map(base + g, g), "already mapped");
        assertThrows(IllegalArgumentException.class, () -> v.map(base + 1, g), "misaligned");
        assertThrows(IllegalArgumentException.class, () -> v.map(base + 7 * g, 2 * g), "past the reservation");
        assertThrows(IllegalArgumentException.class, () -> v.unmap(base + 2 * g, g), "not mapped");
        assertThrows(IllegalArgumentException.class, () -> v.release(base), "still mapped");
        v.unmap(base, 2 * g);
        v.unmap(base + 4 * g, g);
        assertEquals(0, v.mappedBytes());
        v.release(base);
        assertThrows(IllegalArgumentException.class, () -> v.release(base), "released twice");
        assertEquals(freeBefore, device.memoryInfo().freeBytes());
    }

    /**
     * Any whole-granule part of a range mapped in one call can be unmapped, and one unmap may span ranges that
     * different calls mapped: the caching allocator maps a run of pages at once and unmaps parts of it later, as
     * PyTorch's expandable segments do.
     */
    @Test
    void virtualMemoryUnmapsAnyWholeGranulePartOfAMapping() {
        onReservation(8, 6, true, (v, g, freeBefore, base) -> {
            long first = base + g; // granules 1..6 of 8, so that the unmapped space lies on both sides

            assertTrue(v.map(first, 6 * g), "6 granules in one call");
            assertMapped(v, 6 * g, freeBefore, "after mapping 6 granules");

            v.unmap(first + 2 * g, 2 * g);
            assertMapped(v, 4 * g, freeBefore, "after unmapping the middle two");

            v.unmap(first, g);
            assertMapped(v, 3 * g, freeBefore, "after unmapping the first");

            // Now granule 0 is unmapped, 1 mapped, 2 and 3 unmapped, 4 and 5 mapped.
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first, 2 * g), "the first granule is unmapped");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first + g, 3 * g), "a hole after a mapped one");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first + 3 * g, 2 * g), "one unmapped, one not");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first, 6 * g), "the whole first mapping");
            assertThrows(IllegalArgumentException.class, () -> v.map(first + g, 2 * g), "overlaps a mapped granule");
            assertMapped(v, 3 * g, freeBefore, "after the refusals");

            assertTrue(v.map(first + 2 * g, 2 * g), "the middle two again, in one call, between mapped granules");
            assertMapped(v, 5 * g, freeBefore, "after mapping the middle two again");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first, 6 * g), "the first granule is unmapped");
            assertMapped(v, 5 * g, freeBefore, "after the refusal");

            v.unmap(first + g, 5 * g);
            assertMapped(v, 0, freeBefore, "after one unmap spanning both calls' granules");
        });
    }

    /**
     * A map in pieces ({@link VirtualMemory#map(long, long, long)}) is unmapped in whole pieces only, as on CUDA,
     * where a piece is one physical handle: a range that cuts a piece is refused and changes nothing, whole pieces go
     * whichever calls mapped them, and piece sizes that are not a granule multiple dividing the range are refused.
     */
    @Test
    void virtualMemoryUnmapsWholePiecesOnly() {
        onReservation(10, 6, true, (v, g, freeBefore, base) -> {
            long first = base + g; // granules 1..8 of 10 are used, so that the unmapped space lies on both sides

            assertThrows(IllegalArgumentException.class, () -> v.map(first, 6 * g, 0), "a piece of 0 bytes");
            assertThrows(IllegalArgumentException.class, () -> v.map(first, 6 * g, -2 * g), "a negative piece");
            assertThrows(IllegalArgumentException.class, () -> v.map(first, 6 * g, g + 1), "not a granule multiple");
            assertThrows(IllegalArgumentException.class, () -> v.map(first, 6 * g, 4 * g), "does not divide the range");
            assertThrows(IllegalArgumentException.class, () -> v.map(first, 6 * g, 12 * g), "larger than the range");
            assertMapped(v, 0, freeBefore, "after refused piece sizes");

            assertTrue(v.map(first, 6 * g, 2 * g), "6 granules as 3 pieces of 2");
            assertMapped(v, 6 * g, freeBefore, "after mapping 3 pieces");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first, g), "half of the first piece");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first + 2 * g, g), "half of the middle piece");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first + 3 * g, g), "the other half");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first + g, 2 * g), "straddles two pieces");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first, 5 * g), "ends inside the last piece");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first + g, 5 * g), "starts inside the first");
            assertMapped(v, 6 * g, freeBefore, "after the refusals");

            v.unmap(first + 2 * g, 2 * g);
            assertMapped(v, 4 * g, freeBefore, "after unmapping the middle piece");

            // Granules 0-1 and 4-5 (of first) are pieces of the first call; 6-7 becomes one piece of a second call.
            assertTrue(v.map(first + 6 * g, 2 * g, 2 * g), "a piece right after the first call's last");
            assertMapped(v, 6 * g, freeBefore, "after the second call");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first + 4 * g, 3 * g),
                    "ends inside the second call's piece: adjacent pieces do not merge");
            v.unmap(first + 4 * g, 4 * g);
            assertMapped(v, 2 * g, freeBefore, "after one unmap spanning pieces of both calls");

            assertTrue(v.map(first + 2 * g, 2 * g, 2 * g), "the middle piece again");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(first + g, 2 * g), "straddles old and new");
            v.unmap(first, 4 * g);
            assertMapped(v, 0, freeBefore, "after unmapping both");
        });
    }

    /**
     * The port's duty after a failed unmap ({@link VirtualMemory#unmap}): the range counts as unmapped, so that no
     * caller uses it or unmaps it twice. The caching allocator's expandable segments rely on it: after a failed
     * unmap they map the same pages again when they grow, and a range left mapped would be refused then, or leak.
     * Its memory may be lost, so free bytes are not checked until a clean unmap.
     */
    @Test
    void virtualMemoryFailedUnmapLeavesTheRangeUnmapped() {
        onReservation(4, 3, false, (v, g, freeBefore, base) -> {
            assertTrue(v.map(base, 3 * g), "3 granules");
            UnmapFailure failure = armUnmapFailure();
            assumeTrue(failure.willFail(), failure::reason);

            assertThrows(DeviceException.class, () -> v.unmap(base + g, g), "the unmap armed to fail");
            assertEquals(2 * g, v.mappedBytes(), "mapped bytes after the failed unmap: its range counts as unmapped");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(base + g, g),
                    "unmapping the range again: it is no longer mapped");
            assertThrows(IllegalArgumentException.class, () -> v.unmap(base, 3 * g), "a range over the failed one");

            assertTrue(v.map(base + g, g), "the range of the failed unmap maps again");
            assertEquals(3 * g, v.mappedBytes(), "mapped bytes after mapping it again");
            v.unmap(base, 3 * g);
            assertEquals(0, v.mappedBytes(), "mapped bytes after a clean unmap of all three");
        });
    }

    /** A test of a reservation: the virtual memory, its granule, the device's free bytes before, the base. */
    @FunctionalInterface
    private interface ReservationTest {
        void run(VirtualMemory v, long g, long freeBefore, long base);
    }

    /**
     * Runs {@code test} on a reservation of {@code reserved} granules, which it leaves with nothing mapped, then
     * releases the reservation and, with {@code everyByteBack}, checks that the device has every byte back (a test
     * whose unmap failed may have lost memory). A device that offers no virtual memory passes with nothing to check;
     * one with fewer than {@code mapped} granules free skips the test.
     */
    private void onReservation(int reserved, int mapped, boolean everyByteBack, ReservationTest test) {
        Optional<VirtualMemory> vm = device.virtualMemory();
        if (vm.isEmpty()) {
            return;
        }
        VirtualMemory v = vm.get();
        long g = v.granularity();
        long freeBefore = device.memoryInfo().freeBytes();
        assumeTrue(freeBefore >= mapped * g, () -> "the device has " + freeBefore + " bytes free, fewer than " + mapped
                + " granules of " + g + " bytes");
        long base = v.reserve(reserved * g);
        assertNotEquals(DeviceMemory.NULL, base);
        test.run(v, g, freeBefore, base);
        v.release(base);
        if (everyByteBack) {
            assertEquals(freeBefore, device.memoryInfo().freeBytes());
        }
    }

    private void assertMapped(VirtualMemory v, long mapped, long freeBefore, String when) {
        assertEquals(mapped, v.mappedBytes(), "mapped bytes " + when);
        assertEquals(freeBefore - mapped, device.memoryInfo().freeBytes(), "free bytes " + when);
    }

    @Test
    void concurrentMallocAndFreeNeverOverlap() throws Exception {
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long before = device.memoryInfo().freeBytes();
        long maxSize = Math.max(4096, testCapacityFloor() / 64);
        // Every live range of every thread, checked for overlap as it is added.
        LiveSet shared = new LiveSet();
        try {
            List<Future<List<long[]>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                results.add(pool.submit(() -> {
                    Random r = new Random(seed);
                    List<long[]> kept = new ArrayList<>();
                    for (int i = 0; i < 400; i++) {
                        long size = 1 + r.nextLong(maxSize);
                        long a = device.malloc(size);
                        if (a == DeviceMemory.NULL) {
                            continue;
                        }
                        synchronized (shared) {
                            shared.add(a, size);
                        }
                        int salt = seed * 1000 + i;
                        write(a, size, salt);
                        kept.add(new long[] {a, size, salt});
                        if (kept.size() > 8 || r.nextBoolean()) {
                            long[] k = kept.remove(r.nextInt(kept.size()));
                            // Checked at its free: another thread's overlapping write would show here.
                            check(k[0], k[1], (int) k[2]);
                            synchronized (shared) {
                                shared.remove(k[0]);
                            }
                            device.free(k[0]);
                        }
                    }
                    return kept;
                }));
            }
            List<long[]> everything = new ArrayList<>();
            for (Future<List<long[]>> f : results) {
                everything.addAll(f.get(60, TimeUnit.SECONDS));
            }
            for (long[] k : everything) {
                check(k[0], k[1], (int) k[2]);
                device.free(k[0]);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(before, device.memoryInfo().freeBytes(), "every byte came back");
    }

    @Test
    void closeReleasesEverythingAndIsIdempotent() {
        device.malloc(4096);
        device.malloc(1 << 20);
        device.createStream();
        device.close();
        device.close();
        assertThrows(IllegalStateException.class, () -> device.malloc(4096));
        assertThrows(IllegalStateException.class, () -> device.memoryInfo());
    }

    /** Writes a pattern over the range through the host view, if any, and reads it back. */
    protected void writeAndCheck(long address, long size, int salt) {
        write(address, size, salt);
        check(address, size, salt);
    }

    /** Writes a pattern at the first, middle and last byte through the host view, if any. */
    protected void write(long address, long size, int salt) {
        HostPatterns.write(device, address, size, pattern(salt));
    }

    /** Checks the pattern {@link #write} left, if the device has a host view. */
    protected void check(long address, long size, int salt) {
        HostPatterns.assertIntact(device, address, size, pattern(salt));
    }

    private static byte pattern(int salt) {
        return (byte) (salt * 31 + 7);
    }
}
