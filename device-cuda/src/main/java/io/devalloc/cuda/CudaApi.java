package io.devalloc.cuda;

/**
 * Every CUDA call the adapter makes, behind one seam, in CUDA's own shape: each method is one runtime or driver
 * API call, returns its error code ({@code cudaError_t} or {@code CUresult}, 0 for success) and hands results back
 * through one-element arrays. Addresses are plain {@code long}s; streams, events and physical-memory handles are
 * {@code long} ids that only the implementation can turn back into CUDA objects.
 *
 * <p>{@link JCudaApi} is the one real implementation and calls JCuda 1:1. Tests substitute a Mockito mock or an
 * in-memory fake, so they never load a JCuda class; that is why no JCuda type appears here, and why the constants
 * below repeat JCuda's values (a test checks that they agree).
 *
 * <p><b>Threads.</b> Implementations are thread-safe. The runtime binds most calls to the calling thread's
 * current device, so callers issue {@link #setDevice} on the same thread first.
 *
 * <p><b>The driver API.</b> The {@code driver*} and {@code mem*} virtual-memory methods go to {@code libcuda}
 * directly ({@code jcuda.driver.JCudaDriver}). JCuda's driver class cannot even initialise without
 * {@code libcuda.so.1}, and a failed initialisation poisons it for the JVM's life, so those methods may only be
 * called once {@link CudaAvailability} found the library; {@link JCudaApi} refuses them otherwise.
 */
interface CudaApi {

    // ---- runtime error codes (cudaError_t)

    /** {@code cudaSuccess}, and {@code CUDA_SUCCESS} of the driver API. */
    int SUCCESS = 0;
    /** {@code cudaErrorInvalidValue}. */
    int ERROR_INVALID_VALUE = 1;
    /** {@code cudaErrorMemoryAllocation}: out of memory, an expected answer rather than a failure. */
    int ERROR_MEMORY_ALLOCATION = 2;
    /** {@code cudaErrorInsufficientDriver}: no NVIDIA driver, or one too old for the runtime. */
    int ERROR_INSUFFICIENT_DRIVER = 35;
    /** {@code cudaErrorNoDevice}: a driver but no CUDA-capable device. */
    int ERROR_NO_DEVICE = 100;
    /** {@code cudaErrorInvalidDevice}: no device with that ordinal. */
    int ERROR_INVALID_DEVICE = 101;
    /** {@code cudaErrorNotReady}: the event or stream has work pending, a normal answer of a query. */
    int ERROR_NOT_READY = 600;

    // ---- driver error codes (CUresult)

    /** {@code CUDA_ERROR_OUT_OF_MEMORY}: no physical memory or no address space left. */
    int CU_ERROR_OUT_OF_MEMORY = 2;
    /** {@code CUDA_ERROR_NOT_SUPPORTED}. */
    int CU_ERROR_NOT_SUPPORTED = 801;

    // ---- flags

    /** {@code cudaStreamNonBlocking}: the stream does not synchronise with the legacy default stream. */
    int STREAM_NON_BLOCKING = 1;
    /** {@code cudaEventDisableTiming}: the cheap kind of event, enough to know when work is done. */
    int EVENT_DISABLE_TIMING = 2;
    /** {@code cudaHostAllocPortable}: pinned memory that every CUDA context treats as pinned. */
    int HOST_ALLOC_PORTABLE = 1;
    /** {@code cudaMemcpyDefault}: the direction is inferred from the addresses (unified virtual addressing). */
    int MEMCPY_DEFAULT = 4;
    /** {@code CU_MEM_ALLOC_GRANULARITY_MINIMUM}. */
    int GRANULARITY_MINIMUM = 0;
    /** {@code CU_MEM_ACCESS_FLAGS_PROT_READWRITE}. */
    int ACCESS_READ_WRITE = 3;

    // ---- runtime API: devices and errors

    /** {@code cudaGetDeviceCount(count)}. */
    int getDeviceCount(int[] count);

    /** {@code cudaSetDevice(device)}: makes the device current on the calling thread. */
    int setDevice(int device);

    /** {@code cudaGetDeviceProperties}, reduced to the product name and total global memory. */
    int getDeviceProperties(int device, String[] name, long[] totalGlobalMem);

    /** {@code cudaDriverGetVersion(version)}: 0 when there is no driver. */
    int driverGetVersion(int[] version);

    /** {@code cudaRuntimeGetVersion(version)}. */
    int runtimeGetVersion(int[] version);

    /** {@code cudaGetLastError()}: returns and clears the calling thread's last error. */
    int getLastError();

    /** {@code cudaGetErrorName(error)}, e.g. {@code cudaErrorMemoryAllocation}. */
    String getErrorName(int error);

    /** {@code cudaGetErrorString(error)}, e.g. {@code out of memory}. */
    String getErrorString(int error);

    /** {@code cudaDeviceSynchronize()}. */
    int deviceSynchronize();

    // ---- runtime API: memory

    /** {@code cudaMalloc(&address, bytes)}. */
    int malloc(long[] address, long bytes);

    /** {@code cudaFree(address)}. */
    int free(long address);

    /** {@code cudaMemGetInfo(&free, &total)} of the current device. */
    int memGetInfo(long[] free, long[] total);

    /** {@code cudaHostAlloc(&address, bytes, flags)}: page-locked host memory. */
    int hostAlloc(long[] address, long bytes, int flags);

    /** {@code cudaFreeHost(address)}. */
    int freeHost(long address);

    /** {@code cudaMemcpy(dst, src, bytes, kind)}. */
    int memcpy(long dst, long src, long bytes, int kind);

    /** {@code cudaMemcpyAsync(dst, src, bytes, kind, stream)}; stream 0 is the default stream. */
    int memcpyAsync(long dst, long src, long bytes, int kind, long stream);

    /** {@code cudaMemset(address, value, bytes)}. */
    int memset(long address, int value, long bytes);

    /** {@code cudaMemsetAsync(address, value, bytes, stream)}; stream 0 is the default stream. */
    int memsetAsync(long address, int value, long bytes, long stream);

    // ---- runtime API: streams and events

    /** {@code cudaStreamCreateWithFlags(&stream, flags)}; the id handed back is never 0. */
    int streamCreateWithFlags(long[] stream, int flags);

    /** {@code cudaStreamSynchronize(stream)}; stream 0 is the default stream. */
    int streamSynchronize(long stream);

    /** {@code cudaStreamDestroy(stream)}; the id is forgotten whatever the answer. */
    int streamDestroy(long stream);

    /** {@code cudaEventCreateWithFlags(&event, flags)}; the id handed back is never 0. */
    int eventCreateWithFlags(long[] event, int flags);

    /** {@code cudaEventRecord(event, stream)}; stream 0 is the default stream. */
    int eventRecord(long event, long stream);

    /** {@code cudaEventQuery(event)}: {@link #SUCCESS} when complete, {@link #ERROR_NOT_READY} when not. */
    int eventQuery(long event);

    /** {@code cudaEventSynchronize(event)}. */
    int eventSynchronize(long event);

    /** {@code cudaEventDestroy(event)}; the id is forgotten whatever the answer. */
    int eventDestroy(long event);

    // ---- driver API (only after the probe found libcuda.so.1)

    /** {@code cuInit(0)}. */
    int driverInit();

    /** {@code cuGetErrorName(error)}, e.g. {@code CUDA_ERROR_OUT_OF_MEMORY}. */
    String driverErrorName(int error);

    /** {@code cuGetErrorString(error)}. */
    String driverErrorString(int error);

    /**
     * {@code cuDeviceGet} + {@code cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)}:
     * 1 in {@code supported} when the device has CUDA's virtual-memory management.
     */
    int deviceVirtualMemorySupported(int device, int[] supported);

    /**
     * {@code cuMemGetAllocationGranularity(&granularity, prop, flags)} for pinned device memory on {@code device}
     * ({@code CU_MEM_ALLOCATION_TYPE_PINNED}, {@code CU_MEM_LOCATION_TYPE_DEVICE}).
     */
    int memGetAllocationGranularity(long[] granularity, int device, int flags);

    /** {@code cuMemAddressReserve(&address, size, alignment, fixedAddress, flags)}. */
    int memAddressReserve(long[] address, long size, long alignment, long fixedAddress, long flags);

    /** {@code cuMemAddressFree(address, size)}. */
    int memAddressFree(long address, long size);

    /**
     * {@code cuMemCreate(&handle, size, prop, flags)} with pinned device memory on {@code device}; the id handed
     * back is never 0.
     */
    int memCreate(long[] handle, long size, int device, long flags);

    /** {@code cuMemRelease(handle)}; the id is forgotten whatever the answer. */
    int memRelease(long handle);

    /** {@code cuMemMap(address, size, offset, handle, flags)}. */
    int memMap(long address, long size, long offset, long handle, long flags);

    /** {@code cuMemUnmap(address, size)}. */
    int memUnmap(long address, long size);

    /** {@code cuMemSetAccess(address, size, {location: device, flags}, 1)}. */
    int memSetAccess(long address, long size, int device, int accessFlags);
}
