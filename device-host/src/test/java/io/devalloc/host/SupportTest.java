package io.devalloc.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import io.devalloc.api.units.ByteSize;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link SystemMemory} and {@link MemlockAdvice}. */
class SupportTest {

    @TempDir
    Path dir;

    @Test
    void memTotalIsReadInKiB() throws IOException {
        Path meminfo = Files.writeString(dir.resolve("meminfo"),
                "MemFree:         1000 kB\nMemTotal:       24731708 kB\nBuffers: 1 kB\n");
        assertEquals(24731708L * 1024, SystemMemory.memTotal(meminfo));
    }

    @Test
    void missingOrMalformedMemTotalIsMinusOne() throws IOException {
        assertEquals(-1, SystemMemory.memTotal(dir.resolve("absent")));
        assertEquals(-1, SystemMemory.memTotal(Files.writeString(dir.resolve("a"), "MemFree: 5 kB\n")));
        assertEquals(-1, SystemMemory.memTotal(Files.writeString(dir.resolve("b"), "MemTotal: lots kB\n")));
    }

    @Test
    void systemMemoryOfThisMachineIsMemTotal() {
        SystemMemory memory = SystemMemory.read();
        assertEquals("MemTotal", memory.source());
        assertEquals(SystemMemory.memTotal(Path.of("/proc/meminfo")), memory.bytes());
        assertTrue(memory.describe().endsWith(" (MemTotal)"), memory.describe());
    }

    @Test
    void errnoNames() {
        assertEquals("ENOMEM", MemlockAdvice.errnoName(12));
        assertEquals("EPERM", MemlockAdvice.errnoName(1));
        assertEquals("EAGAIN", MemlockAdvice.errnoName(11));
        assertEquals("errno 5", MemlockAdvice.errnoName(5));
    }

    @Test
    void neededKiBRoundsUpAndSaturates() {
        assertEquals(1, MemlockAdvice.neededKiB(0, 1));
        assertEquals(1, MemlockAdvice.neededKiB(0, 1024));
        assertEquals(2, MemlockAdvice.neededKiB(1024, 1));
        assertEquals(Long.MAX_VALUE / 1024 + 1, MemlockAdvice.neededKiB(Long.MAX_VALUE, Long.MAX_VALUE));
    }

    @Test
    void anUndocumentedErrnoIsStillExplained() {
        NativeMemoryCalls calls = mock(NativeMemoryCalls.class);
        when(calls.memlockLimit()).thenReturn(Optional.of(new NativeMemoryCalls.MemlockLimit(ByteSize.MiB,
                ByteSize.MiB)));
        String m = MemlockAdvice.explain("mlock of x", 5, 4096, 8192, calls);
        assertTrue(m.startsWith("mlock of x failed with errno 5 (not one mlock documents)"), m);
        assertTrue(m.contains("already locked by this device: 8192 bytes (8.00 KiB)"), m);
        assertTrue(m.contains("ulimit -l 12`"), m);
    }

    @Test
    void failingGetrlimitDoesNotHideTheOriginalProblem() {
        NativeMemoryCalls calls = mock(NativeMemoryCalls.class);
        when(calls.memlockLimit()).thenThrow(new IllegalStateException("getrlimit crashed"));
        String m = MemlockAdvice.explain("mlock of y", NativeMemoryCalls.ENOMEM, 4096, -1, calls);
        assertTrue(m.contains("ENOMEM"), m);
        assertTrue(m.contains("unknown (getrlimit failed"), m);
        assertFalse(m.contains("already locked"), m);
    }
}
