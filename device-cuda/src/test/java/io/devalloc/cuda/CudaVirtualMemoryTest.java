package io.devalloc.cuda;

import static io.devalloc.cuda.Answers.out;
import static io.devalloc.cuda.Answers.outs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doReturn;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.mockito.Mockito.verifyNoMoreInteractions;
import static org.mockito.Mockito.when;

import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockito.InOrder;

/** The virtual-memory bookkeeping over CUDA's driver API, against a mocked {@link CudaApi}. */
class CudaVirtualMemoryTest {

    private static final long G = 2L << 20;
    private static final long BASE = 0x7000_0000_0000L;
    private static final int DEVICE = 1;

    private CudaApi api;
    private CudaDeviceMemory device;

    @BeforeEach
    void open() {
        api = mock(CudaApi.class);
        Answers.errorNames(api);
        Answers.gpu(api, 1L << 30);
        when(api.deviceVirtualMemorySupported(anyInt(), any())).thenAnswer(inv -> {
            ((int[]) inv.getArgument(1))[0] = 1;
            return 0;
        });
        when(api.memGetAllocationGranularity(any(), anyInt(), anyInt())).thenAnswer(out(G, 0));
        when(api.memAddressReserve(any(), anyLong(), anyLong(), anyLong(), anyLong())).thenAnswer(out(BASE, 0));
        when(api.memCreate(any(), anyLong(), anyInt(), anyLong())).thenAnswer(outs(101, 102, 103));
        device = CudaDeviceMemory.gpu(api, DEVICE, true);
        clearInvocations(api);
    }

    @AfterEach
    void close() {
        try {
            device.close();
        } catch (RuntimeException e) {
            // Some tests leave failures behind on purpose.
        }
    }

    private VirtualMemory vm() {
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        clearInvocations(api);
        return vm;
    }

    // ---- whether it is offered

    @Test
    void offeredWithTheMinimumGranularityOfThisDevice() {
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        assertEquals(G, vm.granularity());
        InOrder order = inOrder(api);
        order.verify(api).driverInit();
        order.verify(api).setDevice(DEVICE);
        order.verify(api).deviceVirtualMemorySupported(eq(DEVICE), any());
        order.verify(api).memGetAllocationGranularity(any(), eq(DEVICE), eq(CudaApi.GRANULARITY_MINIMUM));
        clearInvocations(api);
        assertTrue(device.virtualMemory().isPresent());
        verifyNoInteractions(api);
    }

    @Test
    void notOfferedWithoutTheDriverLibraryAndTheDriverIsNeverTouched() {
        CudaApi other = mock(CudaApi.class);
        Answers.gpu(other, 1L << 30);
        try (CudaDeviceMemory d = CudaDeviceMemory.gpu(other, 0, false)) {
            assertTrue(d.virtualMemory().isEmpty());
            assertTrue(d.virtualMemory().isEmpty());
        }
        verify(other, never()).driverInit();
        verify(other, never()).deviceVirtualMemorySupported(anyInt(), any());
        verify(other, never()).memGetAllocationGranularity(any(), anyInt(), anyInt());
        verify(other, never()).memAddressReserve(any(), anyLong(), anyLong(), anyLong(), anyLong());
    }

    @Test
    void notOfferedWhenTheDeviceLacksIt() {
        doAnswer(inv -> {
            ((int[]) inv.getArgument(1))[0] = 0;
            return 0;
        }).when(api).deviceVirtualMemorySupported(anyInt(), any());
        assertTrue(device.virtualMemory().isEmpty());
        assertTrue(device.virtualMemory().isEmpty());
        verify(api, times(1)).deviceVirtualMemorySupported(anyInt(), any());
        verify(api, never()).memGetAllocationGranularity(any(), anyInt(), anyInt());
    }

    @Test
    void notOfferedWhenCuInitFailsOrTheGranularityIsUseless() {
        when(api.driverInit()).thenReturn(3);
        assertTrue(device.virtualMemory().isEmpty());
        CudaApi other = mock(CudaApi.class);
        Answers.gpu(other, 1L << 30);
        when(other.deviceVirtualMemorySupported(anyInt(), any())).thenAnswer(inv -> {
            ((int[]) inv.getArgument(1))[0] = 1;
            return 0;
        });
        when(other.memGetAllocationGranularity(any(), anyInt(), anyInt())).thenAnswer(out(3 << 20, 0));
        try (CudaDeviceMemory d = CudaDeviceMemory.gpu(other, 0, true)) {
            assertTrue(d.virtualMemory().isEmpty(), "3 MiB is not a power of two");
        }
    }

    @Test
    void notOfferedWhenTheDriverThrows() {
        when(api.driverInit()).thenThrow(new UnsatisfiedLinkError("libcuda.so.1"));
        assertTrue(device.virtualMemory().isEmpty());
    }

    // ---- reserve and release

    @Test
    void reserveAndRelease() {
        VirtualMemory vm = vm();
        assertEquals(BASE, vm.reserve(8 * G));
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memAddressReserve(any(), eq(8 * G), eq(G), eq(0L), eq(0L));
        vm.release(BASE);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memAddressFree(BASE, 8 * G);
        clearInvocations(api);
        assertThrows(IllegalArgumentException.class, () -> vm.release(BASE), "released twice");
        verifyNoInteractions(api);
    }

    @Test
    void reserveRefusesBadSizesWithoutCalls() {
        VirtualMemory vm = vm();
        assertThrows(IllegalArgumentException.class, () -> vm.reserve(0));
        assertThrows(IllegalArgumentException.class, () -> vm.reserve(G + 1));
        assertThrows(IllegalArgumentException.class, () -> vm.reserve(-G));
        verifyNoInteractions(api);
    }

    @Test
    void reserveOutOfAddressSpaceIsZeroAndOtherErrorsAreDeviceExceptions() {
        VirtualMemory vm = vm();
        doReturn(CudaApi.CU_ERROR_OUT_OF_MEMORY).when(api)
                .memAddressReserve(any(), anyLong(), anyLong(), anyLong(), anyLong());
        assertEquals(0, vm.reserve(G));
        doReturn(1).when(api).memAddressReserve(any(), anyLong(), anyLong(), anyLong(), anyLong());
        DeviceException e = assertThrows(DeviceException.class, () -> vm.reserve(G));
        assertTrue(e.getMessage().contains("cuMemAddressReserve(2097152 bytes) on cuda:1 failed:"
                + " CUDA_ERROR_INVALID_VALUE (1)"), e.getMessage());
    }

    // ---- map

    @Test
    void mapCreatesMapsAndGrantsAccessForThisDevice() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base + 2 * G, 2 * G));
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memCreate(any(), eq(2 * G), eq(DEVICE), eq(0L));
        order.verify(api).memMap(base + 2 * G, 2 * G, 0, 101, 0);
        order.verify(api).memSetAccess(base + 2 * G, 2 * G, DEVICE, CudaApi.ACCESS_READ_WRITE);
        assertEquals(2 * G, vm.mappedBytes());
    }

    @Test
    void mapOutOfMemoryIsFalseAndChangesNothing() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        doReturn(CudaApi.CU_ERROR_OUT_OF_MEMORY).when(api).memCreate(any(), anyLong(), anyInt(), anyLong());
        assertFalse(vm.map(base, G));
        verify(api, never()).memMap(anyLong(), anyLong(), anyLong(), anyLong(), anyLong());
        assertEquals(0, vm.mappedBytes());
        vm.release(base);
    }

    @Test
    void aFailedCuMemMapReleasesTheHandle() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        when(api.memMap(anyLong(), anyLong(), anyLong(), anyLong(), anyLong())).thenReturn(1);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.map(base, G));
        assertTrue(e.getMessage().contains("cuMemMap"), e.getMessage());
        verify(api).memRelease(101);
        verify(api, never()).memSetAccess(anyLong(), anyLong(), anyInt(), anyInt());
        assertEquals(0, vm.mappedBytes());
        vm.release(base);
    }

    @Test
    void aFailedCuMemSetAccessUnmapsAndReleases() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        when(api.memSetAccess(anyLong(), anyLong(), anyInt(), anyInt())).thenReturn(801);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.map(base, G));
        assertTrue(e.getMessage().contains("CUDA_ERROR_NOT_SUPPORTED"), e.getMessage());
        InOrder order = inOrder(api);
        order.verify(api).memUnmap(base, G);
        order.verify(api).memRelease(101);
        assertEquals(0, vm.mappedBytes());
        when(api.memSetAccess(anyLong(), anyLong(), anyInt(), anyInt())).thenReturn(0);
        assertTrue(vm.map(base, G), "the range is free again");
    }

    @Test
    void misuseIsRefusedBeforeTheDriver() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base, 2 * G));
        clearInvocations(api);
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + G, G), "overlaps");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + 1, G), "misaligned address");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + 2 * G, G + 1), "misaligned size");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + 7 * G, 2 * G), "past the reservation");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base - G, G), "before the reservation");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + 2 * G, 0), "empty");
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + 2 * G, G), "not mapped");
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, 3 * G), "partly not mapped");
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, G), "cuts a mapped range");
        assertThrows(IllegalArgumentException.class, () -> vm.release(base), "still mapped");
        assertThrows(IllegalArgumentException.class, () -> vm.release(base + G), "not a base");
        verifyNoInteractions(api);
    }

    // ---- unmap

    @Test
    void unmapReleasesTheHandleRememberedForTheRange() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base, G));          // handle 101
        assertTrue(vm.map(base + G, 2 * G));  // handle 102
        clearInvocations(api);
        vm.unmap(base + G, 2 * G);
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memUnmap(base + G, 2 * G);
        order.verify(api).memRelease(102);
        verifyNoMoreInteractions(api);
        assertEquals(G, vm.mappedBytes());
    }

    @Test
    void unmapMayCoverSeveralMappedRanges() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base, G));
        assertTrue(vm.map(base + G, G));
        assertTrue(vm.map(base + 2 * G, G));
        clearInvocations(api);
        vm.unmap(base, 3 * G);
        verify(api).memUnmap(base, G);
        verify(api).memRelease(101);
        verify(api).memUnmap(base + G, G);
        verify(api).memRelease(102);
        verify(api).memUnmap(base + 2 * G, G);
        verify(api).memRelease(103);
        assertEquals(0, vm.mappedBytes());
        vm.release(base);
    }

    @Test
    void aFailedUnmapStillReleasesForgetsAndReports() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base, G));
        assertTrue(vm.map(base + G, G));
        when(api.memUnmap(base, G)).thenReturn(1);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.unmap(base, 2 * G));
        assertTrue(e.getMessage().contains("cuMemUnmap"), e.getMessage());
        verify(api).memRelease(101);
        verify(api).memUnmap(base + G, G);
        verify(api).memRelease(102);
        assertEquals(0, vm.mappedBytes());
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, G), "forgotten");
    }

    // ---- close

    @Test
    void closeUnmapsReleasesAndFreesEverythingPastFailures() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base, G));
        assertTrue(vm.map(base + 4 * G, G));
        when(api.memUnmap(base, G)).thenReturn(1);
        clearInvocations(api);
        DeviceException e = assertThrows(DeviceException.class, () -> device.close());
        assertTrue(e.getMessage().contains("cuMemUnmap"), e.getMessage());
        InOrder order = inOrder(api);
        order.verify(api).deviceSynchronize();
        order.verify(api).memUnmap(base, G);
        order.verify(api).memRelease(101);
        order.verify(api).memUnmap(base + 4 * G, G);
        order.verify(api).memRelease(102);
        order.verify(api).memAddressFree(base, 8 * G);
        assertThrows(IllegalStateException.class, () -> vm.reserve(G));
        assertThrows(IllegalStateException.class, vm::mappedBytes);
    }
}
