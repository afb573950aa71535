package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * pytorch#189504: a block whose free waited on an event goes back to the pool in {@code release_cached_blocks}, but
 * the retry then only asks the device, so the allocation fails although a fitting block is free (and the same call
 * made again succeeds). Upstream today behaves so; {@code search_pool_after_release:True} applies the open fix,
 * pytorch#191302: search the pool again before the last device allocation.
 */
class PoolSearchAfterReleaseTest {

    static final long MiB = 1024 * 1024;

    /** A full 100 MiB device with a 20 MiB block of a split segment waiting on a side stream's event. */
    private record Setup(SimulatedDevice device, CachingArena arena, long pending, long[] live) {
    }

    private static Setup setup(String config) {
        SimulatedDevice d = SimulatedDevice.builder().capacity(100 * MiB).eventCompletion(EventCompletion.MANUAL)
                .build();
        CachingArena a = (CachingArena) new CachingAllocatorProvider(Map.of()).create(d, config);
        a.free(a.malloc(40 * MiB, DeviceStream.DEFAULT)); // one 40 MiB segment, cached
        long low = a.malloc(20 * MiB, DeviceStream.DEFAULT); // its lower half
        long high = a.malloc(20 * MiB, DeviceStream.DEFAULT); // its upper half
        DeviceStream side = d.createStream();
        a.recordStream(high, side);
        a.free(high); // waits for the side stream: not in the pool yet
        long rest = a.malloc(60 * MiB, DeviceStream.DEFAULT); // the device is full
        return new Setup(d, a, high, new long[] {low, rest});
    }

    @Test
    void upstreamTodayFailsThenTheSameCallSucceeds() {
        Setup s = setup("");
        assertThrows(OutOfMemoryException.class, () -> s.arena().malloc(20 * MiB, DeviceStream.DEFAULT));
        assertEquals(1, s.arena().memoryStats().get("num_ooms"));
        assertEquals(1, s.arena().memoryStats().get("num_alloc_retries"));
        CachingInvariants.check(s.arena());
        long again = s.arena().malloc(20 * MiB, DeviceStream.DEFAULT);
        assertEquals(s.pending(), again, "the block the failed call returned to the pool");
        CachingInvariants.check(s.arena());
    }

    @Test
    void withTheOptionThePoolIsSearchedAgain() {
        Setup s = setup("search_pool_after_release:True");
        long p = s.arena().malloc(20 * MiB, DeviceStream.DEFAULT);
        assertEquals(s.pending(), p);
        assertEquals(0, s.arena().memoryStats().get("num_ooms"));
        assertEquals(0, s.arena().memoryStats().get("num_alloc_retries"), "found before the retry's device call");
        assertEquals(1, s.arena().memoryStats().get("num_sync_all_streams"));
        assertEquals(100 * MiB, s.arena().stats().reservedBytes(), "nothing released, nothing new");
        CachingInvariants.check(s.arena());
    }

    @Test
    void theOptionParses() {
        assertEquals(false, CachingOptions.defaults().searchPoolAfterRelease());
        assertEquals(true, CachingConfig.parse("search_pool_after_release:True").searchPoolAfterRelease());
    }
}
