package io.devalloc.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import java.util.function.Consumer;
import jcuda.driver.CUmemAccess_flags;
import jcuda.driver.CUmemAllocationGranularity_flags;
import jcuda.driver.CUresult;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaError;
import jcuda.runtime.cudaMemcpyKind;
import org.junit.jupiter.api.Test;

/**
 * The thin JCuda layer, as far as it can be exercised without a GPU: raw pointers, the handle tables, the refusal
 * to touch the driver API without the driver library, the constants, and (on a machine without a driver) the
 * runtime API answering error 35.
 */
class JCudaApiTest {

    @Test
    void constantsAgreeWithJCuda() {
        assertEquals(cudaError.cudaSuccess, CudaApi.SUCCESS);
        assertEquals(cudaError.cudaErrorInvalidValue, CudaApi.ERROR_INVALID_VALUE);
        assertEquals(cudaError.cudaErrorMemoryAllocation, CudaApi.ERROR_MEMORY_ALLOCATION);
        assertEquals(cudaError.cudaErrorInsufficientDriver, CudaApi.ERROR_INSUFFICIENT_DRIVER);
        assertEquals(cudaError.cudaErrorNoDevice, CudaApi.ERROR_NO_DEVICE);
        assertEquals(cudaError.cudaErrorInvalidDevice, CudaApi.ERROR_INVALID_DEVICE);
        assertEquals(cudaError.cudaErrorNotReady, CudaApi.ERROR_NOT_READY);
        assertEquals(cudaError.cudaErrorInvalidResourceHandle, JCudaApi.ERROR_INVALID_HANDLE);
        assertEquals(cudaError.cudaErrorUnknown, JCudaApi.ERROR_UNKNOWN);
        assertEquals(CUresult.CUDA_ERROR_OUT_OF_MEMORY, CudaApi.CU_ERROR_OUT_OF_MEMORY);
        assertEquals(CUresult.CUDA_ERROR_NOT_SUPPORTED, CudaApi.CU_ERROR_NOT_SUPPORTED);
        assertEquals(CUresult.CUDA_ERROR_INVALID_HANDLE, JCudaApi.ERROR_INVALID_HANDLE);
        assertEquals(JCuda.cudaStreamNonBlocking, CudaApi.STREAM_NON_BLOCKING);
        assertEquals(JCuda.cudaEventDisableTiming, CudaApi.EVENT_DISABLE_TIMING);
        assertEquals(JCuda.cudaHostAllocPortable, CudaApi.HOST_ALLOC_PORTABLE);
        assertEquals(cudaMemcpyKind.cudaMemcpyDefault, CudaApi.MEMCPY_DEFAULT);
        assertEquals(CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM, CudaApi.GRANULARITY_MINIMUM);
        assertEquals(CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CudaApi.ACCESS_READ_WRITE);
    }

    @Test
    void rawPointersCarryTheirAddress() {
        assertEquals(0x7f12_3456_7800L, new JCudaApi.RawPointer(0x7f12_3456_7800L).address());
        assertEquals(0, new JCudaApi.RawPointer().address());
        assertEquals(0x7000_0020_0000L, new JCudaApi.RawDevicePointer(0x7000_0020_0000L).address());
        assertEquals(0, new JCudaApi.RawDevicePointer().address());
    }

    @Test
    void exceptionMessagesTurnBackIntoCodes() {
        assertEquals(600, JCudaApi.ErrorCodes.RUNTIME.codeOf(cudaError.stringFor(600)));
        assertEquals(2, JCudaApi.ErrorCodes.RUNTIME.codeOf("cudaErrorMemoryAllocation"));
        assertEquals(35, JCudaApi.ErrorCodes.RUNTIME.codeOf("cudaErrorInsufficientDriver"));
        assertEquals(2, JCudaApi.ErrorCodes.DRIVER.codeOf("CUDA_ERROR_OUT_OF_MEMORY"));
        assertEquals(JCudaApi.ERROR_UNKNOWN, JCudaApi.ErrorCodes.RUNTIME.codeOf("something else"));
        assertEquals(JCudaApi.ERROR_UNKNOWN, JCudaApi.ErrorCodes.DRIVER.codeOf(null));
    }

    @Test
    void unknownHandlesAreAnsweredWithoutCallingCuda() {
        JCudaApi api = new JCudaApi(false);
        assertEquals(JCudaApi.ERROR_INVALID_HANDLE, api.eventQuery(12345));
        assertEquals(JCudaApi.ERROR_INVALID_HANDLE, api.eventRecord(12345, 0));
        assertEquals(JCudaApi.ERROR_INVALID_HANDLE, api.eventSynchronize(12345));
        assertEquals(JCudaApi.ERROR_INVALID_HANDLE, api.eventDestroy(12345));
        assertEquals(JCudaApi.ERROR_INVALID_HANDLE, api.streamDestroy(0), "the default stream");
        assertEquals(JCudaApi.ERROR_INVALID_HANDLE, api.streamDestroy(12345));
        assertEquals(JCudaApi.ERROR_INVALID_HANDLE, api.streamSynchronize(12345));
        assertEquals(JCudaApi.ERROR_INVALID_HANDLE, api.memcpyAsync(0, 0, 0, 4, 12345));
        assertEquals(JCudaApi.ERROR_INVALID_HANDLE, api.memsetAsync(0, 0, 0, 12345));
    }

    @Test
    void theDriverApiIsRefusedWithoutTheDriverLibrary() {
        JCudaApi api = new JCudaApi(false);
        List<Consumer<JCudaApi>> calls = List.of(
                JCudaApi::driverInit, a -> a.driverErrorName(1), a -> a.driverErrorString(1),
                a -> a.deviceVirtualMemorySupported(0, new int[1]),
                a -> a.memGetAllocationGranularity(new long[1], 0, 0),
                a -> a.memAddressReserve(new long[1], 1 << 21, 1 << 21, 0, 0), a -> a.memAddressFree(1 << 21, 1 << 21),
                a -> a.memCreate(new long[1], 1 << 21, 0, 0), a -> a.memRelease(1),
                a -> a.memMap(1 << 21, 1 << 21, 0, 1, 0), a -> a.memUnmap(1 << 21, 1 << 21),
                a -> a.memSetAccess(1 << 21, 1 << 21, 0, 3));
        for (Consumer<JCudaApi> call : calls) {
            assertThrows(IllegalStateException.class, () -> call.accept(api));
        }
    }

    @Test
    void withoutADriverTheRuntimeAnswers35AndNothingBreaks() {
        assumeTrue(CudaAvailability.libraryProblem(CudaAvailability.DRIVER_LIBRARY) != null,
                "this machine has an NVIDIA driver");
        JCudaApi api = new JCudaApi(false);
        int[] count = {-1};
        assertEquals(CudaApi.ERROR_INSUFFICIENT_DRIVER, api.getDeviceCount(count));
        assertEquals("cudaErrorInsufficientDriver", api.getErrorName(35));
        long[] address = {-1};
        assertEquals(CudaApi.ERROR_INSUFFICIENT_DRIVER, api.malloc(address, 1024));
        assertEquals(0, address[0]);
        assertEquals(CudaApi.ERROR_INSUFFICIENT_DRIVER, api.hostAlloc(address, 1024, CudaApi.HOST_ALLOC_PORTABLE));
        long[] stream = {-1};
        assertEquals(CudaApi.ERROR_INSUFFICIENT_DRIVER, api.streamCreateWithFlags(stream, CudaApi.STREAM_NON_BLOCKING));
        assertEquals(0, stream[0]);
        int[] version = {-1};
        assertEquals(CudaApi.SUCCESS, api.runtimeGetVersion(version));
        assertTrue(version[0] >= 12000, "a CUDA 12 runtime: " + version[0]);
    }
}
