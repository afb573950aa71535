package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.*;

import com.sun.management.ThreadMXBean;
import io.devalloc.api.device.*;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.spi.ForwardingDeviceMemory;
import io.devalloc.api.spi.ForwardingVirtualMemory;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.lang.management.ManagementFactory;
import java.util.*;
import org.junit.jupiter.api.Test;

/** Regressions from review: device failures mid-operation leave the allocator consistent; reentrancy; history. */
class CachingRobustnessTest {
    static final long MiB = 1L << 20, GiB = 1L << 30;

    /** Delegates to a SimulatedDevice; fails chosen calls with DeviceException. */
    static final class Faulty extends ForwardingDeviceMemory {
        final SimulatedDevice d;
        int failFree = -1, failCreateEvent = -1, failSync = -1, failMap = -1, failUnmap = -1;
        int frees, creates, syncs, maps, unmaps;
        /** {address, bytes, pieceBytes} of every successful virtual-memory map, in order. */
        final List<long[]> mapCalls = new ArrayList<>();
        Faulty(SimulatedDevice d) { super(d); this.d = d; }
        @Override public void free(long a) {
            if (frees++ == failFree) throw new DeviceException("injected free");
            d.free(a);
        }
        @Override public DeviceEvent createEvent() {
            if (creates++ == failCreateEvent) throw new DeviceException("injected createEvent");
            return d.createEvent();
        }
        @Override public void synchronizeEvent(DeviceEvent e) {
            if (syncs++ == failSync) throw new DeviceException("injected sync");
            d.synchronizeEvent(e);
        }
        @Override public Optional<VirtualMemory> virtualMemory() {
            return Optional.of(new ForwardingVirtualMemory(d.virtualMemory().orElseThrow()) {
                @Override public boolean map(long a, long b, long piece) {
                    if (maps++ == failMap) throw new DeviceException("injected map");
                    boolean mapped = delegate().map(a, b, piece);
                    if (mapped) mapCalls.add(new long[] {a, b, piece});
                    return mapped;
                }
                @Override public void unmap(long a, long b) {
                    delegate().unmap(a, b);
                    if (unmaps++ == failUnmap) throw new DeviceException("injected unmap (the range is unmapped)");
                }
            });
        }
    }

    static SimulatedDevice sim(EventCompletion ec) {
        return SimulatedDevice.builder().capacity(80 * GiB).eventCompletion(ec).build();
    }

    static CachingArena arena(DeviceMemory dev, String cfg) {
        return (CachingArena) new CachingAllocatorProvider(Map.of()).create(dev, cfg);
    }

    // (1) Regression (found in review, fixed): close() leaks the device segment of a block whose free is still pending
    // on events.
    @Test
    void closeReleasesSegmentsOfPendingFreeBlocks() {
        SimulatedDevice d = sim(EventCompletion.MANUAL);
        CachingArena a = arena(d, "");
        DeviceStream side = d.createStream();
        long p = a.malloc(4 * MiB, DeviceStream.DEFAULT);   // whole 20 MiB segment? no: split. use 12 MiB unsplit
        a.free(p);
        a.emptyCache();
        long q = a.malloc(12 * MiB, DeviceStream.DEFAULT);  // 12 MiB segment, unsplit
        a.recordStream(q, side);
        a.free(q);                                            // pending on side's event
        assertEquals(1, d.liveAllocations());
        a.close();
        assertEquals(0, d.liveAllocations(), "close() left the pending block's segment allocated on the device");
    }

    // (2) Regression (found in review, fixed): device.free throwing inside release_block orphans the block: out of its
    // pool, still counted as reserved.
    @Test
    void freeThrowingDuringEmptyCacheKeepsStateConsistent() {
        Faulty f = new Faulty(sim(EventCompletion.IMMEDIATE));
        CachingArena a = arena(f, "");
        long p = a.malloc(4 * MiB, DeviceStream.DEFAULT);
        a.free(p);
        f.failFree = 0;
        assertThrows(DeviceException.class, a::emptyCache);
        CachingInvariants.check(a);
    }

    // (3) Regression (found in review, fixed): createEvent throwing in insert_events: the block is neither allocated,
    // free, nor pending.
    @Test
    void createEventThrowingInFreeKeepsStateConsistent() {
        Faulty f = new Faulty(sim(EventCompletion.IMMEDIATE));
        CachingArena a = arena(f, "");
        DeviceStream side = f.createStream();
        long p = a.malloc(4 * MiB, DeviceStream.DEFAULT);
        a.recordStream(p, side);
        f.failCreateEvent = 0;
        assertThrows(DeviceException.class, () -> a.free(p));
        CachingInvariants.check(a);
    }

    // (4) Regression (found in review, fixed): synchronizeEvent throwing half-way in synchronize_and_free_events:
    // processed events stay queued, their DeviceEvent goes back to the pool twice.
    @SuppressWarnings("unchecked")
    @Test
    void syncThrowingMidwayDoesNotDoubleProcessEvents() throws Exception {
        Faulty f = new Faulty(sim(EventCompletion.MANUAL));
        CachingArena a = arena(f, "");
        DeviceStream side = f.createStream();
        long p = a.malloc(4 * MiB, DeviceStream.DEFAULT);
        long q = a.malloc(4 * MiB, DeviceStream.DEFAULT);
        a.recordStream(p, side);
        a.recordStream(q, side);
        a.free(p);
        a.free(q);
        f.failSync = 1;
        assertThrows(DeviceException.class, a::emptyCache);
        f.d.completeAll();
        a.malloc(512, DeviceStream.DEFAULT);   // process_events
        var fld = CachingArena.class.getDeclaredField("eventPool");
        fld.setAccessible(true);
        var pool = new ArrayList<>((Collection<Object>) fld.get(a));
        assertEquals(new HashSet<>(pool).size(), pool.size(),
                "the same DeviceEvent is in the event pool twice: " + pool);
        var bt = CachingArena.class.getDeclaredField("blocks");
        bt.setAccessible(true);
        for (int c : ((BlockTable) bt.get(a)).eventCount) assertTrue(c >= 0, "negative event_count");
    }

    // (5) Regression (found in review, fixed): a VirtualMemory.map that throws leaves nothing mapped that the
    // allocator does not know of, and the same request succeeds afterwards.
    @Test
    void mapThrowingLeavesNoStrayMapping() {
        Faulty f = new Faulty(sim(EventCompletion.IMMEDIATE));
        CachingArena a = arena(f, "expandable_segments:True");
        f.failMap = 0;
        assertThrows(DeviceException.class, () -> a.malloc(50 * MiB, DeviceStream.DEFAULT));
        CachingInvariants.check(a);
        assertEquals(0, f.d.virtualMemory().orElseThrow().mappedBytes(), "nothing stays mapped");
        long p = a.malloc(50 * MiB, DeviceStream.DEFAULT);
        a.free(p);
        CachingInvariants.check(a);
    }

    // A map_block run of two map calls (an unmapped page, a free mapped page, then more unmapped space) whose second
    // call throws: the first call's page stays mapped, merged with its free neighbour and cached, as in PyTorch.
    @Test
    void secondMapOfARunThrowing() {
        Faulty f = new Faulty(sim(EventCompletion.IMMEDIATE));
        CachingArena a = arena(f, "expandable_segments:True");
        long x = a.malloc(20 * MiB, DeviceStream.DEFAULT);
        long y = a.malloc(20 * MiB, DeviceStream.DEFAULT);
        long z = a.malloc(20 * MiB, DeviceStream.DEFAULT);
        a.free(x);
        a.emptyCache(); // [0, 20) unmapped
        a.free(z);
        a.emptyCache(); // [40, 60) unmapped
        a.free(y); // [20, 40) free and mapped, between two unmapped ranges
        assertEquals(20 * MiB, f.d.virtualMemory().orElseThrow().mappedBytes());
        f.maps = 0;
        f.failMap = 1;
        assertThrows(DeviceException.class, () -> a.malloc(60 * MiB, DeviceStream.DEFAULT));
        CachingInvariants.check(a);
        assertEquals(40 * MiB, f.d.virtualMemory().orElseThrow().mappedBytes(), "the first map of the run stays");
        assertEquals(40 * MiB, a.stats().reservedBytes());
        long p = a.malloc(60 * MiB, DeviceStream.DEFAULT);
        assertEquals(x, p);
        a.free(p);
        CachingInvariants.check(a);
    }

    // A device failure while unmapping: the port says the range counts as unmapped afterwards, so the allocator
    // accounts it unmapped (never hands it out again), reports the failure, and stays usable.
    @Test
    void anUnmapFailureLeavesTheRangeUnmappedAndTheAllocatorUsable() {
        Faulty f = new Faulty(sim(EventCompletion.IMMEDIATE));
        CachingArena a = arena(f, "expandable_segments:True");
        long x = a.malloc(60 * MiB, DeviceStream.DEFAULT);
        long y = a.malloc(20 * MiB, DeviceStream.DEFAULT);
        a.free(x);
        f.failUnmap = 0;
        assertThrows(DeviceException.class, a::emptyCache);
        CachingInvariants.check(a);
        assertEquals(20 * MiB, a.stats().reservedBytes(), "the failed range is no longer reserved");
        assertEquals(20 * MiB, f.d.virtualMemory().orElseThrow().mappedBytes());
        assertEquals(1, a.memoryStats().get("num_device_free"));
        long again = a.malloc(60 * MiB, DeviceStream.DEFAULT); // maps the range again
        assertEquals(x, again);
        assertEquals(80 * MiB, f.d.virtualMemory().orElseThrow().mappedBytes());
        a.free(again);
        a.free(y);
        a.emptyCache();
        CachingInvariants.check(a);
        assertEquals(0, f.d.virtualMemory().orElseThrow().mappedBytes());
    }

    // (6) Regression (found in review, fixed): restoreAllocation into a free block of an expandable segment created
    // non-expandable pieces (it was then refused; warm starts of expandable traces now restore blocks there, and the
    // pieces stay mapped blocks of the segment).
    @Test
    void restoreAllocationInExpandableSegmentKeepsInvariants() {
        SimulatedDevice d = sim(EventCompletion.IMMEDIATE);
        CachingArena a = arena(d, "expandable_segments:True");
        long p = a.malloc(12 * MiB, DeviceStream.DEFAULT);
        a.free(p);
        a.unwrap(PyTorchStateRestore.class).orElseThrow()
                .restoreAllocation(p + 2 * MiB, 2 * MiB, 2 * MiB, DeviceStream.DEFAULT);
        CachingInvariants.check(a);
        a.emptyCache();
        CachingInvariants.check(a);
        assertEquals(20 * MiB, a.stats().reservedBytes(), "the page under the restored block stays mapped");
        a.free(p + 2 * MiB);
        a.emptyCache();
        CachingInvariants.check(a);
        assertEquals(0, a.stats().reservedBytes());
    }

    // (7) Regression (found in review, fixed): snapshot with history on records a 'snapshot' trace entry upstream
    // (spec §7 table).
    @Test
    void snapshotRecordsSnapshotTrace() {
        CachingArena a = arena(sim(EventCompletion.IMMEDIATE), "");
        a.recordHistory(100);
        a.malloc(1000, DeviceStream.DEFAULT);
        a.snapshotDict();
        List<TraceEntry> h = a.history();
        assertEquals(TraceAction.SNAPSHOT, h.get(h.size() - 1).action(), h.toString());
    }

    // (8) Regression (found in review, fixed): hot path: heap bytes per cached malloc+free pair.
    @Test
    void cachedMallocFreeAllocatesNothing() {
        CachingArena a = arena(sim(EventCompletion.IMMEDIATE), "");
        var mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        for (long size : new long[] {256, 64 << 10, 4 << 20}) {
            for (int i = 0; i < 200_000; i++) a.free(a.malloc(size, DeviceStream.DEFAULT));
            long before = mx.getThreadAllocatedBytes(tid);
            for (int i = 0; i < 100_000; i++) a.free(a.malloc(size, DeviceStream.DEFAULT));
            long bytes = mx.getThreadAllocatedBytes(tid) - before;
            assertTrue(bytes < 100_000, size + ": " + bytes + " B");
        }
    }

    // (9) Regression (found in review, fixed): free-memory callback that closes the allocator re-entrantly: malloc
    // still hands out memory.
    @Test
    void callbackClosingAllocatorDoesNotLeakAllocation() {
        SimulatedDevice d = sim(EventCompletion.IMMEDIATE);
        CachingArena a = arena(d, "");
        a.registerFreeMemoryCallback(() -> { a.close(); return true; });
        assertThrows(IllegalStateException.class, () -> a.malloc(4 * MiB, DeviceStream.DEFAULT));
        assertEquals(0, d.liveAllocations());
    }
}
