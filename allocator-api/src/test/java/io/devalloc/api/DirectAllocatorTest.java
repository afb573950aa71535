package io.devalloc.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.stats.AllocatorStats;
import org.junit.jupiter.api.Test;

/** The direct allocator's own logic, through a mocked device port. The contract suite runs it on real devices. */
class DirectAllocatorTest {

    private final DeviceMemory device = mock(DeviceMemory.class);

    DirectAllocatorTest() {
        when(device.descriptor()).thenReturn(new DeviceDescriptor("mock", 0, "mock", DeviceKind.GPU, 1L << 30));
        when(device.alignment()).thenReturn(256L);
        when(device.memoryInfo()).thenReturn(new MemoryInfo(100 << 20, 1L << 30));
    }

    @Test
    void deviceOutOfMemoryBecomesATypedErrorWithFigures() {
        when(device.malloc(anyLong())).thenReturn(0x1000L, 0L);
        DeviceAllocator a = new DirectAllocatorProvider().create(device, "");
        long first = a.malloc(1000);
        OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> a.malloc(200 << 20));
        assertEquals(OutOfMemoryException.Reason.DEVICE_EXHAUSTED, e.reason());
        assertEquals(200 << 20, e.requestedBytes());
        assertEquals(100 << 20, e.deviceFreeBytes());
        assertEquals(1L << 30, e.deviceTotalBytes());
        assertEquals(1024, e.allocatedBytes(), "1000 B rounded to the device's 256 B alignment");
        assertTrue(e.getMessage().contains("mock:0") && e.getMessage().contains("209715200"), e.getMessage());
        AllocatorStats s = a.stats();
        assertEquals(1, s.outOfMemoryErrors());
        assertEquals(1, s.activeAllocations());
        a.free(first);
    }

    @Test
    void limitIsCheckedBeforeTheDevice() {
        DeviceAllocator a = new DirectAllocatorProvider().create(device, "memory_limit_mb:1");
        OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> a.malloc((1 << 20) + 1));
        assertEquals(OutOfMemoryException.Reason.LIMIT_REACHED, e.reason());
        assertEquals(1 << 20, e.limitBytes());
        verify(device, never()).malloc(anyLong());
    }

    @Test
    void aDeviceErrorOnFreeKeepsTheAllocationLive() {
        when(device.malloc(anyLong())).thenReturn(0x2000L);
        doThrow(new DeviceException("cudaErrorLaunchFailure")).when(device).free(0x2000L);
        DeviceAllocator a = new DirectAllocatorProvider().create(device, "");
        long p = a.malloc(512);
        assertThrows(DeviceException.class, () -> a.free(p));
        assertEquals(1, a.stats().activeAllocations());
        assertEquals(512, a.stats().requestedBytes());
    }

    @Test
    void aDeviceErrorOnMallocChangesNothing() {
        when(device.malloc(anyLong())).thenThrow(new DeviceException("cudaErrorIllegalAddress"));
        DeviceAllocator a = new DirectAllocatorProvider().create(device, "");
        AllocatorStats before = a.stats();
        assertThrows(DeviceException.class, () -> a.malloc(512));
        assertEquals(before, a.stats());
    }

    @Test
    void aStaleHandleNeverFreesTheNextAllocationAtItsAddress() {
        when(device.malloc(anyLong())).thenReturn(0x3000L);
        DeviceAllocator a = new DirectAllocatorProvider().create(device, "");
        Allocation handle = a.allocate(100);
        a.free(handle.address());
        long reused = a.malloc(100);
        assertEquals(handle.address(), reused, "the device handed the same address out again");
        InvalidFreeException e = assertThrows(InvalidFreeException.class, handle::close);
        assertEquals(InvalidFreeException.Reason.DOUBLE_FREE, e.reason());
        assertEquals(1, a.stats().activeAllocations(), "the newer allocation is untouched");
        a.free(reused);
    }

    @Test
    void closeFreesEverythingEvenWhenADeviceFreeFails() {
        when(device.malloc(anyLong())).thenReturn(0x1000L, 0x2000L, 0x3000L);
        doThrow(new DeviceException("cudaErrorLaunchFailure")).when(device).free(0x2000L);
        DeviceAllocator a = new DirectAllocatorProvider().create(device, "");
        a.malloc(512);
        a.malloc(512);
        a.malloc(512);
        DeviceException e = assertThrows(DeviceException.class, a::close);
        assertTrue(e.getMessage().contains("LaunchFailure"));
        verify(device).free(0x1000L);
        verify(device).free(0x3000L);
        assertEquals(0, a.stats().activeAllocations());
        assertEquals(0, a.stats().allocatedBytes());
        assertTrue(a.isClosed());
    }

    @Test
    void closeDoesNotCloseADeviceItDoesNotOwn() {
        DeviceAllocator a = new DirectAllocatorProvider().create(device, "");
        a.close();
        verify(device, never()).close();
        assertThrows(IllegalStateException.class, () -> a.malloc(1));
        assertThrows(IllegalStateException.class, () -> a.free(0x10));
    }
}
