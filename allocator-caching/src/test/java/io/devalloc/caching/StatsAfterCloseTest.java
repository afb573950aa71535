package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.*;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 15, defect 4: after {@code close()} returned everything, PyTorch's {@code memory_stats()} describe what the
 * allocator holds (every {@code current} 0) and keep the peaks and the cumulative figures; before the fix they still
 * showed the live and reserved bytes (active 2, allocated 5,243,904, reserved 23,068,672).
 */
class StatsAfterCloseTest {
    static final long MiB = 1L << 20, GiB = 1L << 30;

    @ParameterizedTest
    @ValueSource(strings = {"", "expandable_segments:True", "max_split_size_mb:128,roundup_power2_divisions:4"})
    void everyCurrentFigureIsZeroAfterClose(String config) {
        SimulatedDevice d = SimulatedDevice.builder().capacity(80 * GiB).eventCompletion(EventCompletion.MANUAL)
                .build();
        CachingArena a = (CachingArena) new CachingAllocatorProvider(Map.of()).create(d, config);
        DeviceStream side = d.createStream();
        a.malloc(5 * MiB, DeviceStream.DEFAULT);
        a.malloc(700, DeviceStream.DEFAULT);
        long cached = a.malloc(200 * MiB, DeviceStream.DEFAULT);   // oversize under max_split_size_mb:128
        a.free(cached);
        long pending = a.malloc(3000, DeviceStream.DEFAULT);
        a.recordStream(pending, side);
        a.free(pending);                                            // waits on side's event
        Map<String, Long> open = a.memoryStats();
        long deviceFreesOpen = a.stats().deviceFrees();
        assertTrue(open.get("reserved_bytes.all.current") > 0);

        a.close();
        assertEquals(0, d.liveAllocations(), "close gave everything back");
        Map<String, Long> closed = a.memoryStats();
        for (Map.Entry<String, Long> e : closed.entrySet()) {
            String key = e.getKey();
            if (key.endsWith(".current")) {
                assertEquals(0L, e.getValue(), key + " after close");
            } else if (key.endsWith(".peak") || key.endsWith(".allocated") || key.endsWith(".freed")
                    || key.equals("num_device_alloc") || key.startsWith("num_alloc") || key.equals("num_ooms")
                    || key.equals("max_split_size")) {
                assertEquals(open.get(key), e.getValue(), key + " stays as it was");
            }
        }
        // The close's device frees count in num_device_free (its unmaps of expandable segments count only in the
        // common deviceFrees, as they always have).
        assertTrue(closed.get("num_device_free") >= open.get("num_device_free"));
        assertTrue(a.stats().deviceFrees() > deviceFreesOpen, "the close's device frees count");
        assertEquals(0, a.stats().reservedBytes());
        assertEquals(0, a.stats().largestFreeBlock());
        assertTrue(a.snapshot().segments().isEmpty());
        assertTrue(a.memorySummary(false).contains("|"), "the summary still renders");
    }
}
