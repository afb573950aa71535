package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.units.ByteSize;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Keys, defaults, PyTorch's error texts, size rounding and segment sizes (spec sections 2, 7, 8 and 10). */
class CachingOptionsTest {

    private static final long MiB = ByteSize.MiB;
    private static final long GiB = ByteSize.GiB;

    private static CachingOptions divisions(String value) {
        return CachingConfig.parse("roundup_power2_divisions:" + value);
    }

    private static SizeRules rules(CachingOptions options) {
        return new SizeRules(options);
    }

    private static InvalidConfigurationException refused(String config) {
        return assertThrows(InvalidConfigurationException.class, () -> CachingConfig.parse(config), config);
    }

    private static void assertRefused(String config, String upstreamText) {
        InvalidConfigurationException e = refused(config);
        assertTrue(e.getMessage().contains(upstreamText),
                () -> "message of '" + config + "' should contain \"" + upstreamText + "\" but was: " + e.getMessage());
    }

    // ---------------------------------------------------------------------------------------------- defaults

    @Test
    void defaultsArePyTorchs() {
        CachingOptions o = CachingOptions.defaults();
        assertEquals(CachingOptions.Backend.NATIVE, o.backend());
        assertEquals(20 * MiB, o.largeSegmentSize());
        assertEquals(Long.MAX_VALUE, o.maxSplitSize(), "unlimited");
        assertEquals(-1, o.maxSplitSizeStat());
        assertEquals(20 * MiB, o.maxNonSplitRounding(), "defaults to the large segment size");
        assertEquals(0.0, o.garbageCollectionThreshold());
        assertArrayEquals(new int[16], o.roundupPower2Divisions());
        assertFalse(o.expandableSegments());
        assertFalse(o.releaseLockOnCudamalloc());
        assertFalse(o.pinnedUseCudaHostRegister());
        assertEquals(1, o.pinnedNumRegisterThreads());
        assertFalse(o.pinnedUseBackgroundThreads());
        assertEquals(0, o.pinnedReserveSegmentSize());
        assertFalse(o.graphCaptureRecordStreamReuse());
        assertEquals(1.0, o.perProcessMemoryFraction());
        assertEquals("", o.configText());
        assertEquals(o, CachingConfig.parse(""));
        assertEquals(o, CachingConfig.parse(null));
        CachingOptions blank = CachingConfig.parse("   ");
        assertEquals("   ", blank.configText(), "the text is reported as given, like upstream");
        assertEquals(o.toString().replace("configText=''", "configText='   '"), blank.toString());
        assertEquals(o, CachingConfig.from(AllocatorConfig.defaults(CachingConfig.SCHEMA)));
    }

    @Test
    void everyKeyParses() {
        String text = "backend:native,large_segment_size_mb:32,max_split_size_mb:64,max_non_split_rounding_mb:48,"
                + "garbage_collection_threshold:0.6,roundup_power2_divisions:[256:1,>:4],expandable_segments:True,"
                + "release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:True,pinned_num_register_threads:8,"
                + "pinned_use_background_threads:True,pinned_reserve_segment_size_mb:100,"
                + "graph_capture_record_stream_reuse:True,per_process_memory_fraction:0.75";
        CachingOptions o = CachingConfig.parse(text);
        assertEquals(CachingOptions.Backend.NATIVE, o.backend());
        assertEquals(32 * MiB, o.largeSegmentSize());
        assertEquals(64 * MiB, o.maxSplitSize());
        assertEquals(64 * MiB, o.maxSplitSizeStat());
        assertEquals(48 * MiB, o.maxNonSplitRounding());
        assertEquals(0.6, o.garbageCollectionThreshold());
        assertArrayEquals(new int[] {1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 4}, o.roundupPower2Divisions());
        assertTrue(o.expandableSegments());
        assertTrue(o.releaseLockOnCudamalloc());
        assertTrue(o.pinnedUseCudaHostRegister());
        assertEquals(8, o.pinnedNumRegisterThreads());
        assertTrue(o.pinnedUseBackgroundThreads());
        assertEquals(100 * MiB, o.pinnedReserveSegmentSize());
        assertTrue(o.graphCaptureRecordStreamReuse());
        assertEquals(0.75, o.perProcessMemoryFraction());
        assertEquals(text, o.configText());
    }

    @Test
    void whitespaceIsIgnored() {
        CachingOptions o = CachingConfig.parse(
                " max_split_size_mb : 40 , roundup_power2_divisions : [ 64 : 8 , > : 2 ] ");
        assertEquals(40 * MiB, o.maxSplitSize());
        assertEquals(8, rules(o).divisionsFor(64 * MiB));
        assertEquals(2, rules(o).divisionsFor(128 * MiB));
    }

    @Test
    void schemaListsEveryKey() {
        List<String> keys = new ArrayList<>();
        CachingConfig.SCHEMA.options().forEach(opt -> keys.add(opt.name()));
        assertEquals(List.of("backend", "large_segment_size_mb", "max_split_size_mb", "max_non_split_rounding_mb",
                "garbage_collection_threshold", "roundup_power2_divisions", "expandable_segments",
                "release_lock_on_cudamalloc", "release_lock_on_hipmalloc", "pinned_use_cuda_host_register",
                "pinned_use_hip_host_register", "pinned_num_register_threads", "pinned_use_background_threads",
                "pinned_reserve_segment_size_mb", "graph_capture_record_stream_reuse", "per_process_memory_fraction",
                "expandable_segments_reserve", "expandable_segments_reserve_by_class", "throw_on_cudamalloc_oom",
                "pinned_free_catch_all", "pinned_max_round_threshold_mb", "pinned_max_cached_size_mb",
                "search_pool_after_release"),
                keys);
        assertEquals("allocator 'caching'", CachingConfig.SCHEMA.owner());
    }

    // ---------------------------------------------------------------------------------------------- round_size

    @ParameterizedTest
    @CsvSource({"0, 512", "1, 512", "511, 512", "512, 512", "513, 1024", "1200, 1536", "1048575, 1048576",
            "1048577, 1049088"})
    void plainRoundingIsTo512(long size, long rounded) {
        assertEquals(rounded, rules(CachingOptions.defaults()).roundSize(size));
    }

    @Test
    void smallSizesStayOn512EvenWithDivisions() {
        // 1200 with d=4: 1200 <= 512*4, so plain 512 rounding (spec §2).
        assertEquals(1536, rules(divisions("4")).roundSize(1200));
        assertEquals(512, rules(divisions("4")).roundSize(100));
        assertEquals(2048, rules(divisions("4")).roundSize(2048), "a power of two");
        // 2049 > 2048 = 512*4: floor 2048, step 512 -> 2560
        assertEquals(2560, rules(divisions("4")).roundSize(2049));
    }

    @Test
    void powerOfTwoDivisionExamples() {
        assertEquals(96 * MiB, rules(divisions("4")).roundSize(84 * MiB));
        assertEquals(88 * MiB, rules(divisions("8")).roundSize(84 * MiB));
        assertEquals(512 * MiB, rules(divisions("2")).roundSize(400 * MiB));
        assertEquals(80 * MiB, rules(divisions("4")).roundSize(80 * MiB), "already on a division");
        assertEquals(80 * MiB, rules(divisions("4")).roundSize(64 * MiB + 1), "64 MiB + 1 -> next 16 MiB step");
    }

    @Test
    void powersOfTwoAreUnchanged() {
        for (String d : List.of("2", "4", "8", "16", "1024")) {
            CachingOptions o = divisions(d);
            for (int k = 9; k < 60; k++) {
                assertEquals(1L << k, rules(o).roundSize(1L << k), "2^" + k + " with d=" + d);
            }
        }
    }

    @Test
    void divisionsOneAndZeroBothMeanPlainRounding() {
        CachingOptions zero = CachingOptions.defaults();
        CachingOptions one = divisions("1");
        CachingOptions listZero = divisions("[1:0,>:0]");
        for (long size : new long[] {513, 1200, 84 * MiB + 1, 88_080_384, 400 * MiB + 7, 3 * GiB + 100}) {
            long plain = (size + 511) / 512 * 512;
            assertEquals(plain, rules(zero).roundSize(size));
            assertEquals(plain, rules(one).roundSize(size), "d=1 is plain rounding (pytorch#161139)");
            assertEquals(plain, rules(listZero).roundSize(size));
        }
    }

    @Test
    void hugeDivisionsFallBackToPlainRounding() {
        CachingOptions o = divisions(Integer.toString(CachingConfig.MAX_DIVISIONS));
        assertEquals(84 * MiB + 512, rules(o).roundSize(84 * MiB + 1), "size <= 512*d");
        assertRefused("roundup_power2_divisions:2147483648", "at most 1073741824 divisions");
    }

    @Test
    void roundSizeDoesNotOverflowAndRefusesOneExabyte() {
        long max = SizeRules.MAX_REQUEST - 1;
        assertEquals(SizeRules.MAX_REQUEST, rules(CachingOptions.defaults()).roundSize(max));
        assertEquals(SizeRules.MAX_REQUEST, rules(divisions("4")).roundSize(max));
        assertEquals(SizeRules.MAX_REQUEST, rules(divisions("1024")).roundSize(max));
        assertEquals((1L << 59) + (1L << 57), rules(divisions("4")).roundSize((1L << 59) + 1));
        for (long bad : new long[] {SizeRules.MAX_REQUEST, Long.MAX_VALUE, Long.MAX_VALUE - 511, -1,
                Long.MIN_VALUE}) {
            assertThrows(IllegalArgumentException.class, () -> rules(CachingOptions.defaults()).roundSize(bad));
            assertThrows(IllegalArgumentException.class, () -> rules(divisions("8")).roundSize(bad));
        }
    }

    // ---------------------------------------------------------------------------------------------- divisions

    @Test
    void singleFormFillsEveryEntry() {
        int[] fours = new int[16];
        Arrays.fill(fours, 4);
        assertArrayEquals(fours, divisions("4").roundupPower2Divisions());
    }

    @Test
    void divisionIndexIsLog2MinusTwentyClamped() {
        int[] d = new int[16];
        for (int i = 0; i < 16; i++) {
            d[i] = 1 << i;
        }
        CachingOptions o = withDivisions(d);
        assertEquals(1, rules(o).divisionsFor(0));
        assertEquals(1, rules(o).divisionsFor(1));
        assertEquals(1, rules(o).divisionsFor(2 * MiB - 1), "index 0 covers < 2 MiB");
        assertEquals(2, rules(o).divisionsFor(2 * MiB), "index 1 covers [2 MiB, 4 MiB)");
        assertEquals(2, rules(o).divisionsFor(4 * MiB - 1));
        assertEquals(1 << 8, rules(o).divisionsFor(256 * MiB), "index 8 covers 256-512 MiB");
        assertEquals(1 << 8, rules(o).divisionsFor(512 * MiB - 1));
        assertEquals(1 << 14, rules(o).divisionsFor(32 * GiB - 1));
        assertEquals(1 << 15, rules(o).divisionsFor(32 * GiB), "index 15 covers >= 32 GiB");
        assertEquals(1 << 15, rules(o).divisionsFor(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> rules(o).divisionsFor(-1));
    }

    @Test
    void listFormIndexRules() {
        CachingOptions o = divisions("[256:1,512:2,1024:4,>:8]");
        assertArrayEquals(new int[] {1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8}, o.roundupPower2Divisions(),
                "256 -> index 8; the first key fills lower indices; > fills after the last key");
        assertEquals(1, rules(o).divisionsFor(256 * MiB));
        assertEquals(1, rules(o).divisionsFor(MiB), "filled by the first key");
        assertEquals(2, rules(o).divisionsFor(512 * MiB));
        assertEquals(4, rules(o).divisionsFor(GiB));
        assertEquals(8, rules(o).divisionsFor(2 * GiB));
        assertEquals(8, rules(o).divisionsFor(100 * GiB));
    }

    @Test
    void listFormCornerCases() {
        assertArrayEquals(new int[] {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2},
                divisions("[65536:2]").roundupPower2Divisions(), "a key past 32768 clamps to index 15");
        assertArrayEquals(new int[] {0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4},
                divisions("[>:4]").roundupPower2Divisions(), "> with no key before fills from index 1");
        assertArrayEquals(new int[] {8, 8, 8, 8, 8, 8, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0},
                divisions("[256:8]").roundupPower2Divisions());
        assertArrayEquals(new int[] {8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                divisions("[256:0,1:8]").roundupPower2Divisions(), "only the first key fills lower indices");
        assertArrayEquals(new int[16], divisions("[]").roundupPower2Divisions());
        assertArrayEquals(new int[] {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                divisions("[32768:1,>:4]").roundupPower2Divisions(), "> after index 15 fills nothing");
    }

    @Test
    void testAllocatorSettingsListForm() {
        CachingOptions o = divisions("[64:8,128:2,256:2,512:2,1024:1,>:1]");
        assertArrayEquals(new int[] {8, 8, 8, 8, 8, 8, 8, 2, 2, 2, 1, 1, 1, 1, 1, 1}, o.roundupPower2Divisions());
    }

    @Test
    void testAllocatorSettingsFigures() {
        // test_cuda.py test_allocator_settings: deltas of active_bytes.all.allocated
        assertEquals(88_080_384, rules(CachingOptions.defaults()).roundSize(88_080_384));
        assertEquals(100_663_296, rules(CachingConfig.parse("roundup_power2_divisions:4")).roundSize(88_080_384));
        assertEquals(88_080_384, rules(CachingConfig.parse("garbage_collection_threshold:0.5,max_split_size_mb:40"))
                .roundSize(88_080_384), "a new string resets the divisions");
        CachingOptions list = CachingConfig.parse("roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]");
        assertEquals(92_274_688, rules(list).roundSize(88_080_384));
        assertEquals(536_870_912, rules(list).roundSize(419_430_400));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "0|For roundups, the divisions has to be power of 2",
            "3|For roundups, the divisions has to be power of 2",
            "[256:3]|For roundups, the divisions has to be power of 2 or 0 to disable roundup",
            "[300:2]|For roundups, the intervals have to be power of 2",
            "[0:2]|For roundups, the intervals have to be power of 2",
            "[256]|Expected a power of 2 or a list",
            "[256:1,512]|Expected a power of 2 or a list",
            "[256:1;512:2]|Expected a non-negative integer",
            "[256:1 512:2]|For roundups, the divisions has to be power of 2 or 0",
            "[256:1][512:2]|Expected a power of 2 or a list",
            "four|Expected a non-negative integer but got 'four'",
            "-4|Expected a non-negative integer but got '-4'",
            "[abc:2]|Expected a non-negative integer but got 'abc'"})
    void badDivisionsAreRefused(String value, String upstreamText) {
        InvalidConfigurationException e = refused("roundup_power2_divisions:" + value);
        assertEquals("roundup_power2_divisions", e.key());
        assertTrue(e.getMessage().contains(upstreamText), e::getMessage);
    }

    // ---------------------------------------------------------------------------------------------- errors

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            // test_allocator_settings's ValueError cases
            "foo:1,bar:2|Unrecognized key 'foo' in CUDA allocator config (",
            "garbage_collection_threshold:1.2|garbage_collect_threshold is invalid, set it in (0.0, 1.0)",
            "max_split_size_mb:2|CachingAllocator option max_split_size_mb too small, must be >= 20",
            "release_lock_on_cudamalloc:none|Expected 'True' or 'False' but got 'none'",
            "pinned_use_cuda_host_register:none|Expected 'True' or 'False' but got 'none'",
            "pinned_num_register_threads:none|Expected a non-negative integer but got 'none'",
            "pinned_num_register_threads:1024|Number of register threads should be less than or equal to 128,"
                    + " got 1024"})
    void testAllocatorSettingsValueErrors(String config, String upstreamText) {
        assertRefused(config, upstreamText);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "backend:foo|Unknown allocator backend, options are native and cudaMallocAsync",
            "backend:Native|Unknown allocator backend, options are native and cudaMallocAsync",
            "large_segment_size_mb:10|CachingAllocator option large_segment_size_mb must be > 10 MB",
            "max_split_size_mb:19|CachingAllocator option max_split_size_mb too small, must be >= 20",
            "max_non_split_rounding_mb:19|CachingAllocator option max_non_split_rounding_mb too small, must be >= 20",
            "max_split_size_mb:-20|Expected a non-negative integer but got '-20'",
            "max_split_size_mb:20abc|Expected a non-negative integer but got '20abc'",
            "max_split_size_mb:99999999999999999999|out of range",
            "garbage_collection_threshold:0|garbage_collect_threshold is invalid, set it in (0.0, 1.0)",
            "garbage_collection_threshold:1.0|garbage_collect_threshold is invalid, set it in (0.0, 1.0)",
            "garbage_collection_threshold:-0.5|garbage_collect_threshold is invalid, set it in (0.0, 1.0)",
            "garbage_collection_threshold:half|Expected a number but got 'half'",
            "expandable_segments:true|Expected 'True' or 'False' but got 'true'",
            "expandable_segments:1|Expected 'True' or 'False' but got '1'",
            "max_split_size_mb:40,expandable_segments:yes|bad value 'yes' for configuration key 'expandable_segments'"
                    + " in configuration 'max_split_size_mb:40,expandable_segments:yes' of allocator 'caching'"
                    + " (Expected 'True' or 'False' but got 'yes'); allowed: True or False",
            "roundup_power2_divisions:[256:1,>:2],expandable_segments:yes|Expected 'True' or 'False' but got 'yes'",
            "release_lock_on_hipmalloc:no|Expected 'True' or 'False' but got 'no'",
            "pinned_use_hip_host_register:no|Expected 'True' or 'False' but got 'no'",
            "pinned_use_background_threads:TRUE|Expected 'True' or 'False' but got 'TRUE'",
            "graph_capture_record_stream_reuse:false|Expected 'True' or 'False' but got 'false'",
            "pinned_num_register_threads:3|Number of register threads has to be power of 2, got 3",
            "pinned_num_register_threads:0|Number of register threads has to be power of 2, got 0",
            "pinned_num_register_threads:256|Number of register threads should be less than or equal to 128, got 256",
            "pinned_reserve_segment_size_mb:0|Pinned reserve segment size has to be greater than 0",
            "per_process_memory_fraction:2.0|per_process_memory_fraction is invalid, set it in [0.0, 1.0]",
            "throw_on_cudamalloc_oom:true|Expected 'True' or 'False' but got 'true'",
            "pinned_free_catch_all:1|Expected 'True' or 'False' but got '1'",
            "pinned_max_round_threshold_mb:-1|Expected a non-negative integer but got '-1'",
            "pinned_max_cached_size_mb:1.5|Expected a non-negative integer but got '1.5'",
            "search_pool_after_release:yes|Expected 'True' or 'False' but got 'yes'",
            "expandable_segments_reserve_by_class:0.5|expected a list such as [capture:0.25,workspace:40G]",
            "pinned_max_round_threshold:64|Unrecognized key 'pinned_max_round_threshold' in CUDA allocator config (",
            "max_split_size_mb:40,max_split_size_mb:60|given twice",
            "max_split_size_mb:40,,expandable_segments:True|stray comma",
            "expandable_segments|malformed configuration entry"})
    void badValuesAreRefusedWithUpstreamText(String config, String upstreamText) {
        assertRefused(config, upstreamText);
    }

    /**
     * What a user typed that is refused is named in the message, with the problem in words: no class name (PyTorch's
     * "at index 2 in ConfigTokenizer" is one), and the whole text where it holds more than the entry at fault.
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "max_split_size_mb|malformed configuration entry 'max_split_size_mb' for allocator 'caching': expected"
                    + " key:value",
            "expandable_segments:True,max_split_size_mb|malformed configuration entry 'max_split_size_mb' in"
                    + " configuration 'expandable_segments:True,max_split_size_mb' for allocator 'caching'",
            "a:b:c|Unrecognized key 'a' in CUDA allocator config (unknown configuration key 'a' for allocator"
                    + " 'caching'; accepted keys: backend,",
            "expandable_segments:True,a:b:c|unknown configuration key 'a' in configuration"
                    + " 'expandable_segments:True,a:b:c' for allocator 'caching'",
            ":True|configuration entry ':True' for allocator 'caching' has no key before its colon",
            "expandable_segments:True,,|empty entry at position 25 in configuration 'expandable_segments:True,,'"
                    + " (stray comma?)",
            "expandable_segments:yes|bad value 'yes' for configuration key 'expandable_segments' of allocator"
                    + " 'caching' (Expected 'True' or 'False' but got 'yes'); allowed: True or False",
            "max_split_size_mb:20,expandable_segments:|configuration key 'expandable_segments' in configuration"
                    + " 'max_split_size_mb:20,expandable_segments:' for allocator 'caching' has no value",
            "expandable_segments:True,expandable_segments:False|configuration key 'expandable_segments' given twice"
                    + " in configuration 'expandable_segments:True,expandable_segments:False'",
            "large_segment_size_mb:50,max_split_size_mb:30|bad value '30' for configuration key 'max_split_size_mb' in"
                    + " configuration 'large_segment_size_mb:50,max_split_size_mb:30' of allocator 'caching'",
            "roundup_power2_divisions:[256:1|unclosed '[' in configuration 'roundup_power2_divisions:[256:1'"})
    void refusalsNameTheTextAndTheProblemWithoutAClassName(String config, String message) {
        InvalidConfigurationException e = refused(config);
        assertRefused(config, message);
        // A class name in CamelCase (not MiB); PyTorch's "CachingAllocator option ... too small" is kept word for
        // word, as the launcher's tests allow.
        assertFalse(Pattern.compile("\\b[A-Z][a-z0-9]+[A-Z][a-z]\\w*").matcher(e.getMessage()
                .replace("CachingAllocator option", "")).find(), () -> "a class name in: " + e.getMessage());
    }

    @Test
    void refusalsNameTheKeyAndValue() {
        InvalidConfigurationException e = refused("garbage_collection_threshold:1.2");
        assertEquals("garbage_collection_threshold", e.key());
        assertEquals("1.2", e.value());
        assertTrue(e.getMessage().contains("allowed: a number with 0.0 < value < 1.0"), e::getMessage);

        InvalidConfigurationException unknown = refused("expandable_segments:True,foo:1,bar:2");
        assertEquals("foo", unknown.key());
        assertEquals("1", unknown.value());
        assertTrue(unknown.getMessage().startsWith("Unrecognized key 'foo' in CUDA allocator config ("),
                unknown::getMessage);
        assertTrue(unknown.getMessage().contains("accepted keys: backend, "), "keeps AllocatorConfig's list");
        assertTrue(unknown.getCause() instanceof InvalidConfigurationException);

        InvalidConfigurationException bool = refused("release_lock_on_cudamalloc:none");
        assertEquals("release_lock_on_cudamalloc", bool.key());
        assertEquals("none", bool.value());
    }

    @Test
    void unknownKeyThroughTheSchemaAloneStillRefused() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> AllocatorConfig.parse("foo:1", CachingConfig.SCHEMA));
        assertEquals("foo", e.key());
    }

    // ---------------------------------------------------------------------------------------------- fraction

    @ParameterizedTest
    @CsvSource({"0.0, 0.0", "0.5, 0.5", "1.0, 1.0", "0, 0.0", "1, 1.0", ".25, 0.25"})
    void memoryFractionAccepted(String text, String echoed) {
        // test_allocator_memory_fraction_setting: 0.0/0.5/1.0 echo back as "0.0"/"0.5"/"1.0"
        CachingOptions o = CachingConfig.parse("per_process_memory_fraction:" + text);
        assertEquals(echoed, Double.toString(o.perProcessMemoryFraction()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"-0.1", "1.1", "2.0", "1.0000001"})
    void memoryFractionRefused(String text) {
        // test_allocator_memory_fraction_setting and test_set_per_process_memory_fraction
        assertRefused("per_process_memory_fraction:" + text, "per_process_memory_fraction is invalid");
    }

    // ---------------------------------------------------------------------------------------------- segments

    @ParameterizedTest
    @CsvSource({
            // test_graph_memory_stats_and_use_result_after_destroy_graph element sizes -> segment sizes
            "512, 2097152",
            "1048576, 2097152",
            "1049088, 20971520",
            "10485248, 20971520",
            "10486272, 12582912",
            "10485760, 10485760",
            "12582913, 14680064",
            "1152921504606846976, 1152921504606846976"})
    void allocationSizes(long request, long segment) {
        SizeRules r = rules(CachingOptions.defaults());
        assertEquals(segment, r.allocationSize(r.roundSize(Math.min(request, SizeRules.MAX_REQUEST - 1))));
    }

    @Test
    void allocationSizeExamples() {
        CachingOptions o = CachingOptions.defaults();
        assertEquals(2 * MiB, rules(o).allocationSize(512));
        assertEquals(2 * MiB, rules(o).allocationSize(MiB));
        assertEquals(20 * MiB, rules(o).allocationSize(MiB + 512));
        assertEquals(20 * MiB, rules(o).allocationSize(10 * MiB - 512));
        assertEquals(12 * MiB, rules(o).allocationSize(10 * MiB + 512));
        assertEquals(SizeRules.MAX_REQUEST, rules(o).allocationSize(SizeRules.MAX_REQUEST));
        assertThrows(IllegalArgumentException.class, () -> rules(o).allocationSize(SizeRules.MAX_REQUEST + 1));
        assertThrows(IllegalArgumentException.class, () -> rules(o).allocationSize(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> rules(o).allocationSize(-1));
    }

    @Test
    void largeSegmentSizeIsConfigurable() {
        CachingOptions o = CachingConfig.parse("large_segment_size_mb:50");
        assertEquals(50 * MiB, o.largeSegmentSize());
        assertEquals(50 * MiB, o.maxNonSplitRounding(), "max_non_split_rounding follows the large segment size");
        assertEquals(50 * MiB, rules(o).allocationSize(MiB + 512));
        assertEquals(2 * MiB, rules(o).allocationSize(MiB));
        assertEquals(12 * MiB, rules(o).allocationSize(10 * MiB + 512));
        assertEquals(11 * MiB, CachingConfig.parse("large_segment_size_mb:11").largeSegmentSize());
    }

    @ParameterizedTest
    @ValueSource(strings = {"large_segment_size_mb:50,max_split_size_mb:30",
            "max_split_size_mb:30,large_segment_size_mb:50"})
    void maxSplitSizeAtLeastTheLargeSegment(String config) {
        InvalidConfigurationException e = refused(config);
        assertEquals("max_split_size_mb", e.key());
        assertTrue(e.getMessage().contains("CachingAllocator option max_split_size_mb too small, must be >= 50"),
                e::getMessage);
        assertRefused("large_segment_size_mb:50,max_non_split_rounding_mb:49",
                "CachingAllocator option max_non_split_rounding_mb too small, must be >= 50");
        assertEquals(50 * MiB, CachingConfig.parse("large_segment_size_mb:50,max_split_size_mb:50").maxSplitSize());
    }

    @Test
    void hugeMegabyteValuesClampLikeUpstream() {
        CachingOptions o = CachingConfig.parse("max_split_size_mb:9223372036854775807");
        assertEquals(Long.MAX_VALUE / MiB * MiB, o.maxSplitSize());
        assertNotEquals(-1, o.maxSplitSizeStat(), "upstream clamps to SIZE_MAX/MB*MB, which is not SIZE_MAX");
    }

    // ---------------------------------------------------------------------------------------------- snapshot

    @Test
    void allocatorSettingsOfDefaults() {
        Map<String, Object> s = CachingOptions.defaults().allocatorSettings();
        assertEquals(List.of("PYTORCH_CUDA_ALLOC_CONF", "max_split_size", "garbage_collection_threshold",
                "expandable_segments", "pinned_num_register_threads", "release_lock_on_cudamalloc",
                "pinned_use_cuda_host_register", "graph_capture_record_stream_reuse", "max_round_threshold",
                "max_cached_size", "roundup_power2_divisions"),
                new ArrayList<>(s.keySet()));
        assertEquals("", s.get("PYTORCH_CUDA_ALLOC_CONF"));
        assertEquals(-1L, s.get("max_split_size"));
        assertEquals(0.0, s.get("garbage_collection_threshold"));
        assertEquals(false, s.get("expandable_segments"));
        assertEquals(1L, s.get("pinned_num_register_threads"));
        assertEquals(false, s.get("release_lock_on_cudamalloc"));
        assertEquals(false, s.get("pinned_use_cuda_host_register"));
        assertEquals(false, s.get("graph_capture_record_stream_reuse"));
        Map<?, ?> roundup = (Map<?, ?>) s.get("roundup_power2_divisions");
        assertEquals(List.of("1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024", "2048", "4096",
                "8192", "16384", "32768"), new ArrayList<>(roundup.keySet()));
        roundup.values().forEach(v -> assertEquals(0L, v));
        assertThrows(UnsupportedOperationException.class, () -> s.put("x", 1));
    }

    @Test
    void allocatorSettingsOfAConfiguration() {
        String text = "max_split_size_mb:40,garbage_collection_threshold:0.5,expandable_segments:True,"
                + "roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1],release_lock_on_hipmalloc:True,"
                + "pinned_use_cuda_host_register:True,pinned_num_register_threads:4";
        Map<String, Object> s = CachingConfig.parse(text).allocatorSettings();
        assertEquals(text, s.get("PYTORCH_CUDA_ALLOC_CONF"));
        assertEquals(40 * MiB, s.get("max_split_size"));
        assertEquals(0.5, s.get("garbage_collection_threshold"));
        assertEquals(true, s.get("expandable_segments"));
        assertEquals(4L, s.get("pinned_num_register_threads"));
        assertEquals(true, s.get("release_lock_on_cudamalloc"), "the hip spelling sets the same setting");
        assertEquals(true, s.get("pinned_use_cuda_host_register"));
        Map<?, ?> roundup = (Map<?, ?>) s.get("roundup_power2_divisions");
        assertEquals(8L, roundup.get("64"));
        assertEquals(8L, roundup.get("1"));
        assertEquals(2L, roundup.get("128"));
        assertEquals(1L, roundup.get("1024"));
        assertEquals(1L, roundup.get("32768"));
    }

    // ---------------------------------------------------------------------------------------------- aliases, backend

    @Test
    void hipSpellingsAreAliasesAndTheLaterWins() {
        assertTrue(CachingConfig.parse("release_lock_on_hipmalloc:True").releaseLockOnCudamalloc());
        assertTrue(CachingConfig.parse("pinned_use_hip_host_register:True").pinnedUseCudaHostRegister());
        assertFalse(CachingConfig.parse("release_lock_on_cudamalloc:True,release_lock_on_hipmalloc:False")
                .releaseLockOnCudamalloc());
        assertTrue(CachingConfig.parse("release_lock_on_hipmalloc:False,release_lock_on_cudamalloc:True")
                .releaseLockOnCudamalloc());
        assertFalse(CachingConfig.parse("pinned_use_cuda_host_register:True,pinned_use_hip_host_register:False")
                .pinnedUseCudaHostRegister());
    }

    @Test
    void cudaMallocAsyncIsParsedAndKept() {
        CachingOptions o = CachingConfig.parse("max_split_size_mb:20,backend:cudaMallocAsync");
        assertEquals(CachingOptions.Backend.CUDA_MALLOC_ASYNC, o.backend());
        assertEquals("cudaMallocAsync", o.backend().configName());
        assertEquals("native", CachingConfig.parse("backend:native").backend().toString());
    }

    // ---------------------------------------------------------------------------------------------- environment

    private static Map<String, String> env(String... keyValues) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    @Test
    void environmentPrecedence() {
        assertEquals("PYTORCH_CUDA_ALLOC_CONF", CachingConfig.ENV);
        assertEquals(List.of("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"),
                CachingConfig.ENV_VARIABLES);
        assertEquals("cuda", CachingConfig.fromEnvironment(env("PYTORCH_ALLOC_CONF", "generic",
                "PYTORCH_HIP_ALLOC_CONF", "hip", "PYTORCH_CUDA_ALLOC_CONF", "cuda")));
        assertEquals("hip", CachingConfig.fromEnvironment(env("PYTORCH_ALLOC_CONF", "generic",
                "PYTORCH_HIP_ALLOC_CONF", "hip")));
        assertEquals("generic", CachingConfig.fromEnvironment(env("PYTORCH_ALLOC_CONF", "generic")));
        assertEquals("", CachingConfig.fromEnvironment(env("OTHER", "x")));
        assertEquals("", CachingConfig.fromEnvironment(env("PYTORCH_CUDA_ALLOC_CONF", "",
                "PYTORCH_ALLOC_CONF", "generic")), "set and empty counts as set");
        assertEquals(40 * MiB, CachingConfig.parse(CachingConfig.fromEnvironment(
                env("PYTORCH_HIP_ALLOC_CONF", "max_split_size_mb:40"))).maxSplitSize());
        assertEquals("PYTORCH_CUDA_ALLOC_CONF", CachingConfig.environmentVariable(env("PYTORCH_ALLOC_CONF",
                "generic", "PYTORCH_CUDA_ALLOC_CONF", "cuda")));
        assertEquals("PYTORCH_ALLOC_CONF", CachingConfig.environmentVariable(env("PYTORCH_ALLOC_CONF", "generic")));
        assertEquals(null, CachingConfig.environmentVariable(env("OTHER", "x")));
    }

    // ---------------------------------------------------------------------------------------------- from, record

    @Test
    void fromAParsedConfigMatchesParse() {
        String text = "max_split_size_mb:40,roundup_power2_divisions:[64:8,>:2],expandable_segments:True,"
                + "per_process_memory_fraction:0.5,backend:native,release_lock_on_cudamalloc:False";
        CachingOptions parsed = CachingConfig.parse(text);
        CachingOptions viaSchema = CachingConfig.from(AllocatorConfig.parse(text, CachingConfig.SCHEMA));
        assertEquals(text, viaSchema.configText(), "canonical text of these values is the text itself");
        assertEquals(parsed, viaSchema);
        assertEquals(parsed, CachingConfig.parse(viaSchema.configText()));
        assertThrows(InvalidConfigurationException.class, () -> CachingConfig.from(
                AllocatorConfig.parse("large_segment_size_mb:50,max_split_size_mb:30", CachingConfig.SCHEMA)));
    }

    @Test
    void recordIsImmutableAndChecksInvariants() {
        int[] d = new int[16];
        d[3] = 4;
        CachingOptions o = withDivisions(d);
        d[3] = 8;
        assertEquals(4, o.roundupPower2Divisions()[3], "copied in");
        o.roundupPower2Divisions()[3] = 16;
        assertEquals(4, o.roundupPower2Divisions()[3], "copied out");
        assertEquals(withDivisions(o.roundupPower2Divisions()), o);
        assertEquals(withDivisions(o.roundupPower2Divisions()).hashCode(), o.hashCode());
        assertTrue(o.toString().contains("roundupPower2Divisions=[0, 0, 0, 4,"), o::toString);

        assertThrows(IllegalArgumentException.class, () -> withDivisions(new int[15]));
        int[] three = new int[16];
        three[0] = 3;
        assertThrows(IllegalArgumentException.class, () -> withDivisions(three));
        CachingOptions def = CachingOptions.defaults();
        ExpandableSegmentReserve R = ExpandableSegmentReserve.HISTORICAL;
        long U = Long.MAX_VALUE;
        assertThrows(IllegalArgumentException.class, () -> new CachingOptions(def.backend(), 20 * MiB,
                Long.MAX_VALUE, 20 * MiB, 0, new int[16], false, false, false, 1, false, 0, false, 1.0, R, false,
                false, -1, U, false, ""));
        assertThrows(NullPointerException.class, () -> new CachingOptions(def.backend(), 20 * MiB,
                Long.MAX_VALUE, 20 * MiB, 0, new int[16], false, false, false, 1, false, 0, false, 1.0, null, false,
                false, U, U, false, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingOptions(def.backend(), 10 * MiB,
                def.maxSplitSize(), def.maxNonSplitRounding(), 0, new int[16], false, false, false, 1, false, 0,
                false, 1.0, R, false, false, U, U, false, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingOptions(def.backend(), 20 * MiB,
                19 * MiB, 20 * MiB, 0, new int[16], false, false, false, 1, false, 0, false, 1.0, R, false, false, U,
                U, false, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingOptions(def.backend(), 20 * MiB,
                Long.MAX_VALUE, 20 * MiB, 1.0, new int[16], false, false, false, 1, false, 0, false, 1.0, R, false,
                false, U, U, false, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingOptions(def.backend(), 20 * MiB,
                Long.MAX_VALUE, 20 * MiB, 0, new int[16], false, false, false, 3, false, 0, false, 1.0, R, false,
                false, U, U, false, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingOptions(def.backend(), 20 * MiB,
                Long.MAX_VALUE, 20 * MiB, 0, new int[16], false, false, false, 1, false, 0, false, 1.5, R, false,
                false, U, U, false, ""));
        assertThrows(IllegalArgumentException.class, () -> new CachingOptions(def.backend(), 20 * MiB,
                Long.MAX_VALUE, 20 * MiB, 0, new int[16], false, false, false, 1, false, 0, false, Double.NaN, R,
                false, false, U, U, false, ""));
    }

    private static CachingOptions withDivisions(int[] d) {
        return new CachingOptions(CachingOptions.Backend.NATIVE, 20 * MiB, Long.MAX_VALUE, 20 * MiB, 0.0, d, false,
                false, false, 1, false, 0, false, 1.0, ExpandableSegmentReserve.HISTORICAL, false, false,
                Long.MAX_VALUE, Long.MAX_VALUE, false, "");
    }
}
