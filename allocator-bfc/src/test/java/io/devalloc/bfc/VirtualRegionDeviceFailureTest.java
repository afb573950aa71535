package io.devalloc.bfc;

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
 * Issue 15, defect 7 for BFC's virtual-memory regions: after a device failure (an unmap while giving a region
 * back, a map while extending, an event) the arena's books equal the device: the pool is what the device has
 * mapped, every live allocation lies on mapped memory, nothing leaks at close.
 */
class VirtualRegionDeviceFailureTest {

    static final long MiB = 1L << 20;
    static final long GiB = 1L << 30;

    /** A failure that is not a {@link DeviceException}: what a non-conforming adapter may throw. */
    static final class InjectedFault extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InjectedFault(String message) {
            super(message);
        }
    }

    static BfcArena arena(SimulatedDevice device, String config) {
        return (BfcArena) new BfcAllocatorProvider(Map.of()).create(device, config);
    }

    static void assertBooksEqualDevice(BfcArena arena, SimulatedDevice device, Map<Long, Long> live, String when) {
        assertEquals(device.counters().bytesInUse(), arena.stats().reservedBytes(), "reserved bytes " + when);
        for (Map.Entry<Long, Long> e : live.entrySet()) {
            if (!device.isMapped(e.getKey(), e.getValue())) {
                fail("allocation at 0x" + Long.toHexString(e.getKey()) + " (+" + e.getValue()
                        + " bytes) lies on unmapped memory " + when);
            }
        }
    }

    @Test
    void aFailedUnmapOfAFreeRegionForgetsTheRegionAsTheDeviceDid() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB)) {
            BfcArena arena = arena(device, "allow_growth:true,virtual_memory:true,retry_timeout_ms:0");
            long a = arena.malloc(30 * MiB);
            long b = arena.malloc(50 * MiB);
            arena.free(a);
            arena.free(b);
            long reserved = arena.stats().reservedBytes();
            assertTrue(reserved > 0);
            InjectedFault boom = new InjectedFault("device error while unmapping the region");
            device.failNextCallWith(DeviceCall.UNMAP, boom);
            assertSame(boom, assertThrows(InjectedFault.class, arena::deallocateFreeRegions));
            Map<Long, Long> live = new HashMap<>();
            assertBooksEqualDevice(arena, device, live, "after the failed unmap");
            assertEquals(0, arena.stats().reservedBytes(), "the region is gone, as on the device");
            BfcArenaInvariants.check(arena);
            long c = arena.malloc(40 * MiB);
            live.put(c, 40 * MiB);
            assertBooksEqualDevice(arena, device, live, "after the next allocation");
            arena.free(c);
            arena.close();
            assertEquals(0, device.counters().bytesInUse());
        }
    }

    @Test
    void randomRunWithDeviceFailuresOnVirtualMemory() {
        runWithFaults("allow_growth:true,virtual_memory:true,retry_timeout_ms:0", 0x15_0007L, 30_000);
    }

    @Test
    void randomRunWithDeviceFailuresOnVirtualMemoryTimestamped() {
        runWithFaults("allow_growth:true,virtual_memory:true,timestamped:true,retry_timeout_ms:0", 0x15_0008L, 20_000);
    }

    static void runWithFaults(String config, long seed, int operations) {
        Random r = new Random(seed);
        DeviceCall[] kinds = DeviceCall.values();
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB)
                .eventCompletion(EventCompletion.MANUAL).build()) {
            BfcArena arena = arena(device, config);
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
                        arena.deallocateFreeRegions();
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
                    BfcArenaInvariants.check(arena);
                }
            }
            assertTrue(faults > 100, "faults were met: " + faults);
            device.clearFaults();
            device.completeAll();
            for (long p : live.keySet()) {
                arena.free(p);
            }
            arena.deallocateFreeRegions();
            BfcArenaInvariants.check(arena);
            arena.close();
            assertEquals(0, device.counters().bytesInUse(), "nothing stays mapped after close");
            assertEquals(0, device.liveEvents(), "no event leaked");
        }
    }
}
