package io.devalloc.host;

import io.devalloc.api.collect.LongLongHashMap;
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
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Native host memory as a {@link DeviceMemory}: plain ({@code host}) or page-locked ({@code pinned-host}).
 *
 * <p><b>Memory.</b> {@link #malloc} calls {@code posix_memalign} through {@link NativeMemoryCalls}, so memory is
 * neither zeroed nor touched, like {@code cudaMalloc}. The device has a fixed capacity (by default the machine's
 * {@code MemTotal}); it refuses, by returning {@link #NULL}, any allocation that would take the bytes in use above
 * it, so that allocators see a device of a known size that runs out deterministically. Bytes in use count each
 * allocation rounded up to {@link #alignment()}, as a GPU does.
 *
 * <p><b>Pinning.</b> A pinned device {@code mlock}s each allocation after allocating it and {@code munlock}s it
 * before freeing it. Because {@code mlock} works on whole pages and locks are not counted (one {@code munlock}
 * unlocks a page however many ranges locked it), a pinned device aligns and rounds every allocation to the page
 * size, so that no two allocations ever share a page; its {@link #alignment()} is therefore the page size (4 KiB
 * on x86-64) rather than 256. A refused {@code mlock} frees the memory again and throws a {@link DeviceException}
 * that explains {@code RLIMIT_MEMLOCK} and how to raise it: unlike running out of capacity, it is a setup problem
 * that retrying will not cure.
 *
 * <p><b>Virtual memory.</b> On Linux (x86-64, arm64, riscv64, s390x, loongarch64, ppc64) both kinds offer
 * {@link #virtualMemory()}, implemented with {@code mmap(PROT_NONE, MAP_NORESERVE)} reservations whose 2 MiB
 * granules are mapped with {@code mprotect} and unmapped with {@code madvise(MADV_DONTNEED)}; see
 * {@link HostVirtualMemory}. Mapped granules count against the same capacity as allocations, {@link #hostView}
 * accepts ranges inside mapped granules of one reservation, and a pinned device {@code mlock}s granules as it
 * maps them. Elsewhere {@link #virtualMemory()} is empty.
 *
 * <p><b>Streams and events.</b> Host memory is synchronous: every operation is complete when the call returns. The
 * stream and event API is emulated with handles that are validated (an unknown or destroyed handle is an
 * {@link IllegalArgumentException}, as CUDA reports {@code cudaErrorInvalidResourceHandle}) and events are always
 * complete.
 *
 * <p><b>Threads.</b> Thread-safe. One lock guards the allocation table, the counters and the handle tables; the
 * native calls run under it too, so {@link #close()} can never race an allocation that is half done. libc's
 * allocator serialises large allocations anyway, and allocators cache device memory precisely because device
 * malloc is slow.
 *
 * <p><b>After close.</b> Every call except {@link #descriptor()}, {@link #alignment()}, {@link #toString()} and
 * {@link #close()} throws {@link IllegalStateException}. The descriptor stays readable so that error messages and
 * logs can still name a closed device.
 */
final class HostMemory implements DeviceMemory {

    private static final Logger LOG = LoggerFactory.getLogger(HostMemory.class);

    /** The alignment of plain host allocations: cudaMalloc's, so that allocators behave as on a GPU. */
    static final long HOST_ALIGNMENT = 256;

    private static final long ABSENT = -1;

    private final NativeMemoryCalls calls;
    private final boolean pinned;
    private final long alignment;
    private final long capacity;
    private final DeviceDescriptor descriptor;

    private final ReentrantLock lock = new ReentrantLock();
    /**
     * Live address → requested bytes. A sorted map rather than a hash map because {@link #hostView} must find the
     * allocation that contains an interior address; the boxing is nothing next to the cost of a libc malloc.
     */
    private final TreeMap<Long, Long> live = new TreeMap<>();
    /** Live stream handles (the value is unused). */
    private final LongLongHashMap streams = new LongLongHashMap();
    /** Live event handles → 1 once recorded, 0 before. */
    private final LongLongHashMap events = new LongLongHashMap();
    /** Bytes of allocations (rounded) and of mapped granules; guarded by {@link #lock}. */
    private long bytesInUse;
    private long nextHandle = 1;
    private boolean closed;
    /** Null where host virtual memory is not supported. */
    private final HostVirtualMemory virtualMemory;

    private HostMemory(NativeMemoryCalls calls, boolean pinned, long alignment, long capacity) {
        this.calls = Objects.requireNonNull(calls, "calls");
        if (capacity < alignment) {
            throw new IllegalArgumentException("a " + (pinned ? "pinned-host" : "host") + " device needs a capacity of"
                    + " at least " + alignment + " bytes (one allocation), got " + capacity);
        }
        this.pinned = pinned;
        this.alignment = alignment;
        this.capacity = capacity;
        this.descriptor = pinned
                ? new DeviceDescriptor(PinnedHostMemoryProvider.NAME, 0,
                        "pinned host memory (" + ByteSize.format(capacity) + ")", DeviceKind.PINNED_HOST, capacity)
                : new DeviceDescriptor(HostMemoryProvider.NAME, 0,
                        "host memory (" + ByteSize.format(capacity) + ")", DeviceKind.HOST, capacity);
        // Last, so the virtual memory sees a fully built device (it only keeps the reference).
        this.virtualMemory = HostVirtualMemory.supported(calls) ? new HostVirtualMemory(this, calls, lock, pinned)
                : null;
    }

    /**
     * Plain native memory.
     *
     * @param capacity the most bytes (after rounding to 256) that may be in use at once; at least 256
     */
    static HostMemory host(NativeMemoryCalls calls, long capacity) {
        HostMemory memory = new HostMemory(calls, false, HOST_ALIGNMENT, capacity);
        LOG.debug("opened {}", memory);
        return memory;
    }

    /**
     * Page-locked native memory.
     *
     * @param capacity the most bytes (after rounding to the page size) that may be in use at once; at least a page
     */
    static HostMemory pinned(NativeMemoryCalls calls, long capacity) {
        HostMemory memory = new HostMemory(calls, true, pinnedAlignment(calls), capacity);
        LOG.debug("opened {}; RLIMIT_MEMLOCK {}", memory, MemlockAdvice.limits(calls));
        return memory;
    }

    /** The page size, but never less than 256, so a pinned device is at least as aligned as a plain one. */
    static long pinnedAlignment(NativeMemoryCalls calls) {
        long page = calls.pageSize();
        if (page <= 0 || Long.bitCount(page) != 1) {
            throw new DeviceException("the system reports a page size of " + page + ", which is not a power of two");
        }
        return Math.max(HOST_ALIGNMENT, page);
    }

    @Override
    public DeviceDescriptor descriptor() {
        return descriptor;
    }

    @Override
    public long alignment() {
        return alignment;
    }

    /** Whether allocations are page-locked. */
    boolean isPinned() {
        return pinned;
    }

    @Override
    public long malloc(long bytes) {
        lock.lock();
        try {
            ensureOpen();
            if (bytes < 1) {
                throw new IllegalArgumentException("allocation size must be >= 1 byte, got " + bytes);
            }
            long rounded = ByteSize.roundUp(bytes, alignment);
            if (rounded < 0 || rounded > capacity - bytesInUse) {
                LOG.debug("{}: malloc({}) refused: {} in use of {}", this, bytes, ByteSize.format(bytesInUse),
                        ByteSize.format(capacity));
                return NULL;
            }
            long address = calls.alloc(rounded, alignment);
            if (address == NULL) {
                LOG.debug("{}: malloc({}) refused by libc (posix_memalign has no memory)", this, bytes);
                return NULL;
            }
            if (pinned) {
                int errno = calls.mlock(address, rounded);
                if (errno != 0) {
                    calls.free(address);
                    throw new DeviceException(MemlockAdvice.explain("mlock of " + ByteSize.format(rounded) + " ("
                            + rounded + " bytes) on " + descriptor.id(), errno, rounded, bytesInUse, calls));
                }
            }
            live.put(address, bytes);
            bytesInUse += rounded;
            return address;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void free(long address) {
        lock.lock();
        try {
            ensureOpen();
            Long requested = live.remove(address);
            if (requested == null) {
                throw new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, address, toString());
            }
            long rounded = ByteSize.roundUp(requested, alignment);
            bytesInUse -= rounded;
            release(address, rounded);
        } finally {
            lock.unlock();
        }
    }

    /** Unlocks (when pinned) and frees one allocation that has already left the table. */
    private void release(long address, long rounded) {
        if (pinned) {
            int errno = calls.munlock(address, rounded);
            if (errno != 0) {
                // munlock only fails for unmapped ranges, which a live allocation cannot be. Freeing anyway is
                // still right: keeping the memory would leak it with no way for the caller to retry.
                LOG.warn("{}: munlock of {} at {} failed with {}; freeing it anyway", this, ByteSize.format(rounded),
                        ByteSize.hex(address), MemlockAdvice.errnoName(errno));
            }
        }
        calls.free(address);
    }

    @Override
    public MemoryInfo memoryInfo() {
        lock.lock();
        try {
            ensureOpen();
            return new MemoryInfo(capacity - bytesInUse, capacity);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public DeviceStream createStream() {
        return new DeviceStream(newHandle(streams));
    }

    @Override
    public void destroyStream(DeviceStream stream) {
        Objects.requireNonNull(stream, "stream");
        lock.lock();
        try {
            ensureOpen();
            if (stream.isDefault()) {
                throw new IllegalArgumentException("the default stream of " + this + " cannot be destroyed");
            }
            if (streams.remove(stream.handle(), ABSENT) == ABSENT) {
                throw Failures.notLive("stream", stream, this);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean hasStream(DeviceStream stream) {
        Objects.requireNonNull(stream, "stream");
        lock.lock();
        try {
            ensureOpen();
            return stream.isDefault() || streams.containsKey(stream.handle());
        } finally {
            lock.unlock();
        }
    }

    @Override
    public DeviceEvent createEvent() {
        return new DeviceEvent(newHandle(events));
    }

    @Override
    public void recordEvent(DeviceEvent event, DeviceStream stream) {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(stream, "stream");
        lock.lock();
        try {
            ensureOpen();
            requireEvent(event);
            if (!stream.isDefault() && !streams.containsKey(stream.handle())) {
                throw Failures.notLive("stream", stream, this);
            }
            // Work on host memory is done when the call that queued it returns, so the event is complete at once.
            events.put(event.handle(), 1, ABSENT);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean isEventComplete(DeviceEvent event) {
        synchronizeEvent(event);
        // Recorded events completed when recorded; an event never recorded is complete, as in CUDA.
        return true;
    }

    @Override
    public void synchronizeEvent(DeviceEvent event) {
        Objects.requireNonNull(event, "event");
        lock.lock();
        try {
            ensureOpen();
            requireEvent(event);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void destroyEvent(DeviceEvent event) {
        Objects.requireNonNull(event, "event");
        lock.lock();
        try {
            ensureOpen();
            if (events.remove(event.handle(), ABSENT) == ABSENT) {
                throw Failures.notLive("event", event, this);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void synchronize() {
        lock.lock();
        try {
            ensureOpen();
            // Nothing to wait for: host memory operations complete before they return.
        } finally {
            lock.unlock();
        }
    }

    /**
     * The device's {@link HostVirtualMemory}: 2 MiB granules mapped into {@code mmap} reservations, charged to this
     * device's capacity (and locked on a pinned device). Empty where the platform's {@code mmap} flags are not
     * known (anything but Linux on the architectures {@link FfmNativeMemoryCalls} lists), and then allocators fall
     * back to plain segments.
     */
    @Override
    public Optional<VirtualMemory> virtualMemory() {
        lock.lock();
        try {
            ensureOpen();
            return Optional.ofNullable(virtualMemory);
        } finally {
            lock.unlock();
        }
    }

    /**
     * A view of live memory: inside one allocation, or inside mapped granules of one virtual-memory reservation.
     * The segment is a raw pointer with a length: it is not invalidated by {@link #free}, an unmap or
     * {@link #close()}, so touching it after the memory was freed is a use-after-free, as in C; after an unmap or
     * release the range is {@code PROT_NONE} or unmapped, and touching it crashes the JVM with {@code SIGSEGV}.
     */
    @Override
    @SuppressWarnings("restricted") // reinterpret is the point: the range was checked against a live allocation
    public Optional<MemorySegment> hostView(long address, long bytes) {
        lock.lock();
        try {
            ensureOpen();
            if (bytes < 1) {
                throw new IllegalArgumentException("a host view needs at least 1 byte, got " + bytes);
            }
            Map.Entry<Long, Long> allocation = live.floorEntry(address);
            long offset = allocation == null ? -1 : address - allocation.getKey();
            boolean inAllocation = allocation != null && offset < allocation.getValue()
                    && bytes <= allocation.getValue() - offset;
            if (!inAllocation && !(virtualMemory != null && virtualMemory.covers(address, bytes))) {
                throw new IllegalArgumentException("[" + ByteSize.hex(address) + ", +" + bytes + " bytes) is not inside"
                        + " one live allocation"
                        + (virtualMemory == null ? "" : " or mapped granules of one reservation") + " of " + this
                        + (allocation == null || offset >= allocation.getValue() ? ""
                        : " (the allocation at " + ByteSize.hex(allocation.getKey()) + " has " + allocation.getValue()
                        + " bytes)"));
            }
            return Optional.of(MemorySegment.ofAddress(address).reinterpret(bytes));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            int count = live.size();
            long bytes = bytesInUse;
            int reservations = 0;
            if (virtualMemory != null) {
                reservations = virtualMemory.reservationCount();
                try {
                    virtualMemory.closeAll();
                } catch (RuntimeException e) {
                    LOG.warn("{}: releasing virtual memory on close failed", this, e);
                }
            }
            for (Map.Entry<Long, Long> allocation : live.entrySet()) {
                try {
                    release(allocation.getKey(), ByteSize.roundUp(allocation.getValue(), alignment));
                } catch (RuntimeException e) {
                    // Keep going: one failure must not leak every allocation after it.
                    LOG.warn("{}: freeing {} on close failed", this, ByteSize.hex(allocation.getKey()), e);
                }
            }
            live.clear();
            streams.clear();
            events.clear();
            bytesInUse = 0;
            LOG.debug("closed {}: freed {} allocations and {} reservations ({} in use)", this, count, reservations,
                    ByteSize.format(bytes));
        } finally {
            lock.unlock();
        }
    }

    /** A new live handle in {@code table} (streams or events). */
    private long newHandle(LongLongHashMap table) {
        lock.lock();
        try {
            ensureOpen();
            long handle = nextHandle++;
            table.put(handle, 0, ABSENT);
            return handle;
        } finally {
            lock.unlock();
        }
    }

    private void requireEvent(DeviceEvent event) {
        if (!events.containsKey(event.handle())) {
            throw Failures.notLive("event", event, this);
        }
    }


    /**
     * Takes {@code bytes} of capacity for mapped granules; false (and nothing taken) when they do not fit. Caller
     * holds the lock.
     */
    boolean charge(long bytes) {
        if (bytes > capacity - bytesInUse) {
            return false;
        }
        bytesInUse += bytes;
        return true;
    }

    /** Gives back capacity taken by {@link #charge}. Caller holds the lock. */
    void uncharge(long bytes) {
        bytesInUse -= bytes;
    }

    /** Bytes in use, allocations and mapped granules (what a pinned device has locked). Caller holds the lock. */
    long bytesInUse() {
        return bytesInUse;
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    @Override
    public String toString() {
        return descriptor.toString();
    }
}
