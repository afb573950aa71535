package io.devalloc.caching;

import static io.devalloc.api.units.ByteSize.GiB;
import static io.devalloc.api.units.ByteSize.MiB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.sim.SimulatedDevice;
import org.junit.jupiter.api.Test;

/**
 * Issue 15, defect 3: with expandable segments, a segment made for a stream that is later destroyed is released
 * by {@code emptyCache} and by the retry ladder's cache release like any other (the unmap waits for the whole
 * device), and no attempt leaks a device event.
 */
class DestroyedStreamTest {

    @Test
    void anExpandableSegmentOfADestroyedStreamIsReleasedByEmptyCache() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
                CachingArena arena = (CachingArena) new CachingAllocatorProvider().create(device,
                        "expandable_segments:True")) {
            DeviceStream s = device.createStream();
            arena.free(arena.malloc(100 * MiB, s));
            arena.free(arena.malloc(4096, s));
            device.destroyStream(s);
            int events = device.liveEvents();
            arena.emptyCache();
            arena.emptyCache();
            assertEquals(events, device.liveEvents(), "no event leaked");
            assertEquals(0, arena.stats().reservedBytes());
            assertEquals(0, device.virtualMemory().orElseThrow().mappedBytes());
            CachingInvariants.check(arena);
        }
    }

    @Test
    void theRetryLaddersCacheReleaseTakesBackTheDestroyedStreamsPages() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
                CachingArena arena = (CachingArena) new CachingAllocatorProvider().create(device,
                        "expandable_segments:True")) {
            DeviceStream s = device.createStream();
            arena.free(arena.malloc(400 * MiB, s));
            device.destroyStream(s);
            int events = device.liveEvents();
            for (int attempt = 0; attempt < 3; attempt++) {
                long big = arena.malloc(900 * MiB);
                assertNotEquals(0, big);
                assertEquals(events, device.liveEvents(), "no event leaked by attempt " + attempt);
                arena.free(big);
                CachingInvariants.check(arena);
            }
            assertEquals(arena.stats().reservedBytes(), device.virtualMemory().orElseThrow().mappedBytes());
        }
    }
}
