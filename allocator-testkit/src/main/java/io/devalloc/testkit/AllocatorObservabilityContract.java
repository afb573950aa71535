package io.devalloc.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.AllocationFailure;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.observe.DeviceCall;
import io.devalloc.api.observe.MemoryGauge;
import io.devalloc.api.observe.ThresholdListener;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.stats.AllocatorStats;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The contract of observability every allocator passes, built the way applications build it
 * ({@code DeviceAllocators.builder()} with a listener, an out-of-memory handler and thresholds): the listener is told
 * of every device call with its size and of every out-of-memory error, retry and cache release, in numbers that match
 * {@link AllocatorStats}; a listener that throws changes nothing; a handler that frees memory turns an out-of-memory
 * error into a success, its retries are bounded, and one that throws leaves the allocator consistent; thresholds
 * fire once per crossing in each direction, also under concurrency; and with nothing set nothing is wrapped.
 *
 * <p>Subclass it with a device factory and the allocator's provider and configuration. The requests are fractions
 * of the device's capacity: use a capacity from 256 MiB to 1 GiB, and for an allocator that rounds requests up to
 * powers of two ({@code caching-host}) one that is not a power of two (768 MiB), so that a request of 5/8 of it
 * still leaves room beside it. The allocator must not wait long on an out-of-memory error ({@code bfc}: a short
 * {@code retry_timeout_ms}).
 */
public abstract class AllocatorObservabilityContract {

    /** For subclasses: one per allocator and configuration under test. */
    protected AllocatorObservabilityContract() {
    }

    /** A fresh device of 256 MiB to 1 GiB (see the class documentation); the allocator built owns it. */
    protected abstract DeviceMemory openDevice();

    /** The provider of the allocator under test. */
    protected abstract AllocatorProvider allocatorProvider();

    /** The allocator's configuration. */
    protected String config() {
        return "";
    }

    /** A builder of the allocator under test over a fresh device, with nothing observed yet. */
    protected final DeviceAllocators.Builder builder() {
        AllocatorProvider provider = allocatorProvider();
        return DeviceAllocators.builder().deviceProviders(List.of(new FreshDevice(this::openDevice)))
                .allocatorProviders(List.of(provider)).device(FreshDevice.NAME).allocator(provider.name())
                .config(config());
    }

    // ============================================================================================ listener

    @Test
    void theListenerIsToldOfEveryDeviceCallWithItsSizeAndTheCountsMatchTheStats() {
        EventLog log = new EventLog();
        DeviceAllocator allocator = builder().listener(log).build();
        long alignment = allocator.device().alignment();
        try {
            long capacity = allocator.device().descriptor().totalBytes();
            workload(allocator, capacity, new Random(14));
            log.checkAgainst(allocator.stats(), allocator.device().alignment(), "after the workload");
            assertTrue(log.acquired() > 0 && log.released() > 0, "the workload made device calls both ways");
            assertTrue(log.outOfMemory.size() > 0, "the workload ran out of memory");
            for (OutOfMemoryException e : log.outOfMemory) {
                assertTrue(e.requestedBytes() > 0, "the error carries the request");
            }
        } finally {
            allocator.close();
        }
        log.checkAgainst(allocator.stats(), alignment, "after close");
        assertEquals(0, log.acquiredBytes() - log.releasedBytes(), "close gives every byte back, and the listener"
                + " is told of it: " + log.summary());
    }

    @Test
    void aListenerThatThrowsOnEveryCallChangesNothing() {
        AllocatorListener throwing = new AllocatorListener() {
            @Override
            public void deviceCall(DeviceCall call, long address, long bytes, long nanos, boolean succeeded) {
                throw new IllegalStateException("listener broken: deviceCall");
            }

            @Override
            public void outOfMemory(long requestedBytes, OutOfMemoryException error) {
                throw new IllegalStateException("listener broken: outOfMemory");
            }

            @Override
            public void allocationRetried(long requestedBytes, int attempt, RetryCause cause) {
                throw new IllegalStateException("listener broken: allocationRetried");
            }

            @Override
            public void cacheReleased(long bytes, long nanos) {
                throw new IllegalStateException("listener broken: cacheReleased");
            }
        };
        ThresholdListener throwingThresholds = new ThresholdListener() {
            @Override
            public void crossedUp(MemoryGauge gauge, long level, long bytes) {
                throw new IllegalStateException("threshold listener broken");
            }

            @Override
            public void crossedDown(MemoryGauge gauge, long level, long bytes) {
                throw new IllegalStateException("threshold listener broken");
            }
        };
        EventLog after = new EventLog();
        DeviceAllocator plain = builder().build();
        DeviceAllocator observed = builder().listener(throwing).listener(after)
                .threshold(MemoryGauge.ALLOCATED, throwingThresholds, 1 << 20, 64L << 20)
                .threshold(MemoryGauge.RESERVED, throwingThresholds, 1 << 20, 64L << 20).build();
        try {
            long capacity = plain.device().descriptor().totalBytes();
            LiveSet plainLive = workload(plain, capacity, new Random(7));
            LiveSet observedLive = workload(observed, capacity, new Random(7));
            assertEquals(plain.stats(), observed.stats(), "the same workload with a throwing listener");
            assertEquals(shapes(plain), shapes(observed), "the same segments and blocks");
            assertEquals(plainLive.asMap().keySet(), observedLive.asMap().keySet());
            AllocatorInvariants.check(observed, observedLive);
            after.checkAgainst(observed.stats(), observed.device().alignment(), "a listener after a throwing one");
        } finally {
            try {
                plain.close();
            } finally {
                observed.close();
            }
        }
    }

    // ============================================================================================ handler

    @Test
    void aHandlerThatFreesALiveAllocationTurnsAnOutOfMemoryErrorIntoASuccess() {
        EventLog log = new EventLog();
        AtomicInteger asked = new AtomicInteger();
        Hogged hogged = new Hogged();
        DeviceAllocator allocator = hogged.build(builder().listener(log).outOfMemoryHandler(failure -> {
            asked.incrementAndGet();
            if (hogged.hog == 0) {
                return false;
            }
            hogged.allocator.free(hogged.hog); // no allocator lock is held here
            hogged.hog = 0;
            return true;
        }));
        try {
            long big = hogged.fill();
            long ooms = allocator.stats().outOfMemoryErrors();
            long address = allocator.malloc(big);
            assertNotEquals(0, address);
            assertEquals(1, asked.get(), "the handler was asked once");
            assertEquals(0, hogged.hog, "and freed the live allocation");
            assertEquals(ooms + 1, allocator.stats().outOfMemoryErrors(), "the failed attempt still counts");
            assertEquals(1, log.outOfMemory.size());
            assertEquals(List.of("HANDLER 1"), log.retries(RetryCause.HANDLER));
            LiveSet live = new LiveSet();
            live.add(address, big);
            AllocatorInvariants.check(allocator, live);
            allocator.free(address);
            log.checkAgainst(allocator.stats(), allocator.device().alignment(), "after the handler's retry");
        } finally {
            allocator.close();
        }
    }

    @Test
    void aHandlerThatAlwaysAsksForARetryGetsExactlyMaxRetriesAndThenTheError() {
        EventLog log = new EventLog();
        List<Integer> retryCounts = new ArrayList<>();
        DeviceAllocator allocator = builder().listener(log).outOfMemoryHandler(failure -> {
            retryCounts.add(failure.retryCount());
            return true;
        }, 3).build();
        try {
            long big = bigRequest(allocator);
            long hog = allocator.malloc(big);
            long ooms = allocator.stats().outOfMemoryErrors();
            OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> allocator.malloc(big));
            assertEquals(big, e.requestedBytes());
            assertEquals(List.of(0, 1, 2), retryCounts, "asked before each of the 3 retries, then no more");
            assertEquals(List.of("HANDLER 1", "HANDLER 2", "HANDLER 3"), log.retries(RetryCause.HANDLER));
            assertEquals(4, log.outOfMemory.size(), "the first attempt and 3 retries failed");
            assertSame(e, log.outOfMemory.get(3), "the caller gets the last attempt's error");
            assertEquals(ooms + 4, allocator.stats().outOfMemoryErrors());
            log.checkAgainst(allocator.stats(), allocator.device().alignment(), "after the bounded retries");
            allocator.free(hog);
        } finally {
            allocator.close();
        }
    }

    @Test
    void aHandlerThatThrowsLeavesTheErrorWithItsExceptionSuppressedAndTheAllocatorUsable() {
        IllegalStateException spillFailed = new IllegalStateException("spill failed");
        DeviceAllocator allocator = builder().outOfMemoryHandler(failure -> {
            throw spillFailed;
        }).build();
        try {
            long big = bigRequest(allocator);
            LiveSet live = new LiveSet();
            long hog = allocator.malloc(big);
            live.add(hog, big);
            long small = allocator.malloc(4096);
            live.add(small, 4096);
            AllocatorStats before = allocator.stats();
            OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> allocator.malloc(big));
            assertArrayEquals(new Throwable[] {spillFailed}, e.getSuppressed());
            AllocatorStats after = allocator.stats();
            assertEquals(before.outOfMemoryErrors() + 1, after.outOfMemoryErrors());
            assertEquals(before.activeAllocations(), after.activeAllocations());
            assertEquals(before.allocatedBytes(), after.allocatedBytes());
            assertEquals(before.requestedBytes(), after.requestedBytes());
            AllocatorInvariants.check(allocator, live);
            // Usable afterwards: free, allocate again, and the books still balance.
            allocator.free(take(live, small));
            long again = allocator.malloc(8192);
            live.add(again, 8192);
            AllocatorInvariants.check(allocator, live);
            allocator.free(take(live, hog));
            allocator.free(take(live, again));
            AllocatorInvariants.check(allocator, live);
        } finally {
            allocator.close();
        }
    }

    @Test
    void theFailureCarriesTheRequestTheStreamTheRetryCountAndTheStats() {
        List<AllocationFailure> failures = new ArrayList<>();
        List<AllocatorStats> statsWhenAsked = new ArrayList<>();
        Hogged hogged = new Hogged();
        DeviceAllocator allocator = hogged.build(builder().outOfMemoryHandler(failure -> {
            failures.add(failure);
            statsWhenAsked.add(hogged.allocator.stats());
            if (failure.retryCount() == 2) {
                hogged.allocator.free(hogged.hog);
            }
            return true;
        }));
        try {
            long big = hogged.fill();
            long ooms = allocator.stats().outOfMemoryErrors();
            assertNotEquals(0, allocator.malloc(big, DeviceStream.DEFAULT));
            assertEquals(3, failures.size());
            for (int i = 0; i < 3; i++) {
                AllocationFailure f = failures.get(i);
                assertEquals(big, f.requestedBytes());
                assertEquals(DeviceStream.DEFAULT, f.stream());
                assertEquals(i, f.retryCount());
                assertEquals(statsWhenAsked.get(i), f.stats(), "the stats just after the failure");
                assertEquals(ooms + 1 + i, f.stats().outOfMemoryErrors());
                assertEquals(big, f.error().requestedBytes());
            }
        } finally {
            allocator.close();
        }
    }

    // ============================================================================================ thresholds

    @Test
    void thresholdsFireOncePerCrossingInEachDirection() {
        CrossingLog crossings = new CrossingLog();
        long capacity;
        try (DeviceAllocator probe = builder().build()) {
            capacity = probe.device().descriptor().totalBytes();
        }
        // 3/32, 3/16 and 3/8 of the capacity, so that 1/64 stays below the first, 1/8 (or its power-of-two rounding)
        // between the first two, and 1/2 (or its rounding) above the last.
        long[] levels = {capacity * 3 / 32, capacity * 3 / 16, capacity * 3 / 8};
        DeviceAllocator allocator = builder().threshold(MemoryGauge.ALLOCATED, crossings, levels)
                .threshold(MemoryGauge.RESERVED, crossings, levels).build();
        try {
            ThresholdCheck check = new ThresholdCheck(allocator, crossings, levels);
            long a = check.malloc(capacity / 64);             // below every level: no crossing of allocated
            check.free(a);
            check.release();
            long b = check.malloc(capacity / 2);              // all three levels in one call
            check.free(b);                                    // allocated falls through all three
            check.release();                                  // reserved falls
            for (int i = 0; i < 4; i++) {
                long c = check.malloc(capacity / 8);          // up through the first level only
                check.free(c);                                // and down again
                check.release();
            }
            long d = check.malloc(capacity / 64);
            long e = check.malloc(capacity / 64);
            check.free(d);
            check.free(e);
            check.release();
            check.expectAllocated(MemoryGauge.ALLOCATED);
            check.expectReserved();
        } finally {
            allocator.close();
        }
    }

    @Test
    void underConcurrencyEveryCrossingIsReportedOnceAndTheyNetOut() throws Exception {
        EventLog log = new EventLog();
        CrossingLog crossings = new CrossingLog();
        long capacity;
        try (DeviceAllocator probe = builder().build()) {
            capacity = probe.device().descriptor().totalBytes();
        }
        long[] levels = {capacity / 40, capacity / 20, capacity / 10};
        DeviceAllocator allocator = builder().listener(log).threshold(MemoryGauge.ALLOCATED, crossings, levels)
                .threshold(MemoryGauge.RESERVED, crossings, levels).build();
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CyclicBarrier start = new CyclicBarrier(threads);
            List<Future<List<Long>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Random random = new Random(100 + t);
                results.add(pool.submit(() -> {
                    List<Long> mine = new ArrayList<>();
                    start.await();
                    for (int op = 0; op < 1500; op++) {
                        if (mine.size() < 6 && (mine.isEmpty() || random.nextInt(3) > 0)) {
                            mine.add(allocator.malloc(1 + random.nextLong(capacity / 64)));
                        } else {
                            allocator.free(mine.remove(random.nextInt(mine.size())));
                        }
                        if (op % 200 == 199) {
                            allocator.releaseCachedMemory();
                        }
                    }
                    return mine;
                }));
            }
            List<Long> left = new ArrayList<>();
            for (Future<List<Long>> f : results) {
                left.addAll(f.get(120, TimeUnit.SECONDS));
            }
            AllocatorStats s = allocator.stats();
            crossings.expectNet(MemoryGauge.ALLOCATED, levels, s.allocatedBytes());
            crossings.expectNet(MemoryGauge.RESERVED, levels, s.reservedBytes());
            assertTrue(crossings.ups(MemoryGauge.ALLOCATED, levels[0]) > 0, "the workload crossed the first level");
            log.checkAgainst(s, allocator.device().alignment(), "after the threads");
            for (long address : left) {
                allocator.free(address);
            }
            allocator.releaseCachedMemory();
            s = allocator.stats();
            crossings.expectNet(MemoryGauge.ALLOCATED, levels, 0);
            crossings.expectNet(MemoryGauge.RESERVED, levels, s.reservedBytes());
            log.checkAgainst(s, allocator.device().alignment(), "after the last frees");
        } finally {
            pool.shutdownNow();
            allocator.close();
        }
    }

    // ============================================================================================ no cost unset

    @Test
    void builtWithNothingSetNothingIsWrapped() {
        Class<?> allocatorClass;
        Class<?> deviceClass;
        try (DeviceMemory device = openDevice();
             DeviceAllocator bare = allocatorProvider().create(device, config())) {
            allocatorClass = bare.getClass();
            deviceClass = device.getClass();
        }
        try (DeviceAllocator plain = builder().build()) {
            assertEquals(allocatorClass, plain.getClass(), "nothing set: the provider's allocator itself");
            assertEquals(deviceClass, plain.device().getClass(), "nothing set: the device itself");
            assertEquals(allocatorProvider().name(), plain.name());
        }
        try (DeviceAllocator handled = builder().outOfMemoryHandler(f -> false).build()) {
            assertNotEquals(allocatorClass, handled.getClass(), "a handler wraps the allocator");
            assertEquals(deviceClass, handled.device().getClass(), "a handler alone sees no device call");
        }
        try (DeviceAllocator listened = builder().listener(new AllocatorListener() { }).build()) {
            assertNotEquals(allocatorClass, listened.getClass(), "a listener wraps the allocator");
            assertNotEquals(deviceClass, listened.device().getClass(), "a listener sees the device calls");
        }
    }


    // ============================================================================================ helpers

    /** A request of 5/8 of the capacity: two never fit at once, on any allocator. */
    private static long bigRequest(DeviceAllocator allocator) {
        return allocator.device().descriptor().totalBytes() / 8 * 5;
    }

    /**
     * The allocator of a handler test, which its handler reaches once it is built, and the allocation that fills
     * its device, which the handler may free.
     */
    private static final class Hogged {
        DeviceAllocator allocator;
        /** The allocation that fills the device; 0 where the handler freed it and says so. */
        long hog;

        DeviceAllocator build(DeviceAllocators.Builder builder) {
            allocator = builder.build();
            return allocator;
        }

        /** Fills the device with one allocation of a {@link #bigRequest}; returns its size. */
        long fill() {
            long big = bigRequest(allocator);
            hog = allocator.malloc(big);
            return big;
        }
    }

    /**
     * A random workload of allocations and frees up to 1/32 of the capacity (at most 10 live), releases of the cache,
     * and requests that cannot fit (one larger than the device, one of 5/8 of it beside another): the same
     * operations for the same random source, so two allocators can be compared. Returns what is still live.
     */
    private static LiveSet workload(DeviceAllocator allocator, long capacity, Random random) {
        LiveSet live = new LiveSet();
        for (int op = 0; op < 600; op++) {
            int roll = random.nextInt(100);
            if (live.size() == 0 || (roll < 50 && live.size() < 10)) {
                long bytes = 1 + random.nextLong(capacity / 32);
                live.add(allocator.malloc(bytes), bytes);
            } else if (roll < 97) {
                allocator.free(take(live, live.addressAt(random.nextInt(live.size()))));
            } else {
                allocator.releaseCachedMemory();
            }
            if (op == 300) {
                assertThrows(OutOfMemoryException.class, () -> allocator.malloc(capacity * 2));
                while (live.size() > 0) {
                    allocator.free(take(live, live.addressAt(0)));
                }
                allocator.releaseCachedMemory();
                long big = capacity / 8 * 5;
                long first = allocator.malloc(big);
                assertThrows(OutOfMemoryException.class, () -> allocator.malloc(big));
                allocator.free(first);
            }
        }
        return live;
    }

    /** Removes {@code address} from {@code live} and returns it. */
    private static long take(LiveSet live, long address) {
        live.remove(address);
        return address;
    }

    /** The segments' sizes, pools and blocks (sizes, requests and states), without addresses. */
    private static List<String> shapes(DeviceAllocator allocator) {
        List<String> out = new ArrayList<>();
        for (SegmentSnapshot s : allocator.snapshot().segments()) {
            StringBuilder b = new StringBuilder(s.pool()).append(' ').append(s.size()).append(':');
            s.blocks().forEach(block -> b.append(' ').append(block.size()).append('/').append(block.requestedSize())
                    .append('/').append(block.state()));
            out.add(b.toString());
        }
        return out;
    }

    /** Everything a listener is told, kept for the checks; thread-safe. */
    static final class EventLog implements AllocatorListener {
        private final LongAdder acquired = new LongAdder();
        private final LongAdder released = new LongAdder();
        private final LongAdder acquiredBytes = new LongAdder();
        private final LongAdder releasedBytes = new LongAdder();
        private final LongAdder failedAcquires = new LongAdder();
        private final LongAdder ownRetries = new LongAdder();
        private final LongAdder cacheReleases = new LongAdder();
        private final List<String> errors = Collections.synchronizedList(new ArrayList<>());
        private final List<String> retries = Collections.synchronizedList(new ArrayList<>());
        final List<OutOfMemoryException> outOfMemory = Collections.synchronizedList(new ArrayList<>());
        /** Size of each live device malloc, to check that its free is told the same size. */
        private final ConcurrentHashMap<Long, Long> mallocs = new ConcurrentHashMap<>();

        @Override
        public void deviceCall(DeviceCall call, long address, long bytes, long nanos, boolean succeeded) {
            if (nanos < 0) {
                errors.add(call + " took " + nanos + " ns");
            }
            if (!succeeded) {
                if (call.acquires()) {
                    failedAcquires.increment();
                } else {
                    errors.add("a " + call + " of " + bytes + " B failed");
                }
                return;
            }
            if (bytes <= 0) {
                errors.add(call + " of " + bytes + " B at 0x" + Long.toHexString(address));
            }
            if (call.acquires()) {
                acquired.increment();
                acquiredBytes.add(bytes);
                if (call == DeviceCall.MALLOC && mallocs.put(address, bytes) != null) {
                    errors.add("malloc returned live address 0x" + Long.toHexString(address));
                }
            } else {
                released.increment();
                releasedBytes.add(bytes);
                if (call == DeviceCall.FREE) {
                    Long size = mallocs.remove(address);
                    if (size == null || size != bytes) {
                        errors.add("free of 0x" + Long.toHexString(address) + " told " + bytes + " B, malloc'd "
                                + size);
                    }
                }
            }
        }

        @Override
        public void outOfMemory(long requestedBytes, OutOfMemoryException error) {
            if (requestedBytes != error.requestedBytes()) {
                errors.add("outOfMemory told " + requestedBytes + " B for an error of " + error.requestedBytes());
            }
            outOfMemory.add(error);
        }

        @Override
        public void allocationRetried(long requestedBytes, int attempt, RetryCause cause) {
            if (cause != RetryCause.HANDLER) {
                ownRetries.increment();
            }
            if (requestedBytes <= 0 || attempt < 1) {
                errors.add("retry of " + requestedBytes + " B, attempt " + attempt);
            }
            retries.add(cause + " " + attempt);
        }

        @Override
        public void cacheReleased(long bytes, long nanos) {
            cacheReleases.increment();
            if (bytes < 0 || nanos < 0) {
                errors.add("cache release of " + bytes + " B in " + nanos + " ns");
            }
        }

        long acquired() {
            return acquired.sum();
        }

        long released() {
            return released.sum();
        }

        long acquiredBytes() {
            return acquiredBytes.sum();
        }

        long releasedBytes() {
            return releasedBytes.sum();
        }

        List<String> retries(RetryCause cause) {
            synchronized (retries) {
                return retries.stream().filter(r -> r.startsWith(cause.name())).toList();
            }
        }

        String summary() {
            return acquired + " acquires (" + acquiredBytes + " B), " + released + " releases (" + releasedBytes
                    + " B), " + failedAcquires + " failed acquires, " + outOfMemory.size() + " OOMs, " + ownRetries
                    + " own retries, " + cacheReleases + " cache releases";
        }

        /**
         * The counts told match the allocator's own, and the bytes acquired less those released are reserved (up to
         * the rounding to the device's {@code alignment} of the mallocs still live).
         */
        void checkAgainst(AllocatorStats s, long alignment, String when) {
            assertEquals(List.of(), errors, when);
            assertEquals(s.deviceMallocs(), acquired(), when + ": device mallocs and maps told, " + summary());
            assertEquals(s.deviceFrees(), released(), when + ": device frees and unmaps told, " + summary());
            assertEquals(s.outOfMemoryErrors(), outOfMemory.size(), when + ": out-of-memory errors told");
            assertEquals(s.allocationRetries(), ownRetries.sum(), when + ": the allocator's retries told");
            // The bytes told are those asked of the device; an allocator may count a malloc at the device's rounding
            // (direct does), so reserved lies between the bytes asked and the bytes asked rounded up.
            long net = acquiredBytes() - releasedBytes();
            long slack = 0;
            for (long bytes : mallocs.values()) {
                slack += (bytes + alignment - 1) / alignment * alignment - bytes;
            }
            assertTrue(s.reservedBytes() >= net && s.reservedBytes() <= net + slack, when + ": reserved "
                    + s.reservedBytes() + " B, but the device calls told leave " + net + " B (+ at most " + slack
                    + " B of the device's rounding), " + summary());
        }
    }

    /** Every crossing a threshold listener is told of; thread-safe. */
    static final class CrossingLog implements ThresholdListener {
        final List<String> events = Collections.synchronizedList(new ArrayList<>());
        private final ConcurrentHashMap<String, LongAdder> counts = new ConcurrentHashMap<>();

        @Override
        public void crossedUp(MemoryGauge gauge, long level, long bytes) {
            events.add(gauge + " up " + level);
            counts.computeIfAbsent(gauge + " up " + level, k -> new LongAdder()).increment();
        }

        @Override
        public void crossedDown(MemoryGauge gauge, long level, long bytes) {
            events.add(gauge + " down " + level);
            counts.computeIfAbsent(gauge + " down " + level, k -> new LongAdder()).increment();
        }

        long ups(MemoryGauge gauge, long level) {
            LongAdder a = counts.get(gauge + " up " + level);
            return a == null ? 0 : a.sum();
        }

        long downs(MemoryGauge gauge, long level) {
            LongAdder a = counts.get(gauge + " down " + level);
            return a == null ? 0 : a.sum();
        }

        /** For each level, ups less downs is 1 when {@code bytes} is at or above it, else 0. */
        void expectNet(MemoryGauge gauge, long[] levels, long bytes) {
            for (long level : levels) {
                assertEquals(bytes >= level ? 1 : 0, ups(gauge, level) - downs(gauge, level), gauge + " at "
                        + bytes + " B: ups " + ups(gauge, level) + " less downs " + downs(gauge, level)
                        + " of level " + level);
            }
        }
    }

    /**
     * Runs single calls and checks, after each, that exactly the crossings between the figures before and after it
     * were told, in order; counts the multi-level calls and the crossings so that the test can ask for each kind.
     */
    private static final class ThresholdCheck {
        private final DeviceAllocator allocator;
        private final CrossingLog log;
        private final long[] levels;
        private final Map<MemoryGauge, int[]> multiUpDown = new EnumMap<>(MemoryGauge.class);
        private final Map<MemoryGauge, int[]> quietCalls = new EnumMap<>(MemoryGauge.class);

        ThresholdCheck(DeviceAllocator allocator, CrossingLog log, long[] levels) {
            this.allocator = allocator;
            this.log = log;
            this.levels = levels;
            for (MemoryGauge g : MemoryGauge.values()) {
                multiUpDown.put(g, new int[2]);
                quietCalls.put(g, new int[1]);
            }
        }

        long malloc(long bytes) {
            long[] out = new long[1];
            call(() -> out[0] = allocator.malloc(bytes));
            return out[0];
        }

        void free(long address) {
            call(() -> allocator.free(address));
        }

        void release() {
            call(allocator::releaseCachedMemory);
        }

        private void call(Runnable r) {
            AllocatorStats before = allocator.stats();
            int seen = log.events.size();
            r.run();
            AllocatorStats after = allocator.stats();
            List<String> told = new ArrayList<>(log.events.subList(seen, log.events.size()));
            List<String> expected = new ArrayList<>();
            expected.addAll(crossings(MemoryGauge.ALLOCATED, before.allocatedBytes(), after.allocatedBytes()));
            expected.addAll(crossings(MemoryGauge.RESERVED, before.reservedBytes(), after.reservedBytes()));
            // The decorator checks the reserved and allocated watches in the order they were added: allocated first.
            assertEquals(expected, told, "crossings of a call that moved allocated " + before.allocatedBytes()
                    + " -> " + after.allocatedBytes() + ", reserved " + before.reservedBytes() + " -> "
                    + after.reservedBytes());
        }

        private List<String> crossings(MemoryGauge gauge, long from, long to) {
            List<String> out = new ArrayList<>();
            for (long level : levels) {
                if (from < level && to >= level) {
                    out.add(gauge + " up " + level);
                }
            }
            for (int i = levels.length - 1; i >= 0; i--) {
                if (from >= levels[i] && to < levels[i]) {
                    out.add(gauge + " down " + levels[i]);
                }
            }
            int ups = (int) out.stream().filter(s -> s.contains(" up ")).count();
            int downs = out.size() - ups;
            if (ups > 1) {
                multiUpDown.get(gauge)[0]++;
            }
            if (downs > 1) {
                multiUpDown.get(gauge)[1]++;
            }
            if (out.isEmpty()) {
                quietCalls.get(gauge)[0]++;
            }
            return out;
        }

        /** Allocated went through every kind of crossing: several levels at once both ways, back and forth. */
        void expectAllocated(MemoryGauge gauge) {
            assertTrue(multiUpDown.get(gauge)[0] >= 1 && multiUpDown.get(gauge)[1] >= 1,
                    gauge + " crossed several levels in one call, up and down");
            assertTrue(log.ups(gauge, levels[0]) >= 5 && log.downs(gauge, levels[0]) >= 5,
                    gauge + " went back and forth over the first level");
            assertTrue(quietCalls.get(gauge)[0] >= 4, gauge + " had calls that crossed nothing");
            log.expectNet(gauge, levels, allocator.stats().allocatedBytes());
        }

        /** Reserved rose through several levels at once and fell again, whatever the allocator's caching. */
        void expectReserved() {
            assertTrue(multiUpDown.get(MemoryGauge.RESERVED)[0] >= 1, "reserved crossed several levels in one call");
            assertTrue(log.downs(MemoryGauge.RESERVED, levels[0]) >= 1, "reserved fell below the first level");
            log.expectNet(MemoryGauge.RESERVED, levels, allocator.stats().reservedBytes());
        }
    }

    /** A device provider that opens a fresh device from the subclass for every allocator built. */
    private static final class FreshDevice implements DeviceMemoryProvider {
        static final String NAME = "contract-device";
        private final Supplier<DeviceMemory> factory;

        FreshDevice(Supplier<DeviceMemory> factory) {
            this.factory = factory;
        }

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String description() {
            return "the device of an observability contract test";
        }

        @Override
        public int priority() {
            return 0;
        }

        @Override
        public Availability probe() {
            return Availability.available("a fresh device per allocator");
        }

        @Override
        public int deviceCount() {
            return 1;
        }

        @Override
        public String argumentHelp() {
            return "none";
        }

        @Override
        public DeviceMemory open(String argument) {
            return factory.get();
        }
    }
}
