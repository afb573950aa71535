package io.devalloc.cuda;

import static io.devalloc.cuda.Answers.out;
import static io.devalloc.cuda.Answers.outs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.mockito.Mockito.when;

import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockito.InOrder;

/** The {@code cuda-host} variant (pinned host memory from {@code cudaHostAlloc}) against a mocked {@link CudaApi}. */
class CudaPinnedHostMemoryTest {

    private static final long CAPACITY = 64 * 4096;

    private CudaApi api;
    private CudaDeviceMemory device;

    @BeforeEach
    void open() {
        api = mock(CudaApi.class);
        Answers.errorNames(api);
        Answers.gpu(api, 1L << 30);
        device = CudaDeviceMemory.pinnedHost(api, 2, CAPACITY);
        clearInvocations(api);
    }

    @AfterEach
    void close() {
        device.close();
    }

    @Test
    void describesPinnedHostMemory() {
        assertEquals("cuda-host:2", device.descriptor().id());
        assertEquals(DeviceKind.PINNED_HOST, device.descriptor().kind());
        assertEquals(CAPACITY, device.descriptor().totalBytes());
        assertTrue(device.descriptor().name().contains("cudaHostAlloc"), device.descriptor().name());
        assertTrue(device.descriptor().name().contains("Test GPU"), device.descriptor().name());
        assertEquals(new MemoryInfo(CAPACITY, CAPACITY), device.memoryInfo());
        assertTrue(device.virtualMemory().isEmpty());
        verify(api, never()).driverInit();
    }

    @Test
    void allocatesPortablePinnedMemoryOnTheChosenDeviceAndFreesItWithCudaFreeHost() {
        when(api.hostAlloc(any(), anyLong(), anyInt())).thenAnswer(out(0x10_0000, 0));
        long a = device.malloc(100);
        InOrder order = inOrder(api);
        order.verify(api).setDevice(2);
        order.verify(api).hostAlloc(any(), eq(100L), eq(CudaApi.HOST_ALLOC_PORTABLE));
        assertEquals(0x10_0000, a);
        assertEquals(CAPACITY - 4096, device.memoryInfo().freeBytes(), "accounted in pages");
        device.free(a);
        order.verify(api).setDevice(2);
        order.verify(api).freeHost(a);
        verify(api, never()).malloc(any(), anyLong());
        verify(api, never()).free(anyLong());
        assertEquals(CAPACITY, device.memoryInfo().freeBytes());
    }

    @Test
    void theCapacityIsEnforcedBeforeCuda() {
        when(api.hostAlloc(any(), anyLong(), anyInt())).thenAnswer(out(0x10_0000, 0));
        long a = device.malloc(CAPACITY);
        clearInvocations(api);
        assertEquals(DeviceMemory.NULL, device.malloc(1));
        assertEquals(DeviceMemory.NULL, device.malloc(Long.MAX_VALUE));
        verifyNoInteractions(api);
        device.free(a);
    }

    @Test
    void outOfMemoryGivesTheCapacityBack() {
        when(api.hostAlloc(any(), anyLong(), anyInt())).thenReturn(CudaApi.ERROR_MEMORY_ALLOCATION);
        assertEquals(DeviceMemory.NULL, device.malloc(4096));
        verify(api).getLastError();
        assertEquals(CAPACITY, device.memoryInfo().freeBytes());
        when(api.hostAlloc(any(), anyLong(), anyInt())).thenReturn(1);
        assertThrows(DeviceException.class, () -> device.malloc(4096));
        assertEquals(CAPACITY, device.memoryInfo().freeBytes());
    }

    @Test
    void unknownFreesNeverReachCuda() {
        assertThrows(InvalidFreeException.class, () -> device.free(0x10_0000));
        verifyNoInteractions(api);
    }

    @Test
    void hostViewsCoverLiveAllocationsOnly() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment real = arena.allocate(8192, 4096);
            when(api.hostAlloc(any(), anyLong(), anyInt())).thenAnswer(out(real.address(), 0));
            long a = device.malloc(5000);
            MemorySegment view = device.hostView(a + 100, 4900).orElseThrow();
            assertEquals(4900, view.byteSize());
            view.set(ValueLayout.JAVA_BYTE, 0, (byte) 42);
            assertEquals(42, real.get(ValueLayout.JAVA_BYTE, 100));
            assertThrows(IllegalArgumentException.class, () -> device.hostView(a + 100, 4901));
            assertThrows(IllegalArgumentException.class, () -> device.hostView(a - 1, 1));
            assertThrows(IllegalArgumentException.class, () -> device.hostView(a, 0));
            device.free(a);
            assertThrows(IllegalArgumentException.class, () -> device.hostView(a, 1), "freed");
        }
    }

    @Test
    void closeFreesWithCudaFreeHost() {
        when(api.hostAlloc(any(), anyLong(), anyInt())).thenAnswer(outs(0x10_0000, 0x20_0000));
        device.malloc(1);
        device.malloc(1);
        device.close();
        verify(api).freeHost(0x10_0000);
        verify(api).freeHost(0x20_0000);
        verify(api, never()).free(anyLong());
    }

    @Test
    void refusesACapacityBelowOnePage() {
        assertThrows(IllegalArgumentException.class, () -> CudaDeviceMemory.pinnedHost(api, 0, 4095));
    }
}
