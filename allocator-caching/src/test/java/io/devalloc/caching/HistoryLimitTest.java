package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.*;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 15, defect 1: {@code recordHistory(maxEntries)} with a huge limit (PyTorch's default is
 * {@code max_entries=sys.maxsize}) means "grow as needed": the ring starts small and grows up to the limit, and a
 * refused setting leaves the allocator as it was.
 */
class HistoryLimitTest {
    static final long MiB = 1L << 20, GiB = 1L << 30;

    static CachingArena arena(SimulatedDevice d) {
        return (CachingArena) new CachingAllocatorProvider(Map.of()).create(d, "");
    }

    static SimulatedDevice sim() {
        return SimulatedDevice.builder().capacity(80 * GiB).eventCompletion(EventCompletion.IMMEDIATE).build();
    }

    /** Before the fix: OutOfMemoryError (array size exceeds VM limit), then every malloc threw AIOOBE. */
    @Test
    void integerMaxValueMeansGrowAsNeeded() {
        SimulatedDevice d = sim();
        CachingArena a = arena(d);
        a.recordHistory(Integer.MAX_VALUE);
        for (int i = 0; i < 5_000; i++) {
            a.free(a.malloc(1000, DeviceStream.DEFAULT));
        }
        List<TraceEntry> h = a.history();
        assertEquals(1 + 3 * 5_000, h.size(), "segment_alloc and every alloc/free_requested/free_completed kept");
        assertEquals(TraceAction.SEGMENT_ALLOC, h.getFirst().action());
        assertEquals(TraceAction.FREE_COMPLETED, h.getLast().action());
        a.close();
        assertEquals(0, d.liveAllocations(), "close returned every segment");
    }

    /** A ring that grew still drops the oldest entries once it holds maxEntries, in order. */
    @Test
    void growingRingDropsTheOldestOnceFull() {
        CachingArena a = arena(sim());
        int limit = 1_000;   // above the ring's first size, so the ring grows before it wraps
        a.recordHistory(limit);
        long segment = a.malloc(1000, DeviceStream.DEFAULT);   // SEGMENT_ALLOC, ALLOC
        for (int i = 0; i < 2_000; i++) {
            a.free(a.malloc(1000 + i, DeviceStream.DEFAULT));   // ALLOC, FREE_REQUESTED, FREE_COMPLETED
        }
        List<TraceEntry> h = a.history();
        assertEquals(limit, h.size());
        // The newest entry is the last free; entries keep their order across the wrap.
        assertEquals(TraceAction.FREE_COMPLETED, h.getLast().action());
        assertEquals(1000 + 1_999, h.getLast().size());
        for (int k = 1; k < h.size(); k++) {
            assertTrue(h.get(k).timeUs() >= h.get(k - 1).timeUs(), "oldest first at " + k);
        }
        // 2 + 3 * 2000 entries were written (SEGMENT_ALLOC, ALLOC, then ALLOC, FREE_REQUESTED, FREE_COMPLETED per
        // round); the oldest kept is entry 6002 - 1000 = 5002, the third of round 1666: a FREE_COMPLETED of
        // 1000 + 1666.
        TraceAction expectedFirst = TraceAction.FREE_COMPLETED;
        assertEquals(1000 + 1_666, h.getFirst().size());
        assertEquals(expectedFirst, h.getFirst().action());
        a.free(segment);
    }

    /** A refused setting changes nothing: recording keeps its limit and its entries. */
    @Test
    void refusedSettingLeavesHistoryAsItWas() {
        SimulatedDevice d = sim();
        CachingArena a = arena(d);
        a.recordHistory(10);
        long p = a.malloc(1000, DeviceStream.DEFAULT);
        List<TraceEntry> before = a.history();
        assertThrows(IllegalArgumentException.class, () -> a.recordHistory(-1));
        assertEquals(before, a.history());
        a.free(p);
        assertEquals(before.size() + 2, a.history().size(), "still recording with the old limit");
        a.close();
        assertEquals(0, d.liveAllocations());
    }
}
