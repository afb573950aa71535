package io.devalloc.examples;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.spi.DeviceSpec;
import io.devalloc.api.units.ByteSize;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The checks of {@code devalloc check DEVICE}: the device port's contract in short (what
 * {@code io.devalloc.testkit.DeviceMemoryContract} checks at length in the tests), page-locked host memory beside the
 * device, and a short allocator contract (allocate and free, a cached pair, a block freed on a stream), each a
 * {@link Result}; then the latency of a device malloc/free against a cached pair. Runs on any device spec, a real
 * GPU's included: each check opens what it needs and closes it, and a failed check does not stop the others.
 *
 * <p>Not thread-safe: one check run per instance, on the calling thread.
 */
final class DeviceCheck {

    /** What one check found. */
    record Result(String name, Outcome outcome, String detail, long nanos) {
    }

    /** A check's outcome. */
    enum Outcome { PASS, FAIL, SKIP }

    /** The latency of a device malloc and free against a cached allocate and free, both of {@code bytes}. */
    record Latency(long bytes, int devicePairs, long deviceMedianNanos, int cachedPairs, long cachedMedianNanos) {

        /** How many times faster the cached pair is. */
        double speedup() {
            return (double) deviceMedianNanos / Math.max(1, cachedMedianNanos);
        }
    }

    /** A check's failure: what was expected and what was found. */
    private static final class CheckFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CheckFailed(String message) {
            super(message);
        }
    }

    /** A check's body: returns its detail line (or null), throws {@link CheckFailed} or anything on failure. */
    @FunctionalInterface
    private interface Body {
        String run() throws Exception;
    }

    /** A check that does not apply to this device: its reason. */
    private static final class NotApplicable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotApplicable(String reason) {
            super(reason);
        }
    }

    private static final long MIB = ByteSize.MiB;

    private final String spec;
    private final String allocator;
    private final DeviceRegistry devices;
    private final AllocatorRegistry allocators;
    private final List<Result> results = new ArrayList<>();

    DeviceCheck(String spec, String allocator, DeviceRegistry devices, AllocatorRegistry allocators) {
        this.spec = spec;
        this.allocator = allocator;
        this.devices = devices;
        this.allocators = allocators;
    }

    /** Runs every check, in order; the device is opened once first, so that an unknown spec fails at once. */
    List<Result> run() {
        devices.open(spec).close();
        allocators.get(allocator);
        check("describes itself", this::describes);
        check("malloc returns aligned, disjoint ranges, and free gives them back", this::mallocAndFree);
        check("bad sizes are refused and change nothing", this::badSizes);
        check("foreign and double frees are refused and change nothing", this::badFrees);
        check("streams and events", this::streamsAndEvents);
        check("virtual memory: reserve, map, unmap, release", this::virtualMemory);
        check("page-locked host memory beside the device", this::pinnedHost);
        check(allocator + " allocator: allocate and free five sizes", this::allocateAndFree);
        check(allocator + " allocator: a cached pair makes no device call", this::cachedPair);
        check(allocator + " allocator: a block allocated and freed on a stream of its own", this::streamFree);
        return List.copyOf(results);
    }

    private void check(String name, Body body) {
        long start = System.nanoTime();
        try {
            String detail = body.run();
            results.add(new Result(name, Outcome.PASS, detail, System.nanoTime() - start));
        } catch (NotApplicable e) {
            results.add(new Result(name, Outcome.SKIP, e.getMessage(), System.nanoTime() - start));
        } catch (CheckFailed e) {
            results.add(new Result(name, Outcome.FAIL, e.getMessage(), System.nanoTime() - start));
        } catch (Exception | Error e) {
            results.add(new Result(name, Outcome.FAIL, describe(e), System.nanoTime() - start));
        }
    }

    private static String describe(Throwable e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new CheckFailed(message);
        }
    }

    /** Expects {@code body} to throw {@code type}; returns what it threw. */
    private static <T extends Throwable> T refused(Class<T> type, Runnable body, String what) {
        try {
            body.run();
        } catch (Throwable t) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
            throw new CheckFailed(what + ": expected a refusal (" + type.getSimpleName() + "), got " + describe(t));
        }
        throw new CheckFailed(what + ": accepted, expected a refusal");
    }

    // ------------------------------------------------------------------------------------------ the device port

    private String describes() {
        try (DeviceMemory d = devices.open(spec)) {
            long total = d.descriptor().totalBytes();
            require(!d.descriptor().provider().isEmpty(), "the descriptor names no provider");
            require(total > 0, "total bytes " + total);
            require(Long.bitCount(d.alignment()) == 1, "alignment " + d.alignment() + " is not a power of two");
            long free = d.memoryInfo().freeBytes();
            require(d.memoryInfo().totalBytes() == total, "memory info's total differs from the descriptor's");
            require(free >= 0 && free <= total, "free bytes " + free + " of " + total);
            return d.descriptor().name() + ": " + ByteSize.format(total) + ", " + ByteSize.format(free)
                    + " free, alignment " + d.alignment() + " B";
        }
    }

    private String mallocAndFree() {
        try (DeviceMemory d = devices.open(spec)) {
            long[] sizes = {1, 255, 256, 257, 4096, 65_537, MIB, 3 * MIB};
            long[] addresses = new long[sizes.length];
            for (int i = 0; i < sizes.length; i++) {
                addresses[i] = d.malloc(sizes[i]);
                require(addresses[i] != DeviceMemory.NULL, "malloc(" + sizes[i] + ") returned NULL");
                require(addresses[i] % d.alignment() == 0, "malloc(" + sizes[i] + ") is not aligned: 0x"
                        + Long.toHexString(addresses[i]));
            }
            Integer[] order = new Integer[sizes.length];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (a, b) -> Long.compareUnsigned(addresses[a], addresses[b]));
            for (int k = 1; k < order.length; k++) {
                int prev = order[k - 1];
                require(Long.compareUnsigned(addresses[prev] + sizes[prev], addresses[order[k]]) <= 0,
                        "blocks of " + sizes[prev] + " and " + sizes[order[k]] + " B overlap");
            }
            boolean written = false;
            for (int i = 0; i < sizes.length; i++) {
                Optional<MemorySegment> view = d.hostView(addresses[i], sizes[i]);
                if (view.isPresent()) {
                    writeAndRead(view.get(), i);
                    written = true;
                }
            }
            for (long a : addresses) {
                d.free(a);
            }
            long again = d.malloc(MIB);
            require(again != DeviceMemory.NULL, "malloc after the frees returned NULL");
            d.free(again);
            return sizes.length + " blocks of 1 B to 3 MiB" + (written ? ", written and read back through the host"
                    + " view" : " (no host view: the memory is not read from the CPU)");
        }
    }

    private static void writeAndRead(MemorySegment segment, int salt) {
        long n = segment.byteSize();
        for (long i = 0; i < n; i += 4093) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + salt));
        }
        for (long i = 0; i < n; i += 4093) {
            require(segment.get(ValueLayout.JAVA_BYTE, i) == (byte) (i * 31 + salt), "byte " + i + " read back"
                    + " differs from what was written");
        }
    }

    private String badSizes() {
        try (DeviceMemory d = devices.open(spec)) {
            refused(IllegalArgumentException.class, () -> d.malloc(0), "malloc(0)");
            refused(IllegalArgumentException.class, () -> d.malloc(-1), "malloc(-1)");
            require(d.malloc(Long.MAX_VALUE) == DeviceMemory.NULL, "malloc(Long.MAX_VALUE) was served");
            require(d.malloc(d.descriptor().totalBytes() + 1) == DeviceMemory.NULL, "more than the device was"
                    + " served");
            // Past the free memory, the device's own out-of-memory path (cudaErrorMemoryAllocation on a GPU, whose
            // context holds some memory): NULL, and the device still serves. Where nothing else holds memory the
            // whole device would be served, so it is not asked for.
            long total = d.descriptor().totalBytes();
            long free = d.memoryInfo().freeBytes();
            String pastFree = "";
            if (free < total) {
                require(d.malloc(total) == DeviceMemory.NULL, "malloc of the device's whole size was served with "
                        + ByteSize.format(free) + " free");
                pastFree = "; its whole size not served with " + ByteSize.format(free) + " free";
            }
            long a = d.malloc(4096);
            require(a != DeviceMemory.NULL, "malloc(4096) after the refusals returned NULL");
            d.free(a);
            return "0 and -1 B refused; 2^63 - 1 B and the device's size + 1 not served" + pastFree
                    + "; usable after";
        }
    }

    private String badFrees() {
        try (DeviceMemory d = devices.open(spec)) {
            long a = d.malloc(8192);
            require(a != DeviceMemory.NULL, "malloc(8192) returned NULL");
            refused(InvalidFreeException.class, () -> d.free(a + d.alignment()), "a free inside a block");
            refused(InvalidFreeException.class, () -> d.free(0x1234_5600L), "a free of an address never made");
            d.free(a);
            refused(InvalidFreeException.class, () -> d.free(a), "a second free");
            long b = d.malloc(8192);
            require(b != DeviceMemory.NULL, "malloc after the refusals returned NULL");
            d.free(b);
            return "inside a block, never made, and twice: refused by the adapter's books (no device call); the device"
                    + " still serves";
        }
    }

    private String streamsAndEvents() {
        try (DeviceMemory d = devices.open(spec)) {
            DeviceStream s = d.createStream();
            require(!s.isDefault(), "a created stream is the default stream");
            DeviceEvent e = d.createEvent();
            require(d.isEventComplete(e), "an event never recorded is not complete");
            d.recordEvent(e, s);
            d.synchronizeEvent(e);
            require(d.isEventComplete(e), "an event is not complete after synchronizing on it");
            d.recordEvent(e, DeviceStream.DEFAULT);
            d.synchronize();
            require(d.isEventComplete(e), "an event is not complete after a device synchronize");
            d.destroyEvent(e);
            require(d.hasStream(s), "the stream made is not the device's");
            d.destroyStream(s);
            require(!d.hasStream(s), "a destroyed stream is still the device's");
            refused(IllegalArgumentException.class, () -> d.destroyStream(DeviceStream.DEFAULT),
                    "destroying the default stream");
            return "a stream, an event recorded and synchronized on it and on the default stream";
        }
    }

    private String virtualMemory() {
        try (DeviceMemory d = devices.open(spec)) {
            Optional<VirtualMemory> vm = d.virtualMemory();
            if (vm.isEmpty()) {
                throw new NotApplicable("the device offers no virtual memory (expandable segments run as the"
                        + " defaults on it)");
            }
            VirtualMemory v = vm.get();
            long g = v.granularity();
            require(Long.bitCount(g) == 1, "granularity " + g + " is not a power of two");
            long base = v.reserve(8 * g);
            require(base != DeviceMemory.NULL && base % g == 0, "reserve returned 0x" + Long.toHexString(base));
            require(v.map(base, 2 * g), "mapping two granules failed");
            require(v.map(base + 4 * g, g), "mapping one more granule failed");
            require(v.mappedBytes() == 3 * g, "mapped bytes " + v.mappedBytes() + ", expected " + 3 * g);
            refused(IllegalArgumentException.class, () -> v.map(base + g, g), "mapping a granule twice");
            v.unmap(base + g, g);
            v.unmap(base, g);
            v.unmap(base + 4 * g, g);
            require(v.mappedBytes() == 0, "mapped bytes after the unmaps: " + v.mappedBytes());
            v.release(base);
            return "granularity " + ByteSize.format(g) + "; a part of a mapping unmapped alone";
        }
    }

    private String pinnedHost() {
        // 'auto' and the like: what the spec resolves to decides.
        DeviceSpec resolved = devices.resolve(spec);
        String pinned = pinnedSpec(resolved.argument() == null || resolved.argument().isEmpty() ? resolved.provider()
                : resolved.provider() + ":" + resolved.argument());
        if (pinned == null) {
            throw new NotApplicable("page-locked memory goes with cuda:N (cuda-host) and host (pinned-host)");
        }
        try (DeviceMemory d = devices.open(pinned)) {
            long a = d.malloc(MIB);
            require(a != DeviceMemory.NULL, pinned + ": malloc(1 MiB) returned NULL");
            Optional<MemorySegment> view = d.hostView(a, MIB);
            require(view.isPresent(), pinned + " gives no host view of its memory");
            writeAndRead(view.get(), 7);
            d.free(a);
            return pinned + ": 1 MiB allocated, written, read back and freed";
        }
    }

    /** The page-locked host memory beside a device spec: cuda-host for cuda, pinned-host for host; else null. */
    static String pinnedSpec(String spec) {
        String name = spec.contains(":") ? spec.substring(0, spec.indexOf(':')) : spec;
        String argument = spec.contains(":") ? spec.substring(spec.indexOf(':') + 1) : "";
        return switch (name) {
            case "cuda" -> "cuda-host" + (argument.isEmpty() ? "" : ":" + argument);
            case "host" -> "pinned-host:64MiB";
            default -> null;
        };
    }

    // ------------------------------------------------------------------------------------------ the allocator

    private String allocateAndFree() {
        try (DeviceMemory d = devices.open(spec); DeviceAllocator a = allocators.get(allocator).create(d, "")) {
            long[] sizes = {512, 4096, MIB, 5 * MIB, 21 * MIB};
            long[] blocks = new long[sizes.length];
            for (int i = 0; i < sizes.length; i++) {
                blocks[i] = a.malloc(sizes[i]);
                require(blocks[i] != DeviceMemory.NULL, "malloc(" + sizes[i] + ") returned NULL");
            }
            require(a.stats().activeAllocations() == sizes.length, "active allocations "
                    + a.stats().activeAllocations());
            for (long b : blocks) {
                a.free(b);
            }
            require(a.stats().activeAllocations() == 0, "active allocations after the frees "
                    + a.stats().activeAllocations());
            refused(InvalidFreeException.class, () -> a.free(blocks[0]), "a second free");
            return sizes.length + " blocks of 512 B to 21 MiB; " + ByteSize.format(a.stats().reservedBytes())
                    + " reserved, " + a.stats().deviceMallocs() + " device mallocs";
        }
    }

    private String cachedPair() {
        if (allocator.equals("direct")) {
            throw new NotApplicable("direct does not cache: each free returns its memory to the device");
        }
        try (DeviceMemory d = devices.open(spec); DeviceAllocator a = allocators.get(allocator).create(d, "")) {
            long first = a.malloc(MIB);
            a.free(first);
            long mallocs = a.stats().deviceMallocs();
            long frees = a.stats().deviceFrees();
            long again = a.malloc(MIB);
            require(a.stats().deviceMallocs() == mallocs, "the second allocation of 1 MiB made a device malloc");
            a.free(again);
            require(a.stats().deviceFrees() == frees, "the free of a cached block made a device free");
            return "the second 1 MiB came from the cache" + (again == first ? ", at the same address" : "");
        }
    }

    private String streamFree() {
        try (DeviceMemory device = devices.open(spec);
             DeviceAllocator a = allocators.get(allocator).create(device, "")) {
            DeviceStream s = device.createStream();
            long block = a.malloc(MIB, s);
            require(block != DeviceMemory.NULL, "malloc on a stream returned NULL");
            a.free(block);
            device.synchronize();
            long again = a.malloc(MIB, s);
            require(again != DeviceMemory.NULL, "malloc after the stream's free returned NULL");
            a.free(again);
            device.destroyStream(s);
            return "1 MiB on a stream of its own, freed and allocated again after a synchronize";
        }
    }

    // ------------------------------------------------------------------------------------------ latency

    /** The medians of {@code devicePairs} device malloc/free pairs and {@code cachedPairs} cached ones. */
    Latency latency(long bytes, int devicePairs, int cachedPairs) {
        long deviceMedian;
        try (DeviceMemory d = devices.open(spec)) {
            long[] nanos = new long[devicePairs];
            for (int i = -10; i < devicePairs; i++) {
                long start = System.nanoTime();
                long a = d.malloc(bytes);
                if (a == DeviceMemory.NULL) {
                    throw new IllegalStateException("malloc(" + ByteSize.format(bytes) + ") returned NULL: the"
                            + " device is full");
                }
                d.free(a);
                if (i >= 0) {
                    nanos[i] = System.nanoTime() - start;
                }
            }
            deviceMedian = median(nanos);
        }
        long cachedMedian;
        try (DeviceMemory d = devices.open(spec); DeviceAllocator a = allocators.get(allocator).create(d, "")) {
            // As many pairs again first, so that the JIT has compiled the pair before it is timed.
            for (int i = 0; i < cachedPairs; i++) {
                a.free(a.malloc(bytes));
            }
            long[] nanos = new long[cachedPairs];
            for (int i = 0; i < cachedPairs; i++) {
                long start = System.nanoTime();
                long b = a.malloc(bytes);
                a.free(b);
                nanos[i] = System.nanoTime() - start;
            }
            cachedMedian = median(nanos);
        }
        return new Latency(bytes, devicePairs, deviceMedian, cachedPairs, cachedMedian);
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
