package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.collect.HandleStreams;
import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.spi.ForwardingDeviceMemory;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Regressions found by review: device failures mid-operation, overflow at extreme sizes, state after close. */
class BfcRobustnessTest {

    static final long MiB = ByteSize.MiB;

    /**
     * A sim device with faults: a test can make free or createEvent throw, or make it lie about its capacity. It has
     * no virtual memory, and closing it leaves the sim device open (the test closes that).
     */
    static class Faulty extends ForwardingDeviceMemory {
        int failFreeAt = -1;      // throw on the n-th free call (1-based)
        int frees;
        boolean failCreateEvent;
        long fakeTotal = -1;
        long bump = 1L << 40;

        Faulty(SimulatedDevice d) { super(d); }

        @Override
        public DeviceDescriptor descriptor() {
            return fakeTotal < 0 ? delegate().descriptor()
                    : new DeviceDescriptor("fake", 0, "huge", DeviceKind.SIMULATED, fakeTotal);
        }
        @Override
        public long malloc(long bytes) {
            if (fakeTotal >= 0) { long a = bump; bump += bytes; return a; }
            return delegate().malloc(bytes);
        }
        @Override
        public void free(long address) {
            if (++frees == failFreeAt) {
                throw new DeviceException("injected free failure");
            }
            if (fakeTotal >= 0) return;
            delegate().free(address);
        }
        @Override
        public MemoryInfo memoryInfo() {
            return fakeTotal >= 0 ? new MemoryInfo(fakeTotal, fakeTotal) : delegate().memoryInfo();
        }
        @Override
        public DeviceEvent createEvent() {
            if (failCreateEvent) {
                failCreateEvent = false;
                throw new DeviceException("injected createEvent failure");
            }
            return delegate().createEvent();
        }
        @Override
        public Optional<VirtualMemory> virtualMemory() { return Optional.empty(); }
        @Override
        public void close() { }
    }

    // 1. The region target doubles on every extension; released and re-extended 50 times it must not overflow.
    @Test
    void regionTargetOverflowHangsAfterRepeatedReleaseCachedMemory() {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(ByteSize.GiB).virtualMemory(false).build()) {
            BfcArena a = (BfcArena) new BfcAllocatorProvider(Map.of()).create(device,
                    "allow_growth:true,memory_limit_mb:64,allow_retry_on_failure:false");
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
                for (int i = 0; i < 50; i++) {
                    long p = a.malloc(256);
                    a.free(p);
                    a.releaseCachedMemory();
                }
            });
            assertTrue(a.currentRegionAllocationBytes() > 0);
        }
    }

    // 2. A device free that fails during GC leaves the arena whole.
    @Test
    void deviceFreeFailureDuringGcCorruptsTheArena() {
        try (SimulatedDevice sim = SimulatedDevice.builder().capacity(ByteSize.GiB).virtualMemory(false).build()) {
            Faulty dev = new Faulty(sim);
            BfcArena a = (BfcArena) BfcAllocatorProvider.create(dev, BfcOptions.defaults().withAllowGrowth(true)
                    .withMemoryLimit(64 * MiB).withRetry(false, 0).withVirtualMemory(BfcOptions.VirtualMemoryUse.OFF));
            long p = a.malloc(256);
            a.free(p);
            dev.failFreeAt = 1;
            assertThrows(DeviceException.class, a::releaseCachedMemory);
            // The arena should be unchanged (the region is still there and usable) or at least consistent.
            assertDoesNotThrow(() -> BfcArenaInvariants.check(a),
                    "arena left inconsistent after a failed device free in GC");
            assertDoesNotThrow(a::releaseCachedMemory, "second GC after a failed one");
        }
    }

    // 3. Close returns every region even when a device free fails.
    @Test
    void closeStopsReturningRegionsAtTheFirstFailingFree() {
        try (SimulatedDevice sim = SimulatedDevice.builder().capacity(ByteSize.GiB).virtualMemory(false).build()) {
            Faulty dev = new Faulty(sim);
            BfcArena a = (BfcArena) BfcAllocatorProvider.create(dev, BfcOptions.defaults().withAllowGrowth(true)
                    .withRetry(false, 0).withVirtualMemory(BfcOptions.VirtualMemoryUse.OFF));
            a.malloc(MiB);
            a.malloc(3 * MiB); // second region
            assertEquals(2, a.regionCount());
            dev.failFreeAt = 1;
            assertThrows(DeviceException.class, a::close);
            assertEquals(1, sim.liveAllocations(),
                    "every region but the one whose free failed went back to the device");
            assertTrue(a.isClosed());
        }
    }

    // 4. A timestamped free whose event cannot be recorded changes nothing.
    @Test
    void timestampedFreeWithFailingEventLosesTheChunk() {
        try (SimulatedDevice sim = SimulatedDevice.builder().capacity(ByteSize.GiB).virtualMemory(false)
                .eventCompletion(EventCompletion.MANUAL).build()) {
            Faulty dev = new Faulty(sim);
            BfcArena a = (BfcArena) BfcAllocatorProvider.create(dev, BfcOptions.defaults().withTimestamped(true)
                    .withMemoryLimit(MiB).withRetry(false, 0).withVirtualMemory(BfcOptions.VirtualMemoryUse.OFF));
            long p = a.malloc(256);
            dev.failCreateEvent = true;
            assertThrows(DeviceException.class, () -> a.free(p));
            // The free changed nothing: still live, and it can be freed again.
            BfcArenaInvariants.check(a);
            assertEquals(1, a.stats().activeAllocations());
            a.free(p);
            BfcArenaInvariants.check(a);
            assertEquals(0, a.stats().activeAllocations());
        }
    }

    // 5. 2*rounded must not overflow for requests above 4 EiB (no 0-byte tail chunk).
    @Test
    void splitRuleOverflowsForHugeRequests() {
        try (SimulatedDevice sim = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            Faulty dev = new Faulty(sim);
            dev.fakeTotal = 6L << 60; // 6 EiB
            BfcArena a = (BfcArena) BfcAllocatorProvider.create(dev, BfcOptions.defaults().withRetry(false, 0)
                    .withVirtualMemory(BfcOptions.VirtualMemoryUse.OFF));
            OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> a.malloc(6L << 60));
            assertEquals(OutOfMemoryException.Reason.REQUEST_TOO_LARGE, e.reason(), "regions stop at 4 EiB");
            long p = a.malloc(3L << 60);
            assertEquals(3L << 60, a.allocatedSize(p), "exactly the request");
            assertDoesNotThrow(() -> BfcArenaInvariants.check(a), "no zero-size tail chunk");
        }
    }

    // 6. Alignment arithmetic saturates instead of overflowing.
    @Test
    void alignmentArithmeticOverflows() {
        try (SimulatedDevice sim = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            Faulty dev = new Faulty(sim);
            dev.fakeTotal = 7L << 60;
            BfcArena a = (BfcArena) BfcAllocatorProvider.create(dev, BfcOptions.defaults().withRetry(false, 0)
                    .withVirtualMemory(BfcOptions.VirtualMemoryUse.OFF).withAllowGrowth(true));
            long want = 5L << 60;
            long p;
            try {
                p = a.malloc(want, 1L << 62, DeviceStream.DEFAULT);
            } catch (OutOfMemoryException e) {
                assertEquals(OutOfMemoryException.Reason.REQUEST_TOO_LARGE, e.reason(), e.getMessage());
                assertEquals(0, a.bfcStats().poolBytes(), "a refused call takes no region");
                BfcArenaInvariants.check(a);
                return;
            }
            assertTrue(a.allocatedSize(p) >= want, "chunk smaller than the request");
            assertEquals(0, p & ((1L << 62) - 1), "misaligned");
            BfcArenaInvariants.check(a);
        }
    }

    // 7. recordStream outside timestamped mode keeps nothing.
    @Test
    void recordStreamLeaksOutsideTimestampedMode() throws Exception {
        try (SimulatedDevice sim = SimulatedDevice.builder().capacity(ByteSize.GiB).virtualMemory(false).build()) {
            BfcArena a = (BfcArena) BfcAllocatorProvider.create(sim, BfcOptions.defaults()
                    .withRetry(false, 0).withMemoryLimit(64 * MiB).withVirtualMemory(BfcOptions.VirtualMemoryUse.OFF));
            for (int i = 0; i < 50; i++) {
                DeviceStream s = sim.createStream();
                long p = a.malloc(256);
                a.recordStream(p, s);
                a.free(p);
                sim.destroyStream(s);
            }
            var f = BfcArena.class.getDeclaredField("crossStreams");
            f.setAccessible(true);
            HandleStreams kept = (HandleStreams) f.get(a);
            assertEquals(0, kept.handles().size(), "outside timestamped mode nothing is kept for recorded streams");
        }
    }

    // 8. An alignment that can never be satisfied is REQUEST_TOO_LARGE and takes nothing.
    @Test
    void hugeAlignmentOomReason() {
        try (SimulatedDevice sim = SimulatedDevice.builder().capacity(ByteSize.GiB).virtualMemory(false).build()) {
            BfcArena a = (BfcArena) BfcAllocatorProvider.create(sim, BfcOptions.defaults()
                    .withRetry(false, 0).withVirtualMemory(BfcOptions.VirtualMemoryUse.OFF));
            OutOfMemoryException e = assertThrows(OutOfMemoryException.class,
                    () -> a.malloc(256, 1L << 40, DeviceStream.DEFAULT));
            assertEquals(OutOfMemoryException.Reason.REQUEST_TOO_LARGE, e.reason(), e.getMessage());
            assertTrue(e.getMessage().contains("alignment"), e.getMessage());
            assertEquals(0, a.bfcStats().poolBytes(), "a refused call takes no region");
        }
    }

    // 9. Stats after close report an empty arena.
    @Test
    void statsAfterClose() {
        try (SimulatedDevice sim = SimulatedDevice.builder().capacity(ByteSize.GiB).virtualMemory(false).build()) {
            BfcArena a = (BfcArena) BfcAllocatorProvider.create(sim, BfcOptions.defaults()
                    .withRetry(false, 0).withMemoryLimit(64 * MiB).withVirtualMemory(BfcOptions.VirtualMemoryUse.OFF));
            a.free(a.malloc(256));
            a.close();
            assertEquals(0, a.bfcStats().largestFreeBlockBytes());
            assertEquals(0, a.stats().largestFreeBlock());
            assertEquals(0, a.stats().reservedBytes());
        }
    }
}
