package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.sim.DeviceCall;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Issue 15, defect 7: with expandable segments, after any device failure (a map, an unmap, the wait before an
 * unmap, an event) the allocator's books equal the device's state: reserved bytes equal what the device has mapped,
 * every live allocation lies on mapped pages, and no event or mapping leaks. Faults come from the simulator's
 * per-kind injection (defect 6).
 */
class ExpandableDeviceFailureTest {

    static final long MiB = 1L << 20;
    static final long GiB = 1L << 30;

    /** A failure the device throws that is not a {@link DeviceException}: what a non-conforming adapter may do. */
    static final class InjectedFault extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InjectedFault(String message) {
            super(message);
        }
    }

    static CachingArena arena(SimulatedDevice device) {
        return (CachingArena) new CachingAllocatorProvider(Map.of()).create(device, "expandable_segments:True");
    }

    /** The books equal the device: reserved bytes are what it has in use, and every live allocation is mapped. */
    static void assertBooksEqualDevice(CachingArena arena, SimulatedDevice device, Map<Long, Long> live,
            String when) {
        assertEquals(device.counters().bytesInUse(), arena.stats().reservedBytes(), "reserved bytes " + when);
        assertEquals(device.virtualMemory().orElseThrow().mappedBytes(), arena.stats().reservedBytes(),
                "mapped bytes " + when);
        for (Map.Entry<Long, Long> e : live.entrySet()) {
            if (!device.isMapped(e.getKey(), e.getValue())) {
                fail("allocation at 0x" + Long.toHexString(e.getKey()) + " (+" + e.getValue()
                        + " bytes) lies on unmapped pages " + when);
            }
        }
    }

    /** Ten one-page (20 MiB) blocks, every other one freed: five free pages that emptyCache unmaps one by one. */
    private static Map<Long, Long> fivePagesFree(CachingArena arena) {
        Map<Long, Long> live = new HashMap<>();
        long[] p = new long[10];
        for (int i = 0; i < 10; i++) {
            p[i] = arena.malloc(20 * MiB);
        }
        for (int i = 0; i < 10; i++) {
            if (i % 2 == 0) {
                arena.free(p[i]);
            } else {
                live.put(p[i], 20 * MiB);
            }
        }
        return live;
    }

    /** Allocates until out of memory, checking that each allocation lies on mapped pages; then frees them. */
    private static void allocateEverythingOnMappedPages(CachingArena arena, SimulatedDevice device,
            Map<Long, Long> live) {
        List<Long> got = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            long p;
            try {
                p = arena.malloc(20 * MiB);
            } catch (OutOfMemoryException e) {
                break;
            }
            got.add(p);
            live.put(p, 20 * MiB);
            assertBooksEqualDevice(arena, device, live, "after allocation " + i);
        }
        for (long p : got) {
            arena.free(p);
            live.remove(p);
        }
    }

    private static void releaseAllAndClose(CachingArena arena, SimulatedDevice device, Map<Long, Long> live) {
        device.clearFaults();
        for (long p : live.keySet()) {
            arena.free(p);
        }
        live.clear();
        arena.emptyCache();
        CachingInvariants.check(arena);
        assertEquals(0, arena.stats().reservedBytes());
        assertBooksEqualDevice(arena, device, live, "at the end");
        arena.close();
        assertEquals(0, device.counters().bytesInUse(), "nothing stays mapped after close");
        assertEquals(0, device.liveEvents(), "no event leaked");
    }

    @Test
    void aDeviceErrorOnTheSecondOfFivePagesLeavesThatPageUnmappedInTheBooksToo() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB)) {
            CachingArena arena = arena(device);
            Map<Long, Long> live = fivePagesFree(arena);
            InjectedFault boom = new InjectedFault("device error on the second page");
            device.failCallWith(DeviceCall.UNMAP, device.calls(DeviceCall.UNMAP) + 2, boom);
            assertSame(boom, assertThrows(InjectedFault.class, arena::emptyCache));
            CachingInvariants.check(arena);
            assertBooksEqualDevice(arena, device, live, "after the failed emptyCache");
            assertEquals(8 * 20 * MiB, arena.stats().reservedBytes(),
                    "two pages unmapped, the first and the failed one");
            allocateEverythingOnMappedPages(arena, device, live);
            arena.emptyCache();
            assertBooksEqualDevice(arena, device, live, "after a second emptyCache");
            releaseAllAndClose(arena, device, live);
        }
    }

    @Test
    void aFailedWaitBeforeAnUnmapUnmapsNothingAndTheBooksSaySo() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB)) {
            CachingArena arena = arena(device);
            Map<Long, Long> live = fivePagesFree(arena);
            int events = device.liveEvents();
            device.failCallWith(DeviceCall.SYNCHRONIZE, device.calls(DeviceCall.SYNCHRONIZE) + 2,
                    new DeviceException("injected wait failure"));
            assertThrows(DeviceException.class, arena::emptyCache);
            CachingInvariants.check(arena);
            assertBooksEqualDevice(arena, device, live, "after the failed wait");
            assertEquals(9 * 20 * MiB, arena.stats().reservedBytes(), "only the first page was unmapped");
            assertEquals(events, device.liveEvents(), "the wait's event was destroyed");
            allocateEverythingOnMappedPages(arena, device, live);
            releaseAllAndClose(arena, device, live);
        }
    }

    @Test
    void failedEventCreationAndRecordingBeforeAnUnmapLeakNoEvent() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB)) {
            CachingArena arena = arena(device);
            Map<Long, Long> live = fivePagesFree(arena);
            int events = device.liveEvents();
            device.failNextCalls(DeviceCall.CREATE_EVENT, 1);
            assertThrows(DeviceException.class, arena::emptyCache);
            device.failNextCallWith(DeviceCall.RECORD_EVENT, new InjectedFault("record failed"));
            assertThrows(InjectedFault.class, arena::emptyCache);
            assertEquals(events, device.liveEvents(), "no event leaked");
            assertBooksEqualDevice(arena, device, live, "after the failed waits");
            assertEquals(10 * 20 * MiB, arena.stats().reservedBytes(), "nothing was unmapped");
            releaseAllAndClose(arena, device, live);
        }
    }

    /**
     * A seeded random run with device-call failures of every kind (refusals and errors, typed and untyped) armed at
     * random: after every operation the books equal the device, every exception is one the contract allows, and
     * nothing leaks at close.
     */
    @Test
    void randomRunWithDeviceFailuresKeepsTheBooksEqualToTheDevice() {
        runWithFaults(0x15_0007L, 30_000);
    }

    static void runWithFaults(long seed, int operations) {
        Random r = new Random(seed);
        DeviceCall[] kinds = DeviceCall.values();
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB)
                .eventCompletion(EventCompletion.MANUAL).build()) {
            CachingArena arena = arena(device);
            DeviceStream[] streams = {DeviceStream.DEFAULT, device.createStream(), device.createStream()};
            Map<Long, Long> live = new HashMap<>();
            List<Long> order = new ArrayList<>();
            int faults = 0;
            for (int op = 0; op < operations; op++) {
                if (r.nextInt(20) == 0) {
                    DeviceCall kind = kinds[r.nextInt(kinds.length)];
                    long n = device.calls(kind) + 1 + r.nextInt(3);
                    switch (r.nextInt(3)) {
                        case 0 -> device.failCall(kind, n);
                        case 1 -> device.failCallWith(kind, n, new DeviceException("injected " + kind));
                        default -> device.failCallWith(kind, n, new InjectedFault("untyped " + kind));
                    }
                }
                int what = r.nextInt(100);
                try {
                    if (what < 50 || order.isEmpty()) {
                        long size = 1 + r.nextLong(1L << (1 + r.nextInt(27)));
                        long p = arena.malloc(size, streams[r.nextInt(streams.length)]);
                        live.put(p, size);
                        order.add(p);
                    } else if (what < 90) {
                        int i = r.nextInt(order.size());
                        long p = order.get(i);
                        arena.free(p);
                        order.set(i, order.get(order.size() - 1));
                        order.remove(order.size() - 1);
                        live.remove(p);
                    } else if (what < 95) {
                        arena.recordStream(order.get(r.nextInt(order.size())), streams[r.nextInt(streams.length)]);
                    } else if (what < 98) {
                        arena.emptyCache();
                    } else {
                        device.completeAll();
                    }
                } catch (OutOfMemoryException | DeviceException | InjectedFault expected) {
                    faults++;
                } catch (RuntimeException e) {
                    throw new AssertionError("operation " + op + " threw what the contract does not allow", e);
                }
                assertBooksEqualDevice(arena, device, live, "after operation " + op);
                if (op % 500 == 0) {
                    CachingInvariants.check(arena);
                }
            }
            assertTrue(faults > 100, "faults were met: " + faults);
            device.completeAll();
            releaseAllAndClose(arena, device, live);
        }
    }
}
