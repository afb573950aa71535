package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.spi.EnvironmentConfig;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Configuration keys, their defaults, TensorFlow's environment switches and the values refused. */
class BfcOptionsTest {

    private static final long MiB = ByteSize.MiB;

    private SimulatedDevice device;

    @BeforeEach
    void open() {
        device = SimulatedDevice.ofCapacity(ByteSize.GiB);
    }

    @AfterEach
    void close() {
        device.close();
    }

    private BfcOptions options(Map<String, String> env, String config) {
        try (BfcAllocator a = new BfcAllocatorProvider(env).create(device, config)) {
            return a.options();
        }
    }

    private static Map<String, String> env(String... keyValues) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    @Test
    void defaultsFollowGpuBfcAllocator() {
        BfcOptions o = options(Map.of(), "");
        assertFalse(o.allowGrowth(), "GPUBFCAllocator: allow_growth=false");
        assertTrue(o.garbageCollection(), "GPUBFCAllocator: unset → env unset → true");
        assertEquals(0, o.memoryLimitBytes(), "0 = the device's total");
        assertEquals(0.0, o.fragmentationFraction());
        assertTrue(o.allowRetryOnFailure());
        assertEquals(10_000, o.retryTimeoutMillis(), "TensorFlow's 10 s");
        assertFalse(o.timestamped());
        assertEquals(BfcOptions.VirtualMemoryUse.OFF, o.virtualMemory(), "GPU BFC runs over DeviceMemAllocator");
        assertEquals(BfcOptions.defaults(), o);
        assertEquals(o, options(Map.of(), "   "));
    }

    @Test
    void aSnapshotCarriesTheOptionsInEffectUnderTheirKeys() {
        try (BfcAllocator a = new BfcAllocatorProvider(Map.of()).create(device,
                "allow_growth:true,memory_limit_mb:512,timestamped:true,virtual_memory:false")) {
            Map<String, Object> expected = new LinkedHashMap<>();
            expected.put("allow_growth", true);
            expected.put("garbage_collection", true);
            expected.put("memory_limit_bytes", 512 * MiB);
            expected.put("fragmentation_fraction", 0.0);
            expected.put("allow_retry_on_failure", true);
            expected.put("retry_timeout_ms", 10_000L);
            expected.put("timestamped", true);
            expected.put("virtual_memory", "false");
            expected.put("uses_virtual_memory", false);
            assertEquals(expected, a.snapshot().settings());
            assertEquals(List.copyOf(expected.keySet()), List.copyOf(a.snapshot().settings().keySet()));
        }
        try (BfcAllocator a = new BfcAllocatorProvider(Map.of()).create(device, "")) {
            assertEquals(ByteSize.GiB, a.snapshot().settings().get("memory_limit_bytes"), "0: the device's total");
            assertEquals("false", a.snapshot().settings().get("virtual_memory"));
            assertEquals(false, a.snapshot().settings().get("uses_virtual_memory"),
                    "not by default, although the simulator offers it");
        }
        try (BfcAllocator a = new BfcAllocatorProvider(Map.of()).create(device, "virtual_memory:auto")) {
            assertEquals("auto", a.snapshot().settings().get("virtual_memory"));
            assertEquals(true, a.snapshot().settings().get("uses_virtual_memory"), "the simulator offers it");
        }
    }

    @Test
    void theDefaultLimitIsTheDevicesTotalAndNothingIsReservedUpFront() {
        try (BfcAllocator a = new BfcAllocatorProvider(Map.of()).create(device, "")) {
            assertEquals(ByteSize.GiB, a.bfcStats().bytesLimit());
            assertEquals(ByteSize.GiB, a.currentRegionAllocationBytes());
            assertEquals(0, a.bfcStats().poolBytes());
            assertEquals(0, device.counters().mallocCalls());
            assertEquals(ByteSize.GiB, a.stats().limitBytes());
        }
    }

    @Test
    void everyKeyIsParsed() {
        BfcOptions o = options(Map.of(), "allow_growth:true, garbage_collection:false, memory_limit_mb:512,"
                + "fragmentation_fraction:0.25,allow_retry_on_failure:false,retry_timeout_ms:50,timestamped:true,"
                + "virtual_memory:false");
        assertEquals(new BfcOptions(true, false, 512 * MiB, 0.25, false, 50, true, BfcOptions.VirtualMemoryUse.OFF),
                o);
        assertEquals(BfcOptions.VirtualMemoryUse.ON, options(Map.of(), "virtual_memory:true").virtualMemory());
        assertEquals(BfcOptions.VirtualMemoryUse.AUTO, options(Map.of(), "virtual_memory:auto").virtualMemory());
        assertTrue(options(Map.of(), "allow_growth:True").allowGrowth(),
                "booleans in any case, as PyTorch writes them");
        assertEquals(0, options(Map.of(), "retry_timeout_ms:0").retryTimeoutMillis());
    }

    @Test
    void theLimitKeyIsInMiB() {
        try (BfcAllocator a = new BfcAllocatorProvider(Map.of()).create(device, "memory_limit_mb:3")) {
            assertEquals(3 * MiB, a.bfcStats().bytesLimit());
            assertEquals(3 * MiB, a.currentRegionAllocationBytes());
        }
        try (BfcAllocator a = new BfcAllocatorProvider(Map.of()).create(device,
                "memory_limit_mb:3,allow_growth:true")) {
            assertEquals(2 * MiB, a.currentRegionAllocationBytes(), "min(limit, 2 MiB)");
        }
    }

    @ParameterizedTest(name = "{0} → {1}")
    @CsvSource({
        // env value, configured, expected. Only exact "true"/"false" count.
        "true, false, true",
        "false, true, false",
        "true, true, true",
        "false, false, false",
        "unparseable, true, true",
        "unparseable, false, false",
        "TRUE, false, false",
        "False, true, true",
        "1, false, false",
        "' true', false, false",
    })
    void tfForceGpuAllowGrowth(String value, boolean configured, boolean expected) {
        BfcOptions o = options(env(BfcOptions.ENV_FORCE_ALLOW_GROWTH, value), "allow_growth:" + configured);
        assertEquals(expected, o.allowGrowth());
    }

    @Test
    void tfForceGpuAllowGrowthUnsetKeepsTheConfiguredValue() {
        assertTrue(options(Map.of(), "allow_growth:true").allowGrowth());
        assertFalse(options(Map.of(), "allow_growth:false").allowGrowth());
        assertFalse(options(Map.of(), "").allowGrowth());
        assertTrue(options(env(BfcOptions.ENV_FORCE_ALLOW_GROWTH, "true"), "").allowGrowth());
    }

    @ParameterizedTest(name = "{0} → {1}")
    @CsvSource({
        "true, true",
        "false, false",
        "unparseable, true",
        "FALSE, true",
        "0, true",
    })
    void tfEnableGpuGarbageCollectionGivesTheDefault(String value, boolean expected) {
        assertEquals(expected, options(env(BfcOptions.ENV_GARBAGE_COLLECTION, value), "").garbageCollection());
    }

    @Test
    void tfEnableGpuGarbageCollectionUnsetMeansTrue() {
        assertTrue(options(Map.of(), "").garbageCollection());
    }

    @Test
    void theProviderSaysWhichSwitchesApply() {
        BfcAllocatorProvider both = new BfcAllocatorProvider(env(BfcOptions.ENV_FORCE_ALLOW_GROWTH, "true",
                BfcOptions.ENV_GARBAGE_COLLECTION, "false"));
        assertEquals(List.of(new EnvironmentConfig("TF_FORCE_GPU_ALLOW_GROWTH", "allow_growth:true"),
                new EnvironmentConfig("TF_ENABLE_GPU_GARBAGE_COLLECTION", "garbage_collection:false")),
                both.configFromEnvironment(""));
        // The growth switch overrides the configuration; the garbage-collection one only gives the default.
        assertEquals(List.of(new EnvironmentConfig("TF_FORCE_GPU_ALLOW_GROWTH", "allow_growth:true")),
                both.configFromEnvironment("allow_growth:false,garbage_collection:true"));
        assertEquals(List.of(), new BfcAllocatorProvider(env(BfcOptions.ENV_FORCE_ALLOW_GROWTH, "TRUE",
                BfcOptions.ENV_GARBAGE_COLLECTION, "0")).configFromEnvironment(""),
                "values TensorFlow refuses are ignored, so they are not listed");
        assertEquals(List.of(), new BfcAllocatorProvider(Map.of()).configFromEnvironment("memory_limit_mb:64"));
        assertThrows(InvalidConfigurationException.class, () -> both.configFromEnvironment("bogus:1"));
        // What it lists is what create applies.
        assertTrue(options(env(BfcOptions.ENV_FORCE_ALLOW_GROWTH, "true"), "allow_growth:false").allowGrowth());
    }

    @Test
    void anExplicitGarbageCollectionKeyWinsOverTheEnvironment() {
        assertTrue(options(env(BfcOptions.ENV_GARBAGE_COLLECTION, "false"), "garbage_collection:true")
                .garbageCollection());
        assertFalse(options(env(BfcOptions.ENV_GARBAGE_COLLECTION, "true"), "garbage_collection:false")
                .garbageCollection());
        assertFalse(options(Map.of(), "garbage_collection:false").garbageCollection());
    }

    @Test
    void theEnvironmentDoesNotApplyToExplicitOptions() {
        // BfcAllocatorProvider.create(device, options) takes the options as given.
        BfcOptions given = BfcOptions.defaults().withAllowGrowth(false);
        try (BfcAllocator a = BfcAllocatorProvider.create(device, given)) {
            assertEquals(given, a.options());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "allow_growth:maybe",
        "allow_growth:1",
        "garbage_collection:yes",
        "memory_limit_mb:0",
        "memory_limit_mb:-1",
        "memory_limit_mb:abc",
        "memory_limit_mb:1.5",
        "memory_limit_mb:1GiB",
        "memory_limit_mb:99999999999999999999",
        "fragmentation_fraction:1",
        "fragmentation_fraction:1.0",
        "fragmentation_fraction:-0.1",
        "fragmentation_fraction:1.5",
        "fragmentation_fraction:NaN",
        "fragmentation_fraction:half",
        "allow_retry_on_failure:nope",
        "retry_timeout_ms:-1",
        "retry_timeout_ms:ten",
        "retry_timeout_ms:86400001",
        "timestamped:on",
        "virtual_memory:yes",
        "virtual_memory:",
    })
    void badValuesAreRefusedNamingTheKey(String config) {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> new BfcAllocatorProvider(Map.of()).create(device, config));
        String key = config.substring(0, config.indexOf(':'));
        assertEquals(key, e.key());
        assertTrue(e.getMessage().contains(key), e.getMessage());
        assertEquals(0, device.counters().mallocCalls());
    }

    @Test
    void unknownMalformedAndRepeatedKeysAreRefused() {
        BfcAllocatorProvider provider = new BfcAllocatorProvider(Map.of());
        InvalidConfigurationException unknown = assertThrows(InvalidConfigurationException.class,
                () -> provider.create(device, "allow_grow:true"));
        assertEquals("allow_grow", unknown.key());
        for (String key : List.of("allow_growth", "garbage_collection", "memory_limit_mb", "fragmentation_fraction",
                "allow_retry_on_failure", "retry_timeout_ms", "timestamped", "virtual_memory")) {
            assertTrue(unknown.getMessage().contains(key), "the message lists the accepted key " + key);
        }
        assertThrows(InvalidConfigurationException.class, () -> provider.create(device, "allow_growth"));
        assertThrows(InvalidConfigurationException.class,
                () -> provider.create(device, "allow_growth:true,allow_growth:false"));
        assertThrows(InvalidConfigurationException.class, () -> provider.create(device, "allow_growth:true,,"));
    }

    @Test
    void theOptionsRecordChecksItsValues() {
        assertThrows(IllegalArgumentException.class, () -> BfcOptions.defaults().withMemoryLimit(-1));
        assertThrows(IllegalArgumentException.class, () -> BfcOptions.defaults().withFragmentationFraction(1.0));
        assertThrows(IllegalArgumentException.class, () -> BfcOptions.defaults().withFragmentationFraction(-0.01));
        assertThrows(IllegalArgumentException.class, () -> BfcOptions.defaults().withFragmentationFraction(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> BfcOptions.defaults().withRetry(true, -1));
        assertThrows(NullPointerException.class, () -> BfcOptions.defaults().withVirtualMemory(null));
    }

    @Test
    void virtualMemoryTrueOnADeviceWithoutItIsRefused() {
        try (SimulatedDevice plain = SimulatedDevice.builder().capacity(ByteSize.GiB).virtualMemory(false).build()) {
            assertThrows(InvalidConfigurationException.class,
                    () -> new BfcAllocatorProvider(Map.of()).create(plain, "virtual_memory:true"));
            // auto falls back to plain mallocs; the regions do not coalesce.
            try (BfcArena a = (BfcArena) new BfcAllocatorProvider(Map.of()).create(plain,
                    "virtual_memory:auto,allow_growth:true")) {
                long p1 = a.malloc(2 * MiB);
                long p2 = a.malloc(2 * MiB);
                assertEquals(2, a.regionCount());
                assertEquals(2, plain.counters().mallocs());
                a.free(p1);
                a.free(p2);
            }
        }
    }

    /** TensorFlow's GPU BFC never uses virtual memory: by default regions never coalesce, even on a VMM device. */
    @Test
    void byDefaultRegionsAreDeviceMallocsThatNeverCoalesce() {
        assertTrue(device.virtualMemory().isPresent());
        try (BfcArena a = (BfcArena) new BfcAllocatorProvider(Map.of()).create(device, "allow_growth:true")) {
            long p1 = a.malloc(2 * MiB);
            long p2 = a.malloc(2 * MiB);
            assertEquals(2, a.regionCount(), "two regions, side by side or not, stay two");
            assertEquals(2, device.counters().mallocs());
            assertEquals(0, device.counters().maps());
            a.free(p1);
            a.free(p2);
        }
    }

    @Test
    void virtualMemoryAutoUsesItWhenTheDeviceOffersIt() {
        try (BfcArena a = (BfcArena) new BfcAllocatorProvider(Map.of()).create(device,
                "virtual_memory:auto,allow_growth:true")) {
            long p1 = a.malloc(2 * MiB);
            long p2 = a.malloc(2 * MiB);
            assertEquals(1, a.regionCount(), "mapped regions continue each other and coalesce");
            assertEquals(0, device.counters().mallocs());
            assertEquals(2, device.counters().maps());
            a.free(p1);
            a.free(p2);
        }
    }

    @Test
    void theProviderIsNamedBfcAndDescribesItsKeys() {
        BfcAllocatorProvider provider = new BfcAllocatorProvider(Map.of());
        assertEquals("bfc", provider.name());
        assertEquals(BfcOptions.SCHEMA, provider.configSchema());
        try (BfcAllocator a = provider.create(device, "")) {
            assertEquals("bfc", a.name());
            assertEquals(device, a.device());
        }
    }

    @Test
    void theDefaultGridSweepsGrowthGarbageCollectionAndFragmentationAndEveryEntryIsAccepted() {
        BfcAllocatorProvider p = new BfcAllocatorProvider(Map.of("TF_FORCE_GPU_ALLOW_GROWTH", "true"));
        List<String> grid = p.defaultGrid(0);
        assertEquals("", grid.getFirst());
        assertTrue(grid.contains("allow_growth:true,garbage_collection:false"), grid.toString());
        assertTrue(grid.contains("allow_growth:true,fragmentation_fraction:0.01"), grid.toString());
        try (BfcAllocator without = p.withoutEnvironment().create(device, "");
             BfcAllocator with = p.create(device, "")) {
            assertFalse(without.options().allowGrowth(), "without the environment, TensorFlow's switch is not read");
            assertTrue(with.options().allowGrowth());
        }
        for (String config : grid) {
            p.withoutEnvironment().create(device, config).close();
        }
    }
}
