package io.devalloc.testkit;

import io.devalloc.api.Allocation;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.spi.SizeRounding;
import io.devalloc.api.stats.AllocatorStats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * A model-based random run against one allocator: seeded operations (allocations from 0 B to near the device's
 * capacity, skewed toward small ones, through raw addresses and through handles; frees of random live allocations;
 * {@code recordStream} on several streams whose work completes later; cache releases; peak resets; bad frees:
 * double, foreign, interior, never handed out), with, optionally, a device fault of a random kind armed before some
 * operations (running out, or a device error), which stays armed for up to 50 operations until a call of its kind
 * comes and is disarmed right after it fires. After every operation it checks the allocator against a model of
 * what is live:
 * <ul>
 *   <li>no two live allocations overlap ({@link LiveSet}), and on host-addressable memory every live block still
 *       holds the bytes written into it;</li>
 *   <li>active allocations, requested bytes, allocation and free counts equal the model's; the peaks of requested
 *       bytes and active allocations equal the model's since the last reset; allocated bytes are at least the sum
 *       of the live requests as the allocator rounds them ({@link SizeRounding}); reserved at least allocated;</li>
 *   <li>reserved bytes equal the bytes the device has handed out ({@link DeviceProbe#bytesInUse()}), and where the
 *       allocator maps virtual memory, every live allocation is mapped;</li>
 *   <li>every {@code fullCheckEvery} operations (and after every fault), {@link AllocatorInvariants}: the snapshot
 *       tiles its segments and shows exactly the live allocations, each inside a segment, with stats to match.</li>
 * </ul>
 * A bad free must throw {@link InvalidFreeException} with the documented reason and leave the stats exactly as they
 * were. A fault may make the operation it hits fail with {@link OutOfMemoryException} or {@link DeviceException}
 * and nothing else; the model then stays as it was (a refused call changes no live allocation), and the checks
 * above must pass. Failed checks are counted as violations, the run goes on (up to {@link #MAX_VIOLATIONS}).
 *
 * <p>Not thread-safe; the allocator must not be used by others during the run.
 */
public final class ModelRun {

    /** A run stops after this many violations: the first ones tell what broke, the rest repeat it. */
    public static final int MAX_VIOLATIONS = 1000;
    private static final int KEPT_VIOLATIONS = 10;
    private static final int STREAMS = 3;
    /** An armed fault waits this many operations for a call of its kind (allocators that cache call rarely). */
    private static final int FAULT_ARMED_OPERATIONS = 50;

    /**
     * How a run behaves.
     *
     * @param seed             the random seed
     * @param operations       operations to perform
     * @param faultPerMille    per thousand operations without an armed fault, how many arm one (0: none)
     * @param maxLive          live allocations at most (more allocations free instead), bounding each check's cost
     * @param fullCheckEvery   operations between full {@link AllocatorInvariants} checks (1: after every operation)
     * @param liveBlocksMapped whether the allocator serves every allocation from mapped virtual memory, checked
     *                         with {@link DeviceProbe#isMapped}
     * @param reservedExcludesDeviceRounding whether reserved bytes count the sizes asked of the device rather than
     *                         what the device rounded them to (PyTorch's host allocator): then the device may hold up
     *                         to its {@link DeviceMemory#alignment()} more per live device allocation
     */
    public record Options(long seed, long operations, int faultPerMille, int maxLive, int fullCheckEvery,
            boolean liveBlocksMapped, boolean reservedExcludesDeviceRounding) {

        /** Checks the figures. */
        public Options {
            if (operations < 0 || faultPerMille < 0 || faultPerMille > 1000 || maxLive < 1 || fullCheckEvery < 1) {
                throw new IllegalArgumentException("bad options: " + operations + " operations, " + faultPerMille
                        + "‰ faults, " + maxLive + " live, full check every " + fullCheckEvery);
            }
        }
    }

    private final String configuration;
    private final DeviceAllocator allocator;
    private final DeviceMemory device;
    private final DeviceProbe probe;
    private final Allocation foreign;
    private final Options options;
    private final Random random;
    private final SizeRounding rounding;
    private final long capacity;
    private final List<String> faultKinds;
    private final DeviceStream[] streams = new DeviceStream[STREAMS];

    private final LiveSet live = new LiveSet();
    private final List<Long> order = new ArrayList<>();
    private final Map<Long, Allocation> handles = new HashMap<>();
    private final Map<Long, Byte> patterns = new HashMap<>();
    private final ArrayDeque<Long> freedRaw = new ArrayDeque<>();
    private final ArrayDeque<Allocation> closedHandles = new ArrayDeque<>();
    private long roundedSum;
    private long allocations;
    private long frees;
    private long peakRequested;
    private long peakActive;

    private long op;
    private String armedKind;
    private long armedCallsBefore;
    private long armedUntil;
    private boolean armedRefusal;
    private String lastFault;
    private long checks;
    private long violations;
    private long faultsInjected;
    private long faultsSurvived;
    private long outOfMemory;
    private long badFreesRefused;
    private final List<String> firstViolations = new ArrayList<>();

    /**
     * A run against a fresh allocator (nothing allocated, peaks at zero).
     *
     * @param configuration a name for the summary
     * @param allocator     the allocator under test, fresh
     * @param probe         the device's books and faults
     * @param foreign       a live allocation of another allocator, freed here as a bad free, or null
     * @param options       the run's settings
     */
    public ModelRun(String configuration, DeviceAllocator allocator, DeviceProbe probe, Allocation foreign,
            Options options) {
        this.configuration = configuration;
        this.allocator = allocator;
        this.device = allocator.device();
        this.probe = probe;
        this.foreign = foreign;
        this.options = options;
        this.random = new Random(options.seed());
        this.rounding = allocator.unwrap(SizeRounding.class).orElse(null);
        this.capacity = device.descriptor().totalBytes();
        this.faultKinds = options.faultPerMille() > 0 ? probe.faultKinds() : List.of();
        AllocatorStats start = allocator.stats();
        if (start.activeAllocations() != 0 || start.allocationCount() != 0) {
            throw new IllegalArgumentException("the allocator is not fresh: " + start);
        }
    }

    /**
     * Runs the operations, then frees everything live, synchronises and releases the cache, checking throughout.
     * The allocator stays open (the caller closes it and checks that the device is empty).
     */
    public RunReport run() {
        begin();
        perform(options.operations());
        return finish();
    }

    /** Creates the run's streams; call once, before {@link #perform}. */
    public void begin() {
        for (int i = 0; i < STREAMS; i++) {
            streams[i] = device.createStream();
        }
    }

    /** Performs {@code count} more operations (fewer once {@link #MAX_VIOLATIONS} were found). */
    public void perform(long count) {
        for (long i = 0; i < count && violations < MAX_VIOLATIONS; i++) {
            op++;
            step();
        }
    }

    /** Frees everything live, synchronises, releases the cache, destroys the streams, and reports. */
    public RunReport finish() {
        probe.clearFaults();
        armedKind = null;
        drain();
        for (DeviceStream s : streams) {
            device.destroyStream(s);
        }
        return report();
    }

    /** The figures so far. */
    public RunReport report() {
        return new RunReport(configuration, op, checks, violations, faultsInjected,
                faultsSurvived, outOfMemory, badFreesRefused, firstViolations);
    }

    private void step() {
        if (!faultKinds.isEmpty() && armedKind == null && random.nextInt(1000) < options.faultPerMille()) {
            armedKind = faultKinds.get(random.nextInt(faultKinds.size()));
            armedCallsBefore = probe.calls(armedKind);
            armedUntil = op + FAULT_ARMED_OPERATIONS;
            armedRefusal = random.nextBoolean();
            if (armedRefusal) {
                probe.refuseNext(armedKind);
            } else {
                probe.failNextWith(armedKind, new DeviceException("injected device error on " + armedKind));
            }
        }
        long violationsBefore = violations;
        RuntimeException failure = null;
        try {
            operation();
        } catch (OutOfMemoryException | DeviceException e) {
            failure = e;
        } catch (RuntimeException e) {
            violation("operation threw " + e + lastFault(), e);
        }
        boolean fired = false;
        if (armedKind != null) {
            fired = probe.calls(armedKind) > armedCallsBefore;
            if (fired) {
                lastFault = (armedRefusal ? "running out on " : "device error on ") + armedKind + " at operation " + op;
            }
            if (fired || op >= armedUntil) {
                probe.clearFaults();
                armedKind = null;
            }
        }
        if (failure != null) {
            if (failure instanceof OutOfMemoryException) {
                outOfMemory++;
            } else if (!fired) {
                violation("device error without an injected fault: " + failure, failure);
            }
        }
        checkAfterOperation(fired);
        if (fired) {
            faultsInjected++;
            if (violations == violationsBefore) {
                faultsSurvived++;
            }
        }
    }

    private void operation() {
        int dice = random.nextInt(1000);
        if (order.isEmpty() || (dice < 500 && order.size() < options.maxLive())) {
            allocate();
        } else if (dice < 820) {
            freeOne();
        } else if (dice < 870) {
            recordStream();
        } else if (dice < 900) {
            if (random.nextInt(8) == 0) {
                device.synchronize();
            } else {
                probe.completeStream(streams[random.nextInt(STREAMS)]);
            }
        } else if (dice < 910) {
            allocator.releaseCachedMemory();
        } else if (dice < 920) {
            allocator.resetPeakStats();
            peakRequested = live.requestedBytes();
            peakActive = live.size();
        } else {
            badFree();
        }
    }

    /** 2% 0 B; 90% log-uniform to 4 MiB; 7% log-uniform to an eighth of the device; 1% near the whole device. */
    private long nextSize() {
        int k = random.nextInt(100);
        if (k < 2) {
            return 0;
        } else if (k < 92) {
            return 1 + random.nextLong(1L << (1 + random.nextInt(22)));
        } else if (k < 99) {
            int bits = 63 - Long.numberOfLeadingZeros(Math.max(2, capacity / 8));
            return 1 + random.nextLong(1L << (1 + random.nextInt(bits)));
        }
        return capacity - random.nextLong(Math.max(1, capacity / 16));
    }

    private void allocate() {
        long size = nextSize();
        DeviceStream stream = random.nextInt(4) == 0 ? streams[random.nextInt(STREAMS)] : DeviceStream.DEFAULT;
        long address;
        Allocation handle = null;
        if (random.nextInt(4) == 0) {
            handle = allocator.allocate(size, stream);
            address = handle.address();
        } else {
            address = allocator.malloc(size, stream);
        }
        if (size == 0) {
            if (address != 0) {
                violation("a 0-byte allocation got address 0x" + Long.toHexString(address), null);
            }
            if (handle != null) {
                handle.close();
            }
            return;
        }
        try {
            live.add(address, size);
        } catch (AssertionError e) {
            violation(e.getMessage(), e);
            return;
        }
        order.add(address);
        if (handle != null) {
            handles.put(address, handle);
        }
        allocations++;
        roundedSum += rounded(size);
        peakRequested = Math.max(peakRequested, live.requestedBytes());
        peakActive = Math.max(peakActive, live.size());
        byte pattern = (byte) random.nextInt();
        patterns.put(address, pattern);
        HostPatterns.write(device, address, size, pattern);
    }

    private void freeOne() {
        int index = random.nextInt(order.size());
        long address = order.get(index);
        long size = live.asMap().get(address);
        checkPattern(address, size);
        Allocation handle = handles.get(address);
        if (handle != null) {
            if (random.nextBoolean()) {
                handle.close();
            } else {
                allocator.free(handle);
            }
        } else {
            allocator.free(address);
        }
        // Only a successful free changes the model.
        order.set(index, order.get(order.size() - 1));
        order.remove(order.size() - 1);
        live.remove(address);
        patterns.remove(address);
        roundedSum -= rounded(size);
        frees++;
        if (handle != null) {
            handles.remove(address);
            remember(closedHandles, handle);
        } else {
            remember(freedRaw, address);
        }
    }

    private void recordStream() {
        if (order.isEmpty()) {
            return;
        }
        long address = order.get(random.nextInt(order.size()));
        DeviceStream stream = streams[random.nextInt(STREAMS)];
        Allocation handle = handles.get(address);
        if (handle != null && random.nextBoolean()) {
            handle.recordStream(stream);
        } else {
            allocator.recordStream(address, stream);
        }
    }

    private void badFree() {
        AllocatorStats before = allocator.stats();
        int kind = random.nextInt(6);
        InvalidFreeException.Reason expected = InvalidFreeException.Reason.UNKNOWN_ADDRESS;
        String what;
        InvalidFreeException thrown;
        try {
            switch (kind) {
                case 0 -> {
                    Long address = freedRaw.peekFirst();
                    if (address == null || live.contains(address)) {
                        return;
                    }
                    what = "double free of 0x" + Long.toHexString(address);
                    allocator.free(address);
                }
                case 1 -> {
                    Allocation closed = closedHandles.peekFirst();
                    if (closed == null) {
                        return;
                    }
                    expected = InvalidFreeException.Reason.DOUBLE_FREE;
                    what = "second close of a handle of 0x" + Long.toHexString(closed.address());
                    closed.close();
                }
                case 2 -> {
                    long address = order.isEmpty() ? 0 : order.get(random.nextInt(order.size()));
                    if (address == 0 || live.asMap().get(address) <= 256) {
                        return;
                    }
                    long interior = address + 256;
                    what = "free of interior address 0x" + Long.toHexString(interior);
                    if (random.nextBoolean()) {
                        allocator.free(interior);
                    } else {
                        what = "recordStream on interior address 0x" + Long.toHexString(interior);
                        allocator.recordStream(interior, streams[0]);
                    }
                }
                case 3 -> {
                    if (foreign == null) {
                        return;
                    }
                    expected = InvalidFreeException.Reason.WRONG_ALLOCATOR;
                    what = "free of another allocator's handle";
                    allocator.free(foreign);
                }
                case 4 -> {
                    if (foreign == null || live.contains(foreign.address())) {
                        return;
                    }
                    what = "raw free of another allocator's address 0x" + Long.toHexString(foreign.address());
                    allocator.free(foreign.address());
                }
                default -> {
                    long address = 0x1000L + 256L * random.nextInt(1 << 16);
                    if (live.contains(address)) {
                        return;
                    }
                    what = "free of never handed out 0x" + Long.toHexString(address);
                    allocator.free(address);
                }
            }
            violation(what + " was accepted", null);
            return;
        } catch (InvalidFreeException e) {
            thrown = e;
        }
        checks++;
        if (thrown.reason() != expected) {
            violation("bad free refused with " + thrown.reason() + " instead of " + expected + ": " + thrown, thrown);
        } else if (!before.equals(allocator.stats())) {
            violation("a refused bad free changed the stats: " + before + " -> " + allocator.stats(), thrown);
        } else {
            badFreesRefused++;
        }
    }

    private void checkAfterOperation(boolean afterFault) {
        AllocatorStats s = allocator.stats();
        checks++;
        if (s.activeAllocations() != live.size() || s.requestedBytes() != live.requestedBytes()
                || s.allocationCount() != allocations || s.freeCount() != frees) {
            violation("stats disagree with the model (" + live.size() + " live, " + live.requestedBytes()
                    + " B requested, " + allocations + " allocations, " + frees + " frees): " + s, null);
        }
        checks++;
        if (s.peakRequestedBytes() != peakRequested || s.peakActiveAllocations() != peakActive) {
            violation("peaks disagree with the model (" + peakRequested + " B requested, " + peakActive
                    + " active): " + s, null);
        }
        checks++;
        if (s.allocatedBytes() < roundedSum || s.reservedBytes() < s.allocatedBytes()) {
            violation("allocated bytes below the live requests rounded (" + roundedSum
                    + " B) or reserved below allocated: " + s, null);
        }
        checks++;
        long onDevice = probe.bytesInUse();
        long slack = options.reservedExcludesDeviceRounding()
                ? Math.max(0, s.deviceMallocs() - s.deviceFrees()) * (device.alignment() - 1) : 0;
        if (s.reservedBytes() > onDevice || onDevice - s.reservedBytes() > slack) {
            violation("reserved " + s.reservedBytes() + " B but the device has " + onDevice + " B in use"
                    + lastFault(), null);
        }
        if (options.liveBlocksMapped() && probe.knowsMappings()) {
            checks++;
            for (Map.Entry<Long, Long> e : live.asMap().entrySet()) {
                if (!probe.isMapped(e.getKey(), e.getValue())) {
                    violation("live allocation 0x" + Long.toHexString(e.getKey()) + " +" + e.getValue()
                            + " is not mapped on the device", null);
                    break;
                }
            }
        }
        if (afterFault || op % options.fullCheckEvery() == 0) {
            checks++;
            try {
                AllocatorInvariants.check(allocator, live);
            } catch (AssertionError e) {
                violation(e.getMessage() + lastFault(), e);
            }
            if (afterFault) {
                checkAllPatterns();
            }
        }
    }

    /** Frees everything (checking contents), synchronises, releases the cache: nothing is live afterwards. */
    private void drain() {
        for (long address : new ArrayList<>(order)) {
            checkPattern(address, live.asMap().get(address));
            Allocation handle = handles.remove(address);
            try {
                if (handle != null) {
                    handle.close();
                } else {
                    allocator.free(address);
                }
            } catch (RuntimeException e) {
                violation("freeing 0x" + Long.toHexString(address) + " at the end threw " + e, e);
                continue;
            }
            live.remove(address);
            frees++;
        }
        order.clear();
        roundedSum = 0;
        try {
            device.synchronize();
            allocator.releaseCachedMemory();
        } catch (RuntimeException e) {
            violation("releasing the cache at the end threw " + e, e);
        }
        checkAfterOperation(true);
        AllocatorStats end = allocator.stats();
        checks++;
        if (end.activeAllocations() != 0 || end.allocatedBytes() != 0 || end.requestedBytes() != 0) {
            violation("something is still allocated after every free: " + end, null);
        }
    }

    private long rounded(long size) {
        return rounding == null ? size : rounding.roundedSize(size);
    }

    private static <T> void remember(ArrayDeque<T> recent, T item) {
        recent.addFirst(item);
        if (recent.size() > 16) {
            recent.removeLast();
        }
    }

    private void checkPattern(long address, long size) {
        Byte pattern = patterns.get(address);
        if (pattern == null) {
            return;
        }
        Optional<MemorySegment> view;
        try {
            view = device.hostView(address, size);
        } catch (IllegalArgumentException e) {
            violation("live allocation 0x" + Long.toHexString(address) + " +" + size
                    + " is not inside memory the device handed out: " + e.getMessage(), e);
            return;
        }
        if (view.isPresent()) {
            checks++;
            MemorySegment m = view.get();
            for (long o : HostPatterns.offsets(size)) {
                if (m.get(ValueLayout.JAVA_BYTE, o) != pattern) {
                    violation("byte " + o + " of live allocation 0x" + Long.toHexString(address)
                            + " was overwritten", null);
                    return;
                }
            }
        }
    }

    private void checkAllPatterns() {
        for (Map.Entry<Long, Long> e : live.asMap().entrySet()) {
            checkPattern(e.getKey(), e.getValue());
        }
    }

    /** The last fault that fired, for a violation's message. */
    private String lastFault() {
        return lastFault == null ? "" : " (last fault: " + lastFault + ")";
    }

    private void violation(String message, Throwable cause) {
        violations++;
        if (firstViolations.size() < KEPT_VIOLATIONS) {
            String where = cause == null || cause.getStackTrace().length == 0 ? ""
                    : " at " + cause.getStackTrace()[0];
            firstViolations.add("operation " + op + ": " + message + where);
        }
    }
}
