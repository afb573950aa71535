package io.devalloc.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.units.ByteSize;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.InvocationTargetException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.api.function.Executable;

/**
 * Host virtual memory over the real kernel: what is mapped can be written and read through
 * {@link DeviceMemory#hostView}, unmapped granules go back to the system ({@code mincore} and the resident set
 * size say so), remapped granules read zero, capacity bounds maps, bad arguments change nothing, and
 * {@code close()} gives the address space back. {@code /proc/self/maps} and {@code mincore} are read independently
 * of the code under test ({@link Residency}).
 */
class HostVirtualMemoryTest {

    private static final long G = 2 * ByteSize.MiB;
    private static final long CAPACITY = 64 * ByteSize.MiB;

    private final NativeMemoryCalls libc = FfmNativeMemoryCalls.link();
    private final long page = libc.pageSize();
    private HostMemory device;
    private VirtualMemory vm;

    @BeforeEach
    void open() {
        device = HostMemory.host(libc, CAPACITY);
        vm = device.virtualMemory().orElseThrow();
    }

    @AfterEach
    void close() {
        device.close();
    }

    @Test
    void offeredOnHostAndPinnedHostWithTwoMiBGranules() {
        assertEquals(G, vm.granularity());
        assertSame(vm, device.virtualMemory().orElseThrow());
        assertEquals(0, vm.mappedBytes());
        try (HostMemory pinned = HostMemory.pinned(libc, 16 * ByteSize.MiB)) {
            assertEquals(G, pinned.virtualMemory().orElseThrow().granularity());
        }
    }

    @Test
    void reservingIsGranuleAlignedAndCostsNoMemoryEvenBeyondTheCapacity() throws IOException {
        long small = vm.reserve(G);
        long big = vm.reserve(64 * ByteSize.GiB);
        assertNotEquals(DeviceMemory.NULL, small);
        assertNotEquals(DeviceMemory.NULL, big, "address space is not capacity: 1000x the device still reserves");
        assertEquals(0, small % G);
        assertEquals(0, big % G);
        assertEquals(new MemoryInfo(CAPACITY, CAPACITY), device.memoryInfo());
        assertEquals(0, vm.mappedBytes());
        assertEquals("---p", Residency.protection(small), "reserved address space is inaccessible");
        assertEquals("---p", Residency.protection(big + 64 * ByteSize.GiB - 1));
        assertEquals(0, Residency.residentPages(small, G));
        assertTrue(small + G <= big || big + 64 * ByteSize.GiB <= small, "disjoint");
        assertEquals(DeviceMemory.NULL, vm.reserve(1L << 51), "mmap fails: 2 PiB is more than user address space");
        assertEquals(DeviceMemory.NULL, vm.reserve(1L << 60), "refused before asking the kernel");
        assertEquals(DeviceMemory.NULL, vm.reserve(Long.MAX_VALUE / G * G), "no overflow adding the slack");
        assertEquals(new MemoryInfo(CAPACITY, CAPACITY), device.memoryInfo());
        vm.release(big);
        vm.release(small);
    }

    @Test
    void mapWriteReadUnmapAndRemapWhichReadsZero() throws IOException {
        long base = vm.reserve(4 * G);
        assertThrows(IllegalArgumentException.class, () -> device.hostView(base, 1), "reserved but not mapped");

        assertTrue(vm.map(base + G, 2 * G));
        assertEquals(2 * G, vm.mappedBytes());
        assertEquals(new MemoryInfo(CAPACITY - 2 * G, CAPACITY), device.memoryInfo());
        assertEquals("rw-p", Residency.protection(base + G));
        assertEquals("rw-p", Residency.protection(base + 3 * G - 1));
        assertEquals("---p", Residency.protection(base));
        assertEquals("---p", Residency.protection(base + 3 * G));

        // One view across both granules: the mapping is contiguous.
        MemorySegment view = device.hostView(base + G, 2 * G).orElseThrow();
        assertEquals(base + G, view.address());
        assertEquals(2 * G, view.byteSize());
        fill(view, 0xC0FFEE);
        check(view, 0xC0FFEE);
        MemorySegment straddling = device.hostView(base + 2 * G - 8, 16).orElseThrow();
        assertEquals(pattern(0xC0FFEE, G - 8), straddling.get(ValueLayout.JAVA_LONG, 0));
        assertEquals(pattern(0xC0FFEE, G), straddling.get(ValueLayout.JAVA_LONG, 8));

        assertThrows(IllegalArgumentException.class, () -> device.hostView(base + G - 1, 2), "starts unmapped");
        assertThrows(IllegalArgumentException.class, () -> device.hostView(base + 2 * G, G + 1), "runs unmapped");
        assertThrows(IllegalArgumentException.class, () -> device.hostView(base + 3 * G, 1), "unmapped granule");
        assertThrows(IllegalArgumentException.class, () -> device.hostView(base + G, 0));
        assertThrows(IllegalArgumentException.class, () -> device.hostView(base + G, Long.MAX_VALUE));

        vm.unmap(base + G, G);
        assertEquals(G, vm.mappedBytes());
        assertEquals(new MemoryInfo(CAPACITY - G, CAPACITY), device.memoryInfo());
        assertEquals("---p", Residency.protection(base + G), "unmapped granules are inaccessible again");
        assertThrows(IllegalArgumentException.class, () -> device.hostView(base + G, 1));
        MemorySegment second = device.hostView(base + 2 * G, G).orElseThrow();
        for (long off = 0; off < G; off += 8) {
            assertEquals(pattern(0xC0FFEE, G + off), second.get(ValueLayout.JAVA_LONG, off), "offset " + off);
        }

        assertTrue(vm.map(base + G, G));
        MemorySegment again = device.hostView(base + G, G).orElseThrow();
        for (long off = 0; off < G; off += 8) {
            assertEquals(0L, again.get(ValueLayout.JAVA_LONG, off), "a remapped granule reads zero at " + off);
        }
        fill(device.hostView(base + G, 2 * G).orElseThrow(), 7);
        check(device.hostView(base + G, 2 * G).orElseThrow(), 7);

        vm.unmap(base + G, 2 * G);
        vm.release(base);
        assertEquals(new MemoryInfo(CAPACITY, CAPACITY), device.memoryInfo());
        assertEquals(0, vm.mappedBytes());
    }

    @Test
    void unmappedMemoryGoesBackToTheSystem(TestReporter reporter) throws IOException {
        long bytes = 64 * ByteSize.MiB;
        try (HostMemory big = HostMemory.host(libc, 256 * ByteSize.MiB)) {
            VirtualMemory v = big.virtualMemory().orElseThrow();
            long base = v.reserve(bytes);
            assertTrue(v.map(base, bytes));
            long pages = bytes / page;
            assertEquals(0, Residency.residentPages(base, bytes), "mapping alone touches nothing");

            long rssMapped = Residency.residentSetBytes();
            MemorySegment view = big.hostView(base, bytes).orElseThrow();
            for (long off = 0; off < bytes; off += page) {
                view.set(ValueLayout.JAVA_LONG, off, off + 1);
            }
            assertEquals(pages, Residency.residentPages(base, bytes), "every written page is in RAM");
            long rssWritten = Residency.residentSetBytes();

            v.unmap(base, bytes);
            assertEquals(0, Residency.residentPages(base, bytes), "no unmapped page is in RAM any more");
            long rssUnmapped = Residency.residentSetBytes();

            Map<String, String> figures = new LinkedHashMap<>();
            figures.put("rss.mapped", Long.toString(rssMapped));
            figures.put("rss.written", Long.toString(rssWritten));
            figures.put("rss.unmapped", Long.toString(rssUnmapped));
            figures.put("rss.summary", "64 MiB region: RSS " + ByteSize.format(rssMapped) + " mapped, "
                    + ByteSize.format(rssWritten) + " after writing every page (+"
                    + ByteSize.format(rssWritten - rssMapped) + "), " + ByteSize.format(rssUnmapped)
                    + " after unmap (-" + ByteSize.format(rssWritten - rssUnmapped) + "); mincore " + pages
                    + " of " + pages + " pages resident after writing, 0 after unmap");
            reporter.publishEntry(figures);
            System.out.println("HostVirtualMemoryTest: " + figures.get("rss.summary"));
            // mincore above is the exact check; the resident set size of the whole JVM moves a little on its own,
            // so it only has to show most of the 64 MiB leaving.
            assertTrue(rssWritten - rssUnmapped >= bytes / 2, figures.toString());

            assertTrue(v.map(base, bytes));
            assertEquals(0, Residency.residentPages(base, bytes), "remapping does not bring the pages back");
            MemorySegment again = big.hostView(base, bytes).orElseThrow();
            for (long off = 0; off < bytes; off += page) {
                assertEquals(0L, again.get(ValueLayout.JAVA_LONG, off), "remapped page at " + off);
            }
            v.unmap(base, bytes);
            v.release(base);
        }
    }

    @Test
    void mapsCountAgainstTheCapacityTogetherWithMallocs() throws IOException {
        long capacity = 8 * ByteSize.MiB;
        try (HostMemory small = HostMemory.host(libc, capacity)) {
            VirtualMemory v = small.virtualMemory().orElseThrow();
            long base = v.reserve(8 * G);
            assertTrue(v.map(base, 3 * G));
            long allocation = small.malloc(ByteSize.MiB);
            assertNotEquals(DeviceMemory.NULL, allocation);
            MemoryInfo full = new MemoryInfo(ByteSize.MiB, capacity);
            assertEquals(full, small.memoryInfo());

            assertFalse(v.map(base + 3 * G, G), "a granule does not fit in the last MiB");
            assertFalse(v.map(base + 3 * G, 5 * G), "nor do five");
            assertEquals(full, small.memoryInfo(), "a refused map changes nothing");
            assertEquals(3 * G, v.mappedBytes());
            assertEquals("---p", Residency.protection(base + 3 * G), "nothing was mprotected");
            assertThrows(IllegalArgumentException.class, () -> small.hostView(base + 3 * G, 1));

            small.free(allocation);
            assertTrue(v.map(base + 3 * G, G), "exactly the rest fits");
            assertEquals(new MemoryInfo(0, capacity), small.memoryInfo());
            assertEquals(DeviceMemory.NULL, small.malloc(1), "and mallocs see the device full");
            assertFalse(v.map(base + 4 * G, G));

            v.unmap(base + G, G);
            assertTrue(v.map(base + 4 * G, G), "an unmap gives the capacity back");
            assertEquals(4 * G, v.mappedBytes());
        }
    }

    @Test
    void badArgumentsThrowAndChangeNothing() throws Throwable {
        long base = vm.reserve(4 * G);
        long other = vm.reserve(2 * G);
        assertTrue(vm.map(base + G, G));
        fill(device.hostView(base + G, G).orElseThrow(), 42);
        Executable unchanged = () -> {
            assertEquals(G, vm.mappedBytes());
            assertEquals(new MemoryInfo(CAPACITY - G, CAPACITY), device.memoryInfo());
            assertEquals("rw-p", Residency.protection(base + G));
            assertEquals("---p", Residency.protection(base));
            assertEquals("---p", Residency.protection(base + 2 * G));
            assertEquals("---p", Residency.protection(other));
            check(device.hostView(base + G, G).orElseThrow(), 42);
        };

        Map<String, Executable> bad = new LinkedHashMap<>();
        bad.put("reserve 0", () -> vm.reserve(0));
        bad.put("reserve negative", () -> vm.reserve(-G));
        bad.put("reserve Long.MIN_VALUE", () -> vm.reserve(Long.MIN_VALUE));
        bad.put("reserve a page", () -> vm.reserve(page));
        bad.put("reserve not a multiple", () -> vm.reserve(G + page));
        bad.put("map misaligned by a byte", () -> vm.map(base + 1, G));
        bad.put("map misaligned by a page", () -> vm.map(base + page, G));
        bad.put("map a size that is not a multiple", () -> vm.map(base, G + page));
        bad.put("map 0 bytes", () -> vm.map(base, 0));
        bad.put("map negative bytes", () -> vm.map(base, -G));
        bad.put("map past the end of the reservation", () -> vm.map(base + 3 * G, 2 * G));
        bad.put("map more than the reservation", () -> vm.map(base, Long.MAX_VALUE / G * G));
        bad.put("map outside every reservation", () -> vm.map(0, G));
        bad.put("map at a negative address", () -> vm.map(-G, G));
        bad.put("map overlapping a mapped granule", () -> vm.map(base, 2 * G));
        bad.put("map a mapped granule again", () -> vm.map(base + G, G));
        bad.put("unmap what was never mapped", () -> vm.unmap(base, G));
        bad.put("unmap a partly mapped range", () -> vm.unmap(base + G, 2 * G));
        bad.put("unmap misaligned", () -> vm.unmap(base + G + page, G));
        bad.put("unmap a size that is not a multiple", () -> vm.unmap(base + G, G - page));
        bad.put("unmap outside every reservation", () -> vm.unmap(0, G));
        bad.put("release with a granule still mapped", () -> vm.release(base));
        bad.put("release an interior address", () -> vm.release(other + G));
        bad.put("release a misaligned address", () -> vm.release(other + page));
        bad.put("release null", () -> vm.release(0));
        bad.put("view unmapped granules", () -> device.hostView(base, G));
        for (Map.Entry<String, Executable> call : bad.entrySet()) {
            assertThrows(IllegalArgumentException.class, call.getValue(), call.getKey());
            unchanged.execute();
        }

        vm.release(other);
        assertThrows(IllegalArgumentException.class, () -> vm.release(other), "released twice");
        assertThrows(IllegalArgumentException.class, () -> vm.map(other, G), "map into a released reservation");
        vm.unmap(base + G, G);
        vm.release(base);
        assertEquals(new MemoryInfo(CAPACITY, CAPACITY), device.memoryInfo());
    }

    @Test
    void closeUnmapsAndReleasesEverything() throws IOException {
        // The real calls, with what the kernel answered each munmap. Whether the ranges are still mapped cannot be
        // asked afterwards: the JVM's own next mmap may land in the address space just given back.
        Map<List<Long>, Integer> munmaps = new ConcurrentHashMap<>();
        NativeMemoryCalls spy = mock(NativeMemoryCalls.class, invocation -> {
            Object result;
            try {
                result = invocation.getMethod().invoke(libc, invocation.getArguments());
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (invocation.getMethod().getName().equals("munmap")) {
                munmaps.put(List.of(invocation.getArgument(0), invocation.getArgument(1)), (Integer) result);
            }
            return result;
        });
        HostMemory d = HostMemory.host(spy, CAPACITY);
        VirtualMemory v = d.virtualMemory().orElseThrow();
        long a = v.reserve(4 * G);
        long b = v.reserve(2 * G);
        long empty = v.reserve(G);
        assertTrue(v.map(a, 2 * G));
        assertTrue(v.map(b + G, G));
        fill(d.hostView(a, 2 * G).orElseThrow(), 1);
        fill(d.hostView(b + G, G).orElseThrow(), 2);
        assertNotEquals(DeviceMemory.NULL, d.malloc(1000));
        assertEquals(2 * G / page, Residency.residentPages(a, 2 * G));

        munmaps.clear();
        d.close();
        assertEquals(Map.of(List.of(a, 4 * G), 0, List.of(b, 2 * G), 0, List.of(empty, G), 0), munmaps,
                "close munmapped exactly the three reservations, whole, and the kernel accepted each");
        verify(spy).munmap(a, 4 * G);
        verify(spy).free(anyLong());

        List<Executable> calls = List.of(() -> v.reserve(G), () -> v.map(a, G), () -> v.unmap(a, G),
                () -> v.release(a), () -> v.mappedBytes(), () -> d.virtualMemory(), () -> d.hostView(a, 1));
        for (Executable call : calls) {
            IllegalStateException e = assertThrows(IllegalStateException.class, call);
            assertTrue(e.getMessage().endsWith("is closed"), e.getMessage());
        }
        assertEquals(G, v.granularity(), "a constant, like the device's alignment");
        d.close();
    }

    @Test
    void reservationsAreIndependent() {
        long a = vm.reserve(2 * G);
        long b = vm.reserve(2 * G);
        assertTrue(vm.map(a, 2 * G));
        assertTrue(vm.map(b, 2 * G));
        fill(device.hostView(a, 2 * G).orElseThrow(), 10);
        fill(device.hostView(b, 2 * G).orElseThrow(), 20);
        if (a + 2 * G == b || b + 2 * G == a) {
            // The kernel may place them back to back; a view still must not span two reservations.
            long low = Math.min(a, b);
            assertThrows(IllegalArgumentException.class, () -> device.hostView(low + 2 * G - 8, 16));
        }
        vm.unmap(a, 2 * G);
        check(device.hostView(b, 2 * G).orElseThrow(), 20);
        assertTrue(vm.map(a, G));
        assertEquals(0L, device.hostView(a, 8).orElseThrow().get(ValueLayout.JAVA_LONG, 0));
        vm.unmap(a, G);
        vm.unmap(b, 2 * G);
        vm.release(a);
        vm.release(b);
    }

    private static long pattern(long seed, long offset) {
        return seed * 0x9E37_79B9L ^ offset;
    }

    private static void fill(MemorySegment view, long seed) {
        for (long off = 0; off < view.byteSize(); off += 8) {
            view.set(ValueLayout.JAVA_LONG, off, pattern(seed, off));
        }
    }

    private static void check(MemorySegment view, long seed) {
        for (long off = 0; off < view.byteSize(); off += 8) {
            long value = view.get(ValueLayout.JAVA_LONG, off);
            if (value != pattern(seed, off)) {
                throw new AssertionError("at offset " + off + ": expected " + Long.toHexString(pattern(seed, off))
                        + ", found " + Long.toHexString(value));
            }
        }
    }
}
