package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.spi.PythonTuple;
import io.devalloc.sim.DeviceOperation;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.AllocatorInvariants;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * PyTorch's own acceptance tests of the CUDA caching allocator ({@code test/test_cuda.py}, spec section 10), ported
 * to the simulated device with their exact figures, plus the behaviour of spec sections 3 to 6 that those tests
 * rely on (split rules, retry ladder, garbage collection, expandable segments, the OOM message, stats, summary and
 * snapshot).
 *
 * <p>Where PyTorch changes the allocator settings at runtime inside one process ({@code _set_allocator_settings}),
 * these tests build one allocator per configuration: devalloc's options are fixed at construction. A GPU's CUDA
 * context and other processes are stood in for by {@link SimulatedDevice#setLimitBytes}.
 */
class UpstreamCudaTest {

    static final long KiB = 1024;
    static final long MiB = 1024 * KiB;
    static final long GiB = 1024 * MiB;
    static final long TiB = 1024 * GiB;

    private final List<CachingArena> arenas = new ArrayList<>();

    private CachingArena arena(SimulatedDevice device, String config) {
        CachingArena a = (CachingArena) new CachingAllocatorProvider(Map.of()).create(device, config);
        arenas.add(a);
        return a;
    }

    @AfterEach
    void invariantsHoldAtTheEnd() {
        for (CachingArena a : arenas) {
            if (!a.isClosed()) {
                CachingInvariants.check(a);
            }
        }
    }

    static SimulatedDevice sim80() {
        return SimulatedDevice.builder().capacity(80 * GiB).build();
    }

    static SimulatedDevice sim(long capacity) {
        return SimulatedDevice.builder().capacity(capacity).build();
    }

    static SimulatedDevice manualSim(long capacity) {
        return SimulatedDevice.builder().capacity(capacity).eventCompletion(EventCompletion.MANUAL).build();
    }

    static long stat(CachingAllocator a, String key) {
        Long v = a.memoryStats().get(key);
        assertNotNull(v, () -> "memory_stats() has no key " + key);
        return v;
    }

    static OutOfMemoryException oom(Runnable r) {
        return assertThrows(OutOfMemoryException.class, r::run);
    }

    static void assertContains(String haystack, String needle) {
        assertTrue(haystack.contains(needle), () -> "expected to contain \"" + needle + "\" but was: " + haystack);
    }

    static List<TraceEntry> actions(CachingAllocator a, TraceAction action) {
        return a.history().stream().filter(e -> e.action() == action).toList();
    }

    static TraceEntry last(CachingAllocator a) {
        List<TraceEntry> h = a.history();
        assertFalse(h.isEmpty(), "history is empty");
        return h.getLast();
    }

    // ============================================================================================ test_memory_stats

    @Nested
    class MemoryStats {

        /** test_memory_stats: randn(256) is +1024 active bytes; del + empty_cache brings it back, freed 1024. */
        @Test
        void testMemoryStats() {
            CachingArena a = arena(sim80(), "");
            long keep = a.malloc(5 * MiB); // something already live, as in a real process
            a.emptyCache();
            a.resetPeakStats();
            a.resetAccumulatedStats();
            long prevAllocated = stat(a, "allocated_bytes.all.current");
            long prevReserved = stat(a, "reserved_bytes.all.current");
            assertEquals(5 * MiB, prevAllocated);
            assertEquals(20 * MiB, prevReserved);
            assertEquals(prevAllocated, stat(a, "allocated_bytes.all.peak"));
            assertEquals(prevReserved, stat(a, "reserved_bytes.all.peak"));

            long prevActive = stat(a, "active_bytes.all.current");
            long tmp = a.malloc(256 * 4);
            assertEquals(prevActive + 1024, stat(a, "active_bytes.all.current"));
            assertEquals(0, stat(a, "active_bytes.all.freed"));
            assertEquals(1024, stat(a, "active_bytes.small_pool.current"));

            a.free(tmp);
            a.emptyCache();
            assertEquals(prevActive, stat(a, "active_bytes.all.current"));
            assertEquals(1024, stat(a, "active_bytes.all.freed"));
            assertEquals(1024, stat(a, "active_bytes.small_pool.freed"));
            assertEquals(2 * MiB, stat(a, "reserved_bytes.all.freed"), "the small segment went back");
            assertEquals(prevReserved, stat(a, "reserved_bytes.all.current"));

            a.resetPeakStats();
            assertEquals(prevAllocated, stat(a, "allocated_bytes.all.peak"));
            assertEquals(prevReserved, stat(a, "reserved_bytes.all.peak"));
            a.free(keep);
        }

        /** test_memory_allocation: a raw 1-byte allocation is a 512-byte block. */
        @Test
        void testMemoryAllocation() {
            CachingArena a = arena(sim80(), "");
            long prev = stat(a, "allocated_bytes.all.current");
            long mem = a.malloc(1);
            assertEquals(prev + 512, stat(a, "allocated_bytes.all.current"));
            assertEquals(1, stat(a, "requested_bytes.all.current"));
            a.free(mem);
            assertEquals(prev, stat(a, "allocated_bytes.all.current"));
        }

        /** test_cachingAllocator_raw_alloc (caching enabled): requested_bytes.all.allocated +1,048,576 for 1 MiB. */
        @Test
        void testRawAllocRequestedBytes() {
            CachingArena a = arena(sim80(), "");
            long before = stat(a, "requested_bytes.all.allocated");
            long p = a.malloc(MiB);
            assertEquals(before + 1_048_576, stat(a, "requested_bytes.all.allocated"));
            a.free(p);
        }

        /** A size of 0 returns null and changes no stats. */
        @Test
        void zeroSizeIsNullAndCountsNothing() {
            CachingArena a = arena(sim80(), "");
            Map<String, Long> before = a.memoryStats();
            assertEquals(0, a.malloc(0));
            assertEquals(before, a.memoryStats());
        }

        /** memory_stats(): a sorted flat map with upstream's key names; max_split_size is -1 by default. */
        @Test
        void memoryStatsKeySet() {
            CachingArena a = arena(sim80(), "");
            Map<String, Long> m = a.memoryStats();
            Set<String> expected = new TreeSet<>();
            for (String metric : List.of("allocation", "segment", "active", "inactive_split", "allocated_bytes",
                    "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes")) {
                for (String pool : List.of("all", "small_pool", "large_pool")) {
                    for (String field : List.of("current", "peak", "allocated", "freed")) {
                        expected.add(metric + "." + pool + "." + field);
                    }
                }
            }
            for (String stat : List.of("oversize_allocations", "oversize_segments")) {
                for (String field : List.of("current", "peak", "allocated", "freed")) {
                    expected.add(stat + "." + field);
                }
            }
            expected.addAll(List.of("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc",
                    "num_device_free", "max_split_size"));
            assertEquals(122, expected.size());
            assertTrue(m.keySet().containsAll(expected), () -> "missing: " + missing(expected, m.keySet()));
            Set<String> extra = new TreeSet<>(m.keySet());
            extra.removeAll(expected);
            extra.remove("num_oom_rejections"); // newest upstream; allowed, not required
            assertTrue(extra.isEmpty(), () -> "keys upstream does not have: " + extra);
            assertEquals(new ArrayList<>(new TreeSet<>(m.keySet())), new ArrayList<>(m.keySet()), "sorted");
            assertEquals(-1L, m.get("max_split_size"));
            assertFalse(m.containsKey("allocated.all.current"), "the key is allocation, not the docstring's allocated");

            CachingArena b = arena(sim80(), "max_split_size_mb:40");
            assertEquals(41_943_040L, stat(b, "max_split_size"));
        }

        private static Set<String> missing(Set<String> expected, Set<String> actual) {
            Set<String> s = new TreeSet<>(expected);
            s.removeAll(actual);
            return s;
        }

        /** Stat semantics: increase moves current, peak, allocated; decrease moves current and freed; resets. */
        @Test
        void statFieldsAndResets() {
            CachingArena a = arena(sim80(), "");
            long x = a.malloc(1000); // 1024 B block in a 2 MiB small segment
            long y = a.malloc(30 * MiB); // 30 MiB block in a 30 MiB large segment
            a.free(x);
            assertEquals(30 * MiB, stat(a, "allocated_bytes.all.current"));
            assertEquals(30 * MiB + 1024, stat(a, "allocated_bytes.all.peak"));
            assertEquals(30 * MiB + 1024, stat(a, "allocated_bytes.all.allocated"));
            assertEquals(1024, stat(a, "allocated_bytes.all.freed"));
            assertEquals(0, stat(a, "allocated_bytes.small_pool.current"));
            assertEquals(1024, stat(a, "allocated_bytes.small_pool.peak"));
            assertEquals(30 * MiB, stat(a, "allocated_bytes.large_pool.current"));
            assertEquals(1000, stat(a, "requested_bytes.all.freed"));
            assertEquals(2, stat(a, "segment.all.current"));
            assertEquals(1, stat(a, "segment.small_pool.current"));
            assertEquals(2, stat(a, "num_device_alloc"));

            a.resetPeakStats();
            assertEquals(30 * MiB, stat(a, "allocated_bytes.all.peak"));
            assertEquals(30 * MiB + 1024, stat(a, "allocated_bytes.all.allocated"), "peak reset keeps totals");

            a.resetAccumulatedStats();
            assertEquals(0, stat(a, "allocated_bytes.all.allocated"));
            assertEquals(0, stat(a, "allocated_bytes.all.freed"));
            assertEquals(30 * MiB, stat(a, "allocated_bytes.all.current"));
            assertEquals(0, stat(a, "num_device_alloc"));
            a.free(y);
        }
    }

    // ============================================================================================ OOM

    @Nested
    class OutOfMemory {

        /** test_out_of_memory: 800,000,000 GiB names the size; 8e9 GiB is "more than 1EB"; work goes on. */
        @Test
        void testOutOfMemory() {
            CachingArena a = arena(sim80(), "");
            long tensor = a.malloc(1024 * 4);
            OutOfMemoryException e = oom(() -> a.malloc(1024L * 1024 * 1024 * 800_000_000L));
            assertContains(e.getMessage(), "Tried to allocate 800000000.00 GiB. GPU 0 has a total capacity of");
            OutOfMemoryException eb = oom(() -> a.malloc(1024L * 1024 * 1024 * 8_000_000_000L));
            assertContains(eb.getMessage(), "Tried to allocate more than 1EB memory");
            // the allocator still works
            long again = a.malloc(1024 * 4);
            assertNotEquals(0, again);
            a.free(again);
            a.free(tensor);
            assertEquals(0, stat(a, "allocation.all.current"));
        }

        /** test_out_of_memory_retry: 50% fits, a second 50% does not; free the first and it does. */
        @Test
        void testOutOfMemoryRetry() {
            SimulatedDevice d = sim80();
            d.setLimitBytes(80 * GiB - 512 * MiB); // the CUDA context and other processes
            CachingArena a = arena(d, "");
            long size = (long) (d.descriptor().totalBytes() * 0.5);
            long x = a.malloc(size);
            OutOfMemoryException e = oom(() -> a.malloc(size));
            assertContains(e.getMessage(), "CUDA out of memory. Tried to allocate 40.00 GiB. GPU 0 has a total"
                    + " capacity of 80.00 GiB of which 39.50 GiB is free.");
            assertEquals(1, stat(a, "num_ooms"));
            assertEquals(1, stat(a, "num_alloc_retries"), "the last rung retried after releasing the cache");
            a.free(x);
            long y = a.malloc(size);
            assertEquals(x, y, "the cached block is reused");
            assertEquals(1, stat(a, "num_device_alloc"));
            a.free(y);
            a.emptyCache();
            assertEquals(0, stat(a, "reserved_bytes.all.current"));
        }

        /** test_raises_oom, with and without max_split_size_mb:1024: 4 TiB on an 80 GiB device. */
        @ParameterizedTest
        @ValueSource(strings = {"", "max_split_size_mb:1024", "expandable_segments:True"})
        void testRaisesOom(String config) {
            CachingArena a = arena(sim80(), config);
            a.recordHistory(100);
            OutOfMemoryException e = oom(() -> a.malloc(4 * TiB));
            assertContains(e.getMessage(), "CUDA out of memory. Tried to allocate 4096.00 GiB. GPU 0 has a total"
                    + " capacity of 80.00 GiB of which 80.00 GiB is free.");
            assertEquals(1, stat(a, "num_ooms"));
            TraceEntry oom = last(a);
            assertEquals(TraceAction.OOM, oom.action());
            assertEquals(4 * TiB, oom.size(), "the rounded request");
            assertEquals(80 * GiB, oom.address(), "device_free");
            Map<String, Object> trace = deviceTraces(a).getLast();
            assertEquals("oom", trace.get("action"));
            assertEquals(80 * GiB, trace.get("device_free"));
            assertFalse(trace.containsKey("addr"));
        }

        /** test_notifies_oom: the observer is called with (device, segment size, total or allowed, free). */
        @Test
        void testNotifiesOom() {
            CachingArena a = arena(sim80(), "");
            List<long[]> calls = new ArrayList<>();
            a.registerOutOfMemoryObserver((dev, size, allowed, free) -> calls.add(new long[] {dev, size, allowed,
                    free}));
            oom(() -> a.malloc(1024L * 1024 * 1024 * 1024));
            assertEquals(1, calls.size());
            assertEquals(List.of(0L, TiB, 80 * GiB, 80 * GiB), List.of(calls.get(0)[0], calls.get(0)[1],
                    calls.get(0)[2], calls.get(0)[3]));

            // with a fraction, the allowed maximum; the size is the segment size, not the request
            a.setPerProcessMemoryFraction(0.5);
            long x = a.malloc(30 * GiB);
            oom(() -> a.malloc(15 * GiB - 1000));
            assertEquals(2, calls.size());
            assertEquals(List.of(0L, 15 * GiB, 40 * GiB, 50 * GiB), List.of(calls.get(1)[0], calls.get(1)[1],
                    calls.get(1)[2], calls.get(1)[3]));
            a.free(x);
        }

        /** Spec 3.11: the message, field for field, both double spaces; no NVML process line in devalloc. */
        @Test
        void messageTemplateFieldForField() {
            SimulatedDevice d = sim(GiB);
            CachingArena a = arena(d, "");
            long x = a.malloc(600 * MiB);
            long y = a.malloc(MiB); // a 2 MiB small segment: 1 MiB reserved but unallocated
            OutOfMemoryException e = oom(() -> a.malloc(500 * MiB));
            assertEquals("CUDA out of memory. Tried to allocate 500.00 MiB. GPU 0 has a total capacity of 1024.00 MiB"
                    + " of which 422.00 MiB is free. Of the allocated memory 601.00 MiB is allocated by PyTorch, and"
                    + " 1024.00 KiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large"
                    + " try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See"
                    + " documentation for Memory Management "
                    + " (https://docs.pytorch.org/docs/stable/notes/cuda.html"
                    + "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)",
                    e.getMessage());
            a.free(x);
            a.free(y);
        }

        @Test
        void messageTemplateWithFraction() {
            SimulatedDevice d = sim(GiB);
            CachingArena a = arena(d, "");
            a.setPerProcessMemoryFraction(0.5);
            long x = a.malloc(300 * MiB);
            OutOfMemoryException e = oom(() -> a.malloc(300 * MiB));
            assertEquals("CUDA out of memory. Tried to allocate 300.00 MiB. GPU 0 has a total capacity of 1024.00 MiB"
                    + " of which 724.00 MiB is free. 512.00 MiB allowed; Of the allocated memory 300.00 MiB is"
                    + " allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but"
                    + " unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to"
                    + " avoid fragmentation.  See documentation for Memory Management "
                    + " (https://docs.pytorch.org/docs/stable/notes/cuda.html"
                    + "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)",
                    e.getMessage());
            a.free(x);
        }

        /** format_size boundaries: bytes up to 1024, KiB up to 1 MiB, MiB up to 1 GiB, then GiB. */
        @ParameterizedTest
        @CsvSource({
            "1024, 1024 bytes",
            "1025, 1.00 KiB",
            "1048576, 1024.00 KiB",
            "1048577, 1.00 MiB",
            "1073741824, 1024.00 MiB",
            "1073741825, 1.00 GiB",
            "858993459200000000, 800000000.00 GiB",
        })
        void formatSize(long size, String text) {
            assertEquals(text, CachingArenaReports.formatSize(size));
        }
    }

    // ============================================================================================ fraction

    @Nested
    class MemoryFraction {

        /** test_set_per_process_memory_fraction. */
        @Test
        void testSetPerProcessMemoryFraction() {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "");
            for (double bad : new double[] {-0.1, 2.0}) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> a.setPerProcessMemoryFraction(bad));
                assertEquals("Invalid fraction value: " + bad + ". Allowed range: 0~1", e.getMessage());
            }
            assertThrows(IllegalArgumentException.class, () -> a.setPerProcessMemoryFraction(Double.NaN));
            assertEquals(1.0, a.perProcessMemoryFraction(), "no fraction set");

            long tensor = a.malloc(1024 * 4);
            a.setPerProcessMemoryFraction(0.5);
            a.emptyCache();
            long total = d.descriptor().totalBytes();
            long application = (long) (total * 0.499) - stat(a, "reserved_bytes.all.peak");
            long tmp = a.malloc(application);
            a.free(tmp);
            a.emptyCache();

            long tooMuch = (long) (total * 0.5);
            OutOfMemoryException e = oom(() -> a.malloc(tooMuch));
            assertContains(e.getMessage(), "out of memory");
            assertContains(e.getMessage(), " is free. 40.00 GiB allowed; Of the allocated memory ");
            // the error does not disturb later work
            long again = a.malloc(1024 * 4);
            a.free(again);
            a.free(tensor);
        }

        @Test
        void getterRoundTrips() {
            CachingArena a = arena(sim80(), "");
            Random r = new Random(42);
            List<Double> values = new ArrayList<>(List.of(0.0, 1.0));
            for (int i = 0; i < 10; i++) {
                values.add(r.nextDouble());
            }
            for (double v : values) {
                a.setPerProcessMemoryFraction(v);
                assertEquals(v, a.perProcessMemoryFraction(), 1e-9);
            }
        }

        /** A fraction of 0 allows nothing new: "0 bytes allowed; ", and the retry is counted without a device call. */
        @Test
        void zeroFractionAllowsNothing() {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "");
            a.setPerProcessMemoryFraction(0.0);
            OutOfMemoryException e = oom(() -> a.malloc(512));
            assertContains(e.getMessage(), "Tried to allocate 2.00 MiB.");
            assertContains(e.getMessage(), " is free. 0 bytes allowed; Of the allocated memory 0 bytes is");
            assertEquals(0, d.counters().mallocCalls(), "the fraction refuses before any device call");
            assertEquals(1, stat(a, "num_alloc_retries"), "counted even though no device call followed");
            assertEquals(0.0, a.perProcessMemoryFraction());
        }

        /** per_process_memory_fraction in the configuration text caps the allocator the same way. */
        @Test
        void fractionFromConfiguration() {
            CachingArena a = arena(sim(GiB), "per_process_memory_fraction:0.5");
            assertEquals(0.5, a.perProcessMemoryFraction());
            long x = a.malloc(500 * MiB);
            OutOfMemoryException e = oom(() -> a.malloc(20 * MiB));
            assertContains(e.getMessage(), "512.00 MiB allowed; ");
            a.free(x);
        }
    }

    // ============================================================================================ settings

    @Nested
    class AllocatorSettings {

        static final long NBYTES = 4L * 21 * 1024 * 1024; // 88,080,384
        static final long NBYTES_BIG = 4L * 100 * 1024 * 1024; // 419,430,400

        private long[] deltas(String config, long bytes) {
            CachingArena a = arena(sim80(), config);
            long x = a.malloc(NBYTES); // an earlier tensor stays alive, as in the upstream test
            long startAllocated = stat(a, "active_bytes.all.allocated");
            long startRequested = stat(a, "requested_bytes.all.allocated");
            long y = a.malloc(bytes);
            long[] out = {stat(a, "active_bytes.all.allocated") - startAllocated,
                stat(a, "requested_bytes.all.allocated") - startRequested};
            a.free(y);
            a.free(x);
            return out;
        }

        /** test_allocator_settings, every delta of active_bytes.all.allocated. */
        @Test
        void testAllocatorSettings() {
            assertEquals(88_080_384L, deltas("", NBYTES)[0]);
            long[] div4 = deltas("roundup_power2_divisions:4", NBYTES);
            assertEquals(100_663_296L, div4[0]);
            assertEquals(88_080_384L, div4[1], "requested bytes are the request");
            assertEquals(88_080_384L, deltas("garbage_collection_threshold:0.5,max_split_size_mb:40", NBYTES)[0],
                    "a new string resets the divisions");
            String list = "garbage_collection_threshold:0.5,"
                    + "roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]";
            assertEquals(92_274_688L, deltas(list, NBYTES)[0]);
            assertEquals(536_870_912L, deltas(list, NBYTES_BIG)[0]);
        }

        /** test_allocator_settings: the refused strings. */
        @ParameterizedTest
        @ValueSource(strings = {"foo:1,bar:2", "garbage_collection_threshold:1.2", "max_split_size_mb:2",
            "release_lock_on_cudamalloc:none", "pinned_use_cuda_host_register:none",
            "pinned_num_register_threads:none", "pinned_num_register_threads:1024"})
        void refusedSettings(String config) {
            assertThrows(InvalidConfigurationException.class,
                    () -> new CachingAllocatorProvider(Map.of()).create(sim80(), config));
        }
    }

    // ============================================================================================ split rules

    @Nested
    class SplitRules {

        /** 3.13: a 12,000,000 B request gets a 12,582,912 B block (remainder 582,656 is not > 1 MiB). */
        @Test
        void unsplitLargeBlockKeepsItsWholeSize() {
            CachingArena a = arena(sim80(), "");
            long p = a.malloc(12_000_000);
            assertEquals(12_582_912L, stat(a, "allocated_bytes.all.current"));
            assertEquals(12_582_912L, stat(a, "active_bytes.large_pool.current"));
            assertEquals(12_000_000L, stat(a, "requested_bytes.all.current"));
            assertEquals(12_582_912L, stat(a, "reserved_bytes.all.current"));
            assertEquals(0, stat(a, "inactive_split.all.current"));
            a.free(p);
        }

        /** A large remainder of exactly 1 MiB does not split; 1 MiB + 512 does. */
        @Test
        void largeRemainderMustExceedOneMiB() {
            CachingArena a = arena(sim80(), "");
            long p = a.malloc(19 * MiB); // 20 MiB segment, remainder 1 MiB: no split
            assertEquals(20 * MiB, stat(a, "allocated_bytes.all.current"));
            a.free(p);
            long q = a.malloc(19 * MiB - 512); // reuses the segment, remainder 1 MiB + 512: split
            assertEquals(p, q);
            assertEquals(19 * MiB - 512, stat(a, "allocated_bytes.all.current"));
            assertEquals(1, stat(a, "inactive_split.large_pool.current"));
            assertEquals(MiB + 512, stat(a, "inactive_split_bytes.large_pool.current"));
            assertEquals(1, stat(a, "segment.all.current"));
            a.free(q);
            assertEquals(0, stat(a, "inactive_split.all.current"), "merged back");
        }

        /** 3.12/3.13: the small pool splits down to 512-byte remainders; the low part is allocated. */
        @Test
        void smallPoolSplitsAt512AndInactiveSplitStats() {
            CachingArena a = arena(sim80(), "");
            long p1 = a.malloc(MiB);
            assertEquals(1, stat(a, "inactive_split.small_pool.current"));
            assertEquals(MiB, stat(a, "inactive_split_bytes.small_pool.current"));
            long p2 = a.malloc(MiB - 512);
            assertEquals(p1 + MiB, p2, "the remainder's low part");
            assertEquals(1, stat(a, "inactive_split.small_pool.current"));
            assertEquals(512, stat(a, "inactive_split_bytes.small_pool.current"), "an already-split block shrank");
            long p3 = a.malloc(512);
            assertEquals(p1 + 2 * MiB - 512, p3);
            assertEquals(0, stat(a, "inactive_split.small_pool.current"), "the split block was reused whole");
            assertEquals(0, stat(a, "inactive_split_bytes.small_pool.current"));
            assertEquals(1, stat(a, "segment.small_pool.current"));
            assertEquals(3, stat(a, "active.small_pool.current"));
            a.free(p2);
            assertEquals(1, stat(a, "inactive_split.small_pool.current"));
            assertEquals(MiB - 512, stat(a, "inactive_split_bytes.small_pool.current"));
            a.free(p1);
            assertEquals(1, stat(a, "inactive_split.small_pool.current"), "merged into one inactive block");
            assertEquals(2 * MiB - 512, stat(a, "inactive_split_bytes.small_pool.current"));
            a.free(p3);
            assertEquals(0, stat(a, "inactive_split.small_pool.current"));
            assertEquals(0, stat(a, "inactive_split_bytes.small_pool.current"));
        }

        /** Best fit: the smallest free block on the stream; ties go to the lowest address. */
        @Test
        void bestFitSmallestThenLowestAddress() {
            CachingArena a = arena(sim80(), "");
            long big = a.malloc(4000);
            long sep1 = a.malloc(512);
            long small1 = a.malloc(1024);
            long sep2 = a.malloc(512);
            long small2 = a.malloc(1024);
            long sep3 = a.malloc(512);
            a.free(big);
            a.free(small2);
            a.free(small1);
            assertEquals(small1, a.malloc(600), "smallest fit, lowest address among equals");
            assertEquals(small2, a.malloc(1000));
            assertEquals(big, a.malloc(1500));
            for (long p : new long[] {sep1, sep2, sep3}) {
                a.free(p);
            }
        }

        /** 3.4 oversize rules with max_split_size_mb:20 and the default 20 MiB max_non_split_rounding. */
        @Test
        void oversizeRules() {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "max_split_size_mb:20");
            long p = a.malloc(30 * MiB);
            assertEquals(1, stat(a, "oversize_segments.current"));
            assertEquals(1, stat(a, "oversize_allocations.current"));
            a.free(p);
            assertEquals(0, stat(a, "oversize_allocations.current"));
            // (b) s >= M: a cached block under s + 20 MiB is taken whole, never split
            long q = a.malloc(25 * MiB);
            assertEquals(p, q);
            assertEquals(30 * MiB, stat(a, "allocated_bytes.all.current"));
            a.free(q);
            // (a) s < M never takes a block >= M: a new 20 MiB segment
            long r = a.malloc(5 * MiB);
            assertNotEquals(p, r);
            assertEquals(2, stat(a, "segment.all.current"));
            assertEquals(5 * MiB, stat(a, "allocated_bytes.all.current"), "split: s < M and remainder > 1 MiB");
            a.free(r);
            // (b) free: 20 MiB (r's segment), 30 MiB (p's), 60 MiB. 30 MiB + 1 rounds to 30 MiB + 512: the 60 MiB
            // block is the best fit but 60 >= 30 MiB + 512 + 20 MiB, so it is a miss and a new 32 MiB segment follows
            long big = a.malloc(60 * MiB);
            a.free(big);
            long reservedBefore = stat(a, "reserved_bytes.all.current");
            long s = a.malloc(30 * MiB + 1);
            assertNotEquals(big, s);
            assertNotEquals(p, s);
            assertEquals(reservedBefore + 32 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(4, stat(a, "segment.all.current"));
            // 45 MiB: 60 < 45 + 20, so the 60 MiB block is taken whole (s >= M: never split)
            long t = a.malloc(45 * MiB);
            assertEquals(big, t);
            assertEquals(32 * MiB + 60 * MiB, stat(a, "allocated_bytes.all.current"));
            assertEquals(2, stat(a, "oversize_allocations.current"));
            assertEquals(4, stat(a, "oversize_segments.current"), "20, 30, 60 and 32 MiB are all >= 20 MiB");
            a.free(s);
            a.free(t);
        }
    }

    @Nested
    class SegmentSizeOptions {

        /** large_segment_size_mb: the segment of a large request under 10 MiB. */
        @Test
        void largeSegmentSize() {
            CachingArena a = arena(sim80(), "large_segment_size_mb:32");
            long p = a.malloc(5 * MiB);
            assertEquals(32 * MiB, stat(a, "reserved_bytes.all.current"));
            long q = a.malloc(30 * MiB - 1000); // >= 10 MiB: rounded up to 2 MiB, not to the large segment size
            assertEquals(32 * MiB + 30 * MiB, stat(a, "reserved_bytes.all.current"));
            a.free(p);
            a.free(q);
        }

        /** max_non_split_rounding_mb widens rule (b): a 60 MiB block may serve 30 MiB when the rounding is 50. */
        @Test
        void maxNonSplitRounding() {
            for (String config : List.of("max_split_size_mb:20", "max_split_size_mb:20,max_non_split_rounding_mb:50")) {
                CachingArena a = arena(sim80(), config);
                long big = a.malloc(60 * MiB);
                a.free(big);
                long p = a.malloc(30 * MiB);
                if (config.contains("rounding")) {
                    assertEquals(big, p, config);
                    assertEquals(60 * MiB, stat(a, "allocated_bytes.all.current"), "taken whole");
                } else {
                    assertNotEquals(big, p, config);
                    assertEquals(30 * MiB, stat(a, "allocated_bytes.all.current"));
                }
                a.free(p);
            }
        }

        /** Expandable pages of the large pool are large_segment_size big. */
        @Test
        void expandablePageIsTheLargeSegmentSize() {
            CachingArena a = arena(sim80(), "expandable_segments:True,large_segment_size_mb:32");
            a.recordHistory(10);
            long p = a.malloc(30 * MiB);
            assertEquals(32 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(32 * MiB, actions(a, TraceAction.SEGMENT_MAP).getLast().size());
            a.free(p);
        }
    }

    // ============================================================================================ retry ladder

    @Nested
    class RetryLadder {

        /** 3.5: free-memory callbacks run first on a miss; a success searches the pool again. */
        @Test
        void freeMemoryCallbacksAreAskedFirst() {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "");
            long x = a.malloc(5 * MiB); // a 20 MiB segment; 15 MiB free remainder
            long[] mallocCallsSeen = {-1};
            int[] calls = {0};
            boolean[] held = {true};
            a.registerFreeMemoryCallback(() -> {
                calls[0]++;
                mallocCallsSeen[0] = d.counters().mallocCalls();
                if (held[0]) {
                    held[0] = false;
                    a.free(x); // as IPC reference collection gives memory back
                    return true;
                }
                return false;
            });
            long small = a.malloc(2 * MiB); // a hit on the remainder: no callback
            assertEquals(0, calls[0]);
            a.free(small);
            long y = a.malloc(18 * MiB); // a miss: the callback frees x, the search finds the merged 20 MiB
            assertEquals(1, calls[0]);
            assertEquals(1, mallocCallsSeen[0], "asked before any new device malloc");
            assertEquals(x, y);
            assertEquals(1, stat(a, "num_device_alloc"));
            long z = a.malloc(18 * MiB); // a miss: the callback frees nothing, a device malloc follows
            assertEquals(2, calls[0]);
            assertEquals(2, stat(a, "num_device_alloc"));
            a.free(y);
            a.free(z);
        }

        /** 3.9: with max_split_size set, oversize cached blocks go first, without a retry or a sync. */
        @Test
        void releaseAvailableCachedBlocksWithMaxSplitSize() {
            SimulatedDevice d = sim(100 * MiB);
            CachingArena a = arena(d, "max_split_size_mb:20");
            long x = a.malloc(60 * MiB);
            long y = a.malloc(30 * MiB);
            a.free(x);
            a.free(y);
            long z = a.malloc(65 * MiB); // no single block >= 65: 60 then 30 released from the largest down
            assertEquals(0, stat(a, "num_alloc_retries"));
            assertEquals(0, stat(a, "num_sync_all_streams"));
            assertEquals(2, stat(a, "num_device_free"));
            assertEquals(66 * MiB, stat(a, "reserved_bytes.all.current"), "65 MiB rounds to a 66 MiB segment");
            a.free(z);
        }

        /** 3.9: one block >= max(s, M) is released alone; the rest of the cache stays. */
        @Test
        void releaseAvailableFreesTheSmallestSufficientBlock() {
            SimulatedDevice d = sim(100 * MiB);
            CachingArena a = arena(d, "max_split_size_mb:20");
            long x = a.malloc(60 * MiB);
            long y = a.malloc(30 * MiB);
            a.free(x);
            a.free(y);
            long z = a.malloc(35 * MiB); // 60 >= 35 + 20: not taken; device full; release the 60 MiB block
            assertEquals(0, stat(a, "num_alloc_retries"));
            assertEquals(1, stat(a, "num_device_free"));
            assertEquals(30 * MiB + 36 * MiB, stat(a, "reserved_bytes.all.current"),
                    "the 30 MiB block is still cached");
            a.free(z);
        }

        /** 3.9: not enough oversize blocks: fail, the ones freed stay freed, then the full release and retry. */
        @Test
        void releaseAvailableFailureKeepsWhatItFreed() {
            SimulatedDevice d = sim(100 * MiB);
            CachingArena a = arena(d, "max_split_size_mb:20");
            long x = a.malloc(60 * MiB);
            long y = a.malloc(30 * MiB);
            a.free(x);
            oom(() -> a.malloc(75 * MiB));
            assertEquals(1, stat(a, "num_device_free"), "the 60 MiB block was released");
            assertEquals(30 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(1, stat(a, "num_alloc_retries"));
            assertEquals(1, stat(a, "num_ooms"));
            a.free(y);
        }

        /** Without max_split_size, the ladder goes straight to release_cached_blocks: a counted retry and a sync. */
        @Test
        void withoutMaxSplitSizeTheFullReleaseRetries() {
            SimulatedDevice d = sim(100 * MiB);
            CachingArena a = arena(d, "");
            long x = a.malloc(60 * MiB);
            long y = a.malloc(30 * MiB);
            a.free(x);
            a.free(y);
            long z = a.malloc(65 * MiB);
            assertEquals(1, stat(a, "num_alloc_retries"));
            assertEquals(1, stat(a, "num_sync_all_streams"));
            assertEquals(2, stat(a, "num_device_free"));
            assertEquals(66 * MiB, stat(a, "reserved_bytes.all.current"));
            a.free(z);
        }

        /** empty_cache releases the large pool, then the small pool. */
        @Test
        void emptyCacheReleasesLargeThenSmall() {
            CachingArena a = arena(sim80(), "");
            a.recordHistory(100);
            long small = a.malloc(100);
            long large = a.malloc(30 * MiB);
            a.free(small);
            a.free(large);
            a.emptyCache();
            List<TraceEntry> frees = actions(a, TraceAction.SEGMENT_FREE);
            assertEquals(2, frees.size());
            assertEquals(large, frees.get(0).address());
            assertEquals(30 * MiB, frees.get(0).size());
            assertEquals(small, frees.get(1).address());
            assertEquals(2 * MiB, frees.get(1).size());
        }

        /** Split segments are never released by the full release: "empty_cache frees nothing". */
        @Test
        void partiallyLiveSegmentsStayReserved() {
            CachingArena a = arena(sim80(), "");
            long x = a.malloc(5 * MiB);
            long y = a.malloc(5 * MiB); // same 20 MiB segment
            a.free(x);
            a.emptyCache();
            assertEquals(20 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(0, stat(a, "num_device_free"));
            a.free(y);
            a.emptyCache();
            assertEquals(0, stat(a, "reserved_bytes.all.current"));
            assertEquals(1, stat(a, "num_device_free"));
        }
    }

    // ============================================================================================ GC

    @Nested
    class GarbageCollection {

        private long[] scenario(CachingArena a) {
            long x = a.malloc(100 * MiB);
            long y = a.malloc(100 * MiB);
            a.free(x);
            long z = a.malloc(120 * MiB);
            a.free(y);
            a.free(z);
            long w = a.malloc(150 * MiB);
            return new long[] {x, y, z, w};
        }

        /**
         * 3.6: with a fraction, over the threshold, the oldest unsplit large blocks (age >= average) are freed
         * before the device malloc. Allowed 512 MiB, threshold 256 MiB, held 320 MiB: the 100 MiB block freed
         * first (age 2 against 1, 1) goes, and that is enough.
         */
        @Test
        void collectsOldUnsplitBlocksWithAFraction() {
            CachingArena a = arena(sim(GiB), "garbage_collection_threshold:0.5");
            a.setPerProcessMemoryFraction(0.5);
            a.recordHistory(1000);
            long[] p = scenario(a);
            assertEquals(1, stat(a, "num_device_free"));
            List<TraceEntry> frees = actions(a, TraceAction.SEGMENT_FREE);
            assertEquals(1, frees.size());
            assertEquals(p[0], frees.get(0).address(), "the oldest block");
            assertEquals(370 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(0, stat(a, "num_alloc_retries"));
            List<TraceEntry> h = a.history();
            int freeAt = h.indexOf(frees.get(0));
            TraceEntry newSegment = actions(a, TraceAction.SEGMENT_ALLOC).getLast();
            assertEquals(150 * MiB, newSegment.size());
            assertTrue(freeAt < h.indexOf(newSegment), "collection runs before the device malloc");
            a.free(p[3]);
        }

        /**
         * Passes repeat until the target is reached: the first pass frees only the oldest block (40 MiB, short of the
         * 84 MiB target); the second, with the average age recomputed over the rest, frees both 150 MiB blocks.
         */
        @Test
        void passesRepeatUntilTheTarget() {
            CachingArena a = arena(sim(GiB), "garbage_collection_threshold:0.5");
            a.setPerProcessMemoryFraction(0.5); // allowed 512 MiB, threshold 256 MiB
            a.recordHistory(1000);
            long x = a.malloc(40 * MiB);
            long y = a.malloc(150 * MiB);
            a.free(x);
            long z = a.malloc(150 * MiB);
            a.free(y);
            a.free(z);
            long w = a.malloc(200 * MiB); // 340 MiB held: target 84 MiB
            assertEquals(3, stat(a, "num_device_free"));
            List<Long> freed = actions(a, TraceAction.SEGMENT_FREE).stream().map(TraceEntry::address).toList();
            assertEquals(x, freed.get(0), "the oldest first");
            assertEquals(Set.of(y, z), Set.copyOf(freed.subList(1, 3)));
            assertEquals(200 * MiB, stat(a, "reserved_bytes.all.current"));
            a.free(w);
        }

        /** #106660: without a fraction, garbage_collection_threshold is silently off. */
        @Test
        void silentlyOffWithoutAFraction() {
            CachingArena a = arena(sim(GiB), "garbage_collection_threshold:0.5");
            long[] p = scenario(a);
            assertEquals(0, stat(a, "num_device_free"));
            assertEquals(470 * MiB, stat(a, "reserved_bytes.all.current"));
            a.free(p[3]);
        }

        /** Below the threshold nothing is collected. */
        @Test
        void nothingBelowTheThreshold() {
            CachingArena a = arena(sim(GiB), "garbage_collection_threshold:0.9");
            a.setPerProcessMemoryFraction(0.5); // threshold 460.8 MiB; 320 MiB held
            long[] p = scenario(a);
            assertEquals(0, stat(a, "num_device_free"));
            a.free(p[3]);
        }

        /** Split blocks are never collected. */
        @Test
        void splitBlocksAreNotCandidates() {
            CachingArena a = arena(sim(GiB), "garbage_collection_threshold:0.1");
            a.setPerProcessMemoryFraction(0.5); // threshold 51.2 MiB
            long live = a.malloc(5 * MiB); // 20 MiB segment, split
            long x = a.malloc(100 * MiB);
            a.free(x);
            long y = a.malloc(200 * MiB); // GC: 120 held > 51.2; only the 100 MiB block is a candidate
            assertEquals(1, stat(a, "num_device_free"));
            assertEquals(220 * MiB, stat(a, "reserved_bytes.all.current"));
            a.free(y);
            a.free(live);
        }
    }

    // ============================================================================================ max_split / GC
    // with and without expandable segments (test_max_split_expandable, test_garbage_collect_expandable)

    @Nested
    class MaxSplitExpandable {

        private CachingArena withFraction(String config) {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, config);
            a.emptyCache();
            long preReserved = stat(a, "reserved_bytes.all.current");
            long total = d.memoryInfo().totalBytes();
            long totalAllowed = 120 * MiB + preReserved;
            double fraction = (double) totalAllowed / total;
            assertEquals(totalAllowed, (long) (fraction * total));
            a.setPerProcessMemoryFraction(fraction);
            return a;
        }

        private long[] threeThenOom(CachingArena a) {
            long x = a.malloc(40 * MiB);
            long y = a.malloc(40 * MiB);
            long z = a.malloc(40 * MiB);
            OutOfMemoryException e = oom(() -> a.malloc(40 * MiB));
            assertContains(e.getMessage(), "120.00 MiB allowed; ");
            a.free(x);
            a.free(y);
            a.free(z);
            return new long[] {x, y, z};
        }

        @Test
        void maxSplit40NotExpandable() {
            CachingArena a = withFraction("expandable_segments:False,max_split_size_mb:40");
            threeThenOom(a);
            assertEquals(1, stat(a, "num_alloc_retries"), "the fourth 40 MiB retried once");
            assertEquals(3, stat(a, "oversize_segments.current"));
            long w = a.malloc(120 * MiB); // release_available frees the three 40 MiB blocks
            assertEquals(1, stat(a, "num_alloc_retries"), "no further retry");
            assertEquals(3, stat(a, "num_device_free"));
            assertEquals(1, stat(a, "segment.all.current"));
            assertEquals(120 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(1, stat(a, "oversize_segments.current"));
            assertEquals(1, stat(a, "oversize_allocations.current"));
            a.free(w);
        }

        @Test
        void maxSplit40Expandable() {
            CachingArena a = withFraction("expandable_segments:True,max_split_size_mb:40");
            long[] p = threeThenOom(a);
            assertEquals(0, stat(a, "segment.all.current"), "expandable segments are not counted as segments");
            assertEquals(3, stat(a, "num_device_alloc"), "one map per allocation");
            assertEquals(p[0] + 40 * MiB, p[1], "contiguous in one reservation");
            assertEquals(p[1] + 40 * MiB, p[2]);
            long w = a.malloc(120 * MiB); // the three merged into one free 120 MiB block
            assertEquals(p[0], w);
            assertEquals(3, stat(a, "num_device_alloc"));
            assertEquals(0, stat(a, "num_device_free"));
            assertEquals(120 * MiB, stat(a, "reserved_bytes.all.current"));
            a.free(w);
        }

        @Test
        void noMaxSplitNotExpandable() {
            CachingArena a = withFraction("");
            threeThenOom(a);
            long w = a.malloc(120 * MiB); // release_cached_blocks and a retry
            assertEquals(2, stat(a, "num_alloc_retries"));
            assertEquals(3, stat(a, "num_device_free"));
            a.free(w);
        }

        /** test_garbage_collect_expandable, non-expandable half: GC frees both 40 MiB blocks before the malloc. */
        @Test
        void garbageCollectNotExpandable() {
            CachingArena a = withFraction("expandable_segments:False,garbage_collection_threshold:0.5");
            long x = a.malloc(40 * MiB);
            long y = a.malloc(40 * MiB);
            a.free(x);
            a.free(y);
            long z = a.malloc(80 * MiB);
            assertEquals(2, stat(a, "num_device_free"), "collected: 80 MiB held > 60 MiB threshold");
            assertEquals(0, stat(a, "num_alloc_retries"));
            assertEquals(80 * MiB, stat(a, "reserved_bytes.all.current"));
            a.free(z);
        }

        /** test_garbage_collect_expandable, expandable half, and GC meeting expandable blocks in the free list. */
        @Test
        void garbageCollectExpandable() {
            CachingArena a = withFraction("expandable_segments:True,garbage_collection_threshold:0.5");
            a.recordHistory(1000);
            long x = a.malloc(40 * MiB);
            long y = a.malloc(40 * MiB);
            a.free(x);
            a.free(y);
            long z = a.malloc(80 * MiB);
            assertEquals(x, z);
            assertEquals(2, stat(a, "num_device_alloc"));
            assertEquals(0, stat(a, "num_device_free"));
            a.free(z);
            // 100 MiB: a miss; GC runs with an expandable block in the free list and must leave it alone;
            // the fraction refuses 80 + 100; release_cached_blocks unmaps; the retry maps 100 MiB.
            long w = a.malloc(100 * MiB);
            assertEquals(1, stat(a, "num_alloc_retries"));
            assertEquals(1, stat(a, "num_device_free"), "one unmap, by the full release, none by GC");
            assertEquals(100 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(0, actions(a, TraceAction.SEGMENT_FREE).size());
            TraceEntry unmap = actions(a, TraceAction.SEGMENT_UNMAP).getFirst();
            assertEquals(80 * MiB, unmap.size());
            a.free(w);
        }
    }

    // ============================================================================================ streams

    @Nested
    class Streams {

        /** test_caching_allocator_record_stream_oom: deferred frees are synced and released by the retry. */
        @Test
        void testCachingAllocatorRecordStreamOom() {
            SimulatedDevice d = manualSim(GiB);
            CachingArena a = arena(d, "");
            DeviceStream side = d.createStream();
            long y = a.malloc(160 * MiB, side);
            for (int i = 0; i < 100; i++) {
                long x = a.malloc(160 * MiB);
                a.recordStream(x, side);
                a.free(x);
            }
            assertEquals(0, stat(a, "num_ooms"));
            // 1 GiB holds y and five x; every sixth x needs the retry's sync and release: x6, x11, ..., x96
            assertEquals(19, stat(a, "num_alloc_retries"));
            assertEquals(19, stat(a, "num_sync_all_streams"));
            assertEquals(101, stat(a, "num_device_alloc"));
            assertEquals(95, stat(a, "num_device_free"));
            assertEquals(5, stat(a, "active.all.current") - 1, "x96..x100 still wait for the side stream");
            a.emptyCache();
            assertEquals(160 * MiB, stat(a, "reserved_bytes.all.current"));
            a.free(y);
            a.emptyCache();
            assertEquals(0, stat(a, "reserved_bytes.all.current"));
        }

        /** test_record_stream: not reused on its stream until the recorded stream's work is done; then reused. */
        @Test
        void testRecordStream() {
            SimulatedDevice d = manualSim(80 * GiB);
            CachingArena a = arena(d, "");
            DeviceStream stream = d.createStream();
            long tmp = a.malloc(16, stream); // copy on the side stream
            a.recordStream(tmp, DeviceStream.DEFAULT); // used by the current stream
            a.free(tmp);
            assertEquals("active_pending_free", blockState(a, tmp));
            long tmp2 = a.malloc(16, stream);
            assertNotEquals(tmp, tmp2, "allocation re-used too soon");
            assertEquals(2, stat(a, "active.all.current"));
            d.completeStream(DeviceStream.DEFAULT); // torch.cuda.current_stream().synchronize()
            long tmp3 = a.malloc(16, stream);
            assertEquals(tmp, tmp3, "allocation not re-used");
            a.free(tmp2);
            a.free(tmp3);
        }

        /** The same the other way round: the default stream's block, used on a side stream. */
        @Test
        void recordStreamOnASideStream() {
            SimulatedDevice d = manualSim(80 * GiB);
            CachingArena a = arena(d, "");
            DeviceStream side = d.createStream();
            long x = a.malloc(3 * MiB);
            a.recordStream(x, side);
            a.free(x);
            long y = a.malloc(3 * MiB);
            assertNotEquals(x, y);
            a.free(y);
            d.completeStream(side);
            assertEquals(x, a.malloc(3 * MiB), "reused once the side stream's event completed");
        }

        /** free_requested at the free, free_completed only when the event is processed at a later malloc. */
        @Test
        void deferredFreeHistory() {
            SimulatedDevice d = manualSim(80 * GiB);
            CachingArena a = arena(d, "");
            a.recordHistory(100);
            DeviceStream side = d.createStream();
            long x = a.malloc(5000);
            a.recordStream(x, side);
            a.free(x);
            assertEquals(TraceAction.FREE_REQUESTED, last(a).action());
            assertEquals(5000, last(a).size());
            d.completeStream(side);
            assertEquals(TraceAction.FREE_REQUESTED, last(a).action(), "nothing happens until the next malloc");
            long y = a.malloc(5000);
            List<TraceEntry> h = a.history();
            assertEquals(TraceAction.FREE_COMPLETED, h.get(h.size() - 2).action());
            assertEquals(x, h.get(h.size() - 2).address());
            assertEquals(TraceAction.ALLOC, h.getLast().action());
            assertEquals(x, y);
            a.free(y);
        }

        /** A block used on two streams waits for both events. */
        @Test
        void twoStreamsBothMustComplete() {
            SimulatedDevice d = manualSim(80 * GiB);
            CachingArena a = arena(d, "");
            DeviceStream s1 = d.createStream();
            DeviceStream s2 = d.createStream();
            long x = a.malloc(4096);
            a.recordStream(x, s1);
            a.recordStream(x, s2);
            a.recordStream(x, s1); // recorded once
            a.free(x);
            assertEquals(2, d.pendingEvents());
            d.completeStream(s1);
            long y = a.malloc(4096);
            assertNotEquals(x, y, "s2 is still busy");
            d.completeStream(s2);
            long z = a.malloc(4096);
            assertEquals(x, z);
            a.free(y);
            a.free(z);
        }

        /** record_stream with the allocation stream is ignored: the free is immediate. */
        @Test
        void recordStreamOnOwnStreamIsIgnored() {
            SimulatedDevice d = manualSim(80 * GiB);
            CachingArena a = arena(d, "");
            DeviceStream s = d.createStream();
            long x = a.malloc(4096, s);
            a.recordStream(x, s);
            a.recordStream(0, DeviceStream.DEFAULT); // null pointer: ignored
            a.free(x);
            assertEquals(0, d.pendingEvents());
            assertEquals(0, stat(a, "active.all.current"));
            assertEquals(x, a.malloc(4096, s));
        }

        /** Blocks are reused only by the stream that allocated them. */
        @Test
        void poolsAreSiloedByStream() {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "");
            DeviceStream s = d.createStream();
            long x = a.malloc(4096);
            a.free(x);
            long y = a.malloc(4096, s);
            assertEquals(2, stat(a, "segment.small_pool.current"), "a new segment for the other stream");
            assertNotEquals(x, y);
            a.free(y);
            assertEquals(x, a.malloc(4096));
        }

        /** empty_cache waits for outstanding events and returns every segment with no live block. */
        @Test
        void emptyCacheSyncsEvents() {
            SimulatedDevice d = manualSim(80 * GiB);
            CachingArena a = arena(d, "");
            DeviceStream side = d.createStream();
            long x = a.malloc(30 * MiB);
            a.recordStream(x, side);
            a.free(x);
            a.emptyCache();
            assertEquals(0, d.pendingEvents());
            assertEquals(1, stat(a, "num_sync_all_streams"));
            assertEquals(0, stat(a, "reserved_bytes.all.current"));
            assertEquals(0, stat(a, "active.all.current"));
        }

        private String blockState(CachingAllocator a, long address) {
            for (Map<String, Object> seg : segments(a)) {
                for (Object o : (List<?>) seg.get("blocks")) {
                    Map<?, ?> b = (Map<?, ?>) o;
                    if (((Long) b.get("address")) == address) {
                        return (String) b.get("state");
                    }
                }
            }
            return null;
        }
    }

    // ============================================================================================ graph table

    /**
     * The segment-size table of test_graph_memory_stats_and_use_result_after_destroy_graph, on a fresh stream
     * standing in for the graph's private pool: b = a.clone(); 5 x (b = b.clone() + 1), each step allocating the
     * clone and the sum before freeing the clone and the old b.
     */
    @Nested
    class CloneChain {

        private long[] chain(CachingArena a, DeviceStream s, long bytes) {
            long b = a.malloc(bytes, s);
            for (int i = 0; i < 5; i++) {
                long clone = a.malloc(bytes, s);
                long sum = a.malloc(bytes, s);
                a.free(clone);
                a.free(b);
                b = sum;
            }
            return new long[] {b};
        }

        @ParameterizedTest(name = "{0} B: {1} x {2} B segments")
        @CsvSource({
            "512, 1, 2097152, small_pool",
            "1048576, 2, 2097152, small_pool",
            "1049088, 1, 20971520, large_pool",
            "10485248, 2, 20971520, large_pool",
            "10486272, 3, 12582912, large_pool",
        })
        void segmentTable(long bytes, long segments, long segmentSize, String pool) {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "");
            long input = a.malloc(bytes); // "a", outside the private pool
            DeviceStream s = d.createStream();
            Map<String, Long> pre = a.memoryStats();
            long b = chain(a, s, bytes)[0];
            Map<String, Long> post = a.memoryStats();
            assertEquals(segments, delta(pre, post, "segment." + pool + ".current"));
            assertEquals(segments * segmentSize, delta(pre, post, "reserved_bytes." + pool + ".current"));
            assertEquals(1, delta(pre, post, "active." + pool + ".current"));
            assertEquals(bytes, delta(pre, post, "active_bytes." + pool + ".current"));

            a.emptyCache(); // "del g": only b's segment stays
            Map<String, Long> postDel = a.memoryStats();
            assertEquals(1, delta(pre, postDel, "segment." + pool + ".current"));
            assertEquals(segmentSize, delta(pre, postDel, "reserved_bytes." + pool + ".current"));
            assertEquals(1, delta(pre, postDel, "active." + pool + ".current"));
            assertEquals(bytes, delta(pre, postDel, "active_bytes." + pool + ".current"));
            a.free(b);
            a.free(input);
        }

        @ParameterizedTest
        @ValueSource(longs = {512, 1048576, 1049088, 10485248, 10486272})
        void expandableSegmentsAddNoSegment(long bytes) {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "expandable_segments:True");
            long input = a.malloc(bytes);
            DeviceStream s = d.createStream();
            long before = stat(a, "segment.all.current");
            long b = chain(a, s, bytes)[0];
            assertEquals(0, before);
            assertEquals(0, stat(a, "segment.all.current"));
            assertEquals(2, stat(a, "active.all.current"));
            a.free(b);
            a.free(input);
        }

        private long delta(Map<String, Long> pre, Map<String, Long> post, String key) {
            assertNotNull(post.get(key), key);
            return post.get(key) - pre.get(key);
        }
    }

    // ============================================================================================ expandable

    @Nested
    class ExpandableSegments {

        @Test
        void mapsPagesOnDemandAndUnmapsWholeFreePages() {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "expandable_segments:True");
            a.recordHistory(1000);
            long x = a.malloc(30 * MiB); // two 20 MiB pages
            assertEquals(40 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(0, stat(a, "segment.all.current"));
            assertEquals(1, stat(a, "num_device_alloc"));
            TraceEntry map1 = lastOf(a.history().subList(0, a.history().size() - 1));
            assertEquals(TraceAction.SEGMENT_MAP, map1.action());
            assertEquals(x, map1.address());
            assertEquals(40 * MiB, map1.size());
            assertEquals(30 * MiB, stat(a, "allocated_bytes.all.current"), "split at 512 B: max_split ignored");

            long y = a.malloc(30 * MiB); // the 10 MiB free tail plus one more page
            assertEquals(x + 30 * MiB, y);
            assertEquals(60 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(2, stat(a, "num_device_alloc"));
            TraceEntry map2 = actions(a, TraceAction.SEGMENT_MAP).getLast();
            assertEquals(x + 40 * MiB, map2.address());
            assertEquals(20 * MiB, map2.size());
            assertEquals(60 * MiB, d.virtualMemory().orElseThrow().mappedBytes());

            a.free(x);
            a.emptyCache(); // [x, x+30): only the page [x, x+20) is whole and free
            assertEquals(40 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(1, stat(a, "num_device_free"));
            TraceEntry unmap1 = actions(a, TraceAction.SEGMENT_UNMAP).getLast();
            assertEquals(x, unmap1.address());
            assertEquals(20 * MiB, unmap1.size());
            assertEquals(0, stat(a, "segment.all.current"));

            // the snapshot: one segment per contiguous mapped range
            List<Map<String, Object>> segs = segments(a);
            assertEquals(1, segs.size());
            Map<String, Object> seg = segs.get(0);
            assertEquals(true, seg.get("is_expandable"));
            assertEquals(x + 20 * MiB, seg.get("address"));
            assertEquals(40 * MiB, seg.get("total_size"));
            assertEquals(30 * MiB, seg.get("allocated_size"));
            List<?> blocks = (List<?>) seg.get("blocks");
            assertEquals(2, blocks.size());
            assertEquals("inactive", ((Map<?, ?>) blocks.get(0)).get("state"));
            assertEquals(10 * MiB, ((Map<?, ?>) blocks.get(0)).get("size"));
            assertEquals("active_allocated", ((Map<?, ?>) blocks.get(1)).get("state"));

            // lowest-address placement refills the hole
            long z = a.malloc(20 * MiB);
            assertEquals(x, z);
            assertEquals(60 * MiB, stat(a, "reserved_bytes.all.current"));
            a.free(z);
            a.free(y);
            a.emptyCache();
            assertEquals(0, stat(a, "reserved_bytes.all.current"));
            assertEquals(0, d.virtualMemory().orElseThrow().mappedBytes());
            assertEquals(TraceAction.SEGMENT_UNMAP, last(a).action());
            assertTrue(segments(a).isEmpty());
        }

        /** The reservation is 1.125 x device memory in pages; a fully unmapped segment is released. */
        @Test
        void reservesOneAndAnEighthOfTheDeviceAndReleasesIt() {
            SimulatedDevice d = SimulatedDevice.builder().capacity(80 * GiB).recordHistory(true).build();
            CachingArena a = arena(d, "expandable_segments:True");
            long x = a.malloc(4096);
            long y = a.malloc(30 * MiB);
            List<DeviceOperation> reserves = d.history().stream()
                    .filter(o -> o.kind() == DeviceOperation.Kind.RESERVE).toList();
            assertEquals(2, reserves.size(), "one per (stream, pool)");
            assertEquals(90 * GiB, reserves.get(0).bytes(), "small pool: 90 GiB in 2 MiB pages");
            assertEquals(ceilTo(90 * GiB, 20 * MiB), reserves.get(1).bytes(), "large pool: 20 MiB pages");
            a.free(x);
            a.free(y);
            a.emptyCache();
            assertEquals(2, d.history().stream().filter(o -> o.kind() == DeviceOperation.Kind.RELEASE).count());
        }

        /** Expandable segments never use the device's malloc. */
        @Test
        void noDeviceMalloc() {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "expandable_segments:True");
            long x = a.malloc(4096);
            long y = a.malloc(100 * MiB);
            assertEquals(0, d.counters().mallocCalls());
            assertEquals(2, stat(a, "num_device_alloc"), "one map_block per allocation");
            assertEquals(2, d.counters().maps(), "one device map per map_block: 2 MiB, then five 20 MiB pages at once");
            assertEquals(2 * MiB + 100 * MiB, d.counters().bytesInUse());
            a.free(x);
            a.free(y);
        }

        /** A device out of physical memory fails the map and the ladder ends in OOM; nothing is left half done. */
        @Test
        void mapFailureIsOutOfMemory() {
            SimulatedDevice d = sim(GiB);
            CachingArena a = arena(d, "expandable_segments:True");
            long x = a.malloc(900 * MiB);
            OutOfMemoryException e = oom(() -> a.malloc(200 * MiB));
            assertContains(e.getMessage(), "Tried to allocate 200.00 MiB");
            assertEquals(900 * MiB, stat(a, "reserved_bytes.all.current"));
            assertEquals(900 * MiB, d.counters().bytesInUse());
            a.free(x);
            long y = a.malloc(200 * MiB);
            assertEquals(x, y);
            a.free(y);
        }

        /** PyTorch's counters: one map_block of two pages, later unmapped in two unmap_block calls. */
        @Test
        void pyTorchCountsMapAndUnmapCalls() {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "expandable_segments:True");
            long x = a.malloc(40 * MiB); // one map_block: pages [0, 20) and [20, 40)
            a.free(x);
            long z = a.malloc(10 * MiB); // [0, 10) of the free 40 MiB
            a.emptyCache(); // [10, 40) free: the page [20, 40) is unmapped
            a.free(z);
            a.emptyCache(); // [0, 20) unmapped
            assertEquals(1, stat(a, "num_device_alloc"));
            assertEquals(2, stat(a, "num_device_free"));
            assertEquals(1, d.counters().maps(), "one map of 40 MiB");
            assertEquals(2, d.counters().unmaps(), "its upper half, then its lower half");
        }

        /**
         * AllocatorStats documents deviceMallocs as "calls to the device's malloc (and virtual-memory maps) that
         * succeeded" and deviceFrees as "calls to the device's free (and unmaps)": one map later unmapped in two
         * calls is one malloc and two frees, as PyTorch's num_device_alloc and num_device_free count them.
         */
        @Test
        void deviceCountsFollowTheApi() {
            SimulatedDevice d = sim80();
            CachingArena a = arena(d, "expandable_segments:True");
            long x = a.malloc(40 * MiB);
            a.free(x);
            long z = a.malloc(10 * MiB);
            a.emptyCache();
            a.free(z);
            a.emptyCache();
            AllocatorInvariants.checkStats(a.stats());
            assertEquals(d.counters().mallocs() + d.counters().maps(), a.stats().deviceMallocs());
            assertEquals(d.counters().frees() + d.counters().unmaps(), a.stats().deviceFrees());
            assertEquals(stat(a, "num_device_alloc"), a.stats().deviceMallocs());
            assertEquals(stat(a, "num_device_free"), a.stats().deviceFrees());
            assertEquals(1, a.stats().deviceMallocs());
            assertEquals(2, a.stats().deviceFrees());
        }

        /** release_available_cached_blocks never frees an expandable block (#119452): the full release unmaps it. */
        @Test
        void releaseAvailableSkipsExpandableBlocks() {
            SimulatedDevice d = sim(70 * MiB);
            CachingArena a = arena(d, "expandable_segments:True,max_split_size_mb:20");
            a.recordHistory(100);
            long x = a.malloc(60 * MiB);
            a.free(x);
            // 80 MiB: the free 60 MiB block plus one more page; the device has 10 MiB left: the map fails;
            // release_available finds only the expandable block and frees nothing; release_cached_blocks unmaps
            // it; the retry's 80 MiB do not fit 70 MiB: out of memory
            oom(() -> a.malloc(80 * MiB));
            assertEquals(0, actions(a, TraceAction.SEGMENT_FREE).size());
            assertEquals(1, actions(a, TraceAction.SEGMENT_UNMAP).size());
            assertEquals(1, stat(a, "num_device_free"));
            assertEquals(1, stat(a, "num_alloc_retries"));
            assertEquals(0, stat(a, "reserved_bytes.all.current"));
            long y = a.malloc(60 * MiB);
            assertNotEquals(0, y);
            a.free(y);
        }

        private static long ceilTo(long v, long m) {
            return (v + m - 1) / m * m;
        }

        private static TraceEntry lastOf(List<TraceEntry> h) {
            return h.getLast();
        }
    }

    // ============================================================================================ snapshot

    @Nested
    class Snapshot {

        /** test_memory_snapshot: the block of 311*411*4 bytes at the returned address; then segment_free/unmap. */
        @ParameterizedTest
        @CsvSource({"'', segment_free, segment_alloc", "expandable_segments:True, segment_unmap, segment_map"})
        void testMemorySnapshot(String config, String lastAction, String firstAction) {
            CachingArena a = arena(sim80(), config);
            a.recordHistory(1000);
            long x = a.malloc(311 * 411 * 4);
            Map<String, Object> ss = a.snapshotDict();
            boolean found = false;
            for (Map<String, Object> seg : segments(ss)) {
                assertTrue(seg.containsKey("frames"));
                for (Object o : (List<?>) seg.get("blocks")) {
                    Map<?, ?> b = (Map<?, ?>) o;
                    if (((Long) b.get("requested_size")) == 311 * 411 * 4) {
                        found = true;
                        assertEquals(x, b.get("address"));
                        assertEquals("active_allocated", b.get("state"));
                        assertEquals(511_488L, b.get("size"));
                        assertEquals("small", seg.get("segment_type"));
                        assertEquals(2 * MiB, seg.get("total_size"));
                        assertEquals(511_488L, seg.get("allocated_size"));
                        assertEquals(511_488L, seg.get("active_size"));
                        assertEquals(511_284L, seg.get("requested_size"));
                        assertEquals(!config.isEmpty(), seg.get("is_expandable"));
                        // PyTorch writes a tuple: Python code compares it with == (0, 0).
                        assertEquals(PythonTuple.of(0L, 0L), seg.get("segment_pool_id"));
                    }
                }
            }
            assertTrue(found);
            // the cpp pickle variant: the last action of that snapshot is the alloc of 311*411*4
            @SuppressWarnings("unchecked")
            Map<String, Object> lastTrace =
                    ((List<List<Map<String, Object>>>) ss.get("device_traces")).get(0).getLast();
            assertEquals("alloc", lastTrace.get("action"));
            assertEquals(311L * 411 * 4, lastTrace.get("size"));
            assertEquals(x, lastTrace.get("addr"));

            a.free(x);
            a.emptyCache();
            List<Map<String, Object>> traces = deviceTraces(a);
            // The first snapshot left its own entry (address 0, the active bytes) in the history.
            assertEquals(List.of(firstAction, "alloc", "snapshot", "free_requested", "free_completed", lastAction),
                    traces.stream().map(t -> t.get("action")).toList());
            assertEquals(511_488L, traces.get(2).get("size"));
            assertEquals(0L, traces.get(2).get("addr"));
            assertEquals(2 * MiB, traces.getLast().get("size"));
            assertEquals(311L * 411 * 4, traces.get(3).get("size"));
            assertEquals(311L * 411 * 4, traces.get(4).get("size"));
            assertTrue(segments(a).isEmpty());
        }

        /** The snapshot dict's top-level keys and trace entry fields. */
        @Test
        void snapshotStructure() {
            CachingArena a = arena(sim80(), "max_split_size_mb:40");
            a.recordHistory(10);
            long x = a.malloc(100);
            Map<String, Object> ss = a.snapshotDict();
            assertTrue(ss.keySet().containsAll(List.of("segments", "device_traces", "allocator_settings",
                    "external_annotations")), ss.keySet()::toString);
            Map<?, ?> settings = (Map<?, ?>) ss.get("allocator_settings");
            assertEquals(41_943_040L, settings.get("max_split_size"));
            assertEquals("max_split_size_mb:40", settings.get("PYTORCH_CUDA_ALLOC_CONF"));
            Map<String, Object> t = deviceTraces(a).getLast();
            assertTrue(t.keySet().containsAll(List.of("action", "addr", "size", "stream", "time_us",
                    "compile_context", "frames", "pool_id")), t.keySet()::toString);
            assertEquals(0L, t.get("stream"));
            assertEquals(PythonTuple.of(0L, 0L), t.get("pool_id"), "newest PyTorch: the default pools' id");
            a.free(x);
        }

        /** The history is a ring of the last N entries; 0 turns it off and clears it. */
        @Test
        void historyRing() {
            CachingArena a = arena(sim80(), "");
            a.recordHistory(3);
            long x = a.malloc(100);
            a.free(x);
            assertEquals(List.of(TraceAction.ALLOC, TraceAction.FREE_REQUESTED, TraceAction.FREE_COMPLETED),
                    a.history().stream().map(TraceEntry::action).toList(), "segment_alloc was overwritten");
            a.recordHistory(0);
            a.malloc(100);
            assertTrue(a.history().isEmpty());
        }
    }

    // ============================================================================================ summary

    @Nested
    class MemorySummary {

        /** Upstream's state for the summary tests: x = 1024 B (freed), y = 1 GiB (live). */
        private List<String> summaryLines(boolean abbreviated) {
            CachingArena a = arena(sim80(), "");
            long x = a.malloc(1024);
            a.malloc(GiB);
            a.free(x);
            return a.memorySummary(abbreviated).lines().toList();
        }

        static final String EQ = "|" + "=".repeat(75) + "|";
        static final String DASH = "|" + "-".repeat(75) + "|";

        /** The header and the byte sections, line for line (torch/cuda/memory.py's memory_summary). */
        @Test
        void headerAndByteSections() {
            List<String> lines = summaryLines(false);
            assertEquals(EQ, lines.get(0));
            assertEquals("|" + " ".repeat(17) + " PyTorch CUDA memory summary, device ID 0" + " ".repeat(17) + "|",
                    lines.get(1));
            assertEquals(DASH, lines.get(2));
            assertEquals(oomLine(0, 0), lines.get(3));
            assertEquals(EQ, lines.get(4));
            assertEquals("|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |", lines.get(5));
            assertEquals(DASH, lines.get(6));
            assertEquals("| Allocated memory      |   1024 MiB |   1024 MiB |   1024 MiB |   1024 B   |", lines.get(7));
            assertEquals("|       from large pool |   1024 MiB |   1024 MiB |   1024 MiB |      0 B   |", lines.get(8));
            assertEquals("|       from small pool |      0 MiB |      0 MiB |      0 MiB |   1024 B   |", lines.get(9));
            assertEquals(DASH, lines.get(10));
            assertEquals("| Active memory         |   1024 MiB |   1024 MiB |   1024 MiB |   1024 B   |",
                    lines.get(11));
            assertEquals("| Requested memory      |   1024 MiB |   1024 MiB |   1024 MiB |   1024 B   |",
                    lines.get(15));
            assertEquals("| GPU reserved memory   |   1026 MiB |   1026 MiB |   1026 MiB |      0 B   |",
                    lines.get(19));
            assertEquals("|       from large pool |   1024 MiB |   1024 MiB |   1024 MiB |      0 B   |",
                    lines.get(20));
            assertEquals("|       from small pool |      2 MiB |      2 MiB |      2 MiB |      0 B   |",
                    lines.get(21));
            assertEquals(DASH, lines.get(22));
            assertEquals("| Non-releasable memory |      0 B   |   2047 KiB |   2047 KiB |   2047 KiB |",
                    lines.get(23));
            assertEquals("|       from large pool |      0 B   |      0 KiB |      0 KiB |      0 KiB |",
                    lines.get(24));
            assertEquals("|       from small pool |      0 B   |   2047 KiB |   2047 KiB |   2047 KiB |",
                    lines.get(25));
            assertEquals(DASH, lines.get(26));
            assertTrue(lines.get(27).startsWith("| Allocations           |       1 "), lines.get(27));
            assertEquals(EQ, lines.getLast());
        }

        /**
         * Every line is 75 characters between the borders, count cells are {@code "{n:7d} {unit} "} and each of the
         * two oversize rows is preceded by a '-' rule: 47 lines in all.
         */
        @Test
        void countSectionsAndFullLayout() {
            List<String> lines = summaryLines(false);
            assertEquals(47, lines.size());
            for (String line : lines) {
                assertEquals(77, line.length(), () -> "not 75 wide between the borders: '" + line + "'");
                assertTrue(line.startsWith("|") && line.endsWith("|"), line);
            }
            assertEquals("| Allocations           |       1    |       2    |       2    |       1    |",
                    lines.get(27));
            assertEquals("|       from large pool |       1    |       1    |       1    |       0    |",
                    lines.get(28));
            assertEquals("|       from small pool |       0    |       1    |       1    |       1    |",
                    lines.get(29));
            assertEquals(DASH, lines.get(30));
            assertEquals("| Active allocs         |       1    |       2    |       2    |       1    |",
                    lines.get(31));
            assertEquals(DASH, lines.get(34));
            assertEquals("| GPU reserved segments |       2    |       2    |       2    |       0    |",
                    lines.get(35));
            assertEquals(DASH, lines.get(38));
            assertEquals("| Non-releasable allocs |       0    |       1    |       1    |       1    |",
                    lines.get(39));
            assertEquals(DASH, lines.get(42));
            assertEquals("| Oversize allocations  |       0    |       0    |       0    |       0    |",
                    lines.get(43));
            assertEquals(DASH, lines.get(44));
            assertEquals("| Oversize GPU segments |       0    |       0    |       0    |       0    |",
                    lines.get(45));
            assertEquals(EQ, lines.get(46));
            assertEquals(29, summaryLines(true).size());
        }

        /** Count cells divide by 1000 from 750,000 on (Tot Alloc of 750,000 allocations shows "750 K"). */
        @Test
        void countScaling() {
            CachingArena a = arena(sim80(), "");
            for (int i = 0; i < 750_000; i++) {
                a.free(a.malloc(512));
            }
            String row = a.memorySummary(true).lines().filter(l -> l.startsWith("| Allocations ")).findFirst()
                    .orElseThrow();
            assertTrue(row.startsWith("| Allocations           |       0 "), row);
            assertContains(row, "|     750 K");
            assertEquals(2, row.split("750 K", -1).length - 1, "Tot Alloc and Tot Freed: " + row);
        }

        /** {@code "  {_:9} CUDA OOMs: {num_ooms:<12d} | {_:6} cudaMalloc retries: {num_alloc_retries:<8d}  "}. */
        private static String oomLine(int ooms, int retries) {
            return "|" + "  " + " ".repeat(9) + " CUDA OOMs: " + ooms + " ".repeat(11) + " | " + " ".repeat(6)
                    + " cudaMalloc retries: " + retries + " ".repeat(7) + "  " + "|";
        }

        @Test
        void abbreviatedHasOnlyAllRows() {
            CachingArena a = arena(sim80(), "");
            List<String> lines = a.memorySummary(true).lines().toList();
            assertTrue(lines.stream().noneMatch(l -> l.contains("from large pool") || l.contains("from small pool")));
            List<String> names = lines.stream().filter(l -> l.matches("\\| [A-Z].*\\|.*"))
                    .map(l -> l.substring(2, 23).strip()).toList();
            assertEquals(List.of("Allocated memory", "Active memory", "Requested memory", "GPU reserved memory",
                    "Non-releasable memory", "Allocations", "Active allocs", "GPU reserved segments",
                    "Non-releasable allocs", "Oversize allocations", "Oversize GPU segments"), names);
        }

        /** OOMs and retries show in the header. */
        @Test
        void headerCounts() {
            CachingArena a = arena(sim80(), "");
            oom(() -> a.malloc(4 * TiB));
            String header = a.memorySummary(false).lines().toList().get(3);
            assertEquals(oomLine(1, 1), header);
        }

        @ParameterizedTest
        @CsvSource(delimiter = ';', value = {
            "786431; 786431; '786431 B  '",
            "786432; 786432; '   768 KiB'",
            "1024; 786432; '     1 KiB'",
            "805306368; 805306368; '   768 MiB'",
        })
        void byteCells(long value, long reference, String cell) {
            assertEquals(cell, MemorySummaryFormat.formatBytes(value, reference));
        }

    }

    // ============================================================================================ helpers

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> segments(Map<String, Object> snapshot) {
        return (List<Map<String, Object>>) snapshot.get("segments");
    }

    static List<Map<String, Object>> segments(CachingAllocator a) {
        return segments(a.snapshotDict());
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> deviceTraces(CachingAllocator a) {
        List<List<Map<String, Object>>> perDevice = (List<List<Map<String, Object>>>) a.snapshotDict()
                .get("device_traces");
        assertEquals(1, perDevice.size());
        return perDevice.get(0);
    }
}
