package io.devalloc.caching.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingConfig;
import io.devalloc.sim.SimulatedDevice;
import java.util.List;
import org.junit.jupiter.api.Test;

class CachingHostAllocatorProviderTest {

    @Test
    void isFoundByServiceLoaderNextToCaching() {
        AllocatorRegistry registry = AllocatorRegistry.load();
        assertTrue(registry.names().contains("caching-host"), registry.names().toString());
        assertTrue(registry.names().contains("caching"));
        AllocatorProvider p = registry.get("caching-host");
        assertInstanceOf(CachingHostAllocatorProvider.class, p);
        assertTrue(p.description().contains("pinned-host"), p.description());
        assertEquals(CachingHostOptions.SCHEMA, p.configSchema());
    }

    @Test
    void opensThroughDeviceAllocatorsAndOwnsItsDevice() {
        DeviceAllocator a = DeviceAllocators.open("sim:1GiB", "caching-host", "pinned_round_threshold_mb:16");
        HostCachingAllocator host = assertInstanceOf(HostCachingAllocator.class, a);
        assertEquals("caching-host", a.name());
        assertEquals(16 * ByteSize.MiB, host.options().roundThreshold());
        assertEquals("pinned_round_threshold_mb:16", host.options().configText());
        a.free(a.malloc(21_390_950));
        assertEquals(22 * ByteSize.MiB, a.stats().reservedBytes());
        a.close();
        assertThrows(IllegalStateException.class, () -> a.device().memoryInfo(), "the device was closed with it");
    }

    @Test
    void badConfigurationIsRefusedNamingTheAllocator() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> new CachingHostAllocatorProvider().create(d, "expandable_segments:True"));
            assertTrue(e.getMessage().contains("allocator 'caching-host'"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new CachingHostAllocatorProvider().create(
                    new AllocatorSetup(d, AllocatorConfig.defaults(CachingConfig.SCHEMA), false)));
            assertEquals(0, d.liveAllocations());
        }
    }

    @Test
    void staticFactoriesLeaveTheDeviceToTheCaller() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            try (HostCachingAllocator a = CachingHostAllocatorProvider.create(d)) {
                assertEquals(CachingHostOptions.defaults(), a.options());
                a.malloc(100);
                assertEquals("allocator 'caching-host' on sim:0", a.toString());
            }
            try (HostCachingAllocator a = CachingHostAllocatorProvider.create(d,
                    CachingHostOptions.withRoundThresholdMb(4))) {
                assertEquals(4 * ByteSize.MiB, a.options().roundThreshold());
            }
            assertFalse(d.memoryInfo().totalBytes() == 0, "still open");
            assertEquals(0, d.liveAllocations());
        }
    }

    @Test
    void theDefaultGridSweepsRoundingAndCachingPastTheLargestRequestAndEveryEntryIsAccepted() {
        CachingHostAllocatorProvider p = new CachingHostAllocatorProvider();
        List<String> grid = p.defaultGrid(100 * ByteSize.MiB);
        assertEquals("", grid.getFirst());
        assertTrue(grid.contains("pinned_max_round_threshold_mb:256"), "one value past the largest request: " + grid);
        assertFalse(grid.contains("pinned_max_round_threshold_mb:1024"), grid.toString());
        assertTrue(grid.contains("pinned_max_cached_size_mb:4"), grid.toString());
        assertTrue(grid.contains("pinned_max_round_threshold_mb:16,pinned_max_cached_size_mb:16"), grid.toString());
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            for (String config : grid) {
                p.create(d, config).close();
            }
        }
        assertThrows(IllegalArgumentException.class, () -> p.defaultGrid(-1));
    }
}
