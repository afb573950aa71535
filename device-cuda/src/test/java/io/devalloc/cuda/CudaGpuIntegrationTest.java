package io.devalloc.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.spi.Availability;
import io.devalloc.testkit.DeviceMemoryContract;
import io.devalloc.testkit.UnmapFailure;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The adapter against a real NVIDIA GPU through JCuda: malloc and free, copies both ways, memset, streams and
 * events, CUDA virtual memory, and the project's device contract on {@code cuda:0} and {@code cuda-host:0}.
 *
 * <p>The whole class, nested contract suites included, is skipped with the probe's reason where the {@code cuda}
 * provider is unavailable, which includes every machine without an NVIDIA driver ({@link RequiresCudaGpu}; each
 * test also assumes it). These tests have not been run on a GPU in this project's CI; run them with
 * {@code ./mvnw -pl device-cuda -am verify} on a machine with one.
 */
@ExtendWith(CudaGpuIntegrationTest.RequiresCudaGpu.class)
class CudaGpuIntegrationTest {

    /**
     * Disables the class where CUDA is unavailable, saying why. A class-level condition rather than only an
     * assumption in {@code @BeforeEach}, because the contract suites' own {@code @AfterEach} would otherwise run
     * on a device that was never opened.
     */
    static final class RequiresCudaGpu implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            Availability a = new CudaDeviceMemoryProvider().probe();
            return a.available() ? ConditionEvaluationResult.enabled("CUDA: " + a.reason())
                    : ConditionEvaluationResult.disabled("no usable CUDA GPU here: " + a.reason());
        }
    }

    private static final long MIB = 1L << 20;

    /** Skips the calling test unless CUDA is usable here, saying why not. */
    static void assumeGpu() {
        Availability a = new CudaDeviceMemoryProvider().probe();
        assumeTrue(a.available(), () -> "no usable CUDA GPU here: " + a.reason());
    }

    private CudaDeviceMemory gpu;

    @BeforeEach
    void open() {
        assumeGpu();
        gpu = (CudaDeviceMemory) new CudaDeviceMemoryProvider().open("0");
    }

    @AfterEach
    void close() {
        if (gpu != null) {
            gpu.close();
        }
    }

    @Test
    void describesTheGpu() {
        assertEquals("cuda:0", gpu.descriptor().id());
        assertEquals(DeviceKind.GPU, gpu.descriptor().kind());
        MemoryInfo info = gpu.memoryInfo();
        assertEquals(gpu.descriptor().totalBytes(), info.totalBytes());
        assertTrue(info.freeBytes() > 0 && info.freeBytes() <= info.totalBytes());
    }

    @Test
    void mallocCopyFillAndFreeForReal() {
        long bytes = 4 * MIB;
        long d = gpu.malloc(bytes);
        assertNotEquals(DeviceMemory.NULL, d);
        assertEquals(0, d % 256);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment up = arena.allocate(bytes, 64);
            for (long i = 0; i < bytes; i += 4) {
                up.set(ValueLayout.JAVA_INT, i, (int) (i * 2654435761L));
            }
            gpu.copyFromHost(up, d);
            gpu.fill(d + MIB, 0x5a, MIB);
            MemorySegment down = arena.allocate(bytes, 64);
            gpu.copyToHost(d, down);
            for (long i = 0; i < bytes; i += 4) {
                int expected = i >= MIB && i < 2 * MIB ? 0x5a5a5a5a : (int) (i * 2654435761L);
                assertEquals(expected, down.get(ValueLayout.JAVA_INT, i), "int at " + i);
            }
        }
        gpu.free(d);
        assertThrows(InvalidFreeException.class, () -> gpu.free(d));
    }

    @Test
    void outOfMemoryIsNullAndTheGpuStaysUsable() {
        // The context itself takes memory, so the whole capacity can never be served.
        assertEquals(DeviceMemory.NULL, gpu.malloc(gpu.descriptor().totalBytes()));
        long d = gpu.malloc(MIB);
        assertNotEquals(DeviceMemory.NULL, d);
        gpu.free(d);
    }

    @Test
    void streamsAndEventsOrderRealWork() {
        long bytes = 64 * MIB;
        long d = gpu.malloc(bytes);
        DeviceStream s = gpu.createStream();
        DeviceEvent e = gpu.createEvent();
        try (CudaDeviceMemory pinned = (CudaDeviceMemory) new CudaHostMemoryProvider().open("0")) {
            long h = pinned.malloc(bytes);
            MemorySegment host = pinned.hostView(h, bytes).orElseThrow();
            host.fill((byte) 0);
            gpu.fillAsync(d, 0x11, bytes, s);
            gpu.copyAsync(h, d, bytes, s);
            gpu.recordEvent(e, s);
            // The event may or may not be complete yet; either answer is fine, an exception is not.
            gpu.isEventComplete(e);
            gpu.synchronizeEvent(e);
            assertTrue(gpu.isEventComplete(e));
            assertEquals((byte) 0x11, host.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals((byte) 0x11, host.get(ValueLayout.JAVA_BYTE, bytes - 1));
            gpu.synchronizeStream(s);
            pinned.free(h);
        }
        gpu.destroyEvent(e);
        gpu.destroyStream(s);
        gpu.free(d);
        gpu.synchronize();
    }

    @Test
    void virtualMemoryMapsRealMemory() {
        Optional<VirtualMemory> vm = gpu.virtualMemory();
        assumeTrue(vm.isPresent(), "this GPU or driver has no CUDA virtual-memory management");
        VirtualMemory v = vm.get();
        long g = v.granularity();
        long base = v.reserve(8 * g);
        assertNotEquals(0, base);
        long freeBefore = gpu.memoryInfo().freeBytes();
        assertTrue(v.map(base, 2 * g));
        assertTrue(v.map(base + 2 * g, g));
        assertEquals(3 * g, v.mappedBytes());
        assertTrue(gpu.memoryInfo().freeBytes() <= freeBefore - 3 * g, "mapping takes physical memory");
        // The two mappings are one contiguous range to the GPU.
        gpu.fill(base, 0x7e, 3 * g);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment down = arena.allocate(3 * g);
            gpu.copyToHost(base, down);
            assertEquals((byte) 0x7e, down.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals((byte) 0x7e, down.get(ValueLayout.JAVA_BYTE, 2 * g + 5));
            assertEquals((byte) 0x7e, down.get(ValueLayout.JAVA_BYTE, 3 * g - 1));
        }
        gpu.synchronize();
        // Every granule has its own physical handle: the middle granule of the first map goes, its neighbours
        // (one from each map call) keep their memory and contents.
        v.unmap(base + g, g);
        assertEquals(2 * g, v.mappedBytes());
        gpu.fill(base + 2 * g, 0x3c, g);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment first = arena.allocate(g);
            MemorySegment last = arena.allocate(g);
            gpu.copyToHost(base, first);
            gpu.copyToHost(base + 2 * g, last);
            assertEquals((byte) 0x7e, first.get(ValueLayout.JAVA_BYTE, g - 1));
            assertEquals((byte) 0x3c, last.get(ValueLayout.JAVA_BYTE, 0));
        }
        assertTrue(v.map(base + g, g), "the hole maps again");
        gpu.synchronize();
        v.unmap(base, 3 * g);
        assertEquals(0, v.mappedBytes());
        v.release(base);
    }

    @Test
    void closeFreesWhatWasLeft() {
        gpu.malloc(MIB);
        gpu.createStream();
        gpu.createEvent();
        gpu.virtualMemory().ifPresent(v -> v.map(v.reserve(v.granularity()), v.granularity()));
        gpu.close();
        assertThrows(IllegalStateException.class, () -> gpu.malloc(1));
        gpu = null;
    }

    /** The project's device contract on a real GPU. */
    @Nested
    class GpuContract extends DeviceMemoryContract {
        @Override
        protected DeviceMemory openDevice() {
            assumeGpu();
            return new CudaDeviceMemoryProvider().open("0");
        }

        @Override
        protected UnmapFailure armUnmapFailure() {
            return UnmapFailure.impossible("a real driver cannot be made to fail cuMemUnmap on demand;"
                    + " CudaDeviceMemoryContractTest checks the adapter's failed unmaps over a simulated driver");
        }
    }

    /** The project's device contract on real pinned host memory. */
    @Nested
    class PinnedHostContract extends DeviceMemoryContract {
        @Override
        protected DeviceMemory openDevice() {
            assumeGpu();
            return new CudaHostMemoryProvider().open("0");
        }
    }
}
