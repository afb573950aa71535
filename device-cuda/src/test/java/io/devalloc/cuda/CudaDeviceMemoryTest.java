package io.devalloc.cuda;

import static io.devalloc.cuda.Answers.out;
import static io.devalloc.cuda.Answers.outs;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
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

import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockito.InOrder;

/** The GPU adapter's own logic against a mocked {@link CudaApi}. */
class CudaDeviceMemoryTest {

    private static final long GIB = 1L << 30;
    private static final int DEVICE = 1;

    private CudaApi api;
    private CudaDeviceMemory device;

    @BeforeEach
    void open() {
        api = mock(CudaApi.class);
        Answers.errorNames(api);
        Answers.gpu(api, GIB);
        device = CudaDeviceMemory.gpu(api, DEVICE, false);
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

    // ---- opening

    @Test
    void describesTheGpuFromItsPropertiesAndMemory() {
        assertEquals("cuda:1", device.descriptor().id());
        assertEquals("Test GPU", device.descriptor().name());
        assertEquals(DeviceKind.GPU, device.descriptor().kind());
        assertEquals(GIB, device.descriptor().totalBytes());
        assertEquals(256, device.alignment());
        assertEquals(DEVICE, device.deviceIndex());
    }

    @Test
    void openingMakesTheDeviceCurrentBeforeAskingForItsMemory() {
        CudaApi other = mock(CudaApi.class);
        Answers.gpu(other, GIB);
        CudaDeviceMemory.gpu(other, 3, false).close();
        InOrder order = inOrder(other);
        order.verify(other).setDevice(3);
        order.verify(other).memGetInfo(any(), any());
    }

    @Test
    void openingFailsWithTheErrorWhenTheDeviceCannotBeMadeCurrent() {
        CudaApi other = mock(CudaApi.class);
        Answers.errorNames(other);
        when(other.setDevice(7)).thenReturn(101);
        DeviceException e = assertThrows(DeviceException.class, () -> CudaDeviceMemory.gpu(other, 7, false));
        assertTrue(e.getMessage().contains("cudaSetDevice(7)"), e.getMessage());
        assertTrue(e.getMessage().contains("cudaErrorInvalidDevice (101): invalid device ordinal"), e.getMessage());
        verify(other, never()).malloc(any(), anyLong());
    }

    // ---- current device

    @Test
    void everyCallMakesTheDeviceCurrentFirst() {
        when(api.malloc(any(), anyLong())).thenAnswer(out(0x1000, 0));
        when(api.streamCreateWithFlags(any(), anyInt())).thenAnswer(out(11, 0));
        when(api.eventCreateWithFlags(any(), anyInt())).thenAnswer(out(12, 0));
        InOrder order = inOrder(api);

        long a = device.malloc(100);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).malloc(any(), eq(100L));
        device.memoryInfo();
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memGetInfo(any(), any());
        DeviceStream s = device.createStream();
        order.verify(api).setDevice(DEVICE);
        order.verify(api).streamCreateWithFlags(any(), anyInt());
        DeviceEvent e = device.createEvent();
        order.verify(api).setDevice(DEVICE);
        order.verify(api).eventCreateWithFlags(any(), anyInt());
        device.recordEvent(e, s);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).eventRecord(12, 11);
        device.isEventComplete(e);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).eventQuery(12);
        device.synchronizeEvent(e);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).eventSynchronize(12);
        device.synchronizeStream(s);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).streamSynchronize(11);
        device.copy(0x2000, a, 100);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memcpy(0x2000, a, 100, CudaApi.MEMCPY_DEFAULT);
        device.fill(a, 7, 100);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).memset(a, 7, 100);
        device.destroyEvent(e);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).eventDestroy(12);
        device.destroyStream(s);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).streamDestroy(11);
        device.synchronize();
        order.verify(api).setDevice(DEVICE);
        order.verify(api).deviceSynchronize();
        device.free(a);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).free(a);
        order.verifyNoMoreInteractions();
    }

    @Test
    void callsFromAnyThreadRunOnTheDeviceOpened() throws Exception {
        // A CUDA whose current device is per thread, starting at 0, and that allocates on the current device.
        ThreadLocal<Integer> current = ThreadLocal.withInitial(() -> 0);
        List<Integer> mallocDevices = Collections.synchronizedList(new ArrayList<>());
        when(api.setDevice(anyInt())).thenAnswer(inv -> {
            current.set(inv.getArgument(0));
            return 0;
        });
        when(api.malloc(any(), anyLong())).thenAnswer(inv -> {
            mallocDevices.add(current.get());
            long[] out = inv.getArgument(0);
            out[0] = 0x1000L * (mallocDevices.size() + 1);
            return 0;
        });
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                results.add(pool.submit(() -> device.malloc(256)));
            }
            for (Future<Long> f : results) {
                assertTrue(f.get(10, TimeUnit.SECONDS) != 0);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(List.of(1, 1, 1, 1, 1, 1), mallocDevices);
    }

    @Test
    void aFailedDeviceSwitchStopsTheCallBeforeCuda() {
        when(api.setDevice(DEVICE)).thenReturn(700);
        DeviceException e = assertThrows(DeviceException.class, () -> device.malloc(256));
        assertTrue(e.getMessage().contains("cudaSetDevice(1) on cuda:1 failed: cudaErrorIllegalAddress (700)"),
                e.getMessage());
        verify(api, never()).malloc(any(), anyLong());
    }

    // ---- malloc

    @Test
    void mallocRecordsTheAddressCudaReturns() {
        when(api.malloc(any(), eq(1000L))).thenAnswer(out(0x7f00_0000_0200L, 0));
        assertEquals(0x7f00_0000_0200L, device.malloc(1000));
        device.free(0x7f00_0000_0200L);
        verify(api).free(0x7f00_0000_0200L);
    }

    @Test
    void outOfMemoryIsNullAndTheErrorIsCleared() {
        when(api.malloc(any(), anyLong())).thenReturn(CudaApi.ERROR_MEMORY_ALLOCATION);
        assertEquals(DeviceMemory.NULL, device.malloc(512L << 20));
        InOrder order = inOrder(api);
        order.verify(api).malloc(any(), eq(512L << 20));
        order.verify(api).getLastError();
        assertThrows(InvalidFreeException.class, () -> device.free(0));
    }

    @Test
    void otherMallocErrorsAreDeviceExceptionsWithNameAndDescription() {
        when(api.malloc(any(), anyLong())).thenReturn(1);
        DeviceException e = assertThrows(DeviceException.class, () -> device.malloc(4096));
        assertEquals("cudaMalloc(4096 bytes) on cuda:1 failed: cudaErrorInvalidValue (1): invalid argument",
                e.getMessage());
        verify(api, never()).getLastError();
    }

    @Test
    void badSizesAreRefusedWithoutCallingCuda() {
        assertThrows(IllegalArgumentException.class, () -> device.malloc(0));
        assertThrows(IllegalArgumentException.class, () -> device.malloc(-5));
        verifyNoInteractions(api);
        assertEquals(DeviceMemory.NULL, device.malloc(GIB + 1), "more than the GPU has");
        assertEquals(DeviceMemory.NULL, device.malloc(Long.MAX_VALUE));
        verify(api, never()).malloc(any(), anyLong());
    }

    @Test
    void aMisalignedAddressIsGivenBackAndReported() {
        when(api.malloc(any(), anyLong())).thenAnswer(out(0x1001, 0));
        DeviceException e = assertThrows(DeviceException.class, () -> device.malloc(64));
        assertTrue(e.getMessage().contains("0x1001"), e.getMessage());
        verify(api).free(0x1001);
        assertThrows(InvalidFreeException.class, () -> device.free(0x1001));
    }

    // ---- free

    @Test
    void unknownFreesNeverReachCuda() {
        InvalidFreeException e = assertThrows(InvalidFreeException.class, () -> device.free(0x1234_5600L));
        assertEquals(InvalidFreeException.Reason.UNKNOWN_ADDRESS, e.reason());
        assertTrue(e.getMessage().contains("0x12345600"), e.getMessage());
        assertThrows(InvalidFreeException.class, () -> device.free(0));
        verifyNoInteractions(api);
    }

    @Test
    void aDoubleFreeReachesCudaOnce() {
        when(api.malloc(any(), anyLong())).thenAnswer(out(0x4000, 0));
        long a = device.malloc(256);
        device.free(a);
        assertThrows(InvalidFreeException.class, () -> device.free(a));
        verify(api, times(1)).free(a);
    }

    @Test
    void aRefusedFreeIsReportedAndTheAddressForgotten() {
        when(api.malloc(any(), anyLong())).thenAnswer(out(0x4000, 0));
        when(api.free(0x4000)).thenReturn(700);
        long a = device.malloc(256);
        DeviceException e = assertThrows(DeviceException.class, () -> device.free(a));
        assertTrue(e.getMessage().startsWith("cudaFree(0x4000) on cuda:1 failed: cudaErrorIllegalAddress (700)"),
                e.getMessage());
        assertThrows(InvalidFreeException.class, () -> device.free(a));
        clearInvocations(api);
        device.close();
        verify(api, never()).free(anyLong());
    }

    // ---- memory info

    @Test
    void memoryInfoIsWhatCudaMemGetInfoSays() {
        doAnswer(inv -> {
            ((long[]) inv.getArgument(0))[0] = 300;
            ((long[]) inv.getArgument(1))[0] = GIB;
            return 0;
        }).when(api).memGetInfo(any(), any());
        assertEquals(new MemoryInfo(300, GIB), device.memoryInfo());
        doReturn(700).when(api).memGetInfo(any(), any());
        assertThrows(DeviceException.class, () -> device.memoryInfo());
    }

    @Test
    void gpuMemoryHasNoHostView() {
        when(api.malloc(any(), anyLong())).thenAnswer(out(0x4000, 0));
        long a = device.malloc(256);
        assertTrue(device.hostView(a, 256).isEmpty());
        assertTrue(device.hostView(0x9000, 1).isEmpty(), "nor of virtual memory, which is not in the table");
        assertThrows(IllegalArgumentException.class, () -> device.hostView(a, 0));
    }

    // ---- streams

    @Test
    void streamsAreNonBlockingAndTracked() {
        when(api.streamCreateWithFlags(any(), anyInt())).thenAnswer(out(21, 0));
        DeviceStream s = device.createStream();
        assertEquals(new DeviceStream(21), s);
        verify(api).streamCreateWithFlags(any(), eq(CudaApi.STREAM_NON_BLOCKING));
        device.destroyStream(s);
        verify(api).streamDestroy(21);
        clearInvocations(api);
        assertThrows(IllegalArgumentException.class, () -> device.destroyStream(s), "destroyed twice");
        assertThrows(IllegalArgumentException.class, () -> device.destroyStream(DeviceStream.DEFAULT));
        assertThrows(IllegalArgumentException.class, () -> device.destroyStream(new DeviceStream(99)));
        assertThrows(IllegalArgumentException.class, () -> device.synchronizeStream(s));
        verifyNoInteractions(api);
    }

    @Test
    void streamErrorsAreDeviceExceptions() {
        when(api.streamCreateWithFlags(any(), anyInt())).thenReturn(2);
        assertThrows(DeviceException.class, () -> device.createStream());
        doAnswer(out(0, 0)).when(api).streamCreateWithFlags(any(), anyInt());
        DeviceException e = assertThrows(DeviceException.class, () -> device.createStream());
        assertTrue(e.getMessage().contains("default stream"), e.getMessage());
    }

    // ---- events

    @Test
    void eventLifeCycle() {
        when(api.eventCreateWithFlags(any(), anyInt())).thenAnswer(out(31, 0));
        when(api.streamCreateWithFlags(any(), anyInt())).thenAnswer(out(32, 0));
        DeviceEvent e = device.createEvent();
        verify(api).eventCreateWithFlags(any(), eq(CudaApi.EVENT_DISABLE_TIMING));
        assertEquals(new DeviceEvent(31), e);
        DeviceStream s = device.createStream();

        device.recordEvent(e, s);
        verify(api).eventRecord(31, 32);
        device.recordEvent(e, DeviceStream.DEFAULT);
        verify(api).eventRecord(31, 0);

        when(api.eventQuery(31)).thenReturn(CudaApi.ERROR_NOT_READY);
        assertFalse(device.isEventComplete(e), "600 is 'not yet'");
        verify(api).getLastError();
        when(api.eventQuery(31)).thenReturn(CudaApi.SUCCESS);
        assertTrue(device.isEventComplete(e));
        when(api.eventQuery(31)).thenReturn(700);
        DeviceException failure = assertThrows(DeviceException.class, () -> device.isEventComplete(e));
        assertTrue(failure.getMessage().contains("cudaEventQuery(event(0x1f)) on cuda:1 failed"), failure.getMessage());

        device.synchronizeEvent(e);
        verify(api).eventSynchronize(31);
        device.destroyEvent(e);
        verify(api).eventDestroy(31);

        clearInvocations(api);
        assertThrows(IllegalArgumentException.class, () -> device.isEventComplete(e));
        assertThrows(IllegalArgumentException.class, () -> device.recordEvent(e, s));
        assertThrows(IllegalArgumentException.class, () -> device.synchronizeEvent(e));
        assertThrows(IllegalArgumentException.class, () -> device.destroyEvent(e));
        verifyNoInteractions(api);
    }

    @Test
    void recordingOnAStreamThatIsNotLiveNeverReachesCuda() {
        when(api.eventCreateWithFlags(any(), anyInt())).thenAnswer(out(31, 0));
        DeviceEvent e = device.createEvent();
        clearInvocations(api);
        assertThrows(IllegalArgumentException.class, () -> device.recordEvent(e, new DeviceStream(77)));
        verifyNoInteractions(api);
    }

    @Test
    void eventErrorsAreDeviceExceptions() {
        when(api.eventCreateWithFlags(any(), anyInt())).thenAnswer(out(31, 0));
        DeviceEvent e = device.createEvent();
        when(api.eventRecord(anyLong(), anyLong())).thenReturn(400);
        assertThrows(DeviceException.class, () -> device.recordEvent(e, DeviceStream.DEFAULT));
        when(api.eventSynchronize(anyLong())).thenReturn(700);
        assertThrows(DeviceException.class, () -> device.synchronizeEvent(e));
        when(api.deviceSynchronize()).thenReturn(700);
        assertThrows(DeviceException.class, () -> device.synchronize());
        doAnswer(out(0, 0)).when(api).eventCreateWithFlags(any(), anyInt());
        assertThrows(DeviceException.class, () -> device.createEvent(), "handle 0 from CUDA");
    }

    // ---- copies

    @Test
    @SuppressWarnings("restricted") // a fake host address; the mock never dereferences it
    void copiesAndFillsGoToCudaWithTheirStream() {
        when(api.streamCreateWithFlags(any(), anyInt())).thenAnswer(out(41, 0));
        DeviceStream s = device.createStream();
        device.copyAsync(0x1000, 0x2000, 64, s);
        verify(api).memcpyAsync(0x1000, 0x2000, 64, CudaApi.MEMCPY_DEFAULT, 41);
        device.fillAsync(0x1000, 0, 64, DeviceStream.DEFAULT);
        verify(api).memsetAsync(0x1000, 0, 64, 0);
        MemorySegment host = MemorySegment.ofAddress(0x5000).reinterpret(32);
        device.copyFromHost(host, 0x1000);
        verify(api).memcpy(0x1000, 0x5000, 32, CudaApi.MEMCPY_DEFAULT);
        device.copyToHost(0x1000, host);
        verify(api).memcpy(0x5000, 0x1000, 32, CudaApi.MEMCPY_DEFAULT);
        clearInvocations(api);
        assertThrows(IllegalArgumentException.class, () -> device.copy(0x1000, 0x2000, -1));
        assertThrows(IllegalArgumentException.class, () -> device.copyFromHost(MemorySegment.ofArray(new byte[4]), 0));
        assertThrows(IllegalArgumentException.class, () -> device.copyAsync(1, 2, 3, new DeviceStream(5)));
        verifyNoInteractions(api);
        when(api.memcpy(anyLong(), anyLong(), anyLong(), anyInt())).thenReturn(1);
        assertThrows(DeviceException.class, () -> device.copy(0x1000, 0x2000, 8));
    }

    // ---- close

    @Test
    void closeReleasesEverythingAndCarriesOnPastFailures() {
        when(api.malloc(any(), anyLong())).thenAnswer(outs(0x1000, 0x2000, 0x3000));
        when(api.eventCreateWithFlags(any(), anyInt())).thenAnswer(outs(51, 52));
        when(api.streamCreateWithFlags(any(), anyInt())).thenAnswer(out(53, 0));
        device.malloc(256);
        device.malloc(256);
        device.malloc(256);
        device.createEvent();
        device.createEvent();
        device.createStream();
        when(api.free(0x2000)).thenReturn(700);
        when(api.eventDestroy(51)).thenReturn(400);
        clearInvocations(api);

        DeviceException first = assertThrows(DeviceException.class, () -> device.close());
        assertTrue(first.getMessage().startsWith("cudaFree(0x2000) while closing on cuda:1 failed"),
                first.getMessage());
        assertEquals(1, first.getSuppressed().length);
        assertTrue(first.getSuppressed()[0].getMessage().contains("cudaEventDestroy"));
        InOrder order = inOrder(api);
        order.verify(api).setDevice(DEVICE);
        order.verify(api).deviceSynchronize();
        verify(api).free(0x1000);
        verify(api).free(0x2000);
        verify(api).free(0x3000);
        verify(api).eventDestroy(51);
        verify(api).eventDestroy(52);
        verify(api).streamDestroy(53);

        clearInvocations(api);
        device.close();
        verifyNoInteractions(api);
    }

    @Test
    void everyCallAfterCloseIsIllegalState() {
        device.close();
        clearInvocations(api);
        List<Consumer<CudaDeviceMemory>> calls = List.of(
                d -> d.malloc(1), d -> d.free(0x1000), d -> d.memoryInfo(), d -> d.createStream(),
                d -> d.destroyStream(new DeviceStream(1)), d -> d.createEvent(),
                d -> d.recordEvent(new DeviceEvent(1), DeviceStream.DEFAULT),
                d -> d.isEventComplete(new DeviceEvent(1)),
                d -> d.synchronizeEvent(new DeviceEvent(1)), d -> d.destroyEvent(new DeviceEvent(1)),
                DeviceMemory::synchronize, DeviceMemory::virtualMemory, d -> d.hostView(0x1000, 1),
                d -> d.copy(1, 2, 3), d -> d.fill(1, 2, 3), d -> d.synchronizeStream(DeviceStream.DEFAULT));
        for (Consumer<CudaDeviceMemory> call : calls) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> call.accept(device));
            assertTrue(e.getMessage().contains("cuda:1"), e.getMessage());
        }
        assertEquals("cuda:1", device.descriptor().id(), "the descriptor stays readable");
        verifyNoInteractions(api);
    }

    @Test
    void closeWaitsForACallInFlightAndThenFreesWhatItAllocated() throws Exception {
        CountDownLatch inMalloc = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        when(api.malloc(any(), anyLong())).thenAnswer(inv -> {
            inMalloc.countDown();
            assertTrue(release.await(10, TimeUnit.SECONDS));
            ((long[]) inv.getArgument(0))[0] = 0x8000;
            return 0;
        });
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Long> malloc = pool.submit(() -> device.malloc(256));
            assertTrue(inMalloc.await(10, TimeUnit.SECONDS));
            AtomicBoolean closed = new AtomicBoolean();
            Future<?> close = pool.submit(() -> {
                device.close();
                closed.set(true);
            });
            Thread.sleep(100);
            assertFalse(closed.get(), "close must wait for the malloc in flight");
            release.countDown();
            assertEquals(0x8000, malloc.get(10, TimeUnit.SECONDS));
            close.get(10, TimeUnit.SECONDS);
            verify(api).free(0x8000);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void closeFailureOfTheDeviceSwitchStillFreesAndReportsIt() {
        when(api.malloc(any(), anyLong())).thenAnswer(out(0x1000, 0));
        device.malloc(256);
        when(api.setDevice(DEVICE)).thenReturn(700);
        DeviceException e = assertThrows(DeviceException.class, () -> device.close());
        assertTrue(e.getMessage().contains("cudaSetDevice"), e.getMessage());
        verify(api).free(0x1000);
    }

    @Test
    void aNonDeviceExceptionFromCudaDuringCloseIsStillThrownFirst() {
        when(api.malloc(any(), anyLong())).thenAnswer(out(0x1000, 0));
        device.malloc(256);
        IllegalStateException boom = new IllegalStateException("boom");
        when(api.free(0x1000)).thenThrow(boom);
        assertSame(boom, assertThrows(IllegalStateException.class, () -> device.close()));
        verify(api).deviceSynchronize();
    }

    @Test
    void descriptorAndMemoryInfoAgree() {
        MemoryInfo info = device.memoryInfo();
        assertArrayEquals(new long[] {GIB, GIB}, new long[] {info.totalBytes(), device.descriptor().totalBytes()});
        verifyNoMoreInteractions(ignoreSetDevice());
    }

    private CudaApi ignoreSetDevice() {
        verify(api).setDevice(DEVICE);
        verify(api).memGetInfo(any(), any());
        return api;
    }
}
