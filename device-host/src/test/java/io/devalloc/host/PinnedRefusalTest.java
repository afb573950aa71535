package io.devalloc.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.units.ByteSize;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.mockito.InOrder;
import org.mockito.Mock;
import org.mockito.junit.jupiter.MockitoExtension;
import org.mockito.junit.jupiter.MockitoSettings;
import org.mockito.quality.Strictness;

/**
 * The pinned path with libc mocked: what happens when the kernel refuses mlock, which cannot be provoked for
 * real on a machine that runs the tests as root. The mock's addresses are never dereferenced: the device only
 * passes them to the (mocked) calls.
 */
@ExtendWith(MockitoExtension.class)
@MockitoSettings(strictness = Strictness.LENIENT)
class PinnedRefusalTest {

    private static final long PAGE = 4096;
    private static final long FIRST = 0x7f00_0000_0000L;
    private static final long SECOND = 0x7f00_0010_0000L;
    private static final NativeMemoryCalls.MemlockLimit EIGHT_MIB =
            new NativeMemoryCalls.MemlockLimit(8 * ByteSize.MiB, 8 * ByteSize.MiB);

    @Mock
    private NativeMemoryCalls calls;

    @BeforeEach
    void stubLibc() {
        when(calls.pageSize()).thenReturn(PAGE);
        when(calls.alloc(anyLong(), anyLong())).thenReturn(FIRST, SECOND);
        when(calls.memlockLimit()).thenReturn(Optional.of(EIGHT_MIB));
    }

    @Test
    void refusedMlockFreesTheMemoryAndExplainsTheLimit() {
        when(calls.mlock(anyLong(), anyLong())).thenReturn(0, NativeMemoryCalls.ENOMEM);
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);
        long first = device.malloc(3 * PAGE);
        assertEquals(FIRST, first);
        MemoryInfo before = device.memoryInfo();

        DeviceException e = assertThrows(DeviceException.class, () -> device.malloc(ByteSize.MiB));
        String m = e.getMessage();
        for (String expected : new String[] {"ENOMEM", "pinned-host:0", "1.00 MiB (1048576 bytes)",
                "soft 8388608 bytes (8.00 MiB), hard 8388608 bytes (8.00 MiB)",
                "already locked by this device: 12288 bytes (12.00 KiB)", "ulimit -l 1036", "ulimit -l unlimited",
                "/etc/security/limits.conf", "memlock", "LimitMEMLOCK=", "--ulimit memlock=-1:-1", "CAP_IPC_LOCK"}) {
            assertTrue(m.contains(expected), "message lacks '" + expected + "': " + m);
        }
        verify(calls).mlock(SECOND, ByteSize.MiB);
        verify(calls).free(SECOND);
        verify(calls, never()).free(FIRST);
        assertEquals(before, device.memoryInfo(), "the refused allocation left no trace");
        assertThrows(InvalidFreeException.class, () -> device.free(SECOND));
        assertThrows(IllegalArgumentException.class, () -> device.hostView(SECOND, 1));
    }

    @Test
    void epermIsNamedAsSuch() {
        when(calls.mlock(anyLong(), anyLong())).thenReturn(NativeMemoryCalls.EPERM);
        when(calls.memlockLimit()).thenReturn(Optional.of(new NativeMemoryCalls.MemlockLimit(0, 0)));
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);

        DeviceException e = assertThrows(DeviceException.class, () -> device.malloc(100));
        assertTrue(e.getMessage().contains("EPERM"), e.getMessage());
        assertTrue(e.getMessage().contains("soft 0 bytes (0 B), hard 0 bytes (0 B)"), e.getMessage());
        assertTrue(e.getMessage().contains("ulimit -l 4"), "one page is 4 KiB: " + e.getMessage());
        verify(calls).free(FIRST);
        assertEquals(new MemoryInfo(ByteSize.GiB, ByteSize.GiB), device.memoryInfo());
    }

    @Test
    void unreadableLimitsAreSaidToBeUnknown() {
        when(calls.mlock(anyLong(), anyLong())).thenReturn(NativeMemoryCalls.ENOMEM);
        when(calls.memlockLimit()).thenReturn(Optional.empty());
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);

        DeviceException e = assertThrows(DeviceException.class, () -> device.malloc(100));
        assertTrue(e.getMessage().contains("RLIMIT_MEMLOCK: unknown"), e.getMessage());
    }

    @Test
    void freeUnlocksBeforeFreeing() {
        when(calls.mlock(anyLong(), anyLong())).thenReturn(0);
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);
        long address = device.malloc(5000);
        verify(calls).alloc(2 * PAGE, PAGE);
        verify(calls).mlock(FIRST, 2 * PAGE);

        device.free(address);
        InOrder order = inOrder(calls);
        order.verify(calls).munlock(FIRST, 2 * PAGE);
        order.verify(calls).free(FIRST);
        assertEquals(new MemoryInfo(ByteSize.GiB, ByteSize.GiB), device.memoryInfo());
    }

    @Test
    void aFailedMunlockStillFreesTheMemory() {
        when(calls.mlock(anyLong(), anyLong())).thenReturn(0);
        when(calls.munlock(anyLong(), anyLong())).thenReturn(NativeMemoryCalls.ENOMEM);
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);
        long address = device.malloc(PAGE);
        device.free(address);
        verify(calls).free(FIRST);
        assertEquals(ByteSize.GiB, device.memoryInfo().freeBytes());
    }

    @Test
    void closeUnlocksAndFreesEveryLiveAllocation() {
        when(calls.mlock(anyLong(), anyLong())).thenReturn(0);
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);
        device.malloc(PAGE);
        device.malloc(3 * PAGE);
        device.close();
        device.close();
        verify(calls).munlock(FIRST, PAGE);
        verify(calls).munlock(SECOND, 3 * PAGE);
        verify(calls).free(FIRST);
        verify(calls).free(SECOND);
        verify(calls, times(2)).free(anyLong());
    }

    @Test
    void libcRunningOutIsANullNotAnError() {
        when(calls.alloc(anyLong(), anyLong())).thenReturn(DeviceMemory.NULL);
        HostMemory device = HostMemory.pinned(calls, ByteSize.GiB);
        assertEquals(DeviceMemory.NULL, device.malloc(PAGE));
        verify(calls, never()).mlock(anyLong(), anyLong());
        assertEquals(new MemoryInfo(ByteSize.GiB, ByteSize.GiB), device.memoryInfo());
    }

    @Test
    void plainHostMemoryNeverLocks() {
        HostMemory device = HostMemory.host(calls, ByteSize.GiB);
        assertFalse(device.isPinned());
        long address = device.malloc(100);
        verify(calls).alloc(256, 256);
        device.free(address);
        verify(calls, never()).mlock(anyLong(), anyLong());
        verify(calls, never()).munlock(anyLong(), anyLong());
        verify(calls).free(FIRST);
    }

    @Test
    void aPageSizeThatIsNotAPowerOfTwoIsADeviceError() {
        when(calls.pageSize()).thenReturn(3000L);
        DeviceException e = assertThrows(DeviceException.class, () -> HostMemory.pinned(calls, ByteSize.GiB));
        assertTrue(e.getMessage().contains("3000"), e.getMessage());
    }
}
