package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.spi.EnvironmentConfig;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CachingAllocatorProviderTest {

    /** What the tools ask: a PyTorch port, its variable unless a key of devalloc's own is set, PyTorch's caveats. */
    @Test
    void itTellsTheToolsItPortsPyTorchAndWhereItsSettingGoes() {
        CachingAllocatorProvider p = new CachingAllocatorProvider(Map.of());
        assertTrue(p.portsPyTorch());
        assertEquals("", p.replayConfig(""));
        assertEquals(Optional.of("PYTORCH_CUDA_ALLOC_CONF"), p.frameworkVariable("expandable_segments:True"));
        assertEquals(Optional.empty(), p.frameworkVariable("max_split_size_mb:64,search_pool_after_release:True"));
        assertEquals(List.of(), p.caveats("max_split_size_mb:64"));
        assertEquals(3, p.caveats("expandable_segments:True").size());
        assertTrue(p.caveats("garbage_collection_threshold:0.6").getFirst().contains("pytorch#106660"));
        // With a fraction set the threshold acts, so only the fraction's caveat stands.
        assertEquals(1, p.caveats("per_process_memory_fraction:0.5,garbage_collection_threshold:0.6").size());
    }

    @Test
    void anEmptyConfigurationFallsBackToPytorchsEnvironmentVariable() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            CachingAllocatorProvider p = new CachingAllocatorProvider(Map.of(
                    "PYTORCH_ALLOC_CONF", "max_split_size_mb:30", "PYTORCH_CUDA_ALLOC_CONF",
                    "expandable_segments:True"));
            try (CachingAllocator a = p.create(d, "")) {
                assertTrue(a.options().expandableSegments(), "PYTORCH_CUDA_ALLOC_CONF wins over the generic one");
                assertEquals(Long.MAX_VALUE, a.options().maxSplitSize());
            }
            try (CachingAllocator a = p.create(d, "max_split_size_mb:40")) {
                assertFalse(a.options().expandableSegments(), "an explicit configuration wins over the environment");
                assertEquals(40L << 20, a.options().maxSplitSize());
            }
        }
    }

    @Test
    void saysWhenTheConfigurationComesFromTheEnvironmentAndFromWhichVariable() {
        CachingAllocatorProvider p = new CachingAllocatorProvider(Map.of(
                "PYTORCH_ALLOC_CONF", "max_split_size_mb:30", "PYTORCH_HIP_ALLOC_CONF", " max_split_size_mb:128 "));
        assertEquals(List.of(new EnvironmentConfig("PYTORCH_HIP_ALLOC_CONF", "max_split_size_mb:128")),
                p.configFromEnvironment(""), "the first variable set, as create reads it");
        assertEquals(p.configFromEnvironment(""), p.configFromEnvironment(null));
        assertEquals(p.configFromEnvironment(""), p.configFromEnvironment("  "));
        assertEquals(List.of(), p.configFromEnvironment("expandable_segments:True"), "an explicit configuration wins");
        assertEquals(List.of(new EnvironmentConfig("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")),
                new CachingAllocatorProvider(Map.of("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True",
                        "PYTORCH_ALLOC_CONF", "max_split_size_mb:30")).configFromEnvironment(""));
        assertEquals(List.of(), new CachingAllocatorProvider(Map.of("PYTORCH_CUDA_ALLOC_CONF", " "))
                .configFromEnvironment(""), "a blank variable gives the defaults");
        assertEquals(List.of(), new CachingAllocatorProvider(Map.of()).configFromEnvironment(""));
    }

    @Test
    void aBadEnvironmentValueIsRefusedWithPytorchsMessage() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            CachingAllocatorProvider p = new CachingAllocatorProvider(Map.of("PYTORCH_CUDA_ALLOC_CONF",
                    "max_split_size_mb:2"));
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class, () -> p.create(d, ""));
            assertTrue(e.getMessage().contains("max_split_size_mb too small, must be >= 20"), e.getMessage());
        }
    }

    @Test
    void cudaMallocAsyncIsRefusedWithWhatToDoInstead() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            // Issue 15, defect 9: a configuration error, typed as such (was a plain IllegalArgumentException).
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> new CachingAllocatorProvider(Map.of()).create(d, "backend:cudaMallocAsync"));
            assertTrue(e.getMessage().contains("backend:native"), e.getMessage());
            assertEquals("backend", e.key());
            assertEquals("cudaMallocAsync", e.value());
        }
    }

    @Test
    void withoutVirtualMemoryExpandableSegmentsAreTurnedOffAsInPytorch() {
        try (SimulatedDevice d = SimulatedDevice.builder().virtualMemory(false).build();
             CachingAllocator a = new CachingAllocatorProvider(Map.of()).create(d, "expandable_segments:True")) {
            assertFalse(a.options().expandableSegments());
            a.free(a.malloc(1000));
            assertEquals(1, a.memoryStats().get("num_device_alloc"), "a plain 2 MiB segment");
        }
    }

    @Test
    void theDefaultGridStartsWithTheDefaultsSpansTheLargestRequestAndEveryEntryIsAccepted() {
        CachingAllocatorProvider p = new CachingAllocatorProvider(Map.of());
        List<String> grid = p.defaultGrid(300 * ByteSize.MiB);
        assertEquals("", grid.getFirst());
        assertTrue(grid.contains("expandable_segments:True"), grid.toString());
        assertTrue(grid.contains("max_split_size_mb:20"), grid.toString());
        assertTrue(grid.contains("max_split_size_mb:512"), "one threshold past the largest request: " + grid);
        assertFalse(grid.contains("max_split_size_mb:1024"), grid.toString());
        assertTrue(grid.contains("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]"), grid.toString());
        assertTrue(grid.contains("garbage_collection_threshold:0.6,per_process_memory_fraction:0.99"), grid.toString());
        assertTrue(grid.contains("expandable_segments:True,roundup_power2_divisions:4"), grid.toString());
        assertEquals(grid.size(), grid.stream().distinct().count(), "no setting twice: " + grid);
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            for (String config : grid) {
                try (CachingAllocator a = p.create(d, config)) {
                    assertEquals(config, a.options().configText().strip(), "accepted as written");
                }
            }
        }
        assertTrue(p.defaultGrid(0).contains("max_split_size_mb:64"), "a threshold of 64 MiB when nothing is known");
        assertThrows(IllegalArgumentException.class, () -> p.defaultGrid(-1));
    }
}
