package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertThrows;

import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 15, defect 9: every bad configuration string given to {@code caching} is an
 * {@link InvalidConfigurationException} (backend:cudaMallocAsync was a plain IllegalArgumentException).
 */
class ConfigurationErrorTypesTest {

    @ParameterizedTest
    @ValueSource(strings = {"backend:cudaMallocAsync", "backend:foo", "max_split_size_mb:2", "large_segment_size_mb:1",
            "roundup_power2_divisions:3", "roundup_power2_divisions:[64:3]", "roundup_power2_divisions:[63:2]",
            "roundup_power2_divisions:[64:2", "garbage_collection_threshold:2", "per_process_memory_fraction:2",
            "pinned_num_register_threads:3", "expandable_segments:maybe", "unknown_key:1",
            "max_split_size_mb:40,max_split_size_mb:40"})
    void badStringsAreConfigurationErrors(String config) {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            assertThrows(InvalidConfigurationException.class,
                    () -> new CachingAllocatorProvider(Map.of()).create(d, config).close(), config);
        }
    }
}
