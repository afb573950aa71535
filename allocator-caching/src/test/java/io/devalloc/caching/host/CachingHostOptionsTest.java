package io.devalloc.caching.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

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
        assertEquals(CachingHostOptions.UNLIMITED, o.maxRoundThreshold());
        assertEquals(CachingHostOptions.UNLIMITED, o.maxCachedSize());
        assertEquals(-1, o.maxRoundThresholdSetting(), "PyTorch's allocator_settings: SIZE_MAX cast to int64");
        assertEquals(-1, o.maxCachedSizeSetting());
        assertEquals(o, CachingHostOptions.parse(""));
        assertEquals(o, CachingHostOptions.parse(null));
        assertEquals("allocator 'caching-host'", CachingHostOptions.SCHEMA.owner());
    }

    @Test
    void everyKeyParses() {
        CachingHostOptions o = CachingHostOptions.parse(
                "pinned_round_threshold_mb:64, pinned_reserve_segment_size_mb:8,"
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
        assertRefused("pinned_round_threshold_mb:" + (CachingHostOptions.MAX_THRESHOLD_MB + 1),
                "a whole number from 0");
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
        AllocatorConfig config = AllocatorConfig.parse(
                "pinned_round_threshold_mb:16,pinned_use_background_threads:True", CachingHostOptions.SCHEMA);
        CachingHostOptions o = CachingHostOptions.from(config);
        assertEquals(16 * MiB, o.roundThreshold());
        assertEquals("pinned_round_threshold_mb:16,pinned_use_background_threads:True", o.configText());
        assertEquals(o, CachingHostOptions.parse(o.configText()));
        assertThrows(IllegalArgumentException.class,
                () -> CachingHostOptions.from(AllocatorConfig.defaults(CachingConfig.SCHEMA)));
    }

    @Test
    void handBuiltOptionsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new CachingHostOptions(-1, 0, false, 1, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingHostOptions(0, -1, false, 1, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingHostOptions(0, 0, false, 3, ""));
        assertThrows(NullPointerException.class, () -> new CachingHostOptions(0, 0, false, 1, null));
        long unlimited = CachingHostOptions.UNLIMITED;
        assertThrows(IllegalArgumentException.class, () -> new CachingHostOptions(0, -1, unlimited, 0, false, 1, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingHostOptions(0, unlimited, -1, 0, false, 1, ""));
        assertThrows(IllegalArgumentException.class,
                () -> new CachingHostOptions(16 * MiB, 64 * MiB, unlimited, 0, false, 1, ""),
                "devalloc's and PyTorch's round thresholds exclude each other");
        assertEquals(new CachingHostOptions(16 * MiB, 0, false, 1, ""),
                new CachingHostOptions(16 * MiB, unlimited, unlimited, 0, false, 1, ""),
                "the short constructor leaves PyTorch's limits unlimited");
        assertEquals(CachingHostOptions.parse("pinned_round_threshold_mb:16,pinned_max_cached_size_mb:0"),
                new CachingHostOptions(16 * MiB, unlimited, 0, 0, false, 1,
                        "pinned_round_threshold_mb:16,pinned_max_cached_size_mb:0"));
    }

    // ------------------------------------------------------------------------------------ PyTorch 2.10+'s limits

    @Test
    void pytorchsPinnedLimitsParseAsWholeMegabytes() {
        CachingHostOptions o =
                CachingHostOptions.parse("pinned_max_round_threshold_mb:64,pinned_max_cached_size_mb:1024");
        assertEquals(64 * MiB, o.maxRoundThreshold());
        assertEquals(1024 * MiB, o.maxCachedSize());
        assertEquals(0, o.roundThreshold(), "devalloc's threshold stays off");
        assertEquals(64 * MiB, o.maxRoundThresholdSetting(), "bytes in PyTorch's allocator_settings");
        assertEquals(1024 * MiB, o.maxCachedSizeSetting());

        CachingHostOptions zero =
                CachingHostOptions.parse("pinned_max_round_threshold_mb:0,pinned_max_cached_size_mb:0");
        assertEquals(0, zero.maxRoundThreshold(), "0 is accepted, as upstream");
        assertEquals(0, zero.maxCachedSize());
        assertEquals(0, zero.maxCachedSizeSetting());

        long clampedBytes = CachingHostOptions.MAX_LIMIT_MB * MiB;
        for (String huge : new String[] {"8796093022208", "9223372036854775807", "18446744073709551615"}) {
            CachingHostOptions c = CachingHostOptions.parse("pinned_max_cached_size_mb:" + huge);
            assertEquals(clampedBytes, c.maxCachedSize(), huge + " clamps to Long.MAX_VALUE / 1 MiB MiB");
        }
        assertEquals(8_796_093_022_207L, CachingHostOptions.MAX_LIMIT_MB);
        assertEquals(8_796_093_022_207L * MiB, CachingHostOptions.parse("pinned_max_round_threshold_mb:8796093022207")
                .maxRoundThreshold(), "the largest value is kept as given");
    }

    @ParameterizedTest(name = "{0}:''{1}'' is refused")
    @CsvSource({
            "pinned_max_round_threshold_mb, -1", "pinned_max_round_threshold_mb, 1.5",
            "pinned_max_round_threshold_mb, abc", "pinned_max_round_threshold_mb, 0x10",
            "pinned_max_round_threshold_mb, +5", "pinned_max_cached_size_mb, 1e3", "pinned_max_cached_size_mb, 64MiB",
            "pinned_max_cached_size_mb, True", "pinned_max_cached_size_mb, 18446744073709551616"})
    void badLimitValuesAreRefusedNamingKeyAndValue(String key, String value) {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> CachingHostOptions.parse(key + ":" + value));
        assertEquals(key, e.key());
        assertEquals(value, e.value());
        assertTrue(e.getMessage().contains("bad value '" + value + "' for configuration key '" + key
                + "' of allocator 'caching-host'") && e.getMessage().contains("a whole number of MiB from 0"),
                e.getMessage());
    }

    @Test
    void aLimitBeyondSixtyFourBitsIsOutOfRangeAsUpstreamsStoull() {
        assertRefused("pinned_max_round_threshold_mb:18446744073709551616", "Value '18446744073709551616' is out of"
                + " range");
        assertRefused("pinned_max_cached_size_mb:", "has no value");
    }

    @Test
    void devallocsAndPytorchsRoundThresholdsAreRefusedTogether() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> CachingHostOptions.parse("pinned_round_threshold_mb:16,pinned_max_round_threshold_mb:64"));
        assertEquals("pinned_max_round_threshold_mb", e.key(), "the key given later");
        assertEquals("64", e.value());
        assertTrue(e.getMessage().startsWith("pinned_round_threshold_mb and pinned_max_round_threshold_mb cannot be"
                + " combined in allocator 'caching-host'")
                && e.getMessage().contains("Keep pinned_max_round_threshold_mb"
                + " for PyTorch's behaviour, or pinned_round_threshold_mb for 2 MiB classes"), e.getMessage());
        InvalidConfigurationException reversed = assertThrows(InvalidConfigurationException.class,
                () -> CachingHostOptions.parse("pinned_max_round_threshold_mb:64,pinned_round_threshold_mb:16"));
        assertEquals("pinned_round_threshold_mb", reversed.key());
        assertEquals("16", reversed.value());

        CachingHostOptions off =
                CachingHostOptions.parse("pinned_round_threshold_mb:0,pinned_max_round_threshold_mb:64");
        assertEquals(64 * MiB, off.maxRoundThreshold(), "devalloc's key at 0 (off) may accompany it");
        CachingHostOptions both = CachingHostOptions.parse("pinned_round_threshold_mb:16,pinned_max_cached_size_mb:64");
        assertEquals(16 * MiB, both.roundThreshold(), "the cached size combines with devalloc's key");
        assertEquals(64 * MiB, both.maxCachedSize());
    }

    @Test
    void theLimitsKeepTheirCanonicalTextThroughTheRegistry() {
        AllocatorConfig config = AllocatorConfig.parse("pinned_max_cached_size_mb:32,pinned_max_round_threshold_mb:8",
                CachingHostOptions.SCHEMA);
        CachingHostOptions o = CachingHostOptions.from(config);
        assertEquals("pinned_max_cached_size_mb:32,pinned_max_round_threshold_mb:8", o.configText());
        assertEquals(o, CachingHostOptions.parse(o.configText()));
        assertThrows(InvalidConfigurationException.class, () -> CachingHostOptions.from(AllocatorConfig.parse(
                "pinned_round_threshold_mb:4,pinned_max_round_threshold_mb:8", CachingHostOptions.SCHEMA)));
    }

    @Test
    void upstreamsPrecedenceWarningIsLoggedOncePerParseWhenTheThresholdIsLarger() {
        assumeTrue(LoggerFactory.getILoggerFactory().getClass().getName()
                .equals("org.slf4j.simple.SimpleLoggerFactory"),
                "the warning is read from slf4j-simple's output on System.err");
        String warning = "pinned_max_round_threshold_mb (128) > pinned_max_cached_size_mb (32). The cache size limit"
                + " takes precedence: allocations above pinned_max_cached_size_mb are never rounded up.";
        assertEquals(warning, CachingHostOptions.precedenceWarning(128 * MiB, 32 * MiB));

        String logged = capturedStandardError(() -> CachingHostOptions.parse(
                "pinned_max_round_threshold_mb:128,pinned_max_cached_size_mb:32"));
        assertTrue(logged.contains("WARN") && logged.contains(warning), logged);
        assertEquals(logged.indexOf(warning), logged.lastIndexOf(warning), "once per parse: " + logged);
        String again = capturedStandardError(() -> CachingHostOptions.parse(
                "pinned_max_cached_size_mb:32,pinned_max_round_threshold_mb:128"));
        assertTrue(again.contains(warning), "every parse warns (in either order): " + again);

        for (String quiet : new String[] {"pinned_max_round_threshold_mb:32,pinned_max_cached_size_mb:32",
                "pinned_max_round_threshold_mb:16,pinned_max_cached_size_mb:32", "pinned_max_round_threshold_mb:128",
                "pinned_max_cached_size_mb:0", "pinned_round_threshold_mb:128,pinned_max_cached_size_mb:32"}) {
            String out = capturedStandardError(() -> CachingHostOptions.parse(quiet));
            assertTrue(!out.contains("takes precedence"), quiet + ": " + out);
        }
    }

    private static String capturedStandardError(Runnable action) {
        PrintStream original = System.err;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(original);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "{0} B -> {1} B (max round threshold {2} MiB, max cached size {3} MiB)")
    @CsvSource({
            // pytorch#171662: above the threshold, the request itself.
            "83886080, 83886080, 64, -1", "67108864, 67108864, 64, -1", "67108865, 67108865, 64, -1",
            "41943040, 67108864, 64, -1", "1000, 1024, 64, -1",
            // Threshold 0: nothing rounded (size 1 is its own power of two anyway).
            "1000, 1000, 0, -1", "3, 3, 0, -1", "1, 1, 0, -1", "0, 0, 0, -1",
            // The cached size: above it nothing is rounded, whatever the threshold.
            "41943040, 41943040, 128, 32", "20971520, 33554432, 128, 32", "33554432, 33554432, -1, 32",
            "33554433, 33554433, -1, 32", "1000, 1000, -1, 0",
            "4611686018427387904, 4611686018427387904, 64, -1"})
    void roundSizeWithPytorchsLimits(long size, long rounded, long thresholdMb, long cachedMb) {
        StringBuilder config = new StringBuilder();
        if (thresholdMb >= 0) {
            config.append("pinned_max_round_threshold_mb:").append(thresholdMb);
        }
        if (cachedMb >= 0) {
            config.append(config.isEmpty() ? "" : ",").append("pinned_max_cached_size_mb:").append(cachedMb);
        }
        assertEquals(rounded, CachingHostOptions.parse(config.toString()).roundSize(size), config.toString());
    }

    @ParameterizedTest(name = "devalloc''s 16 MiB threshold with a 64 MiB cached size: {0}")
    @ValueSource(longs = {21_390_950L, 65L << 20, 9L << 20, 64L << 20})
    void devallocsThresholdStopsAtTheCachedSize(long size) {
        CachingHostOptions o = CachingHostOptions.parse("pinned_round_threshold_mb:16,pinned_max_cached_size_mb:64");
        long expected = size > 64 * MiB ? size : CachingHostOptions.withRoundThresholdMb(16).roundSize(size);
        assertEquals(expected, o.roundSize(size));
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
