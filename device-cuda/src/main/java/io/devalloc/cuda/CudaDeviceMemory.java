package io.devalloc.cuda;

import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.internal.Failures;
import io.devalloc.api.units.ByteSize;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One CUDA device as a {@link DeviceMemory}: GPU memory from {@code cudaMalloc} (provider {@code cuda}) or pinned
 * host memory from {@code cudaHostAlloc} with the portable flag (provider {@code cuda-host}).
 *
 * <p><b>Current device.</b> The CUDA runtime binds calls to the calling thread's current device, so every method
 * that reaches CUDA first calls {@code cudaSetDevice} with this device's index on the calling thread. Allocators
 * run on whatever thread the application uses; they must never allocate on the wrong GPU.
 *
 * <p><b>One guard.</b> Every call is entered the same way: {@code enter()} takes the shared lock and fails once
 * closed, and leaving (a try-with-resources) releases it. A
 * call that needs nothing more, the event and stream calls, copies and fills, goes through {@code onDevice}, which
 * also checks its event and stream against the tables, makes the device current, makes the call (a
 * {@code CudaCall} that captures nothing, so that the allocation paths allocate nothing for it), and turns the code
 * into an answer or an exception whose message it builds only then. {@code malloc}, {@code free}, the creation and
 * destruction of streams and events, and the calls without CUDA are written out under {@code enter()}, each saying
 * why; {@code CudaVirtualMemory} enters the same way.
 *
 * <p><b>Errors.</b> {@code cudaErrorMemoryAllocation} is the normal "not enough memory" answer: {@link #malloc}
 * returns {@link #NULL} and clears the thread's last CUDA error, as PyTorch does. {@code cudaErrorNotReady} from an
 * event query is the normal "not yet" answer. Every other code becomes a {@link DeviceException} naming the call,
 * the device, the code's name and CUDA's description of it.
 *
 * <p><b>Bookkeeping.</b> The device keeps its live allocations, streams and events in tables. An address, stream or
 * event that is not in them is refused (with {@link InvalidFreeException} or {@link IllegalArgumentException})
 * before CUDA is called, because CUDA's behaviour on stale handles is undefined. A free that CUDA refuses still
 * removes the address from the table: the memory may well be gone, and handing it back to {@link #close()} to free
 * again could free memory that a later {@code cudaMalloc} has handed out anew.
 *
 * <p><b>Pinned host memory.</b> A {@code cuda-host} device accounts its allocations, rounded to pages, against a
 * capacity (the machine's physical memory by default) and refuses with {@link #NULL} beyond it, so that it runs out
 * as deterministically as a GPU; {@link #memoryInfo()} reports that accounting. {@link #hostView} gives a CPU view
 * of its memory. It has no virtual memory.
 *
 * <p><b>Copies.</b> {@link #copy}, {@link #copyAsync}, {@link #fill} and {@link #fillAsync} are what example
 * programs need to put data through the memory; they are not part of {@link DeviceMemory}. They take raw
 * addresses, as in C: the direction of a copy is inferred from the addresses ({@code cudaMemcpyDefault}), and an
 * invalid host address is undefined behaviour.
 *
 * <p><b>Threads.</b> Thread-safe. The tables are concurrent; CUDA calls run outside any lock except a shared read
 * lock that {@link #close()} takes exclusively, so close waits for calls in flight and nothing runs after it.
 * Every call after close throws {@link IllegalStateException}, except {@link #descriptor()}, {@link #alignment()},
 * {@link #toString()} and {@link #close()}.
 */
public final class CudaDeviceMemory implements DeviceMemory {

    private static final Logger LOG = LoggerFactory.getLogger(CudaDeviceMemory.class);

    /** The alignment {@code cudaMalloc} and {@code cudaHostAlloc} guarantee. */
    static final long ALIGNMENT = 256;
    /** The unit pinned host allocations are accounted in: the memory a page-locked allocation really takes. */
    static final long HOST_PAGE = 4096;

    private final CudaApi api;
    private final int device;
    private final boolean pinnedHost;
    private final boolean driverPresent;
    private final DeviceDescriptor descriptor;
    /** The capacity of a pinned-host device; unused for a GPU. */
    private final long hostCapacity;

    private final ReentrantReadWriteLock closeLock = new ReentrantReadWriteLock();
    private volatile boolean closed;
    /** What {@link #enter()} returns; see {@link Entered}. */
    private final Entered entered = new Entered();
    /** Live address → requested bytes; sorted so that {@link #hostView} finds the allocation around an address. */
    private final ConcurrentSkipListMap<Long, Long> live = new ConcurrentSkipListMap<>();
    /** Pinned-host bytes in use, page-rounded. */
    private final AtomicLong hostBytesInUse = new AtomicLong();
    private final Set<Long> streams = ConcurrentHashMap.newKeySet();
    private final Set<Long> events = ConcurrentHashMap.newKeySet();

    private final Object vmLock = new Object();
    /** Whether {@link #virtualMemory()} has decided; guarded by {@link #vmLock}. */
    private boolean vmDecided;
    /** The virtual memory, or null when the device has none; guarded by {@link #vmLock}. */
    private CudaVirtualMemory vm;

    private CudaDeviceMemory(CudaApi api, int device, boolean pinnedHost, boolean driverPresent, String provider,
                             long hostCapacity) {
        this.api = Objects.requireNonNull(api, "api");
        if (device < 0) {
            throw new IllegalArgumentException("device index must be >= 0, got " + device);
        }
        this.device = device;
        this.pinnedHost = pinnedHost;
        this.driverPresent = driverPresent;
        this.hostCapacity = hostCapacity;
        if (pinnedHost && hostCapacity < HOST_PAGE) {
            throw new IllegalArgumentException("a cuda-host device needs a capacity of at least " + HOST_PAGE
                    + " bytes (one page), got " + hostCapacity);
        }
        String where = provider + ":" + device;
        check(api.setDevice(device), "cudaSetDevice(" + device + ") while opening " + where, api);
        String product = productName(api, device);
        if (pinnedHost) {
            this.descriptor = new DeviceDescriptor(provider, device, "pinned host memory through cudaHostAlloc for "
                    + product + " (" + ByteSize.format(hostCapacity) + ")", DeviceKind.PINNED_HOST, hostCapacity);
        } else {
            long[] free = new long[1];
            long[] total = new long[1];
            check(api.memGetInfo(free, total), "cudaMemGetInfo while opening " + where, api);
            this.descriptor = new DeviceDescriptor(provider, device, product, DeviceKind.GPU, total[0]);
        }
    }

    /**
     * GPU memory of device {@code device}.
     *
     * @param driverPresent whether {@code libcuda.so.1} was found, so that the driver API (virtual memory) may be
     *                      used
     * @throws DeviceException if CUDA refuses to make the device current or to report its memory
     */
    static CudaDeviceMemory gpu(CudaApi api, int device, boolean driverPresent) {
        CudaDeviceMemory memory = new CudaDeviceMemory(api, device, false, driverPresent,
                CudaDeviceMemoryProvider.NAME, 0);
        LOG.debug("opened {}: {} total", memory, ByteSize.format(memory.descriptor.totalBytes()));
        return memory;
    }

    /**
     * Pinned host memory through device {@code device}'s context, portable to every device.
     *
     * @param capacity the most bytes (page-rounded) that may be in use at once
     */
    static CudaDeviceMemory pinnedHost(CudaApi api, int device, long capacity) {
        CudaDeviceMemory memory = new CudaDeviceMemory(api, device, true, false, CudaHostMemoryProvider.NAME,
                capacity);
        LOG.debug("opened {}", memory);
        return memory;
    }

    private static String productName(CudaApi api, int device) {
        String[] name = new String[1];
        long[] total = new long[1];
        int rc = api.getDeviceProperties(device, name, total);
        return rc == CudaApi.SUCCESS && name[0] != null && !name[0].isBlank() ? name[0].strip()
                : "CUDA device " + device;
    }

    @Override
    public DeviceDescriptor descriptor() {
        return descriptor;
    }

    @Override
    public long alignment() {
        return ALIGNMENT;
    }

    /** The CUDA device ordinal. */
    public int deviceIndex() {
        return device;
    }

    // ---- memory

    @Override
    public long malloc(long bytes) {
        // Written out rather than through onDevice: its checks come before the device is made current, out of
        // memory is an answer (NULL), and the allocation path takes no lambda (the labels are built only on failure).
        try (Entered _ = enter()) {
            if (bytes < 1) {
                throw new IllegalArgumentException("allocation size must be >= 1 byte, got " + bytes);
            }
            long accounted = 0;
            if (pinnedHost) {
                accounted = ByteSize.roundUp(bytes, HOST_PAGE);
                if (accounted < 0 || !reserveHostBytes(accounted)) {
                    return NULL;
                }
            } else if (bytes > descriptor.totalBytes()) {
                return NULL;
            }
            boolean done = false;
            try {
                setDevice();
                long[] out = new long[1];
                int rc = pinnedHost ? api.hostAlloc(out, bytes, CudaApi.HOST_ALLOC_PORTABLE) : api.malloc(out, bytes);
                if (rc == CudaApi.ERROR_MEMORY_ALLOCATION) {
                    // Clear the thread's last error, or a later unrelated check would find it (PyTorch does this).
                    api.getLastError();
                    LOG.debug("{}: {}({}) found no memory", this, allocCall(), bytes);
                    return NULL;
                }
                if (rc != CudaApi.SUCCESS) {
                    throw new DeviceException(failure(allocCall() + "(" + bytes + " bytes)", rc));
                }
                long address = out[0];
                if (address == NULL || address % ALIGNMENT != 0) {
                    giveBack(address);
                    throw new DeviceException(allocCall() + "(" + bytes + " bytes) on " + descriptor.id()
                            + " returned " + ByteSize.hex(address) + ", which is not a " + ALIGNMENT
                            + "-byte aligned address");
                }
                live.put(address, bytes);
                done = true;
                return address;
            } finally {
                if (!done && accounted > 0) {
                    hostBytesInUse.addAndGet(-accounted);
                }
            }
        }
    }

    /** Frees memory that must not be kept, ignoring failure (it is reported by the caller's own exception). */
    private void giveBack(long address) {
        if (address != NULL) {
            int rc = pinnedHost ? api.freeHost(address) : api.free(address);
            if (rc != CudaApi.SUCCESS) {
                LOG.warn("{}: {} of {} failed: {}", this, freeCall(), ByteSize.hex(address), describe(rc));
            }
        }
    }

    private boolean reserveHostBytes(long accounted) {
        while (true) {
            long inUse = hostBytesInUse.get();
            if (accounted > hostCapacity - inUse) {
                return false;
            }
            if (hostBytesInUse.compareAndSet(inUse, inUse + accounted)) {
                return true;
            }
        }
    }

    @Override
    public void free(long address) {
        // Written out, as malloc: the address is refused before the device is made current, and a refused free
        // still forgets the address (see the class comment).
        try (Entered _ = enter()) {
            if (!live.containsKey(address)) {
                throw new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, address, toString());
            }
            setDevice();
            Long bytes = live.remove(address);
            if (bytes == null) {
                // Another thread freed it in the meantime.
                throw new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, address, toString());
            }
            if (pinnedHost) {
                hostBytesInUse.addAndGet(-ByteSize.roundUp(bytes, HOST_PAGE));
            }
            int rc = pinnedHost ? api.freeHost(address) : api.free(address);
            if (rc != CudaApi.SUCCESS) {
                throw new DeviceException(failure(freeCall() + "(" + ByteSize.hex(address) + ")", rc)
                        + "; the address is no longer tracked by this device");
            }
        }
    }

    @Override
    public MemoryInfo memoryInfo() {
        // A pinned-host device answers from its own accounting, without CUDA.
        try (Entered _ = enter()) {
            if (pinnedHost) {
                return new MemoryInfo(hostCapacity - hostBytesInUse.get(), hostCapacity);
            }
            setDevice();
            long[] free = new long[1];
            long[] total = new long[1];
            check(api.memGetInfo(free, total), "cudaMemGetInfo");
            return new MemoryInfo(free[0], total[0]);
        }
    }

    /**
     * A view of live pinned host memory ({@code cuda-host}); always empty for GPU memory, which the CPU cannot
     * address. The segment is a raw pointer with a length: it is not invalidated by {@link #free} or
     * {@link #close()}, so touching it after the memory was freed is a use-after-free, as in C.
     *
     * @throws IllegalArgumentException for pinned host memory, if the range is not inside one live allocation
     */
    @Override
    @SuppressWarnings("restricted") // reinterpret is the point: the range was checked against a live allocation
    public Optional<MemorySegment> hostView(long address, long bytes) {
        try (Entered _ = enter()) {
            if (bytes < 1) {
                throw new IllegalArgumentException("a host view needs at least 1 byte, got " + bytes);
            }
            if (!pinnedHost) {
                return Optional.empty();
            }
            Map.Entry<Long, Long> allocation = live.floorEntry(address);
            long offset = allocation == null ? -1 : address - allocation.getKey();
            if (allocation == null || offset >= allocation.getValue() || bytes > allocation.getValue() - offset) {
                throw new IllegalArgumentException("[" + ByteSize.hex(address) + ", +" + bytes + " bytes) is not inside"
                        + " one live allocation of " + this);
            }
            return Optional.of(MemorySegment.ofAddress(address).reinterpret(bytes));
        }
    }

    // ---- streams and events

    @Override
    public DeviceStream createStream() {
        // Written out: the new handle joins the table inside the guard, so that a concurrent close cannot miss it.
        try (Entered _ = enter()) {
            setDevice();
            long[] out = new long[1];
            check(api.streamCreateWithFlags(out, CudaApi.STREAM_NON_BLOCKING), "cudaStreamCreateWithFlags");
            if (out[0] == 0) {
                throw new DeviceException("cudaStreamCreateWithFlags on " + descriptor.id()
                        + " returned handle 0, which is the default stream");
            }
            streams.add(out[0]);
            return new DeviceStream(out[0]);
        }
    }

    @Override
    public void destroyStream(DeviceStream stream) {
        Objects.requireNonNull(stream, "stream");
        // Written out: the default stream is refused before CUDA, and the handle leaves the table only once the
        // device is current.
        try (Entered _ = enter()) {
            if (stream.isDefault()) {
                throw new IllegalArgumentException("the default stream of " + this + " cannot be destroyed");
            }
            if (!streams.contains(stream.handle())) {
                throw Failures.notLive("stream", stream, this);
            }
            // The device first: if switching fails, the stream is still known and close() will destroy it.
            setDevice();
            streams.remove(stream.handle());
            check(api.streamDestroy(stream.handle()), "cudaStreamDestroy(" + stream + ")");
        }
    }

    @Override
    public boolean hasStream(DeviceStream stream) {
        Objects.requireNonNull(stream, "stream");
        // The table answers without CUDA: every stream this device created and has not destroyed is in it.
        try (Entered _ = enter()) {
            return stream.isDefault() || streams.contains(stream.handle());
        }
    }

    @Override
    public DeviceEvent createEvent() {
        // Written out, as createStream.
        try (Entered _ = enter()) {
            setDevice();
            long[] out = new long[1];
            check(api.eventCreateWithFlags(out, CudaApi.EVENT_DISABLE_TIMING), "cudaEventCreateWithFlags");
            DeviceEvent event;
            try {
                event = new DeviceEvent(out[0]);
            } catch (IllegalArgumentException e) {
                throw new DeviceException("cudaEventCreateWithFlags on " + descriptor.id() + " returned handle 0", e);
            }
            events.add(out[0]);
            return event;
        }
    }

    @Override
    public void recordEvent(DeviceEvent event, DeviceStream stream) {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(stream, "stream");
        onDevice("cudaEventRecord", null, event, stream, CudaApi.SUCCESS, (api, e, s) -> api.eventRecord(e, s));
    }

    @Override
    public boolean isEventComplete(DeviceEvent event) {
        Objects.requireNonNull(event, "event");
        // "Not ready" is an answer, not an error.
        return onDevice("cudaEventQuery", null, event, null, CudaApi.ERROR_NOT_READY,
                (api, e, s) -> api.eventQuery(e)) == CudaApi.SUCCESS;
    }

    @Override
    public void synchronizeEvent(DeviceEvent event) {
        Objects.requireNonNull(event, "event");
        onDevice("cudaEventSynchronize", null, event, null, CudaApi.SUCCESS, (api, e, s) -> api.eventSynchronize(e));
    }

    @Override
    public void destroyEvent(DeviceEvent event) {
        Objects.requireNonNull(event, "event");
        // Written out: the handle leaves the table only once the device is current, as in destroyStream.
        try (Entered _ = enter()) {
            if (!events.contains(event.handle())) {
                throw Failures.notLive("event", event, this);
            }
            setDevice();
            events.remove(event.handle());
            check(api.eventDestroy(event.handle()), "cudaEventDestroy(" + event + ")");
        }
    }

    @Override
    public void synchronize() {
        onDevice("cudaDeviceSynchronize", null, null, (api, e, s) -> api.deviceSynchronize());
    }

    /** Blocks until all work queued on {@code stream} has completed ({@code cudaStreamSynchronize}). */
    public void synchronizeStream(DeviceStream stream) {
        Objects.requireNonNull(stream, "stream");
        onDevice("cudaStreamSynchronize", null, stream, (api, e, s) -> api.streamSynchronize(s));
    }

    // ---- copies (for examples and tests)

    /**
     * Copies {@code bytes} from {@code src} to {@code dst} and waits for it ({@code cudaMemcpy} with
     * {@code cudaMemcpyDefault}: either side may be device, pinned or ordinary host memory).
     */
    public void copy(long dst, long src, long bytes) {
        requireCount(bytes);
        onDevice("cudaMemcpy", ByteSize.hex(dst) + ", " + ByteSize.hex(src) + ", " + bytes + " bytes", null,
                (api, e, s) -> api.memcpy(dst, src, bytes, CudaApi.MEMCPY_DEFAULT));
    }

    /** Queues a copy on {@code stream} ({@code cudaMemcpyAsync}, {@code cudaMemcpyDefault}). */
    public void copyAsync(long dst, long src, long bytes, DeviceStream stream) {
        requireCount(bytes);
        Objects.requireNonNull(stream, "stream");
        onDevice("cudaMemcpyAsync", ByteSize.hex(dst) + ", " + ByteSize.hex(src) + ", " + bytes + " bytes", stream,
                (api, e, s) -> api.memcpyAsync(dst, src, bytes, CudaApi.MEMCPY_DEFAULT, s));
    }

    /** Copies a native host segment to {@code dst} and waits for it. */
    public void copyFromHost(MemorySegment src, long dst) {
        copy(dst, nativeAddress(src), src.byteSize());
    }

    /** Copies {@code dst.byteSize()} bytes from {@code src} into a native host segment and waits for it. */
    public void copyToHost(long src, MemorySegment dst) {
        copy(nativeAddress(dst), src, dst.byteSize());
    }

    /** Sets {@code bytes} bytes at {@code address} to {@code value} and waits for it ({@code cudaMemset}). */
    public void fill(long address, int value, long bytes) {
        requireCount(bytes);
        onDevice("cudaMemset", ByteSize.hex(address) + ", " + value + ", " + bytes + " bytes", null,
                (api, e, s) -> api.memset(address, value, bytes));
    }

    /** Queues a memset on {@code stream} ({@code cudaMemsetAsync}). */
    public void fillAsync(long address, int value, long bytes, DeviceStream stream) {
        requireCount(bytes);
        Objects.requireNonNull(stream, "stream");
        onDevice("cudaMemsetAsync", ByteSize.hex(address) + ", " + value + ", " + bytes + " bytes", stream,
                (api, e, s) -> api.memsetAsync(address, value, bytes, s));
    }

    private static long nativeAddress(MemorySegment segment) {
        Objects.requireNonNull(segment, "segment");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("CUDA copies need native memory, not a heap segment: " + segment);
        }
        return segment.address();
    }

    private static void requireCount(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("byte count must be >= 0, got " + bytes);
        }
    }

    // ---- virtual memory

    /**
     * CUDA's virtual-memory management, on GPUs that have it, decided on the first call: empty for pinned host
     * memory, when {@code libcuda.so.1} was not found, when {@code cuInit} fails, when the device does not report
     * {@code CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED}, or when it reports no usable granularity.
     */
    @Override
    public Optional<VirtualMemory> virtualMemory() {
        // The probe makes the device current itself, and only where it gets as far as the device.
        try (Entered _ = enter()) {
            synchronized (vmLock) {
                if (!vmDecided) {
                    vm = openVirtualMemory();
                    vmDecided = true;
                }
                return Optional.ofNullable(vm);
            }
        }
    }

    private CudaVirtualMemory openVirtualMemory() {
        if (pinnedHost) {
            return null;
        }
        if (!driverPresent) {
            LOG.debug("{}: no virtual memory: the CUDA driver library was not found", this);
            return null;
        }
        try {
            int rc = api.driverInit();
            if (rc != CudaApi.SUCCESS) {
                LOG.info("{}: no virtual memory: cuInit failed: {}", this, describeDriver(rc));
                return null;
            }
            setDevice();
            int[] supported = new int[1];
            rc = api.deviceVirtualMemorySupported(device, supported);
            if (rc != CudaApi.SUCCESS || supported[0] != 1) {
                LOG.info("{}: no virtual memory: the device does not support CUDA's virtual-memory management ({})",
                        this, rc == CudaApi.SUCCESS ? "attribute is " + supported[0] : describeDriver(rc));
                return null;
            }
            long[] granularity = new long[1];
            rc = api.memGetAllocationGranularity(granularity, device, CudaApi.GRANULARITY_MINIMUM);
            long g = granularity[0];
            if (rc != CudaApi.SUCCESS || g <= 0 || Long.bitCount(g) != 1) {
                LOG.info("{}: no virtual memory: cuMemGetAllocationGranularity gave {}", this,
                        rc == CudaApi.SUCCESS ? g + ", not a power of two" : describeDriver(rc));
                return null;
            }
            LOG.debug("{}: virtual memory with a {} granule", this, ByteSize.format(g));
            return new CudaVirtualMemory(this, g);
        } catch (RuntimeException | LinkageError e) {
            LOG.warn("{}: no virtual memory: probing the CUDA driver failed", this, e);
            return null;
        }
    }

    // ---- close

    /**
     * Synchronises the device, then unmaps and releases all virtual memory, frees every live allocation and
     * destroys every event and stream. It carries on past failures, so that one refused call does not leak
     * everything after it, and throws the first failure at the end with the others suppressed. Idempotent.
     */
    @Override
    public void close() {
        closeLock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            List<RuntimeException> failures = new ArrayList<>();
            attempt(failures, this::setDevice);
            // Queued work may still use the memory that is about to go.
            attempt(failures, () -> check(api.deviceSynchronize(), "cudaDeviceSynchronize before closing"));
            CudaVirtualMemory v;
            synchronized (vmLock) {
                v = vm;
                vm = null;
                vmDecided = true;
            }
            if (v != null) {
                v.releaseAll(failures);
            }
            int count = live.size();
            for (long address : live.keySet()) {
                attempt(failures, () -> {
                    int rc = pinnedHost ? api.freeHost(address) : api.free(address);
                    check(rc, freeCall() + "(" + ByteSize.hex(address) + ") while closing");
                });
            }
            live.clear();
            hostBytesInUse.set(0);
            for (long event : events) {
                attempt(failures, () -> check(api.eventDestroy(event), "cudaEventDestroy while closing"));
            }
            events.clear();
            for (long stream : streams) {
                attempt(failures, () -> check(api.streamDestroy(stream), "cudaStreamDestroy while closing"));
            }
            streams.clear();
            LOG.debug("closed {}: freed {} allocations still live, {} failures", this, count, failures.size());
            if (!failures.isEmpty()) {
                RuntimeException first = failures.getFirst();
                for (RuntimeException other : failures.subList(1, failures.size())) {
                    first.addSuppressed(other);
                }
                throw first;
            }
        } finally {
            closeLock.writeLock().unlock();
        }
    }

    /** Runs one step of a teardown, collecting its failure instead of stopping. */
    static void attempt(List<RuntimeException> failures, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException | LinkageError e) {
            failures.add(asFailure(e));
        }
    }

    /** What {@link #attempt} collects for a throwable a CUDA call threw: itself, or a link error wrapped. */
    static RuntimeException asFailure(Throwable e) {
        return e instanceof RuntimeException r ? r
                : new DeviceException("a CUDA call failed to link: " + Failures.describe(e), e);
    }

    // ---- shared with CudaVirtualMemory

    CudaApi api() {
        return api;
    }

    // ---- the guard

    /**
     * The guard around a CUDA call: enters (see {@link #enter()}), refuses {@code event} and {@code stream} unless
     * they are live (before CUDA sees them, since its behaviour on stale handles is undefined), makes the device
     * current, makes {@code call} with their handles, and leaves. Every call that needs nothing else goes through
     * here; the others are written out with {@link #enter()}, each saying why.
     *
     * @param function  the CUDA function, for the error message
     * @param arguments the call's other arguments as the message shows them, or null
     * @param event     the event the call acts on, or null
     * @param stream    the stream the call acts on (the default stream is live), or null
     * @param answer    a code that is an answer rather than a failure ({@code cudaErrorNotReady} from a query):
     *                  it is returned, and cleared from the thread's last error as PyTorch does, so that no later
     *                  check trips on it; {@link CudaApi#SUCCESS} when there is none
     * @return {@link CudaApi#SUCCESS} or {@code answer}
     * @throws DeviceException for any other code, naming {@code function(arguments, event, stream)}, the device,
     *                         the code's name and CUDA's description; the message is built only then
     */
    private int onDevice(String function, String arguments, DeviceEvent event, DeviceStream stream, int answer,
                         CudaCall call) {
        try (Entered _ = enter()) {
            if (event != null) {
                requireEvent(event);
            }
            if (stream != null) {
                requireStream(stream);
            }
            setDevice();
            int rc = call.invoke(api, event == null ? 0 : event.handle(), stream == null ? 0 : stream.handle());
            if (rc == CudaApi.SUCCESS) {
                return rc;
            }
            if (rc == answer) {
                api.getLastError();
                return rc;
            }
            throw new DeviceException(failure(callText(function, arguments, event, stream), rc));
        }
    }

    /** {@link #onDevice(String, String, DeviceEvent, DeviceStream, int, CudaCall)} for a call on no event. */
    private void onDevice(String function, String arguments, DeviceStream stream, CudaCall call) {
        onDevice(function, arguments, null, stream, CudaApi.SUCCESS, call);
    }

    /** E.g. {@code cudaEventRecord(event(0xc), stream(0xb))}, or the bare function when it has no arguments. */
    private static String callText(String function, String arguments, DeviceEvent event, DeviceStream stream) {
        StringJoiner shown = new StringJoiner(", ", function + "(", ")").setEmptyValue(function);
        if (arguments != null) {
            shown.add(arguments);
        }
        if (event != null) {
            shown.add(event.toString());
        }
        if (stream != null) {
            shown.add(stream.toString());
        }
        return shown.toString();
    }

    /**
     * Enters a call: takes the shared lock (which {@link #close()} takes exclusively, so that it waits for calls in
     * flight) and fails with {@link IllegalStateException} if the device is closed. Leave by closing what it
     * returns, in a try-with-resources: {@code try (Entered _ = enter()) { ... }}.
     */
    Entered enter() {
        closeLock.readLock().lock();
        if (closed) {
            closeLock.readLock().unlock();
            throw new IllegalStateException(this + " is closed");
        }
        return entered;
    }

    /**
     * A call entered with {@link #enter()}; closing it leaves the call. The device has one, shared by every thread
     * (it holds no state), so that entering allocates nothing.
     */
    final class Entered implements AutoCloseable {

        private Entered() {
        }

        /** Leaves the call: releases the calling thread's shared lock. */
        @Override
        public void close() {
            closeLock.readLock().unlock();
        }
    }

    /** Makes this device current on the calling thread; the failure's message is built only on failure. */
    void setDevice() {
        int rc = api.setDevice(device);
        if (rc != CudaApi.SUCCESS) {
            throw new DeviceException(failure("cudaSetDevice(" + device + ")", rc));
        }
    }

    /** Throws a {@link DeviceException} unless {@code rc} is success (a runtime-API code). */
    private void check(int rc, String call) {
        if (rc != CudaApi.SUCCESS) {
            throw new DeviceException(failure(call, rc));
        }
    }

    /** Throws a {@link DeviceException} unless {@code rc} is success (a driver-API code). */
    void checkDriver(int rc, String call) {
        if (rc != CudaApi.SUCCESS) {
            throw driverFailure(rc, call);
        }
    }

    /** The {@link DeviceException} for a driver call that answered {@code rc}, naming the call and this device. */
    DeviceException driverFailure(int rc, String call) {
        return new DeviceException(call + " on " + descriptor.id() + " failed: " + describeDriver(rc));
    }

    /** For the constructor, before the descriptor exists: the call names the device itself. */
    private static void check(int rc, String call, CudaApi api) {
        if (rc != CudaApi.SUCCESS) {
            throw new DeviceException(call + " failed: " + describe(api, rc));
        }
    }

    /** E.g. {@code cudaMalloc(1024 bytes) on cuda:0 failed: cudaErrorInvalidValue (1): invalid argument}. */
    private String failure(String call, int rc) {
        return call + " on " + descriptor.id() + " failed: " + describe(rc);
    }

    private String describe(int rc) {
        return describe(api, rc);
    }

    /** A runtime error code with its name and CUDA's description, never throwing. */
    static String describe(CudaApi api, int rc) {
        String name;
        String text;
        try {
            name = api.getErrorName(rc);
            text = api.getErrorString(rc);
        } catch (RuntimeException | LinkageError e) {
            return "CUDA error " + rc;
        }
        return (name != null ? name : "CUDA error") + " (" + rc + ")" + (text != null ? ": " + text : "");
    }

    /** A driver error code with its name and CUDA's description, never throwing. */
    String describeDriver(int rc) {
        String name;
        String text;
        try {
            name = api.driverErrorName(rc);
            text = api.driverErrorString(rc);
        } catch (RuntimeException | LinkageError e) {
            return "CUresult " + rc;
        }
        return (name != null ? name : "CUresult") + " (" + rc + ")" + (text != null ? ": " + text : "");
    }

    private String allocCall() {
        return pinnedHost ? "cudaHostAlloc" : "cudaMalloc";
    }

    private String freeCall() {
        return pinnedHost ? "cudaFreeHost" : "cudaFree";
    }

    private void requireEvent(DeviceEvent event) {
        if (!events.contains(event.handle())) {
            throw Failures.notLive("event", event, this);
        }
    }

    private void requireStream(DeviceStream stream) {
        if (!stream.isDefault() && !streams.contains(stream.handle())) {
            throw Failures.notLive("stream", stream, this);
        }
    }


    @Override
    public String toString() {
        return descriptor.toString();
    }
}
