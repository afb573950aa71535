package io.devalloc.caching.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.stats.PoolUsage;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.OwnEventLog;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What caching-host itself tells its listener (the retry after returning the cache, releases), and its gauges. */
class HostObservabilityTest {

    private final SimulatedDevice device = SimulatedDevice.ofCapacity(64 * ByteSize.MiB);
    private final OwnEventLog listener = new OwnEventLog();

    private HostCachingAllocator host(String config) {
        CachingHostAllocatorProvider provider = new CachingHostAllocatorProvider();
        return provider.create(new AllocatorSetup(device, AllocatorConfig.parse(config, provider.configSchema()),
                false, listener));
    }

    @Test
    void emptyCacheIsToldWithTheBytesGivenBack() {
        try (HostCachingAllocator a = host("")) {
            a.free(a.malloc(3 * ByteSize.MiB));
            a.free(a.malloc(ByteSize.MiB));
            a.emptyCache();
            a.emptyCache();
            assertEquals(List.of("released " + 5 * ByteSize.MiB, "released 0"), listener.events());
        }
    }

    @Test
    void aRefusedMallocRetriedAfterReturningTheCacheIsTold() {
        try (HostCachingAllocator a = host("")) {
            a.free(a.malloc(32 * ByteSize.MiB));
            // 48 MiB rounds to 64 MiB; the device has 32 MiB left: the cached 32 MiB go back, then it fits.
            long b = a.malloc(48 * ByteSize.MiB);
            assertEquals(List.of("retried " + 48 * ByteSize.MiB + " 1 CACHE_RELEASED", "released " + 32 * ByteSize.MiB),
                    listener.events());
            assertEquals(1, a.stats().allocationRetries());
            a.free(b);
        }
    }

    @Test
    void activeCountsTheBlocksWaitingOnEvents() {
        try (HostCachingAllocator a = host("")) {
            device.setEventCompletion(EventCompletion.MANUAL);
            DeviceStream copy = device.createStream();
            long live = a.malloc(3 * ByteSize.MiB);
            long waiting = a.malloc(ByteSize.MiB);
            a.recordStream(waiting, copy);
            a.free(waiting);
            a.free(a.malloc(2 * ByteSize.MiB));
            PoolUsage all = a.memoryUsage().get(0);
            AllocatorStats s = a.stats();
            assertEquals(1, a.memoryUsage().size());
            assertEquals(s.reservedBytes(), all.reservedBytes());
            assertEquals(4 * ByteSize.MiB, all.allocatedBytes());
            assertEquals(s.allocatedBytes(), all.allocatedBytes());
            assertEquals(s.requestedBytes(), all.requestedBytes());
            assertEquals(5 * ByteSize.MiB, all.activeBytes(), "the block whose free waits on the copy stream");
            assertEquals(a.hostMemoryStats().get("active_bytes.current"), all.activeBytes());
            assertEquals(0, all.inactiveSplitBytes());
            device.completeAll();
            a.free(live);
            a.free(a.malloc(4096)); // a malloc processes the completed events
            assertEquals(0, a.memoryUsage().get(0).activeBytes(), "the waiting free completed");
        }
    }

    @Test
    void inactiveSplitIsTheFreePiecesOfTheReserveSegment() {
        try (HostCachingAllocator a = host("pinned_reserve_segment_size_mb:16")) {
            long first = a.malloc(ByteSize.MiB);
            long second = a.malloc(2 * ByteSize.MiB);
            a.free(first);
            PoolUsage all = a.memoryUsage().get(0);
            assertEquals(16 * ByteSize.MiB, all.reservedBytes());
            assertEquals(2 * ByteSize.MiB, all.allocatedBytes());
            assertEquals(ByteSize.MiB, all.inactiveSplitBytes(), "the freed piece; the uncarved tail is no piece");
            a.free(second);
            assertEquals(3 * ByteSize.MiB, a.memoryUsage().get(0).inactiveSplitBytes());
        }
    }
}
