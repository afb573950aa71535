package io.devalloc.sim;

import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.api.collect.OrderedHandleSet;
import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.internal.MappedPieces;
import io.devalloc.api.units.ByteSize;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A simulated GPU: GPU-scale capacity and addresses with no memory behind them, for tests, trace replays and
 * benchmarks on a machine without a GPU. Deterministic: the same calls give the same addresses.
 *
 * <p><b>Addresses.</b> The device owns an address space below {@link Builder#topAddress}. A malloc takes a range
 * from it, by default from the top of the highest free range that fits ({@link AddressOrder#TOP_DOWN}, what the
 * driver did in the recorded PyTorch traces), or at addresses a test lists ({@link Builder#scriptedAddresses}).
 * Sizes are rounded up to the granularity (512 B by default), which is also the alignment.
 *
 * <p><b>Capacity.</b> malloc and virtual-memory maps return "no memory" when bytes in use would exceed the
 * capacity, or the injected limit ({@link #setLimitBytes}), or when a failure was injected for that call
 * ({@link #failCall}). Frees give the bytes back.
 *
 * <p><b>Faults.</b> Every kind of call in {@link DeviceCall} (malloc, free, reserve, map, unmap, release, event
 * creation, event recording, waits) can be made to fail, in one way per kind: {@link #failCall} (the n-th call of
 * that kind, counted from the device's creation) and {@link #failNextCalls} (the next n) make it run out of memory
 * ("no memory" for malloc, reserve and map; a {@link DeviceException} saying "out of memory" for the others), and
 * {@link #failNextCallWith} and {@link #failCallWith} make the next or the n-th call throw the given device error. A
 * fault armed for one kind fires only on a call of that kind, and only after the call's arguments were checked (a
 * refused argument is no call and leaves the fault armed). A failed call changes nothing on the device, except a
 * failed unmap, which leaves its range unmapped as {@link VirtualMemory#unmap} says. {@link #calls} counts the calls
 * of each kind; {@link #clearFaults} disarms everything.
 *
 * <p><b>Streams and events.</b> Emulated. Each record of an event on a stream queues it behind the stream's earlier
 * work. With {@link EventCompletion#IMMEDIATE} it completes at once; with {@link EventCompletion#MANUAL} it stays
 * pending until the test completes the stream, or someone synchronises on it (which stands for the device
 * finishing the work). An event never recorded counts as complete, as in CUDA.
 *
 * <p><b>Virtual memory</b> (unless disabled): reservations come from the same address space; maps and unmaps
 * work in 2 MiB granules and count against the capacity. The pieces a map asks for
 * ({@link VirtualMemory#map(long, long, long)}) are tracked, and an unmap that would cut one is refused, as on
 * CUDA; the history records each map's whole range (one {@link DeviceOperation} per call), not its pieces.
 *
 * <p>Thread-safe: every method synchronises on the device.
 */
public final class SimulatedDevice implements DeviceMemory {

    /** Default address the address space ends below. */
    public static final long DEFAULT_TOP_ADDRESS = 0x7F00_0000_0000L;
    /** Default size of the address space (64 TiB). */
    public static final long DEFAULT_ADDRESS_SPACE = 1L << 46;
    /** Virtual-memory granule, as on current NVIDIA GPUs. */
    public static final long VM_GRANULARITY = 2 * ByteSize.MiB;

    private final DeviceDescriptor descriptor;
    private final long capacity;
    private final long granularity;
    private final AddressOrder order;
    private final ArrayDeque<Long> scripted;
    private final boolean recordHistory;
    private final SimVirtualMemory virtualMemory;

    /**
     * Free address ranges, keyed by start and weighted by length (end exclusive = start + length): a B-tree over
     * primitive arrays whose maxima of lengths below each inner entry find the highest (or lowest) range long enough
     * for a request in O(log n), without boxing and without looking at the ranges that are too short.
     */
    private final OrderedHandleSet freeRanges = new OrderedHandleSet(1, true, 16);
    /** Live malloc'd ranges: address → rounded size. */
    private final LongLongHashMap live = new LongLongHashMap(256);
    private final List<DeviceOperation> history = new ArrayList<>();
    /** Per kind of call: the call numbers that run out of memory. */
    private final EnumMap<DeviceCall, TreeSet<Long>> runOutCalls = new EnumMap<>(DeviceCall.class);
    /** Per kind of call: call number → the error that call throws. */
    private final EnumMap<DeviceCall, TreeMap<Long, RuntimeException>> errorCalls = new EnumMap<>(DeviceCall.class);
    /** Per kind of call: calls so far (those whose arguments were accepted). */
    private final long[] callCounts = new long[DeviceCall.values().length];
    private long limit = Long.MAX_VALUE;

    private long mallocs;
    private long failedMallocs;
    private long frees;
    private long maps;
    private long unmaps;
    private long bytesInUse;
    private long peakBytesInUse;
    private long bytesMalloced;

    private EventCompletion eventCompletion;
    private long nextHandle = 1;
    private final Set<Long> streams = new HashSet<>();
    /** Per stream handle: sequence number of the last work queued, and of the last work completed. */
    private final Map<Long, long[]> streamProgress = new HashMap<>();
    /** Per event handle: {stream handle, sequence} of its last record, or null when never recorded. */
    private final Map<Long, long[]> events = new HashMap<>();
    private boolean closed;

    private SimulatedDevice(Builder b) {
        this.capacity = b.capacity;
        this.granularity = b.granularity;
        this.order = b.order;
        this.scripted = new ArrayDeque<>(b.scripted);
        this.recordHistory = b.recordHistory;
        this.eventCompletion = b.eventCompletion;
        this.descriptor = new DeviceDescriptor(SimulatedDeviceProvider.NAME, b.index,
                "simulated GPU (" + ByteSize.format(capacity) + ")", DeviceKind.SIMULATED, capacity);
        freeRanges.insert(b.topAddress - b.addressSpace, 0, 0, 0, b.addressSpace);
        streamProgress.put(0L, new long[2]);
        this.virtualMemory = b.virtualMemory ? new SimVirtualMemory() : null;
    }

    /** A builder; the defaults are an 80 GiB device, top-down addresses, immediate events, virtual memory on. */
    public static Builder builder() {
        return new Builder();
    }

    /** A device of {@code capacity} bytes with every other setting at its default. */
    public static SimulatedDevice ofCapacity(long capacity) {
        return builder().capacity(capacity).build();
    }

    // ---------------------------------------------------------------------------------------------- memory

    @Override
    public DeviceDescriptor descriptor() {
        return descriptor;
    }

    @Override
    public long alignment() {
        return granularity;
    }

    @Override
    public synchronized long malloc(long bytes) {
        ensureOpen();
        if (bytes < 1) {
            throw new IllegalArgumentException("malloc size must be >= 1, got " + bytes);
        }
        long rounded = ByteSize.roundUp(bytes, granularity);
        checkScripted(rounded, granularity);
        if (fault(DeviceCall.MALLOC) || rounded < 0 || !fits(rounded)) {
            failedMallocs++;
            return NULL;
        }
        long address = takeRange(rounded, granularity);
        if (address == NULL) {
            failedMallocs++;
            return NULL;
        }
        live.put(address, rounded, -1);
        mallocs++;
        use(rounded);
        record(DeviceOperation.Kind.MALLOC, address, rounded);
        return address;
    }

    @Override
    public synchronized void free(long address) {
        ensureOpen();
        if (!live.containsKey(address)) {
            throw new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, address, toString());
        }
        throwIfRunsOut(DeviceCall.FREE);
        long size = live.remove(address, -1);
        returnRange(address, size);
        frees++;
        bytesInUse -= size;
        record(DeviceOperation.Kind.FREE, address, size);
    }

    @Override
    public synchronized MemoryInfo memoryInfo() {
        ensureOpen();
        // An injected limit shows as less free memory, as another process using the GPU would.
        return new MemoryInfo(Math.max(0, Math.min(capacity, limit) - bytesInUse), capacity);
    }

    private boolean fits(long bytes) {
        long ceiling = Math.min(capacity, limit);
        return bytes <= ceiling - bytesInUse;
    }

    private void use(long bytes) {
        bytesInUse += bytes;
        bytesMalloced += bytes;
        peakBytesInUse = Math.max(peakBytesInUse, bytesInUse);
    }

    private void record(DeviceOperation.Kind kind, long address, long bytes) {
        if (recordHistory) {
            history.add(new DeviceOperation(kind, address, bytes));
        }
    }

    /**
     * Fails, changing nothing, when the next scripted address cannot hold {@code size} bytes at {@code align}: a
     * mistake in the test's setup, reported before any counter moves.
     */
    private void checkScripted(long size, long align) {
        Long want = scripted.peekFirst();
        if (want == null || size < 0) {
            return;
        }
        int r = floorRange(want);
        if (want % align != 0 || r == OrderedHandleSet.NO_NODE || size > rangeEnd(r) - want) {
            throw new IllegalArgumentException("scripted address " + ByteSize.hex(want) + " (+" + size
                    + " bytes) is not free, or not aligned to " + align + ", on " + this);
        }
    }

    /** Takes {@code size} bytes of address space, aligned to {@code align}; 0 when none is left. */
    private long takeRange(long size, long align) {
        Long want = scripted.pollFirst();
        if (want != null) {
            return takeExact(want, size);
        }
        // The ranges in address order (descending for TOP_DOWN), those shorter than the request skipped: no
        // aligned place inside them can hold it.
        boolean topDown = order == AddressOrder.TOP_DOWN;
        for (int r = topDown ? freeRanges.lastWithWeightAtLeast(size) : freeRanges.firstWithWeightAtLeast(size);
                r != OrderedHandleSet.NO_NODE;
                r = topDown ? freeRanges.prevWithWeightAtLeast(r, size) : freeRanges.nextWithWeightAtLeast(r, size)) {
            long start = freeRanges.key(r, 0);
            long end = rangeEnd(r);
            long candidate = topDown
                    ? (end - size) & -align
                    : ByteSize.roundUp(start, align);
            if (candidate >= start && candidate + size <= end) {
                return takeExact(candidate, size);
            }
        }
        return NULL;
    }

    /** The free range starting at or below {@code address}, the highest such, or {@link OrderedHandleSet#NO_NODE}. */
    private int floorRange(long address) {
        int r = freeRanges.lowerBound(address, 0, 0);
        if (r == OrderedHandleSet.NO_NODE) {
            return freeRanges.last();
        }
        return freeRanges.key(r, 0) == address ? r : freeRanges.prev(r);
    }

    private long rangeEnd(int r) {
        return freeRanges.key(r, 0) + freeRanges.weight(r);
    }

    private long takeExact(long address, long size) {
        int r = floorRange(address);
        if (r == OrderedHandleSet.NO_NODE || size > rangeEnd(r) - address || address % granularity != 0) {
            throw new IllegalArgumentException("scripted address " + ByteSize.hex(address) + " (+" + size
                    + " bytes) is not free, or not aligned to " + granularity + ", on " + this);
        }
        long start = freeRanges.key(r, 0);
        long end = rangeEnd(r);
        if (start < address) {
            // The part below keeps the range's start, so only its length changes.
            freeRanges.setWeight(r, address - start);
        } else {
            freeRanges.remove(r);
        }
        if (address + size < end) {
            freeRanges.insert(address + size, 0, 0, 0, end - (address + size));
        }
        return address;
    }

    private void returnRange(long address, long size) {
        long end = address + size;
        int after = freeRanges.find(end, 0, 0);
        if (after != OrderedHandleSet.NO_NODE) {
            end += freeRanges.weight(after);
            freeRanges.remove(after);
        }
        int before = floorRange(address);
        if (before != OrderedHandleSet.NO_NODE && rangeEnd(before) == address) {
            // Merged into the range below, which keeps its start.
            freeRanges.setWeight(before, end - freeRanges.key(before, 0));
        } else {
            freeRanges.insert(address, 0, 0, 0, end - address);
        }
    }

    // ---------------------------------------------------------------------------------------------- streams

    @Override
    public synchronized DeviceStream createStream() {
        ensureOpen();
        long handle = 0x5000_0000L + nextHandle++;
        streams.add(handle);
        streamProgress.put(handle, new long[2]);
        return new DeviceStream(handle);
    }

    @Override
    public synchronized void destroyStream(DeviceStream stream) {
        ensureOpen();
        if (stream.isDefault()) {
            throw new IllegalArgumentException("the default stream cannot be destroyed");
        }
        if (!streams.remove(stream.handle())) {
            throw new IllegalArgumentException("unknown " + stream + " on " + this);
        }
        streamProgress.remove(stream.handle());
    }

    @Override
    public synchronized boolean hasStream(DeviceStream stream) {
        ensureOpen();
        return streamProgress.containsKey(stream.handle());
    }

    @Override
    public synchronized DeviceEvent createEvent() {
        ensureOpen();
        throwIfRunsOut(DeviceCall.CREATE_EVENT);
        long handle = 0xE000_0000L + nextHandle++;
        events.put(handle, null);
        return new DeviceEvent(handle);
    }

    @Override
    public synchronized void recordEvent(DeviceEvent event, DeviceStream stream) {
        ensureOpen();
        requireEvent(event);
        long[] progress = progress(stream);
        throwIfRunsOut(DeviceCall.RECORD_EVENT);
        long seq = ++progress[0];
        events.put(event.handle(), new long[] {stream.handle(), seq});
        if (eventCompletion == EventCompletion.IMMEDIATE) {
            progress[1] = seq;
        }
    }

    @Override
    public synchronized boolean isEventComplete(DeviceEvent event) {
        ensureOpen();
        requireEvent(event);
        long[] rec = events.get(event.handle());
        if (rec == null) {
            return true;
        }
        long[] progress = streamProgress.get(rec[0]);
        return progress == null || progress[1] >= rec[1];
    }

    @Override
    public synchronized void synchronizeEvent(DeviceEvent event) {
        ensureOpen();
        requireEvent(event);
        throwIfRunsOut(DeviceCall.SYNCHRONIZE);
        long[] rec = events.get(event.handle());
        if (rec != null) {
            long[] progress = streamProgress.get(rec[0]);
            if (progress != null) {
                progress[1] = Math.max(progress[1], rec[1]);
            }
        }
    }

    @Override
    public synchronized void destroyEvent(DeviceEvent event) {
        ensureOpen();
        requireEvent(event);
        events.remove(event.handle());
    }

    @Override
    public synchronized void synchronize() {
        ensureOpen();
        throwIfRunsOut(DeviceCall.SYNCHRONIZE);
        completeAll();
    }

    /** Completes all work queued so far on {@code stream} (MANUAL mode). */
    public synchronized void completeStream(DeviceStream stream) {
        ensureOpen();
        long[] progress = progress(stream);
        progress[1] = progress[0];
    }

    /** Completes all work queued so far on every stream. */
    public synchronized void completeAll() {
        for (long[] progress : streamProgress.values()) {
            progress[1] = progress[0];
        }
    }

    /** How many recorded events have not completed yet. */
    public synchronized int pendingEvents() {
        int n = 0;
        for (long[] rec : events.values()) {
            if (rec != null) {
                long[] progress = streamProgress.get(rec[0]);
                if (progress != null && progress[1] < rec[1]) {
                    n++;
                }
            }
        }
        return n;
    }

    /** Switches between immediate and test-controlled event completion. */
    public synchronized void setEventCompletion(EventCompletion completion) {
        this.eventCompletion = Objects.requireNonNull(completion, "completion");
    }

    private long[] progress(DeviceStream stream) {
        long[] progress = streamProgress.get(stream.handle());
        if (progress == null) {
            throw new IllegalArgumentException("unknown " + stream + " on " + this);
        }
        return progress;
    }

    private void requireEvent(DeviceEvent event) {
        if (!events.containsKey(event.handle())) {
            throw new IllegalArgumentException("unknown " + event + " on " + this);
        }
    }

    // ---------------------------------------------------------------------------------------------- faults

    /**
     * Makes the {@code n}-th malloc call, counted from the device's creation and starting at 1, return "no
     * memory". Calls already made cannot fail. The same as {@code failCall(DeviceCall.MALLOC, n)}.
     */
    public synchronized void failMallocCall(long n) {
        failCall(DeviceCall.MALLOC, n);
    }

    /**
     * Makes the next {@code count} malloc calls return "no memory": {@code failNextCalls(DeviceCall.MALLOC, count)}.
     */
    public synchronized void failNextMallocs(int count) {
        failNextCalls(DeviceCall.MALLOC, count);
    }

    /**
     * Makes the next malloc call throw {@code error} (a device error other than out-of-memory):
     * {@code failNextCallWith(DeviceCall.MALLOC, error)}.
     */
    public synchronized void failNextMallocWith(RuntimeException error) {
        failNextCallWith(DeviceCall.MALLOC, error);
    }

    /**
     * Makes the {@code n}-th call of {@code kind}, counted from the device's creation and starting at 1, run out of
     * memory: "no memory" from malloc, reserve and map, a {@link DeviceException} saying so from the other kinds
     * ({@link DeviceCall#reportsRunningOut()}). Calls already made cannot fail.
     *
     * @throws IllegalArgumentException if that call already happened
     */
    public synchronized void failCall(DeviceCall kind, long n) {
        long made = callCounts[kind.ordinal()];
        if (n <= made) {
            throw new IllegalArgumentException(kind.name().toLowerCase(Locale.ROOT) + " call " + n
                    + " already happened (" + made + " so far)");
        }
        runOutCalls.computeIfAbsent(kind, k -> new TreeSet<>()).add(n);
    }

    /** Makes the next {@code count} calls of {@code kind} run out of memory, as {@link #failCall} says. */
    public synchronized void failNextCalls(DeviceCall kind, int count) {
        long made = callCounts[kind.ordinal()];
        for (int i = 1; i <= count; i++) {
            runOutCalls.computeIfAbsent(kind, k -> new TreeSet<>()).add(made + i);
        }
    }

    /**
     * Makes the next call of {@code kind} throw {@code error} (a device error other than running out, typically a
     * {@link DeviceException}). Nothing changes on the device, except for an unmap, whose range is unmapped
     * before the error is thrown, as {@link VirtualMemory#unmap} says.
     */
    public synchronized void failNextCallWith(DeviceCall kind, RuntimeException error) {
        failCallWith(kind, callCounts[kind.ordinal()] + 1, error);
    }

    /**
     * Makes the {@code n}-th call of {@code kind}, counted from the device's creation and starting at 1, throw
     * {@code error}, as {@link #failNextCallWith} says. Calls already made cannot fail.
     *
     * @throws IllegalArgumentException if that call already happened
     */
    public synchronized void failCallWith(DeviceCall kind, long n, RuntimeException error) {
        Objects.requireNonNull(error, "error");
        long made = callCounts[kind.ordinal()];
        if (n <= made) {
            throw new IllegalArgumentException(kind.name().toLowerCase(Locale.ROOT) + " call " + n
                    + " already happened (" + made + " so far)");
        }
        errorCalls.computeIfAbsent(kind, k -> new TreeMap<>()).put(n, error);
    }

    /** Disarms every fault armed with {@link #failCall}, {@link #failNextCalls} and the {@code ...With} methods. */
    public synchronized void clearFaults() {
        runOutCalls.clear();
        errorCalls.clear();
    }

    /** Calls of {@code kind} so far whose arguments were accepted (failed ones included). */
    public synchronized long calls(DeviceCall kind) {
        return callCounts[kind.ordinal()];
    }

    /**
     * Counts one call of {@code kind} and applies the fault armed for it: throws the armed error, or returns whether
     * the call runs out of memory.
     */
    private boolean fault(DeviceCall kind) {
        long n = ++callCounts[kind.ordinal()];
        TreeMap<Long, RuntimeException> errors = errorCalls.get(kind);
        RuntimeException error = errors == null ? null : errors.remove(n);
        if (error != null) {
            throw error;
        }
        TreeSet<Long> runOut = runOutCalls.get(kind);
        return runOut != null && runOut.remove(n);
    }

    /** {@link #fault} for a call without a "no memory" result: running out is a {@link DeviceException}. */
    private void throwIfRunsOut(DeviceCall kind) {
        if (fault(kind)) {
            throw new DeviceException(kind.name().toLowerCase(Locale.ROOT) + " call "
                    + callCounts[kind.ordinal()] + " on " + this + " failed: out of memory (injected)");
        }
    }

    /**
     * Caps the bytes in use below the capacity: mallocs and maps above it return "no memory".
     * {@link Long#MAX_VALUE} removes the cap; 0 makes every malloc fail.
     */
    public synchronized void setLimitBytes(long limitBytes) {
        if (limitBytes < 0) {
            throw new IllegalArgumentException("limit must be >= 0, got " + limitBytes);
        }
        this.limit = limitBytes;
    }

    // ---------------------------------------------------------------------------------------------- observation

    /** The counters now. */
    public synchronized DeviceCounters counters() {
        return new DeviceCounters(callCounts[DeviceCall.MALLOC.ordinal()], mallocs, failedMallocs, frees, maps, unmaps,
                bytesInUse, peakBytesInUse, bytesMalloced);
    }

    /** The operations so far, oldest first (empty unless the builder turned history on). */
    public synchronized List<DeviceOperation> history() {
        return List.copyOf(history);
    }

    /** Number of events created and not destroyed: what an allocator that leaks none holds in its pools. */
    public synchronized int liveEvents() {
        return events.size();
    }

    /**
     * Whether every granule of {@code [address, address + bytes)} is mapped (false when any part lies outside a
     * reservation): what a test compares an allocator's books with.
     */
    public synchronized boolean isMapped(long address, long bytes) {
        if (virtualMemory == null || bytes <= 0) {
            return false;
        }
        Map.Entry<Long, SimVirtualMemory.Reservation> e = virtualMemory.reservations.floorEntry(address);
        if (e == null || address + bytes > e.getKey() + e.getValue().size()) {
            return false;
        }
        int from = (int) ((address - e.getKey()) / VM_GRANULARITY);
        int to = (int) ((address + bytes - e.getKey() + VM_GRANULARITY - 1) / VM_GRANULARITY);
        return e.getValue().mapped().nextClearBit(from) >= to;
    }

    /** Number of live malloc'd ranges. */
    public synchronized int liveAllocations() {
        return live.size();
    }

    @Override
    public Optional<VirtualMemory> virtualMemory() {
        return Optional.ofNullable(virtualMemory);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        live.clear();
        if (virtualMemory != null) {
            virtualMemory.reservations.clear();
        }
        bytesInUse = 0;
        streams.clear();
        events.clear();
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    @Override
    public String toString() {
        return "simulated device " + descriptor.id() + " (" + ByteSize.format(capacity) + ")";
    }

    // ---------------------------------------------------------------------------------------------- VMM

    /**
     * Reservations and granule maps; every method locks the device. Per reservation, a bit set of mapped granules and
     * one of the granules where a piece starts (see {@link VirtualMemory#map(long, long, long)}): a piece runs from
     * its start to the next start or the first unmapped granule, whichever comes first, so that two bit sets say
     * everything an unmap needs to refuse a range that cuts a piece.
     */
    private final class SimVirtualMemory implements VirtualMemory {

        /** One reserved range: its size, its mapped granules and its piece starts (bit i = granule i). */
        private record Reservation(long size, BitSet mapped, BitSet pieceStarts) {
        }

        /** Reservation base → reservation. */
        private final TreeMap<Long, Reservation> reservations = new TreeMap<>();

        @Override
        public long granularity() {
            return VM_GRANULARITY;
        }

        @Override
        public long reserve(long bytes) {
            synchronized (SimulatedDevice.this) {
                ensureOpen();
                requireGranules(bytes);
                checkScripted(bytes, VM_GRANULARITY);
                if (fault(DeviceCall.RESERVE)) {
                    return NULL;
                }
                long base = takeRange(bytes, VM_GRANULARITY);
                if (base == NULL) {
                    return NULL;
                }
                reservations.put(base, new Reservation(bytes, new BitSet(), new BitSet()));
                record(DeviceOperation.Kind.RESERVE, base, bytes);
                return base;
            }
        }

        @Override
        public void release(long base) {
            synchronized (SimulatedDevice.this) {
                ensureOpen();
                Reservation r = reservations.get(base);
                if (r == null) {
                    throw new IllegalArgumentException(ByteSize.hex(base) + " is not the base of a reservation on "
                            + SimulatedDevice.this);
                }
                if (!r.mapped().isEmpty()) {
                    throw new IllegalArgumentException("reservation " + ByteSize.hex(base) + " still has "
                            + r.mapped().cardinality() + " mapped granules; unmap them first");
                }
                throwIfRunsOut(DeviceCall.RELEASE);
                reservations.remove(base);
                returnRange(base, r.size());
                record(DeviceOperation.Kind.RELEASE, base, r.size());
            }
        }

        @Override
        public boolean map(long address, long bytes, long pieceBytes) {
            synchronized (SimulatedDevice.this) {
                ensureOpen();
                long base = reservationOf(address, bytes);
                if (pieceBytes <= 0 || pieceBytes % VM_GRANULARITY != 0 || bytes % pieceBytes != 0) {
                    throw new IllegalArgumentException("piece size " + pieceBytes + " is not a positive multiple of"
                            + " the " + ByteSize.format(VM_GRANULARITY) + " granule that divides the " + bytes
                            + " bytes to map on " + SimulatedDevice.this);
                }
                Reservation r = reservations.get(base);
                int from = (int) ((address - base) / VM_GRANULARITY);
                int to = from + (int) (bytes / VM_GRANULARITY);
                int already = r.mapped().nextSetBit(from);
                if (already >= 0 && already < to) {
                    throw new IllegalArgumentException("granule at " + ByteSize.hex(base + already * VM_GRANULARITY)
                            + " is already mapped");
                }
                if (fault(DeviceCall.MAP) || !fits(bytes)) {
                    return false;
                }
                MappedPieces.map(r.mapped(), r.pieceStarts(), from, to, (int) (pieceBytes / VM_GRANULARITY));
                maps++;
                use(bytes);
                record(DeviceOperation.Kind.MAP, address, bytes);
                return true;
            }
        }

        @Override
        public void unmap(long address, long bytes) {
            synchronized (SimulatedDevice.this) {
                ensureOpen();
                long base = reservationOf(address, bytes);
                Reservation r = reservations.get(base);
                int from = (int) ((address - base) / VM_GRANULARITY);
                int to = from + (int) (bytes / VM_GRANULARITY);
                int hole = r.mapped().nextClearBit(from);
                if (hole < to) {
                    throw new IllegalArgumentException("granule at " + ByteSize.hex(base + hole * VM_GRANULARITY)
                            + " is not mapped");
                }
                MappedPieces.requireWholePieces(r.mapped(), r.pieceStarts(), from, to, address, bytes, base,
                        VM_GRANULARITY, SimulatedDevice.this);
                RuntimeException failure = null;
                try {
                    throwIfRunsOut(DeviceCall.UNMAP);
                } catch (RuntimeException e) {
                    // The port's rule: after a failed unmap the range is unmapped (its memory may be lost).
                    failure = e;
                }
                MappedPieces.unmap(r.mapped(), r.pieceStarts(), from, to);
                unmaps++;
                bytesInUse -= bytes;
                record(DeviceOperation.Kind.UNMAP, address, bytes);
                if (failure != null) {
                    throw failure;
                }
            }
        }

        @Override
        public long mappedBytes() {
            synchronized (SimulatedDevice.this) {
                long granules = 0;
                for (Reservation r : reservations.values()) {
                    granules += r.mapped().cardinality();
                }
                return granules * VM_GRANULARITY;
            }
        }

        private void requireGranules(long bytes) {
            if (bytes <= 0 || bytes % VM_GRANULARITY != 0) {
                throw new IllegalArgumentException("size must be a positive multiple of the "
                        + ByteSize.format(VM_GRANULARITY) + " granule, got " + bytes);
            }
        }

        private long reservationOf(long address, long bytes) {
            requireGranules(bytes);
            Map.Entry<Long, Reservation> r = reservations.floorEntry(address);
            if (r == null || address % VM_GRANULARITY != 0
                    || address + bytes > r.getKey() + r.getValue().size() || address + bytes < address) {
                throw new IllegalArgumentException("range " + ByteSize.hex(address) + " +" + bytes
                        + " is not granule-aligned inside one reservation on " + SimulatedDevice.this);
            }
            return r.getKey();
        }
    }

    // ---------------------------------------------------------------------------------------------- builder

    /** Builds simulated devices. */
    public static final class Builder {
        private long capacity = 80 * ByteSize.GiB;
        private long granularity = 512;
        private long topAddress = DEFAULT_TOP_ADDRESS;
        private long addressSpace = DEFAULT_ADDRESS_SPACE;
        private AddressOrder order = AddressOrder.TOP_DOWN;
        private final List<Long> scripted = new ArrayList<>();
        private boolean recordHistory;
        private boolean virtualMemory = true;
        private EventCompletion eventCompletion = EventCompletion.IMMEDIATE;
        private int index;

        private Builder() {
        }

        /**
         * The device index its descriptor reports (default 0), as CUDA's device ordinal: a simulated second GPU is
         * index 1. It changes nothing else; snapshots and messages name the device by it.
         */
        public Builder index(int index) {
            if (index < 0) {
                throw new IllegalArgumentException("device index must be >= 0, got " + index);
            }
            this.index = index;
            return this;
        }

        /** Device memory in bytes (default 80 GiB). */
        public Builder capacity(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("capacity must be positive, got " + bytes);
            }
            this.capacity = bytes;
            return this;
        }

        /** Size rounding and address alignment, a power of two (default 512 B). */
        public Builder granularity(long bytes) {
            if (bytes <= 0 || Long.bitCount(bytes) != 1) {
                throw new IllegalArgumentException("granularity must be a power of two, got " + bytes);
            }
            this.granularity = bytes;
            return this;
        }

        /** The address the address space ends below (default {@link #DEFAULT_TOP_ADDRESS}). */
        public Builder topAddress(long address) {
            if (address <= 0 || address % VM_GRANULARITY != 0) {
                throw new IllegalArgumentException("top address must be positive and 2 MiB aligned");
            }
            this.topAddress = address;
            return this;
        }

        /** The size of the address space (default 64 TiB). */
        public Builder addressSpace(long bytes) {
            if (bytes <= 0 || bytes % VM_GRANULARITY != 0) {
                throw new IllegalArgumentException("address space must be a positive multiple of 2 MiB");
            }
            this.addressSpace = bytes;
            return this;
        }

        /** Where new ranges go when no scripted address is left (default top-down). */
        public Builder addressOrder(AddressOrder order) {
            this.order = Objects.requireNonNull(order, "order");
            return this;
        }

        /** Addresses for the next mallocs (and reservations), in order; afterwards the address order applies. */
        public Builder scriptedAddresses(List<Long> addresses) {
            this.scripted.addAll(addresses);
            return this;
        }

        /** Record every memory operation for {@link SimulatedDevice#history()} (default off). */
        public Builder recordHistory(boolean on) {
            this.recordHistory = on;
            return this;
        }

        /** Offer the virtual-memory capability (default on). */
        public Builder virtualMemory(boolean on) {
            this.virtualMemory = on;
            return this;
        }

        /** When events complete (default immediately). */
        public Builder eventCompletion(EventCompletion completion) {
            this.eventCompletion = Objects.requireNonNull(completion, "completion");
            return this;
        }

        public SimulatedDevice build() {
            if (addressSpace >= topAddress) {
                throw new IllegalArgumentException(
                        "the address space must end below the top address and start above 0");
            }
            if (capacity > addressSpace / 2) {
                throw new IllegalArgumentException("capacity " + ByteSize.format(capacity)
                        + " needs an address space of at least twice that; the address space is "
                        + ByteSize.format(addressSpace));
            }
            long bottom = topAddress - addressSpace;
            for (long a : scripted) {
                if (a < bottom || a >= topAddress || a % granularity != 0) {
                    throw new IllegalArgumentException("scripted address " + ByteSize.hex(a) + " is outside the address"
                            + " space [" + ByteSize.hex(bottom) + ", " + ByteSize.hex(topAddress)
                            + ") or not aligned to " + granularity);
                }
            }
            return new SimulatedDevice(this);
        }
    }
}
