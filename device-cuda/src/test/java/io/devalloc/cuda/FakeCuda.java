package io.devalloc.cuda;

import io.devalloc.api.units.ByteSize;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small simulated CUDA behind {@link CudaApi}, for running the device contract without a GPU. It is strict where
 * real CUDA is undefined or reports errors: a call on an unknown address, stream, event or handle, or a virtual
 * memory call that does not match what is reserved and mapped, answers {@code cudaErrorInvalidValue} (1) or 400,
 * so adapter bugs show up as {@code DeviceException}s in the contract tests.
 *
 * <ul>
 *   <li>Each device has a capacity; {@code cudaMalloc} hands out 512-byte aligned addresses from a per-device
 *       range (never reused) and counts them, rounded to 512, against the capacity of the thread's current
 *       device, which starts as device 0 on every thread, as in CUDA.</li>
 *   <li>{@code cudaHostAlloc} hands out real, page-aligned native memory, so host views can be written.</li>
 *   <li>Streams and events are ids; every event is complete.</li>
 *   <li>Virtual memory: reservations from a separate range, physical handles counted against the capacity of the
 *       device they were created on, maps checked against reservations and each other; {@code cuMemUnmap} only of
 *       a whole {@code cuMemMap} range, as in CUDA, and {@code cuMemSetAccess} of whole, adjacent mapped
 *       ranges.</li>
 * </ul>
 * Every method is synchronised.
 */
final class FakeCuda implements CudaApi {

    static final long GRANULE = 2L << 20;
    private static final long MALLOC_ROUNDING = 512;

    private final int deviceCount;
    private final long capacity;
    private final long[] used;
    private final long[] nextAddress;
    private final ThreadLocal<Integer> current = ThreadLocal.withInitial(() -> 0);
    private final Map<Long, long[]> allocations = new HashMap<>();          // address → {device, rounded}
    private final Map<Long, Arena> hostAllocations = new HashMap<>();
    private final Map<Long, Boolean> streams = new HashMap<>();
    private final Map<Long, Boolean> events = new HashMap<>();
    private final TreeMap<Long, Long> reservations = new TreeMap<>();      // base → size
    private final TreeMap<Long, long[]> mappings = new TreeMap<>();        // address → {size, handle}
    private final Map<Long, long[]> handles = new HashMap<>();             // handle → {device, size}
    private final AtomicLong nextId = new AtomicLong(1);
    private long nextReservation = 0x6000_0000_0000L;
    private int setDeviceCalls;
    private int nextMemUnmapError = SUCCESS;

    FakeCuda(int deviceCount, long capacity) {
        this.deviceCount = deviceCount;
        this.capacity = capacity;
        this.used = new long[deviceCount];
        this.nextAddress = new long[deviceCount];
        for (int d = 0; d < deviceCount; d++) {
            nextAddress[d] = 0x7f00_0000_0000L + ((long) d << 40);
        }
    }

    synchronized long usedBytes(int device) {
        return used[device];
    }

    synchronized int liveAllocations() {
        return allocations.size() + hostAllocations.size();
    }

    synchronized int liveStreamsAndEvents() {
        return streams.size() + events.size();
    }

    synchronized int liveVirtualMemoryObjects() {
        return reservations.size() + mappings.size() + handles.size();
    }

    /**
     * Makes the next {@code cuMemUnmap} that finds its mapping unmap it and answer {@code error} all the same: what
     * the driver documents for an error of an earlier asynchronous launch, which any call may report ("this function
     * may also return error codes from previous, asynchronous launches"). The one way CUDA lets a valid
     * {@code cuMemUnmap} fail on a live context.
     */
    synchronized void failNextMemUnmap(int error) {
        nextMemUnmapError = error;
    }

    synchronized int setDeviceCalls() {
        return setDeviceCalls;
    }

    @Override
    public synchronized int getDeviceCount(int[] count) {
        count[0] = deviceCount;
        return SUCCESS;
    }

    @Override
    public synchronized int setDevice(int device) {
        setDeviceCalls++;
        if (device < 0 || device >= deviceCount) {
            return ERROR_INVALID_DEVICE;
        }
        current.set(device);
        return SUCCESS;
    }

    @Override
    public synchronized int getDeviceProperties(int device, String[] name, long[] totalGlobalMem) {
        if (device < 0 || device >= deviceCount) {
            return ERROR_INVALID_DEVICE;
        }
        name[0] = "Fake GPU " + device;
        totalGlobalMem[0] = capacity;
        return SUCCESS;
    }

    @Override
    public int driverGetVersion(int[] version) {
        version[0] = 12040;
        return SUCCESS;
    }

    @Override
    public int runtimeGetVersion(int[] version) {
        version[0] = 12060;
        return SUCCESS;
    }

    @Override
    public int getLastError() {
        return SUCCESS;
    }

    @Override
    public String getErrorName(int error) {
        return switch (error) {
            case SUCCESS -> "cudaSuccess";
            case ERROR_INVALID_VALUE -> "cudaErrorInvalidValue";
            case ERROR_MEMORY_ALLOCATION -> "cudaErrorMemoryAllocation";
            case ERROR_INVALID_DEVICE -> "cudaErrorInvalidDevice";
            case 400 -> "cudaErrorInvalidResourceHandle";
            default -> "cudaError" + error;
        };
    }

    @Override
    public String getErrorString(int error) {
        return "fake error " + error;
    }

    @Override
    public int deviceSynchronize() {
        return SUCCESS;
    }

    @Override
    public synchronized int malloc(long[] address, long bytes) {
        int d = current.get();
        long rounded = ByteSize.roundUp(bytes, MALLOC_ROUNDING);
        if (bytes < 0) {
            return ERROR_INVALID_VALUE;
        }
        if (rounded < 0 || rounded > capacity - used[d]) {
            return ERROR_MEMORY_ALLOCATION;
        }
        long a = nextAddress[d];
        nextAddress[d] += Math.max(rounded, MALLOC_ROUNDING);
        used[d] += rounded;
        allocations.put(a, new long[] {d, rounded});
        address[0] = a;
        return SUCCESS;
    }

    @Override
    public synchronized int free(long address) {
        long[] a = allocations.remove(address);
        if (a == null) {
            return ERROR_INVALID_VALUE;
        }
        used[(int) a[0]] -= a[1];
        return SUCCESS;
    }

    @Override
    public synchronized int memGetInfo(long[] free, long[] total) {
        int d = current.get();
        free[0] = capacity - used[d];
        total[0] = capacity;
        return SUCCESS;
    }

    @Override
    public synchronized int hostAlloc(long[] address, long bytes, int flags) {
        if (flags != HOST_ALLOC_PORTABLE) {
            return ERROR_INVALID_VALUE;
        }
        Arena arena = Arena.ofShared();
        MemorySegment s;
        try {
            s = arena.allocate(bytes, 4096);
        } catch (OutOfMemoryError | IllegalArgumentException e) {
            arena.close();
            return ERROR_MEMORY_ALLOCATION;
        }
        hostAllocations.put(s.address(), arena);
        address[0] = s.address();
        return SUCCESS;
    }

    @Override
    public synchronized int freeHost(long address) {
        Arena arena = hostAllocations.remove(address);
        if (arena == null) {
            return ERROR_INVALID_VALUE;
        }
        arena.close();
        return SUCCESS;
    }

    @Override
    public int memcpy(long dst, long src, long bytes, int kind) {
        return SUCCESS;
    }

    @Override
    public int memcpyAsync(long dst, long src, long bytes, int kind, long stream) {
        return SUCCESS;
    }

    @Override
    public int memset(long address, int value, long bytes) {
        return SUCCESS;
    }

    @Override
    public int memsetAsync(long address, int value, long bytes, long stream) {
        return SUCCESS;
    }

    @Override
    public synchronized int streamCreateWithFlags(long[] stream, int flags) {
        if (flags != STREAM_NON_BLOCKING) {
            return ERROR_INVALID_VALUE;
        }
        stream[0] = nextId.getAndIncrement();
        streams.put(stream[0], true);
        return SUCCESS;
    }

    @Override
    public synchronized int streamSynchronize(long stream) {
        return stream == 0 || streams.containsKey(stream) ? SUCCESS : 400;
    }

    @Override
    public synchronized int streamDestroy(long stream) {
        return streams.remove(stream) != null ? SUCCESS : 400;
    }

    @Override
    public synchronized int eventCreateWithFlags(long[] event, int flags) {
        if (flags != EVENT_DISABLE_TIMING) {
            return ERROR_INVALID_VALUE;
        }
        event[0] = nextId.getAndIncrement();
        events.put(event[0], true);
        return SUCCESS;
    }

    @Override
    public synchronized int eventRecord(long event, long stream) {
        return events.containsKey(event) && (stream == 0 || streams.containsKey(stream)) ? SUCCESS : 400;
    }

    @Override
    public synchronized int eventQuery(long event) {
        return events.containsKey(event) ? SUCCESS : 400;
    }

    @Override
    public synchronized int eventSynchronize(long event) {
        return events.containsKey(event) ? SUCCESS : 400;
    }

    @Override
    public synchronized int eventDestroy(long event) {
        return events.remove(event) != null ? SUCCESS : 400;
    }

    @Override
    public int driverInit() {
        return SUCCESS;
    }

    @Override
    public String driverErrorName(int error) {
        return error == CU_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_" + error;
    }

    @Override
    public String driverErrorString(int error) {
        return "fake driver error " + error;
    }

    @Override
    public int deviceVirtualMemorySupported(int device, int[] supported) {
        supported[0] = 1;
        return SUCCESS;
    }

    @Override
    public int memGetAllocationGranularity(long[] granularity, int device, int flags) {
        granularity[0] = GRANULE;
        return SUCCESS;
    }

    @Override
    public synchronized int memAddressReserve(long[] address, long size, long alignment, long fixedAddress,
                                              long flags) {
        if (size <= 0 || size % GRANULE != 0 || fixedAddress != 0) {
            return ERROR_INVALID_VALUE;
        }
        long base = nextReservation;
        nextReservation += size + GRANULE; // a gap, so ranges never touch
        reservations.put(base, size);
        address[0] = base;
        return SUCCESS;
    }

    @Override
    public synchronized int memAddressFree(long address, long size) {
        Long s = reservations.get(address);
        if (s == null || s != size) {
            return ERROR_INVALID_VALUE;
        }
        Map.Entry<Long, long[]> m = mappings.ceilingEntry(address);
        if (m != null && m.getKey() < address + size) {
            return ERROR_INVALID_VALUE;
        }
        reservations.remove(address);
        return SUCCESS;
    }

    @Override
    public synchronized int memCreate(long[] handle, long size, int device, long flags) {
        if (size <= 0 || size % GRANULE != 0 || device < 0 || device >= deviceCount) {
            return ERROR_INVALID_VALUE;
        }
        if (size > capacity - used[device]) {
            return CU_ERROR_OUT_OF_MEMORY;
        }
        used[device] += size;
        handle[0] = nextId.getAndIncrement();
        handles.put(handle[0], new long[] {device, size});
        return SUCCESS;
    }

    @Override
    public synchronized int memRelease(long handle) {
        long[] h = handles.remove(handle);
        if (h == null) {
            return 400;
        }
        used[(int) h[0]] -= h[1];
        return SUCCESS;
    }

    @Override
    public synchronized int memMap(long address, long size, long offset, long handle, long flags) {
        long[] h = handles.get(handle);
        Map.Entry<Long, Long> r = reservations.floorEntry(address);
        if (h == null || offset != 0 || h[1] != size || r == null || address + size > r.getKey() + r.getValue()) {
            return ERROR_INVALID_VALUE;
        }
        Map.Entry<Long, long[]> before = mappings.floorEntry(address);
        Map.Entry<Long, long[]> after = mappings.ceilingEntry(address);
        if ((before != null && before.getKey() + before.getValue()[0] > address)
                || (after != null && after.getKey() < address + size)) {
            return ERROR_INVALID_VALUE;
        }
        mappings.put(address, new long[] {size, handle});
        return SUCCESS;
    }

    @Override
    public synchronized int memUnmap(long address, long size) {
        long[] m = mappings.get(address);
        if (m == null || m[0] != size) {
            return ERROR_INVALID_VALUE;
        }
        mappings.remove(address);
        int answer = nextMemUnmapError;
        nextMemUnmapError = SUCCESS;
        return answer;
    }

    @Override
    public synchronized int memSetAccess(long address, long size, int device, int accessFlags) {
        if (size <= 0 || accessFlags != ACCESS_READ_WRITE) {
            return ERROR_INVALID_VALUE;
        }
        // The range must be mapped throughout; it may span several cuMemMap ranges, as PyTorch's calls do.
        long at = address;
        while (at < address + size) {
            long[] m = mappings.get(at);
            if (m == null) {
                return ERROR_INVALID_VALUE;
            }
            at += m[0];
        }
        return at == address + size ? SUCCESS : ERROR_INVALID_VALUE;
    }
}
