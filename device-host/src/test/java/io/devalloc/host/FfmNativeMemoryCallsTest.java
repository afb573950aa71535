package io.devalloc.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.units.ByteSize;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The real libc bindings on this (Linux x86-64) machine. */
class FfmNativeMemoryCallsTest {

    private final FfmNativeMemoryCalls libc = FfmNativeMemoryCalls.link();

    @Test
    void pageSizeIsAPowerOfTwo() {
        assertTrue(libc.pageSize() >= 4096);
        assertEquals(1, Long.bitCount(libc.pageSize()));
    }

    @Test
    @SuppressWarnings("restricted") // viewing raw libc memory is what this test checks
    void allocReturnsAlignedWritableMemory() {
        for (long alignment : new long[] {256, 4096, 65536}) {
            long address = libc.alloc(3 * alignment, alignment);
            assertNotEquals(0, address);
            assertEquals(0, address % alignment);
            MemorySegment m = MemorySegment.ofAddress(address).reinterpret(3 * alignment);
            m.fill((byte) 0x7E);
            assertEquals((byte) 0x7E, m.get(ValueLayout.JAVA_BYTE, 3 * alignment - 1));
            libc.free(address);
        }
    }

    @Test
    void allocReturnsZeroWhenLibcCannotServe() {
        assertEquals(0, libc.alloc(Long.MAX_VALUE & -4096L, 4096), "ENOMEM");
        assertEquals(0, libc.alloc(4096, 3000), "EINVAL: alignment not a power of two");
    }

    @Test
    void mlockAndMunlockReportErrno() {
        long page = libc.pageSize();
        long address = libc.alloc(page, page);
        try {
            assertEquals(0, libc.mlock(address, page));
            assertEquals(0, libc.munlock(address, page));
        } finally {
            libc.free(address);
        }
        // Page 0 is never mapped (vm.mmap_min_addr), so the kernel answers ENOMEM: proves errno is captured.
        assertEquals(NativeMemoryCalls.ENOMEM, libc.mlock(0, page));
        assertEquals(NativeMemoryCalls.ENOMEM, libc.munlock(0, page));
    }

    @Test
    @SuppressWarnings("restricted") // writing through the raw mapping is what this test checks
    void virtualMemoryCallsReserveProtectDiscardAndUnmap() throws IOException {
        assertTrue(libc.supportsVirtualMemory(), "Linux x86-64");
        long page = libc.pageSize();
        long bytes = 16 * page;
        long address = libc.mmapReserve(bytes);
        assertNotEquals(0, address);
        assertEquals(0, address % page);
        assertEquals("---p", Residency.protection(address), "PROT_NONE, private");
        assertEquals(0, Residency.residentPages(address, bytes));

        assertEquals(0, libc.mprotect(address + 4 * page, 2 * page, NativeMemoryCalls.PROT_READ_WRITE));
        assertEquals("rw-p", Residency.protection(address + 4 * page));
        assertEquals("---p", Residency.protection(address + 6 * page));
        MemorySegment m = MemorySegment.ofAddress(address + 4 * page).reinterpret(2 * page);
        m.fill((byte) 0x5C);
        assertEquals(2, Residency.residentPages(address, bytes));

        assertEquals(0, libc.madviseDontNeed(address + 4 * page, 2 * page));
        assertEquals(0, Residency.residentPages(address, bytes), "MADV_DONTNEED gave the pages back");
        assertEquals(0, m.get(ValueLayout.JAVA_BYTE, 0), "and private anonymous pages read zero afterwards");
        assertEquals(0, libc.mprotect(address + 4 * page, 2 * page, NativeMemoryCalls.PROT_NONE));
        assertEquals("---p", Residency.protection(address + 4 * page));

        assertEquals(0, libc.munmap(address, bytes));
    }

    @Test
    void virtualMemoryCallsReportFailures() {
        long page = libc.pageSize();
        assertEquals(0, libc.mmapReserve(1L << 51), "MAP_FAILED: 2 PiB is more than user address space");
        // Page 0 is never mapped (vm.mmap_min_addr): mprotect says ENOMEM, which proves errno is captured.
        assertEquals(NativeMemoryCalls.ENOMEM, libc.mprotect(0, page, NativeMemoryCalls.PROT_READ_WRITE));
        assertEquals(NativeMemoryCalls.EINVAL, libc.munmap(1, page), "misaligned");
        assertEquals(NativeMemoryCalls.EINVAL, libc.madviseDontNeed(1, page), "misaligned");
    }

    @Test
    void mapNoreserveIsKnownPerLinuxArchitecture() {
        assertEquals(0x4000, FfmNativeMemoryCalls.linuxMapNoreserve("amd64"));
        assertEquals(0x4000, FfmNativeMemoryCalls.linuxMapNoreserve("aarch64"));
        assertEquals(0x4000, FfmNativeMemoryCalls.linuxMapNoreserve("riscv64"));
        assertEquals(0x40, FfmNativeMemoryCalls.linuxMapNoreserve("ppc64le"));
        assertEquals(0, FfmNativeMemoryCalls.linuxMapNoreserve("mips64el"), "different flag values: not offered");
        assertEquals(0, FfmNativeMemoryCalls.linuxMapNoreserve("x86"), "32-bit");
    }

    @Test
    void memlockLimitMatchesProcSelfLimits() throws IOException {
        NativeMemoryCalls.MemlockLimit limit = libc.memlockLimit().orElseThrow();
        String line = Files.readAllLines(Path.of("/proc/self/limits")).stream()
                .filter(l -> l.startsWith("Max locked memory")).findFirst().orElseThrow();
        String[] parts = line.substring("Max locked memory".length()).strip().split("\\s+");
        assertEquals(parse(parts[0]), limit.softBytes(), line);
        assertEquals(parse(parts[1]), limit.hardBytes(), line);
    }

    private static long parse(String procValue) {
        return procValue.equals("unlimited") ? NativeMemoryCalls.MemlockLimit.UNLIMITED : Long.parseLong(procValue);
    }

    @Test
    void memlockLimitDescribesItself() {
        NativeMemoryCalls.MemlockLimit limit = new NativeMemoryCalls.MemlockLimit(8 * ByteSize.MiB,
                NativeMemoryCalls.MemlockLimit.UNLIMITED);
        assertEquals("soft 8388608 bytes (8.00 MiB), hard unlimited", limit.describe());
        assertTrue(limit.allows(8 * ByteSize.MiB));
        assertTrue(!limit.allows(8 * ByteSize.MiB + 1));
        assertTrue(new NativeMemoryCalls.MemlockLimit(-1, -1).allows(Long.MAX_VALUE));
    }

    @Test
    void mayExceedTheLimitExactlyWhenCapIpcLockIsEffectiveOrTheLimitIsUnlimited() throws IOException {
        // CAP_IPC_LOCK is capability 14; read it independently of the code under test.
        long capEff = 0;
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("CapEff:")) {
                capEff = Long.parseUnsignedLong(line.substring("CapEff:".length()).strip(), 16);
            }
        }
        boolean hasCapability = (capEff & (1L << 14)) != 0;
        boolean unlimited = libc.memlockLimit().map(l -> l.softBytes() == NativeMemoryCalls.MemlockLimit.UNLIMITED)
                .orElse(false);
        assertEquals(hasCapability || unlimited, libc.mayExceedMemlockLimit(),
                "CapEff=" + Long.toHexString(capEff) + " unlimited=" + unlimited);
    }
}
