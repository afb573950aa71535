package io.devalloc.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.MemoryInfo;
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
