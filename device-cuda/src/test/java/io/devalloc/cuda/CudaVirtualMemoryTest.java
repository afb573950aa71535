package io.devalloc.cuda;

import static io.devalloc.cuda.Answers.counting;
import static io.devalloc.cuda.Answers.out;
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
    /** PyTorch's large-pool page, {@code large_segment_size}: ten granules. */
    private static final long PAGE = 10 * G;
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
        when(api.memCreate(any(), anyLong(), anyInt(), anyLong())).thenAnswer(counting(101));
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
    void mapCreatesAHandlePerGranuleMapsEachAndGrantsAccessOnceOverTheRange() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        clearInvocations(api);
        assertTrue(vm.map(base + 2 * G, 3 * G));
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api, times(3)).memCreate(any(), eq(G), eq(DEVICE), eq(0L));
        order.verify(api).memMap(base + 2 * G, G, 0, 101, 0);
        order.verify(api).memMap(base + 3 * G, G, 0, 102, 0);
        order.verify(api).memMap(base + 4 * G, G, 0, 103, 0);
        order.verify(api).memSetAccess(base + 2 * G, 3 * G, DEVICE, CudaApi.ACCESS_READ_WRITE);
        verifyNoMoreInteractions(api);
        assertEquals(3 * G, vm.mappedBytes());
    }

    @Test
    void mapIn20MiBPiecesIsAHandleAndACuMemMapPerPieceAndOneCuMemSetAccess() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * PAGE);
        clearInvocations(api);
        assertTrue(vm.map(base + PAGE, 3 * PAGE, PAGE), "60 MiB in 20 MiB pieces, as PyTorch's large pool maps");
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api, times(3)).memCreate(any(), eq(PAGE), eq(DEVICE), eq(0L));
        order.verify(api).memMap(base + PAGE, PAGE, 0, 101, 0);
        order.verify(api).memMap(base + 2 * PAGE, PAGE, 0, 102, 0);
        order.verify(api).memMap(base + 3 * PAGE, PAGE, 0, 103, 0);
        order.verify(api).memSetAccess(base + PAGE, 3 * PAGE, DEVICE, CudaApi.ACCESS_READ_WRITE);
        verifyNoMoreInteractions(api);
        assertEquals(3 * PAGE, vm.mappedBytes());

        vm.unmap(base + 2 * PAGE, PAGE);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memUnmap(base + 2 * PAGE, PAGE);
        order.verify(api).memRelease(102);
        verifyNoMoreInteractions(api);
        assertEquals(2 * PAGE, vm.mappedBytes());

        vm.unmap(base + PAGE, PAGE);
        vm.unmap(base + 3 * PAGE, PAGE);
        verify(api).memRelease(101);
        verify(api).memRelease(103);
        assertEquals(0, vm.mappedBytes());
        vm.release(base);
    }

    @Test
    void aRegionMappedAsOnePieceIsThreeDriverCallsWhateverItsSize() {
        VirtualMemory vm = vm();
        long region = 40L << 30; // half of an 80 GiB device, as a BFC region
        long base = vm.reserve(region);
        clearInvocations(api);
        assertTrue(vm.map(base, region, region));
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memCreate(any(), eq(region), eq(DEVICE), eq(0L));
        order.verify(api).memMap(base, region, 0, 101, 0);
        order.verify(api).memSetAccess(base, region, DEVICE, CudaApi.ACCESS_READ_WRITE);
        verifyNoMoreInteractions(api);
        assertEquals(region, vm.mappedBytes());
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, region - G), "all but the last granule");
        verifyNoMoreInteractions(api);
        vm.unmap(base, region);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memUnmap(base, region);
        order.verify(api).memRelease(101);
        verifyNoMoreInteractions(api);
        assertEquals(0, vm.mappedBytes());
    }

    @Test
    void badPieceSizesAreRefusedBeforeTheDriver() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * PAGE);
        clearInvocations(api);
        assertThrows(IllegalArgumentException.class, () -> vm.map(base, 3 * PAGE, 0), "zero");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base, 3 * PAGE, -PAGE), "negative");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base, 3 * PAGE, PAGE + 1), "not a granule multiple");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> vm.map(base, 3 * PAGE, 4 * G),
                "a granule multiple that does not divide the range");
        assertTrue(e.getMessage().startsWith(
                "piece size 8388608 is not a positive multiple of the 2.00 MiB granule of"), e.getMessage());
        assertTrue(e.getMessage().endsWith(" that divides the 62914560 bytes to map"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> vm.map(base, 3 * PAGE, 6 * PAGE), "larger than the range");
        verifyNoInteractions(api);
        assertEquals(0, vm.mappedBytes());
        assertTrue(vm.map(base, 3 * PAGE, 3 * PAGE), "the range is still free");
    }

    @Test
    void anUnmapThatCutsAPieceIsRefusedBeforeTheDriver() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * PAGE);
        assertTrue(vm.map(base, 3 * PAGE, PAGE));
        clearInvocations(api);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, G),
                "one granule of the first piece");
        assertTrue(e.getMessage().startsWith("[0x" + Long.toHexString(base) + ", +2097152 bytes) cuts the piece [0x"
                + Long.toHexString(base) + ", +20971520 bytes) that one cuMemCreate handle backs in "), e.getMessage());
        assertTrue(e.getMessage().endsWith("; unmap whole pieces, as they were mapped"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + G, PAGE - G), "starts inside a piece");
        assertTrue(e.getMessage().contains(" cuts the piece [0x" + Long.toHexString(base) + ", +20971520 bytes)"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, PAGE + G), "ends inside a piece");
        assertTrue(e.getMessage().contains(" cuts the piece [0x" + Long.toHexString(base + PAGE)
                + ", +20971520 bytes)"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + PAGE / 2, PAGE), "straddles two pieces");
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + 2 * PAGE, 2 * PAGE), "runs past the end");
        verifyNoInteractions(api);
        assertEquals(3 * PAGE, vm.mappedBytes(), "refusals change nothing");
        vm.unmap(base, 3 * PAGE);
        verify(api, times(3)).memUnmap(anyLong(), eq(PAGE));
        verify(api, times(3)).memRelease(anyLong());
        assertEquals(0, vm.mappedBytes());
    }

    @Test
    void anUnmapMaySpanPiecesOfDifferentSizesFromTwoMapCalls() {
        VirtualMemory vm = vm();
        long base = vm.reserve(16 * G);
        assertTrue(vm.map(base, 4 * G, 2 * G)); // handles 101, 102
        assertTrue(vm.map(base + 4 * G, 3 * G, 3 * G)); // handle 103, right after: a piece of its own all the same
        clearInvocations(api);
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + 2 * G, 4 * G), "cuts the second call's");
        verifyNoInteractions(api);
        vm.unmap(base + 2 * G, 5 * G);
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memUnmap(base + 2 * G, 2 * G);
        order.verify(api).memRelease(102);
        order.verify(api).memUnmap(base + 4 * G, 3 * G);
        order.verify(api).memRelease(103);
        verifyNoMoreInteractions(api);
        assertEquals(2 * G, vm.mappedBytes());
        assertTrue(vm.map(base + 2 * G, 2 * G), "the freed pieces' range maps again, now in granules");
        vm.unmap(base + 3 * G, G);
        assertEquals(3 * G, vm.mappedBytes());
    }

    @Test
    void aFailedCuMemMapOfTheSecondPieceUnmapsTheFirstAndReleasesEveryCreatedPiece() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * PAGE);
        when(api.memMap(eq(base + PAGE), anyLong(), anyLong(), anyLong(), anyLong())).thenReturn(1);
        clearInvocations(api);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.map(base, 3 * PAGE, PAGE));
        assertTrue(e.getMessage().startsWith("cuMemMap([0x" + Long.toHexString(base + PAGE) + ", +20971520 bytes)) of"
                + " [0x" + Long.toHexString(base) + ", +62914560 bytes)"), e.getMessage());
        assertEquals(0, e.getSuppressed().length, "the undo succeeded");
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api, times(3)).memCreate(any(), eq(PAGE), eq(DEVICE), eq(0L));
        order.verify(api).memMap(base, PAGE, 0, 101, 0);
        order.verify(api).memMap(base + PAGE, PAGE, 0, 102, 0);
        order.verify(api).memUnmap(base, PAGE);
        order.verify(api).memRelease(101);
        order.verify(api).memRelease(102);
        order.verify(api).memRelease(103);
        verify(api, times(2)).memMap(anyLong(), anyLong(), anyLong(), anyLong(), anyLong());
        verify(api, times(1)).memUnmap(anyLong(), anyLong());
        verify(api, times(3)).memRelease(anyLong());
        verify(api, never()).memSetAccess(anyLong(), anyLong(), anyInt(), anyInt());
        assertEquals(0, vm.mappedBytes());
        when(api.memMap(anyLong(), anyLong(), anyLong(), anyLong(), anyLong())).thenReturn(0);
        assertTrue(vm.map(base, 3 * PAGE, PAGE), "the range is free again");
        assertEquals(3 * PAGE, vm.mappedBytes());
    }

    @Test
    void outOfMemoryOnTheThirdPieceReleasesTheFirstTwoAndIsFalse() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * PAGE);
        assertTrue(vm.map(base + 4 * PAGE, PAGE, PAGE)); // handle 101, which the failed map must not touch
        doAnswer(out(201, 0)).doAnswer(out(202, 0)).doReturn(CudaApi.CU_ERROR_OUT_OF_MEMORY)
                .when(api).memCreate(any(), anyLong(), anyInt(), anyLong());
        clearInvocations(api);
        assertFalse(vm.map(base, 3 * PAGE, PAGE));
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api, times(3)).memCreate(any(), eq(PAGE), eq(DEVICE), eq(0L));
        order.verify(api).memRelease(201);
        order.verify(api).memRelease(202);
        verifyNoMoreInteractions(api);
        assertEquals(PAGE, vm.mappedBytes());
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, PAGE), "nothing of it is left");
        vm.unmap(base + 4 * PAGE, PAGE);
        verify(api).memRelease(101);
    }

    @Test
    void aFailedCuMemSetAccessUnmapsAndReleasesEveryPiece() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * PAGE);
        when(api.memSetAccess(anyLong(), anyLong(), anyInt(), anyInt())).thenReturn(801);
        clearInvocations(api);
        assertThrows(DeviceException.class, () -> vm.map(base, 2 * PAGE, PAGE));
        InOrder order = inOrder(api);
        order.verify(api).memSetAccess(base, 2 * PAGE, DEVICE, CudaApi.ACCESS_READ_WRITE);
        order.verify(api).memUnmap(base, PAGE);
        order.verify(api).memRelease(101);
        order.verify(api).memUnmap(base + PAGE, PAGE);
        order.verify(api).memRelease(102);
        verify(api, times(2)).memCreate(any(), anyLong(), anyInt(), anyLong());
        verify(api, times(2)).memMap(anyLong(), anyLong(), anyLong(), anyLong(), anyLong());
        verify(api, times(2)).memUnmap(anyLong(), anyLong());
        verify(api, times(2)).memRelease(anyLong());
        assertEquals(0, vm.mappedBytes());
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
    void outOfMemoryOnTheSecondHandleReleasesTheFirstMapsNothingAndIsFalse() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        doAnswer(out(201, 0)).doReturn(CudaApi.CU_ERROR_OUT_OF_MEMORY)
                .when(api).memCreate(any(), anyLong(), anyInt(), anyLong());
        clearInvocations(api);
        assertFalse(vm.map(base, 3 * G));
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api, times(2)).memCreate(any(), eq(G), eq(DEVICE), eq(0L));
        order.verify(api).memRelease(201);
        verifyNoMoreInteractions(api);
        assertEquals(0, vm.mappedBytes());
        doAnswer(counting(301)).when(api).memCreate(any(), anyLong(), anyInt(), anyLong());
        assertTrue(vm.map(base, 3 * G), "nothing of the failed map is left behind");
        assertEquals(3 * G, vm.mappedBytes());
    }

    @Test
    void aFailedCuMemMapOfTheSecondGranuleUnmapsTheFirstAndReleasesBoth() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        when(api.memMap(eq(base + G), anyLong(), anyLong(), anyLong(), anyLong())).thenReturn(1);
        clearInvocations(api);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.map(base, 2 * G));
        assertTrue(e.getMessage().startsWith("cuMemMap([0x" + Long.toHexString(base + G) + ", +2097152 bytes))"),
                e.getMessage());
        assertTrue(e.getMessage().contains("CUDA_ERROR_INVALID_VALUE (1)"), e.getMessage());
        assertEquals(0, e.getSuppressed().length, "the undo succeeded");
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api, times(2)).memCreate(any(), eq(G), eq(DEVICE), eq(0L));
        order.verify(api).memMap(base, G, 0, 101, 0);
        order.verify(api).memMap(base + G, G, 0, 102, 0);
        order.verify(api).memUnmap(base, G);
        order.verify(api).memRelease(101);
        order.verify(api).memRelease(102);
        verify(api, times(1)).memUnmap(anyLong(), anyLong());
        verify(api, times(2)).memRelease(anyLong());
        verify(api, never()).memSetAccess(anyLong(), anyLong(), anyInt(), anyInt());
        assertEquals(0, vm.mappedBytes());
        when(api.memMap(anyLong(), anyLong(), anyLong(), anyLong(), anyLong())).thenReturn(0);
        assertTrue(vm.map(base, 2 * G), "the range is free again");
    }

    @Test
    void outOfMemoryInCuMemMapIsFalseOnceUndone() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        when(api.memMap(eq(base + 2 * G), anyLong(), anyLong(), anyLong(), anyLong()))
                .thenReturn(CudaApi.CU_ERROR_OUT_OF_MEMORY);
        assertFalse(vm.map(base, 3 * G));
        verify(api).memUnmap(base, G);
        verify(api).memUnmap(base + G, G);
        verify(api, never()).memUnmap(eq(base + 2 * G), anyLong());
        verify(api).memRelease(101);
        verify(api).memRelease(102);
        verify(api).memRelease(103);
        verify(api, never()).memSetAccess(anyLong(), anyLong(), anyInt(), anyInt());
        assertEquals(0, vm.mappedBytes());
        vm.release(base);
    }

    @Test
    void aFailedCuMemSetAccessUnmapsAndReleasesEveryGranule() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        when(api.memSetAccess(anyLong(), anyLong(), anyInt(), anyInt())).thenReturn(801);
        clearInvocations(api);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.map(base, 2 * G));
        assertTrue(e.getMessage().contains("cuMemSetAccess([0x" + Long.toHexString(base) + ", +4194304 bytes)"),
                e.getMessage());
        assertTrue(e.getMessage().contains("CUDA_ERROR_NOT_SUPPORTED"), e.getMessage());
        InOrder order = inOrder(api);
        order.verify(api).memSetAccess(base, 2 * G, DEVICE, CudaApi.ACCESS_READ_WRITE);
        order.verify(api).memUnmap(base, G);
        order.verify(api).memRelease(101);
        order.verify(api).memUnmap(base + G, G);
        order.verify(api).memRelease(102);
        assertEquals(0, vm.mappedBytes());
        when(api.memSetAccess(anyLong(), anyLong(), anyInt(), anyInt())).thenReturn(0);
        assertTrue(vm.map(base, 2 * G), "the range is free again");
    }

    @Test
    void anOutOfMemoryWhoseUndoFailsIsThrownWithTheUndoFailure() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        doAnswer(out(201, 0)).doReturn(CudaApi.CU_ERROR_OUT_OF_MEMORY)
                .when(api).memCreate(any(), anyLong(), anyInt(), anyLong());
        when(api.memRelease(201)).thenReturn(1);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.map(base, 2 * G));
        assertTrue(e.getMessage().startsWith("cuMemCreate(2097152 bytes) for the piece at 0x"
                + Long.toHexString(base + G)), e.getMessage());
        assertTrue(e.getMessage().contains("CUDA_ERROR_OUT_OF_MEMORY"), e.getMessage());
        assertEquals(1, e.getSuppressed().length);
        assertTrue(e.getSuppressed()[0].getMessage().startsWith("cuMemRelease of the memory mapped at [0x"
                + Long.toHexString(base) + ", +2097152 bytes)"), e.getSuppressed()[0].getMessage());
        assertEquals(0, vm.mappedBytes(), "the failed map is forgotten");
        vm.release(base);
    }

    @Test
    void misuseIsRefusedBeforeTheDriver() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base, 3 * G));
        vm.unmap(base + G, G);
        clearInvocations(api);
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + 2 * G, G), "overlaps");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + G, 2 * G), "overlaps in part");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + 1, G), "misaligned address");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + 3 * G, G + 1), "misaligned size");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + 7 * G, 2 * G), "past the reservation");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base - G, G), "before the reservation");
        assertThrows(IllegalArgumentException.class, () -> vm.map(base + 3 * G, 0), "empty");
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + 3 * G, G), "not mapped");
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + 2 * G, 2 * G), "partly not mapped");
        IllegalArgumentException hole = assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, 3 * G),
                "a hole in the middle");
        assertTrue(hole.getMessage().endsWith("nothing is mapped at 0x" + Long.toHexString(base + G)),
                hole.getMessage());
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + 1, G), "misaligned");
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + 7 * G, 2 * G), "past the reservation");
        IllegalArgumentException mapped = assertThrows(IllegalArgumentException.class, () -> vm.release(base),
                "still mapped");
        assertTrue(mapped.getMessage().contains("still has 2 mapped granules (the first at 0x"
                + Long.toHexString(base) + ")"), mapped.getMessage());
        assertThrows(IllegalArgumentException.class, () -> vm.release(base + G), "not a base");
        verifyNoInteractions(api);
        assertEquals(2 * G, vm.mappedBytes(), "refusals change nothing");
    }

    @Test
    void aReservationTooLargeToTrackIsZeroWithoutTheDriver() {
        VirtualMemory vm = vm();
        assertEquals(0, vm.reserve(((long) Integer.MAX_VALUE) * G));
        verifyNoInteractions(api);
    }

    // ---- unmap

    @Test
    void unmapOfPartOfOneMapUnmapsAndReleasesExactlyThoseGranules() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base, 4 * G)); // handles 101..104
        clearInvocations(api);
        vm.unmap(base + G, 2 * G);
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memUnmap(base + G, G);
        order.verify(api).memRelease(102);
        order.verify(api).memUnmap(base + 2 * G, G);
        order.verify(api).memRelease(103);
        verifyNoMoreInteractions(api);
        assertEquals(2 * G, vm.mappedBytes());
        assertTrue(vm.map(base + G, 2 * G), "the hole maps again"); // handles 105, 106
        clearInvocations(api);
        vm.unmap(base, 4 * G);
        order = inOrder(api);
        order.verify(api).memUnmap(base, G);
        order.verify(api).memRelease(101);
        order.verify(api).memUnmap(base + G, G);
        order.verify(api).memRelease(105);
        order.verify(api).memUnmap(base + 2 * G, G);
        order.verify(api).memRelease(106);
        order.verify(api).memUnmap(base + 3 * G, G);
        order.verify(api).memRelease(104);
        assertEquals(0, vm.mappedBytes());
        vm.release(base);
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
    void aFailingCuMemUnmapInTheMiddleStillProcessesTheOthersForgetsAllAndReports() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base, 3 * G));
        when(api.memUnmap(base + G, G)).thenReturn(1);
        when(api.memRelease(103)).thenReturn(1);
        clearInvocations(api);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.unmap(base, 3 * G));
        assertTrue(e.getMessage().startsWith("cuMemUnmap([0x" + Long.toHexString(base + G) + ", +2097152 bytes))"),
                e.getMessage());
        assertEquals(1, e.getSuppressed().length);
        assertTrue(e.getSuppressed()[0].getMessage().startsWith("cuMemRelease of the memory mapped at [0x"
                + Long.toHexString(base + 2 * G)), e.getSuppressed()[0].getMessage());
        InOrder order = inOrder(api);
        order.verify(api).memUnmap(base, G);
        order.verify(api).memRelease(101);
        order.verify(api).memUnmap(base + G, G);
        order.verify(api).memRelease(102);
        order.verify(api).memUnmap(base + 2 * G, G);
        order.verify(api).memRelease(103);
        assertEquals(0, vm.mappedBytes());
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + G, G), "forgotten");
        vm.release(base);
    }

    /**
     * The port's duty after a failed unmap, with the driver's documented answers: {@code cuMemUnmap} "may also
     * return error codes from previous, asynchronous launches", and once it has returned the adapter cannot tell
     * whether the range was unmapped. The adapter forgets the piece and releases its handle all the same, so the
     * range maps again with a new handle and a new {@code cuMemMap}, and is not unmapped twice.
     */
    @Test
    void aRangeWhoseCuMemUnmapFailedCountsAsUnmappedAndMapsAgain() {
        VirtualMemory vm = vm();
        long base = vm.reserve(4 * G);
        assertTrue(vm.map(base, 2 * G));
        when(api.memUnmap(base + G, G)).thenReturn(719); // CUDA_ERROR_LAUNCH_FAILED, from an earlier kernel
        clearInvocations(api);
        assertThrows(DeviceException.class, () -> vm.unmap(base + G, G));
        verify(api).memRelease(102);
        assertEquals(G, vm.mappedBytes());
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(base + G, G), "not unmapped twice");
        when(api.memUnmap(base + G, G)).thenReturn(CudaApi.SUCCESS);
        clearInvocations(api);
        assertTrue(vm.map(base + G, G), "the range maps again");
        verify(api).memCreate(any(), eq(G), eq(DEVICE), anyLong());
        verify(api).memMap(eq(base + G), eq(G), eq(0L), eq(103L), anyLong());
        assertEquals(2 * G, vm.mappedBytes());
        vm.unmap(base, 2 * G);
        verify(api).memUnmap(base + G, G);
        verify(api).memRelease(103);
        vm.release(base);
    }

    @Test
    void aDriverThatFailsEveryCallListsTheFirstFailuresAndCountsTheRest() {
        VirtualMemory vm = vm();
        long base = vm.reserve(32 * G);
        assertTrue(vm.map(base, 20 * G));
        when(api.memUnmap(anyLong(), anyLong())).thenReturn(1);
        clearInvocations(api);
        DeviceException e = assertThrows(DeviceException.class, () -> vm.unmap(base, 20 * G));
        verify(api, times(20)).memUnmap(anyLong(), eq(G));
        verify(api, times(20)).memRelease(anyLong());
        assertTrue(e.getMessage().startsWith("cuMemUnmap([0x" + Long.toHexString(base) + ", "), e.getMessage());
        Throwable[] others = e.getSuppressed();
        assertEquals(CudaVirtualMemory.LISTED_PIECE_FAILURES, others.length, "15 more listed and one summary");
        assertTrue(others[others.length - 2].getMessage().startsWith("cuMemUnmap([0x"
                + Long.toHexString(base + 15 * G)), others[others.length - 2].getMessage());
        assertEquals("4 more cuMemUnmap or cuMemRelease calls failed on cuda:1 while unmapping [0x"
                + Long.toHexString(base) + ", +" + 20 * G + " bytes); only the first 16 failures are listed",
                others[others.length - 1].getMessage());
        assertEquals(0, vm.mappedBytes());
    }

    // ---- close

    @Test
    void closeUnmapsAndReleasesEachPieceOnce() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * PAGE);
        assertTrue(vm.map(base, 2 * PAGE, PAGE));
        assertTrue(vm.map(base + 2 * PAGE, PAGE + 2 * G, PAGE + 2 * G));
        clearInvocations(api);
        device.close();
        InOrder order = inOrder(api);
        order.verify(api).deviceSynchronize();
        order.verify(api).memUnmap(base, PAGE);
        order.verify(api).memRelease(101);
        order.verify(api).memUnmap(base + PAGE, PAGE);
        order.verify(api).memRelease(102);
        order.verify(api).memUnmap(base + 2 * PAGE, PAGE + 2 * G);
        order.verify(api).memRelease(103);
        order.verify(api).memAddressFree(base, 8 * PAGE);
        verify(api, times(3)).memUnmap(anyLong(), anyLong());
        verify(api, times(3)).memRelease(anyLong());
    }

    @Test
    void closeUnmapsReleasesAndFreesEverythingPastFailures() {
        VirtualMemory vm = vm();
        long base = vm.reserve(8 * G);
        assertTrue(vm.map(base, 2 * G));
        assertTrue(vm.map(base + 4 * G, G));
        when(api.memUnmap(base + G, G)).thenReturn(1);
        clearInvocations(api);
        DeviceException e = assertThrows(DeviceException.class, () -> device.close());
        assertTrue(e.getMessage().startsWith("cuMemUnmap([0x" + Long.toHexString(base + G)), e.getMessage());
        InOrder order = inOrder(api);
        order.verify(api).deviceSynchronize();
        order.verify(api).memUnmap(base, G);
        order.verify(api).memRelease(101);
        order.verify(api).memUnmap(base + G, G);
        order.verify(api).memRelease(102);
        order.verify(api).memUnmap(base + 4 * G, G);
        order.verify(api).memRelease(103);
        order.verify(api).memAddressFree(base, 8 * G);
        verify(api, times(3)).memUnmap(anyLong(), anyLong());
        verify(api, times(3)).memRelease(anyLong());
        assertThrows(IllegalStateException.class, () -> vm.reserve(G));
        assertThrows(IllegalStateException.class, vm::mappedBytes);
    }
}
