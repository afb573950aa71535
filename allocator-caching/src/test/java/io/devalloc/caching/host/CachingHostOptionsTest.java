package io.devalloc.caching.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Keys, defaults, PyTorch's messages and the size rule of allocator 'caching-host'. */
class CachingHostOptionsTest {

    private static final long MiB = ByteSize.MiB;

    private static void assertRefused(String config, String text) {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> CachingHostOptions.parse(config), config);
        assertTrue(e.getMessage().contains(text), () -> "'" + config + "': " + e.getMessage());
    }

    @Test
    void defaultsArePyTorchs() {
        CachingHostOptions o = CachingHostOptions.defaults();
        assertEquals(0, o.roundThreshold());
        assertEquals(0, o.reserveSegmentSize());
        assertFalse(o.useBackgroundThreads());
        assertEquals(1, o.numRegisterThreads());
        assertEquals(o, CachingHostOptions.parse(""));
        assertEquals(o, CachingHostOptions.parse(null));
        assertEquals("allocator 'caching-host'", CachingHostOptions.SCHEMA.owner());
    }

    @Test
    void everyKeyParses() {
        CachingHostOptions o = CachingHostOptions.parse("pinned_round_threshold_mb:64, pinned_reserve_segment_size_mb:8,"
                + "pinned_use_background_threads:True,pinned_use_cuda_host_register:False,"
                + "pinned_use_hip_host_register:False,pinned_num_register_threads:8");
        assertEquals(64 * MiB, o.roundThreshold());
        assertEquals(64, o.roundThresholdMb());
        assertEquals(8 * MiB, o.reserveSegmentSize());
        assertTrue(o.useBackgroundThreads());
        assertEquals(8, o.numRegisterThreads());
        assertEquals(CachingHostOptions.withRoundThresholdMb(16).roundThreshold(), 16 * MiB);
    }

    @Test
    void pytorchsRulesAndMessages() {
        assertRefused("pinned_reserve_segment_size_mb:0", "Pinned reserve segment size has to be greater than 0");
        assertRefused("pinned_num_register_threads:3", "Number of register threads has to be power of 2, got 3");
        assertRefused("pinned_num_register_threads:256",
                "Number of register threads should be less than or equal to 128, got 256");
        assertRefused("pinned_use_background_threads:true", "Expected 'True' or 'False'");
        assertRefused("pinned_round_threshold_mb:-1", "pinned_round_threshold_mb");
        assertRefused("pinned_round_threshold_mb:" + (CachingHostOptions.MAX_THRESHOLD_MB + 1), "a whole number from 0");
        assertRefused("max_split_size_mb:20", "unknown configuration key 'max_split_size_mb' for allocator"
                + " 'caching-host'; accepted keys: pinned_round_threshold_mb, pinned_reserve_segment_size_mb");
        assertRefused("pinned_round_threshold_mb:1,pinned_round_threshold_mb:2", "given twice");
    }

    @Test
    void cudaHostRegisterIsRefusedWithTheReason() {
        for (String key : new String[] {"pinned_use_cuda_host_register", "pinned_use_hip_host_register"}) {
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> CachingHostOptions.parse(key + ":True"));
            assertEquals(key, e.key());
            assertTrue(e.getMessage().contains("cudaHostRegister") && e.getMessage().contains("mlock"), e.getMessage());
        }
    }

    @Test
    void aConfigurationParsedByTheRegistryGivesTheSameOptionsWithCanonicalText() {
        AllocatorConfig config = AllocatorConfig.parse("pinned_round_threshold_mb:16,pinned_use_background_threads:True",
                CachingHostOptions.SCHEMA);
        CachingHostOptions o = CachingHostOptions.from(config);
        assertEquals(16 * MiB, o.roundThreshold());
        assertEquals("pinned_round_threshold_mb:16,pinned_use_background_threads:True", o.configText());
        assertEquals(o, CachingHostOptions.parse(o.configText()));
        assertThrows(IllegalArgumentException.class,
                () -> CachingHostOptions.from(AllocatorConfig.defaults(CachingOptions.SCHEMA)));
    }

    @Test
    void handBuiltOptionsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new CachingHostOptions(-1, 0, false, 1, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingHostOptions(0, -1, false, 1, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingHostOptions(0, 0, false, 3, ""));
        assertThrows(NullPointerException.class, () -> new CachingHostOptions(0, 0, false, 1, null));
    }

    @ParameterizedTest(name = "{0} B -> {1} B (threshold {2} MiB)")
    @CsvSource({
            "0, 0, 0", "1, 1, 0", "2, 2, 0", "3, 4, 0", "1000, 1024, 0", "40960, 65536, 0", "81920, 131072, 0",
            "65536, 65536, 0", "21390950, 33554432, 0", "4611686018427387904, 4611686018427387904, 0",
            // With a 16 MiB threshold: powers of two up to 16 MiB, 2 MiB multiples above.
            "1000, 1024, 16", "9437184, 16777216, 16", "16777216, 16777216, 16", "16777217, 18874368, 16",
            "21390950, 23068672, 16", "32505856, 33554432, 16", "34603008, 35651584, 16", "68157440, 69206016, 16",
            "4611686018427387904, 4611686018427387904, 16",
            // A 1 MiB threshold: 1 MiB + 1 byte already goes to the 2 MiB rule.
            "1048576, 1048576, 1", "1048577, 2097152, 1", "5242880, 6291456, 1"})
    void roundSize(long size, long rounded, long thresholdMb) {
        assertEquals(rounded, CachingHostOptions.withRoundThresholdMb(thresholdMb).roundSize(size));
    }

    @Test
    void roundSizeRefusesWhatCannotBeRounded() {
        CachingHostOptions o = CachingHostOptions.defaults();
        assertThrows(IllegalArgumentException.class, () -> o.roundSize(-1));
        assertThrows(IllegalArgumentException.class, () -> o.roundSize((1L << 62) + 1));
    }
}
