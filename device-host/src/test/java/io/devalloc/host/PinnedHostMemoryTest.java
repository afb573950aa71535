package io.devalloc.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.units.ByteSize;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The pinned device over real libc: the test JVM runs as root with CAP_IPC_LOCK here, so mlock succeeds, and
 * {@code VmLck} in {@code /proc/self/status} shows that the pages really are locked and unlocked.
 */
class PinnedHostMemoryTest {

    @Test
    void pinsAllocationsAndUnpinsThemOnFree() throws IOException {
        NativeMemoryCalls calls = FfmNativeMemoryCalls.link();
        long page = calls.pageSize();
        try (HostMemory device = HostMemory.pinned(calls, 256 * ByteSize.MiB)) {
            assertEquals(DeviceKind.PINNED_HOST, device.descriptor().kind());
            assertEquals("pinned-host", device.descriptor().provider());
            assertEquals("pinned host memory (256.00 MiB)", device.descriptor().name());
            assertEquals(Math.max(256, page), device.alignment());

            long lockedBefore = lockedBytes();
            long bytes = 64 * ByteSize.KiB;
            long address = device.malloc(bytes);
            assertNotEquals(DeviceMemory.NULL, address);
            assertEquals(0, address % page, "pinned allocations are page aligned");
            assertEquals(lockedBefore + bytes, lockedBytes(), "64 KiB more locked");

            MemorySegment view = device.hostView(address, bytes).orElseThrow();
            for (long i = 0; i < bytes; i += 8) {
                view.set(ValueLayout.JAVA_LONG, i, i ^ 0x5A5A_5A5AL);
            }
            for (long i = 0; i < bytes; i += 8) {
                assertEquals(i ^ 0x5A5A_5A5AL, view.get(ValueLayout.JAVA_LONG, i));
            }
            device.free(address);
            assertEquals(lockedBefore, lockedBytes(), "unlocked again");
        }
    }

    @Test
    void smallAllocationsNeverSharePagesSoFreeingOneKeepsTheOtherLocked() throws IOException {
        NativeMemoryCalls calls = FfmNativeMemoryCalls.link();
        long page = calls.pageSize();
        try (HostMemory device = HostMemory.pinned(calls, 16 * ByteSize.MiB)) {
            long lockedBefore = lockedBytes();
            long a = device.malloc(100);
            long b = device.malloc(100);
            assertEquals(0, a % page);
            assertEquals(0, b % page);
            assertTrue(Math.abs(a - b) >= page, "different pages");
            assertEquals(16 * ByteSize.MiB - 2 * page, device.memoryInfo().freeBytes(), "each takes a whole page");
            assertEquals(lockedBefore + 2 * page, lockedBytes());
            device.free(a);
            assertEquals(lockedBefore + page, lockedBytes(), "b's page is still locked");
            device.free(b);
            assertEquals(lockedBefore, lockedBytes());
        }
    }

    @Test
    void closeUnlocksEverything() throws IOException {
        NativeMemoryCalls calls = FfmNativeMemoryCalls.link();
        HostMemory device = HostMemory.pinned(calls, 16 * ByteSize.MiB);
        long lockedBefore = lockedBytes();
        for (int i = 0; i < 5; i++) {
            assertNotEquals(DeviceMemory.NULL, device.malloc(10_000));
        }
        assertTrue(lockedBytes() > lockedBefore);
        device.close();
        assertEquals(lockedBefore, lockedBytes());
        assertThrows(IllegalStateException.class, () -> device.malloc(1));
    }

    @Test
    void capacityStillBoundsPinnedAllocations() {
        NativeMemoryCalls calls = FfmNativeMemoryCalls.link();
        try (HostMemory device = HostMemory.pinned(calls, ByteSize.MiB)) {
            long address = device.malloc(ByteSize.MiB);
            assertNotEquals(DeviceMemory.NULL, address);
            assertEquals(DeviceMemory.NULL, device.malloc(1));
            assertEquals(DeviceMemory.NULL, device.malloc(Long.MAX_VALUE));
            assertEquals(new MemoryInfo(0, ByteSize.MiB), device.memoryInfo());
            device.free(address);
        }
    }

    @Test
    void mappedGranulesAreLockedAndUnlockedBeforeTheyAreUnmapped() throws IOException {
        NativeMemoryCalls calls = FfmNativeMemoryCalls.link();
        long page = calls.pageSize();
        long g = HostVirtualMemory.GRANULARITY;
        HostMemory device = HostMemory.pinned(calls, 64 * ByteSize.MiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        long lockedBefore = lockedBytes();
        long base = vm.reserve(4 * g);
        assertEquals(lockedBefore, lockedBytes(), "reserving locks nothing");

        // One granule at a time: 2 MiB is a quarter of the usual 8 MiB RLIMIT_MEMLOCK.
        assertTrue(vm.map(base, g));
        assertEquals(lockedBefore + g, lockedBytes(), "the granule is locked");
        assertEquals(g / page, Residency.residentPages(base, g), "mlock faulted every page in");
        assertEquals(new MemoryInfo(64 * ByteSize.MiB - g, 64 * ByteSize.MiB), device.memoryInfo());
        MemorySegment view = device.hostView(base, g).orElseThrow();
        for (long i = 0; i < g; i += 8) {
            view.set(ValueLayout.JAVA_LONG, i, ~i);
        }
        for (long i = 0; i < g; i += 8) {
            assertEquals(~i, view.get(ValueLayout.JAVA_LONG, i));
        }

        vm.unmap(base, g);
        assertEquals(lockedBefore, lockedBytes(), "unlocked");
        assertEquals(0, Residency.residentPages(base, g), "and given back");
        assertTrue(vm.map(base + g, g));
        assertTrue(vm.map(base, g));
        MemorySegment again = device.hostView(base, 2 * g).orElseThrow();
        for (long i = 0; i < g; i += 8) {
            assertEquals(0L, again.get(ValueLayout.JAVA_LONG, i), "remapped granule reads zero");
        }
        assertEquals(lockedBefore + 2 * g, lockedBytes());
        vm.unmap(base, g);
        assertEquals(lockedBefore + g, lockedBytes(), "only the other granule stays locked");

        device.close();
        assertEquals(lockedBefore, lockedBytes(), "close drops the locks with the mapping");
    }

    @Test
    void mappingPastRlimitMemlockFailsAsAPinnedMallocDoes() throws IOException {
        NativeMemoryCalls calls = FfmNativeMemoryCalls.link();
        long g = HostVirtualMemory.GRANULARITY;
        NativeMemoryCalls.MemlockLimit limit = calls.memlockLimit().orElseThrow();
        // Enough granules to exceed a bounded soft limit (8 MiB here without CAP_IPC_LOCK: five granules).
        long granules = limit.softBytes() == NativeMemoryCalls.MemlockLimit.UNLIMITED ? 5
                : Math.max(5, limit.softBytes() / g + 1);
        long capacity = (granules + 1) * g;
        try (HostMemory device = HostMemory.pinned(calls, capacity)) {
            VirtualMemory vm = device.virtualMemory().orElseThrow();
            long base = vm.reserve(granules * g);
            long lockedBefore = lockedBytes();
            if (calls.mayExceedMemlockLimit()) {
                // CAP_IPC_LOCK (or an unlimited limit): the limit does not bind, so this is just a map.
                assertTrue(vm.map(base, granules * g));
                assertEquals(lockedBefore + granules * g, lockedBytes());
                vm.unmap(base, granules * g);
            } else {
                DeviceException e = assertThrows(DeviceException.class, () -> vm.map(base, granules * g));
                assertTrue(e.getMessage().contains("RLIMIT_MEMLOCK"), e.getMessage());
                assertTrue(e.getMessage().contains("mapped granules"), e.getMessage());
                assertTrue(e.getMessage().contains("ulimit -l"), e.getMessage());
                assertEquals(0, vm.mappedBytes(), "the refused map was undone");
                assertEquals(new MemoryInfo(capacity, capacity), device.memoryInfo());
                assertEquals(lockedBefore, lockedBytes());
                assertEquals("---p", Residency.protection(base));
                assertThrows(IllegalArgumentException.class, () -> device.hostView(base, 1));
                assertTrue(vm.map(base, g), "a map within the limit still works");
                vm.unmap(base, g);
            }
            assertEquals(lockedBefore, lockedBytes());
            vm.release(base);
        }
    }

    /** {@code VmLck} of this process in bytes: what the kernel counts against RLIMIT_MEMLOCK. */
    static long lockedBytes() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmLck:")) {
                String[] parts = line.substring("VmLck:".length()).strip().split("\\s+");
                return Long.parseLong(parts[0]) * ByteSize.KiB;
            }
        }
        throw new IllegalStateException("/proc/self/status has no VmLck");
    }
}
