package io.devalloc.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.testkit.DeviceMemoryContract;
import io.devalloc.testkit.UnmapFailure;
import org.junit.jupiter.api.Test;

/**
 * The project's device contract on {@link CudaDeviceMemory} over {@link FakeCuda}, a simulated CUDA: the adapter's
 * logic (device switching, bookkeeping, error mapping, virtual memory) end to end, without a GPU. Device 1 of two,
 * so that a call that forgot {@code cudaSetDevice} would land on device 0 and show up in the figures.
 */
class CudaDeviceMemoryContractTest extends DeviceMemoryContract {

    private static final long CAPACITY = 256L << 20;
    /** {@code CUDA_ERROR_LAUNCH_FAILED}: an earlier kernel's failure, reported by whichever call comes next. */
    private static final int LAUNCH_FAILED = 719;

    private FakeCuda cuda;

    @Override
    protected DeviceMemory openDevice() {
        cuda = new FakeCuda(2, CAPACITY);
        return CudaDeviceMemory.gpu(cuda, 1, true);
    }

    @Override
    protected UnmapFailure armUnmapFailure() {
        cuda.failNextMemUnmap(LAUNCH_FAILED);
        return UnmapFailure.armed();
    }

    @Test
    void everythingLandsOnTheDeviceItWasOpenedFor() {
        long a = device.malloc(1 << 20);
        assertEquals(1 << 20, cuda.usedBytes(1));
        assertEquals(0, cuda.usedBytes(0), "nothing on device 0");
        device.virtualMemory().orElseThrow().map(device.virtualMemory().orElseThrow().reserve(FakeCuda.GRANULE),
                FakeCuda.GRANULE);
        assertEquals((1 << 20) + FakeCuda.GRANULE, cuda.usedBytes(1));
        assertEquals(0, cuda.usedBytes(0));
        device.free(a);
    }

    @Test
    void aMapThatRunsOutHalfwayLeavesNothingOfItInCuda() {
        var vm = device.virtualMemory().orElseThrow();
        long g = FakeCuda.GRANULE;
        long base = vm.reserve(CAPACITY + 4 * g);
        assertTrue(vm.map(base, 4 * g));
        assertEquals(1 + 4 + 4, cuda.liveVirtualMemoryObjects(), "a reservation, 4 mappings, 4 handles");
        // 128 granules, of which 124 fit: cuMemCreate runs out at the 125th.
        assertFalse(vm.map(base + 4 * g, CAPACITY));
        assertEquals(1 + 4 + 4, cuda.liveVirtualMemoryObjects());
        assertEquals(4 * g, cuda.usedBytes(1));
        assertEquals(4 * g, vm.mappedBytes());
        vm.unmap(base + g, 2 * g);
        assertEquals(1 + 2 + 2, cuda.liveVirtualMemoryObjects(), "exactly the two granules went");
        assertEquals(2 * g, cuda.usedBytes(1));
        assertTrue(vm.map(base + g, 2 * g), "the hole maps again");
        assertTrue(vm.map(base + 4 * g, CAPACITY - 4 * g), "the rest of the device fits");
        assertEquals(CAPACITY, cuda.usedBytes(1));
        vm.unmap(base, CAPACITY);
        assertEquals(0, cuda.usedBytes(1));
        vm.release(base);
        assertEquals(0, cuda.liveVirtualMemoryObjects());
    }

    /**
     * In the simulated CUDA, which only unmaps whole {@code cuMemMap} ranges and releases whole handles: a piece is
     * one handle and one mapping, so pieces of 20 MiB are a tenth of the objects of granules, and close releases
     * them.
     */
    @Test
    void aPieceIsOneHandleAndOneMappingInCuda() {
        var vm = device.virtualMemory().orElseThrow();
        long g = FakeCuda.GRANULE;
        long page = 10 * g;
        long base = vm.reserve(6 * page);
        assertTrue(vm.map(base, 3 * page, page));
        assertEquals(1 + 3 + 3, cuda.liveVirtualMemoryObjects(), "a reservation, 3 mappings, 3 handles");
        assertTrue(vm.map(base + 3 * page, 2 * page, 2 * page));
        assertEquals(1 + 4 + 4, cuda.liveVirtualMemoryObjects(), "one more mapping and handle, of 40 MiB");
        assertEquals(5 * page, cuda.usedBytes(1));
        vm.unmap(base + page, 4 * page);
        assertEquals(1 + 1 + 1, cuda.liveVirtualMemoryObjects(), "two 20 MiB pieces and the 40 MiB one went");
        assertEquals(page, cuda.usedBytes(1));
        device.close();
        assertEquals(0, cuda.liveVirtualMemoryObjects());
        assertEquals(0, cuda.usedBytes(1));
    }

    @Test
    void closeLeavesNothingBehindInCuda() {
        device.malloc(4096);
        device.malloc(1 << 20);
        device.createStream();
        device.createEvent();
        var vm = device.virtualMemory().orElseThrow();
        long base = vm.reserve(4 * FakeCuda.GRANULE);
        assertTrue(vm.map(base, 3 * FakeCuda.GRANULE));
        vm.unmap(base + FakeCuda.GRANULE, FakeCuda.GRANULE);
        device.close();
        assertEquals(0, cuda.liveAllocations());
        assertEquals(0, cuda.liveStreamsAndEvents());
        assertEquals(0, cuda.liveVirtualMemoryObjects());
        assertEquals(0, cuda.usedBytes(1));
    }
}
