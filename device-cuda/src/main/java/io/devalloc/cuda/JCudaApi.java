package io.devalloc.cuda;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.ToIntFunction;
import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUmemAccessDesc;
import jcuda.driver.CUmemAllocationProp;
import jcuda.driver.CUmemAllocationType;
import jcuda.driver.CUmemGenericAllocationHandle;
import jcuda.driver.CUmemLocation;
import jcuda.driver.CUmemLocationType;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaDeviceProp;
import jcuda.runtime.cudaError;
import jcuda.runtime.cudaEvent_t;
import jcuda.runtime.cudaStream_t;

/**
 * {@link CudaApi} over JCuda 12.6: every method is one call of {@code jcuda.runtime.JCuda} or
 * {@code jcuda.driver.JCudaDriver}, with no logic of its own beyond translating handles.
 *
 * <p><b>Addresses.</b> JCuda wraps addresses in {@link Pointer} objects whose raw value is protected; the nested
 * {@code RawPointer} and {@code RawDevicePointer} subclasses build a pointer at a given address and read the
 * address a call wrote back.
 *
 * <p><b>Handles.</b> Streams, events and physical-memory handles are JCuda objects; they live in tables here,
 * keyed by ids handed out from one counter starting at 1 (so 0 can mean "the default stream"). An id that is not
 * in its table is answered with {@code cudaErrorInvalidResourceHandle} (400) without calling CUDA. The adapter
 * validates ids before they get here, so that answer only guards against bugs.
 *
 * <p><b>Exceptions.</b> devalloc never calls {@code setExceptionsEnabled(true)}: JCuda's default is to return
 * error codes. That flag is global to the JVM, though, and another library may have set it, after which JCuda
 * throws {@link CudaException} for every non-zero code, including the {@code cudaErrorNotReady} that an event query
 * answers in normal operation. Every call therefore catches {@link CudaException} and turns its message (which is
 * exactly the code's name) back into the code, so the adapter sees the same codes either way.
 *
 * <p><b>The driver.</b> The driver-API methods throw {@link IllegalStateException} unless this instance was made
 * with {@code driverPresent} true, i.e. after {@link CudaAvailability} found {@code libcuda.so.1}: JCuda's driver
 * class fails to initialise without it and then stays unusable for the JVM's life.
 *
 * <p>Thread-safe: JCuda's static methods are, and the handle tables are concurrent maps.
 */
final class JCudaApi implements CudaApi {

    /** {@code cudaErrorInvalidResourceHandle}, also {@code CUDA_ERROR_INVALID_HANDLE}. */
    static final int ERROR_INVALID_HANDLE = 400;
    /** {@code cudaErrorUnknown}, also {@code CUDA_ERROR_UNKNOWN}. */
    static final int ERROR_UNKNOWN = 999;

    private final boolean driverPresent;
    private final AtomicLong nextId = new AtomicLong(1);
    private final Map<Long, cudaStream_t> streams = new ConcurrentHashMap<>();
    private final Map<Long, cudaEvent_t> events = new ConcurrentHashMap<>();
    private final Map<Long, CUmemGenericAllocationHandle> memHandles = new ConcurrentHashMap<>();

    /**
     * @param driverPresent whether {@code libcuda.so.1} was found loadable; without it the driver-API methods
     *                      refuse to run
     */
    JCudaApi(boolean driverPresent) {
        this.driverPresent = driverPresent;
    }

    /** Whether the driver-API methods may be called. */
    boolean driverPresent() {
        return driverPresent;
    }

    // ---- runtime API

    @Override
    public int getDeviceCount(int[] count) {
        return runtime(() -> JCuda.cudaGetDeviceCount(count));
    }

    @Override
    public int setDevice(int device) {
        return runtime(() -> JCuda.cudaSetDevice(device));
    }

    @Override
    public int getDeviceProperties(int device, String[] name, long[] totalGlobalMem) {
        cudaDeviceProp prop = new cudaDeviceProp();
        int rc = runtime(() -> JCuda.cudaGetDeviceProperties(prop, device));
        if (rc == SUCCESS) {
            name[0] = prop.getName();
            totalGlobalMem[0] = prop.totalGlobalMem;
        }
        return rc;
    }

    @Override
    public int driverGetVersion(int[] version) {
        return runtime(() -> JCuda.cudaDriverGetVersion(version));
    }

    @Override
    public int runtimeGetVersion(int[] version) {
        return runtime(() -> JCuda.cudaRuntimeGetVersion(version));
    }

    @Override
    public int getLastError() {
        return runtime(JCuda::cudaGetLastError);
    }

    @Override
    public String getErrorName(int error) {
        return JCuda.cudaGetErrorName(error);
    }

    @Override
    public String getErrorString(int error) {
        return JCuda.cudaGetErrorString(error);
    }

    @Override
    public int deviceSynchronize() {
        return runtime(JCuda::cudaDeviceSynchronize);
    }

    @Override
    public int malloc(long[] address, long bytes) {
        RawPointer p = new RawPointer();
        return allocated(address, p, runtime(() -> JCuda.cudaMalloc(p, bytes)));
    }

    @Override
    public int free(long address) {
        return runtime(() -> JCuda.cudaFree(new RawPointer(address)));
    }

    @Override
    public int memGetInfo(long[] free, long[] total) {
        return runtime(() -> JCuda.cudaMemGetInfo(free, total));
    }

    @Override
    public int hostAlloc(long[] address, long bytes, int flags) {
        RawPointer p = new RawPointer();
        return allocated(address, p, runtime(() -> JCuda.cudaHostAlloc(p, bytes, flags)));
    }

    @Override
    public int freeHost(long address) {
        return runtime(() -> JCuda.cudaFreeHost(new RawPointer(address)));
    }

    @Override
    public int memcpy(long dst, long src, long bytes, int kind) {
        return runtime(() -> JCuda.cudaMemcpy(new RawPointer(dst), new RawPointer(src), bytes, kind));
    }

    @Override
    public int memcpyAsync(long dst, long src, long bytes, int kind, long stream) {
        return onHandle(stream(stream),
                s -> JCuda.cudaMemcpyAsync(new RawPointer(dst), new RawPointer(src), bytes, kind, s));
    }

    @Override
    public int memset(long address, int value, long bytes) {
        return runtime(() -> JCuda.cudaMemset(new RawPointer(address), value, bytes));
    }

    @Override
    public int memsetAsync(long address, int value, long bytes, long stream) {
        return onHandle(stream(stream), s -> JCuda.cudaMemsetAsync(new RawPointer(address), value, bytes, s));
    }

    @Override
    public int streamCreateWithFlags(long[] stream, int flags) {
        cudaStream_t s = new cudaStream_t();
        return registered(stream, streams, s, runtime(() -> JCuda.cudaStreamCreateWithFlags(s, flags)));
    }

    @Override
    public int streamSynchronize(long stream) {
        return onHandle(stream(stream), s -> JCuda.cudaStreamSynchronize(s));
    }

    @Override
    public int streamDestroy(long stream) {
        return onHandle(stream == 0 ? null : streams.remove(stream), s -> JCuda.cudaStreamDestroy(s));
    }

    @Override
    public int eventCreateWithFlags(long[] event, int flags) {
        cudaEvent_t e = new cudaEvent_t();
        return registered(event, events, e, runtime(() -> JCuda.cudaEventCreateWithFlags(e, flags)));
    }

    @Override
    public int eventRecord(long event, long stream) {
        cudaEvent_t e = events.get(event);
        cudaStream_t s = stream(stream);
        if (e == null || s == null) {
            return ERROR_INVALID_HANDLE;
        }
        return runtime(() -> JCuda.cudaEventRecord(e, s));
    }

    @Override
    public int eventQuery(long event) {
        return onHandle(events.get(event), e -> JCuda.cudaEventQuery(e));
    }

    @Override
    public int eventSynchronize(long event) {
        return onHandle(events.get(event), e -> JCuda.cudaEventSynchronize(e));
    }

    @Override
    public int eventDestroy(long event) {
        return onHandle(events.remove(event), e -> JCuda.cudaEventDestroy(e));
    }

    // ---- driver API

    @Override
    public int driverInit() {
        requireDriver();
        return driver(() -> JCudaDriver.cuInit(0));
    }

    @Override
    public String driverErrorName(int error) {
        requireDriver();
        String[] name = new String[1];
        return driver(() -> JCudaDriver.cuGetErrorName(error, name)) == SUCCESS ? name[0] : CUresult.stringFor(error);
    }

    @Override
    public String driverErrorString(int error) {
        requireDriver();
        String[] text = new String[1];
        return driver(() -> JCudaDriver.cuGetErrorString(error, text)) == SUCCESS ? text[0] : "unknown error";
    }

    @Override
    public int deviceVirtualMemorySupported(int device, int[] supported) {
        requireDriver();
        CUdevice dev = new CUdevice();
        int rc = driver(() -> JCudaDriver.cuDeviceGet(dev, device));
        if (rc != SUCCESS) {
            return rc;
        }
        return driver(() -> JCudaDriver.cuDeviceGetAttribute(supported,
                CUdevice_attribute.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
    }

    @Override
    public int memGetAllocationGranularity(long[] granularity, int device, int flags) {
        requireDriver();
        CUmemAllocationProp prop = pinnedOn(device);
        return driver(() -> JCudaDriver.cuMemGetAllocationGranularity(granularity, prop, flags));
    }

    @Override
    public int memAddressReserve(long[] address, long size, long alignment, long fixedAddress, long flags) {
        requireDriver();
        RawDevicePointer p = new RawDevicePointer();
        int rc = driver(() -> JCudaDriver.cuMemAddressReserve(p, size, alignment,
                new RawDevicePointer(fixedAddress), flags));
        address[0] = rc == SUCCESS ? p.address() : 0;
        return rc;
    }

    @Override
    public int memAddressFree(long address, long size) {
        requireDriver();
        return driver(() -> JCudaDriver.cuMemAddressFree(new RawDevicePointer(address), size));
    }

    @Override
    public int memCreate(long[] handle, long size, int device, long flags) {
        requireDriver();
        CUmemGenericAllocationHandle h = new CUmemGenericAllocationHandle();
        CUmemAllocationProp prop = pinnedOn(device);
        return registered(handle, memHandles, h, driver(() -> JCudaDriver.cuMemCreate(h, size, prop, flags)));
    }

    @Override
    public int memRelease(long handle) {
        requireDriver();
        CUmemGenericAllocationHandle h = memHandles.remove(handle);
        if (h == null) {
            return ERROR_INVALID_HANDLE;
        }
        return driver(() -> JCudaDriver.cuMemRelease(h));
    }

    @Override
    public int memMap(long address, long size, long offset, long handle, long flags) {
        requireDriver();
        CUmemGenericAllocationHandle h = memHandles.get(handle);
        if (h == null) {
            return ERROR_INVALID_HANDLE;
        }
        return driver(() -> JCudaDriver.cuMemMap(new RawDevicePointer(address), size, offset, h, flags));
    }

    @Override
    public int memUnmap(long address, long size) {
        requireDriver();
        return driver(() -> JCudaDriver.cuMemUnmap(new RawDevicePointer(address), size));
    }

    @Override
    public int memSetAccess(long address, long size, int device, int accessFlags) {
        requireDriver();
        CUmemAccessDesc[] desc = {new CUmemAccessDesc(
                new CUmemLocation(CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, device), accessFlags)};
        return driver(() -> JCudaDriver.cuMemSetAccess(new RawDevicePointer(address), size, desc, 1));
    }

    // ---- helpers

    /** {@code CU_MEM_ALLOCATION_TYPE_PINNED} memory located on {@code device}, no shareable handle. */
    private static CUmemAllocationProp pinnedOn(int device) {
        CUmemAllocationProp prop = new CUmemAllocationProp();
        prop.type = CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location = new CUmemLocation(CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, device);
        return prop;
    }

    private void requireDriver() {
        if (!driverPresent) {
            throw new IllegalStateException("the CUDA driver API must not be touched: libcuda.so.1 was not found, and"
                    + " JCuda's driver class would fail to initialise and stay broken for the JVM's life");
        }
    }

    /** The stream for an id; 0 is the legacy default stream; null for an unknown id. */
    private cudaStream_t stream(long id) {
        return id == 0 ? new cudaStream_t() : streams.get(id);
    }

    /**
     * Registers the object a creation call wrote under a new id, stored in {@code id[0]} (0 when the call failed);
     * returns the call's code.
     */
    private <T> int registered(long[] id, Map<Long, T> table, T object, int rc) {
        if (rc == SUCCESS) {
            id[0] = nextId.getAndIncrement();
            table.put(id[0], object);
        } else {
            id[0] = 0;
        }
        return rc;
    }

    /**
     * Runs a runtime call on the JCuda object a handle names ({@code stream(...)}, {@code events.get(...)}), or
     * answers {@code cudaErrorInvalidHandle} when it names none (null).
     */
    private static <T> int onHandle(T object, ToIntFunction<T> call) {
        return object == null ? ERROR_INVALID_HANDLE : runtime(() -> call.applyAsInt(object));
    }

    /** Stores the address an allocation call wrote into {@code p}, or 0 when it failed; returns its code. */
    private static int allocated(long[] address, RawPointer p, int rc) {
        address[0] = rc == SUCCESS ? p.address() : 0;
        return rc;
    }

    /** Runs a runtime call, turning a {@link CudaException} (exceptions enabled elsewhere) back into its code. */
    private static int runtime(IntSupplier call) {
        try {
            return call.getAsInt();
        } catch (CudaException e) {
            return ErrorCodes.RUNTIME.codeOf(e.getMessage());
        }
    }

    /** Runs a driver call, turning a {@link CudaException} (exceptions enabled elsewhere) back into its code. */
    private static int driver(IntSupplier call) {
        try {
            return call.getAsInt();
        } catch (CudaException e) {
            return ErrorCodes.DRIVER.codeOf(e.getMessage());
        }
    }

    /** Code names back to codes, for {@link CudaException} messages ({@code cudaError.stringFor(code)}). */
    enum ErrorCodes {
        RUNTIME, DRIVER;

        /** Every code CUDA 12 defines is below this. */
        private static final int MAX_CODE = 1000;

        /**
         * Built on first use; building it twice in a race gives equal maps, so the enum stays effectively immutable.
         */
        @SuppressWarnings("ImmutableEnumChecker")
        private volatile Map<String, Integer> codes;

        int codeOf(String message) {
            Map<String, Integer> map = codes;
            if (map == null) {
                map = new HashMap<>();
                for (int code = 1; code < MAX_CODE; code++) {
                    String name = this == RUNTIME ? cudaError.stringFor(code) : CUresult.stringFor(code);
                    if (!name.startsWith("INVALID")) {
                        map.putIfAbsent(name, code);
                    }
                }
                codes = map;
            }
            Integer code = message == null ? null : map.get(message.strip());
            return code != null ? code : ERROR_UNKNOWN;
        }
    }

    /** A runtime-API pointer at a raw address, or an out-parameter whose address can be read back. */
    static final class RawPointer extends Pointer {

        RawPointer() {
        }

        RawPointer(long address) {
            super(address);
        }

        long address() {
            return getNativePointer() + getByteOffset();
        }
    }

    /** A driver-API device pointer at a raw address, or an out-parameter whose address can be read back. */
    static final class RawDevicePointer extends CUdeviceptr {

        RawDevicePointer() {
        }

        RawDevicePointer(long address) {
            // CUdeviceptr has no constructor taking an address; an offset from a null pointer is the same thing.
            super(new CUdeviceptr(), address);
        }

        long address() {
            return getNativePointer() + getByteOffset();
        }
    }
}
