package io.devalloc.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.units.ByteSize;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.mockito.InOrder;
import org.mockito.Mock;
import org.mockito.Mockito;
import org.mockito.junit.jupiter.MockitoExtension;
import org.mockito.junit.jupiter.MockitoSettings;
import org.mockito.quality.Strictness;

/**
 * Host virtual memory with the kernel mocked: the order of the system calls, the alignment trimming of a
 * reservation, and every refusal the kernel can give but this machine will not (strict overcommit, a bounded
 * {@code RLIMIT_MEMLOCK} while running as root, failing {@code madvise} or {@code munmap}). The mock's addresses
 * are never dereferenced.
 */
@ExtendWith(MockitoExtension.class)
@MockitoSettings(strictness = Strictness.LENIENT)
class HostVirtualMemoryRefusalTest {

    private static final long G = HostVirtualMemory.GRANULARITY;
    private static final long PAGE = 4096;
    /** What the mocked mmap returns: page aligned, 1 MiB past a granule boundary. */
    private static final long RAW = 0x7f00_0010_0000L;
    /** The first granule boundary at or after {@link #RAW}. */
    private static final long BASE = 0x7f00_0020_0000L;

    @Mock
    private NativeMemoryCalls calls;

    @BeforeEach
    void stubKernel() {
        when(calls.pageSize()).thenReturn(PAGE);
        when(calls.supportsVirtualMemory()).thenReturn(true);
        when(calls.mmapReserve(anyLong())).thenReturn(RAW);
        when(calls.memlockLimit()).thenReturn(Optional.of(new NativeMemoryCalls.MemlockLimit(8 * ByteSize.MiB,
                8 * ByteSize.MiB)));
    }

    @Test
    void reserveMapsOneGranuleMoreAndTrimsItToAnAlignedRange() {
        HostMemory device = HostMemory.host(calls, ByteSize.GiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        assertEquals(BASE, vm.reserve(4 * G));
        verify(calls).mmapReserve(5 * G);
        verify(calls).munmap(RAW, BASE - RAW);
        verify(calls).munmap(BASE + 4 * G, RAW + 5 * G - (BASE + 4 * G));

        when(calls.mmapReserve(anyLong())).thenReturn(BASE + 64 * G);
        assertEquals(BASE + 64 * G, vm.reserve(G), "already aligned: only the tail is trimmed");
        verify(calls).munmap(BASE + 65 * G, G);
        verify(calls, never()).munmap(BASE + 64 * G, 0);
    }

    @Test
    void mapFailedIsAZeroAndRemembersNothing() {
        when(calls.mmapReserve(anyLong())).thenReturn(0L);
        HostMemory device = HostMemory.host(calls, ByteSize.GiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        assertEquals(DeviceMemory.NULL, vm.reserve(G));
        verify(calls, never()).munmap(anyLong(), anyLong());
        assertThrows(IllegalArgumentException.class, () -> vm.map(0, G));
    }

    @Test
    void mapAndUnmapCallTheKernelInOrder() {
        HostMemory device = HostMemory.host(calls, ByteSize.GiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        long base = vm.reserve(4 * G);
        assertTrue(vm.map(base + G, 2 * G));
        verify(calls).mprotect(base + G, 2 * G, NativeMemoryCalls.PROT_READ_WRITE);
        verify(calls, never()).mlock(anyLong(), anyLong());
        vm.unmap(base + G, 2 * G);
        InOrder order = inOrder(calls);
        order.verify(calls).madviseDontNeed(base + G, 2 * G);
        order.verify(calls).mprotect(base + G, 2 * G, NativeMemoryCalls.PROT_NONE);
        verify(calls, never()).munlock(anyLong(), anyLong());
        vm.release(base);
        verify(calls).munmap(base, 4 * G);
    }

    @Test
    void pinnedGranulesAreLockedAfterMappingAndUnlockedBeforeDiscarding() {
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        long base = vm.reserve(2 * G);
        assertTrue(vm.map(base, 2 * G));
        InOrder mapping = inOrder(calls);
        mapping.verify(calls).mprotect(base, 2 * G, NativeMemoryCalls.PROT_READ_WRITE);
        mapping.verify(calls).mlock(base, 2 * G);
        vm.unmap(base, G);
        // MADV_DONTNEED is refused on locked pages, so the unlock comes first.
        InOrder unmapping = inOrder(calls);
        unmapping.verify(calls).munlock(base, G);
        unmapping.verify(calls).madviseDontNeed(base, G);
        unmapping.verify(calls).mprotect(base, G, NativeMemoryCalls.PROT_NONE);
    }

    @Test
    void enomemFromMprotectIsAFalseThatChangesNothing() {
        when(calls.mprotect(anyLong(), anyLong(), anyInt())).thenReturn(NativeMemoryCalls.ENOMEM);
        HostMemory device = HostMemory.host(calls, ByteSize.GiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        long base = vm.reserve(2 * G);
        assertFalse(vm.map(base, G), "strict overcommit or too many mappings: out of memory, not an error");
        assertEquals(0, vm.mappedBytes());
        assertEquals(new MemoryInfo(ByteSize.GiB, ByteSize.GiB), device.memoryInfo());
        assertThrows(IllegalArgumentException.class, () -> device.hostView(base, 1));
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, G), "not mapped");

        when(calls.mprotect(anyLong(), anyLong(), anyInt())).thenReturn(0);
        assertTrue(vm.map(base, G), "works once the kernel has room");
    }

    @Test
    void otherMprotectErrorsAreDeviceErrorsThatChangeNothing() {
        when(calls.mprotect(anyLong(), anyLong(), anyInt())).thenReturn(NativeMemoryCalls.EINVAL);
        HostMemory device = HostMemory.host(calls, ByteSize.GiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        long base = vm.reserve(2 * G);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.map(base, G));
        assertTrue(e.getMessage().contains("EINVAL"), e.getMessage());
        assertEquals(0, vm.mappedBytes());
        assertEquals(new MemoryInfo(ByteSize.GiB, ByteSize.GiB), device.memoryInfo());
    }

    @Test
    void aRefusedMlockUndoesTheMapAndExplainsTheLimit() {
        when(calls.mlock(anyLong(), anyLong())).thenReturn(0, NativeMemoryCalls.ENOMEM);
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base, G));
        MemoryInfo before = device.memoryInfo();

        DeviceException e = assertThrows(DeviceException.class, () -> vm.map(base + 2 * G, 4 * G));
        String m = e.getMessage();
        for (String expected : new String[] {"ENOMEM", "pinned-host:0", "8.00 MiB (8388608 bytes)",
                "of mapped granules at " + ByteSize.hex(base + 2 * G),
                "already locked by this device: 2097152 bytes (2.00 MiB)", "ulimit -l 10240", "CAP_IPC_LOCK"}) {
            assertTrue(m.contains(expected), "message lacks '" + expected + "': " + m);
        }
        InOrder undo = inOrder(calls);
        undo.verify(calls).mprotect(base + 2 * G, 4 * G, NativeMemoryCalls.PROT_READ_WRITE);
        undo.verify(calls).mlock(base + 2 * G, 4 * G);
        undo.verify(calls).munlock(base + 2 * G, 4 * G);
        undo.verify(calls).madviseDontNeed(base + 2 * G, 4 * G);
        undo.verify(calls).mprotect(base + 2 * G, 4 * G, NativeMemoryCalls.PROT_NONE);
        assertEquals(before, device.memoryInfo(), "the refused map left no trace");
        assertEquals(G, vm.mappedBytes());
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + 2 * G, G), "not mapped");
        assertThrows(IllegalArgumentException.class, () -> device.hostView(base + 2 * G, 1));
    }

    @Test
    void aFailedMadviseStillUnmapsTheRangeAndSaysSo() {
        when(calls.madviseDontNeed(anyLong(), anyLong())).thenReturn(NativeMemoryCalls.EINVAL);
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        long base = vm.reserve(2 * G);
        assertTrue(vm.map(base, G));
        DeviceException e = assertThrows(DeviceException.class, () -> vm.unmap(base, G));
        assertTrue(e.getMessage().contains("MADV_DONTNEED"), e.getMessage());
        assertTrue(e.getMessage().contains("the range is unmapped"), e.getMessage());
        assertEquals(0, vm.mappedBytes(), "after a failure the range counts as unmapped, as the port says");
        assertEquals(ByteSize.GiB, device.memoryInfo().freeBytes());
        verify(calls).mprotect(base, G, NativeMemoryCalls.PROT_NONE);
        verify(calls, Mockito.times(1)).mlock(base, G); // the map's, not locked again after the failure
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, G), "not mapped any more");
        assertTrue(vm.map(base, G), "and it can be mapped again");
    }

    @Test
    void aFailedMunmapKeepsTheReservation() {
        HostMemory device = HostMemory.host(calls, ByteSize.GiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        long base = vm.reserve(2 * G);
        when(calls.munmap(base, 2 * G)).thenReturn(NativeMemoryCalls.EINVAL, 0);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.release(base));
        assertTrue(e.getMessage().contains("EINVAL"), e.getMessage());
        assertTrue(vm.map(base, G), "still reserved");
        vm.unmap(base, G);
        vm.release(base);
        assertThrows(IllegalArgumentException.class, () -> vm.release(base));
    }

    @Test
    void closeUnmapsEveryReservationEvenAfterAFailure() {
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        long first = vm.reserve(2 * G);
        when(calls.mmapReserve(anyLong())).thenReturn(RAW + 64 * G);
        long second = vm.reserve(2 * G);
        assertTrue(vm.map(first, G));
        when(calls.munmap(first, 2 * G)).thenReturn(NativeMemoryCalls.EINVAL);
        device.close();
        verify(calls).munmap(first, 2 * G);
        verify(calls).munmap(second, 2 * G);
        device.close();
    }

    @Test
    void absentWhereTheKernelCallsAreNotWired() {
        when(calls.supportsVirtualMemory()).thenReturn(false);
        assertTrue(HostMemory.host(calls, ByteSize.GiB).virtualMemory().isEmpty());
        assertTrue(HostMemory.pinned(calls, ByteSize.GiB).virtualMemory().isEmpty());
        verify(calls, never()).mmapReserve(anyLong());
    }

    @Test
    void absentWhenAPageIsLargerThanAGranule() {
        when(calls.pageSize()).thenReturn(4 * G);
        assertTrue(HostMemory.host(calls, ByteSize.GiB).virtualMemory().isEmpty());
    }
}
