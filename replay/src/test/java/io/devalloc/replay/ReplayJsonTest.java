package io.devalloc.replay;

import static io.devalloc.replay.TestTraces.MiB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.TraceFormat;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplayJsonTest {

    /** The keys the issue requires, in order among the others. */
    static final List<String> REQUIRED = List.of("trace", "allocator", "device", "conf", "events", "allocs", "frees",
            "device_mallocs", "device_frees", "peak_reserved_bytes", "peak_allocated_bytes", "peak_requested_bytes",
            "end_reserved_bytes", "ooms", "alloc_retries", "fragmentation", "events_per_second");

    @Test
    void aPyTorchReplayHasEveryRequiredKeyAndTheGroundTruth() throws IOException {
        ReplayOutcome o = ReplayerTest.replay(ReplayOptions.defaults().withDevice("sim:1GiB"),
                ReplayerTest.emptyCacheTrace());
        Map<String, Object> m = ReplayJson.toMap(o);
        assertTrue(m.keySet().containsAll(REQUIRED), m.keySet()::toString);
        List<String> order = m.keySet().stream().filter(REQUIRED::contains).toList();
        assertEquals(REQUIRED, order);
        @SuppressWarnings("unchecked")
        Map<String, Object> gt = (Map<String, Object>) m.get("ground_truth");
        assertEquals(List.of("device_mallocs", "device_frees", "peak_reserved_bytes", "comparable", "reason",
                "match", "first_difference"), List.copyOf(gt.keySet()));
        assertEquals(true, gt.get("comparable"));
        assertTrue(gt.containsKey("reason") && gt.get("reason") == null, gt::toString);
        assertEquals(2L, gt.get("device_mallocs"));
        assertEquals(30 * MiB, gt.get("peak_reserved_bytes"));
        assertEquals(false, gt.get("match"));
        assertEquals("device frees: 0 here, 2 in the trace (where the program called empty_cache,"
                + " --empty-cache-at-segment-free does too)", gt.get("first_difference"));
        assertEquals("caching", m.get("allocator"));
        assertEquals("sim:1GiB", m.get("device"));
        assertEquals("", m.get("conf"));
        assertEquals(8L, m.get("events"));
        assertEquals("pytorch_csv", m.get("format"));

        String json = ReplayJson.toJson(o, false);
        assertTrue(json.startsWith("{\"trace\":\"t\",\"format\":\"pytorch_csv\",\"allocator\":\"caching\""), json);
        assertFalse(json.contains("\n"), "one line");
        for (String key : REQUIRED) {
            assertTrue(json.contains("\"" + key + "\":"), key);
        }
        assertTrue(json.contains("\"ground_truth\":{\"device_mallocs\":2,\"device_frees\":2,"
                + "\"peak_reserved_bytes\":31457280,\"comparable\":true,\"reason\":null,\"match\":false,"), json);
    }

    @Test
    void anotherAllocatorsGroundTruthIsNotComparableAndNamesNoDifference() throws IOException {
        for (String allocator : List.of("direct", "bfc")) {
            ReplayOutcome o = ReplayerTest.replay(ReplayOptions.defaults().withAllocator(allocator)
                    .withConf(allocator.equals("bfc") ? "allow_growth:true" : "").withDevice("sim:1GiB"),
                    ReplayerTest.emptyCacheTrace());
            // The engine still finds a difference; the JSON does not present it as one.
            assertFalse(o.result().groundTruth().match(), allocator);
            @SuppressWarnings("unchecked")
            Map<String, Object> gt = (Map<String, Object>) ReplayJson.toMap(o).get("ground_truth");
            assertEquals(false, gt.get("comparable"), allocator);
            assertEquals(GroundTruthComparability.NOT_COMPARABLE_NOTE, gt.get("reason"), allocator);
            assertTrue(gt.containsKey("match") && gt.get("match") == null, allocator + ": " + gt);
            assertTrue(gt.containsKey("first_difference") && gt.get("first_difference") == null, allocator + ": " + gt);
            // The trace's own figures stay: they are what PyTorch did, whatever ran here.
            assertEquals(2L, gt.get("device_mallocs"), allocator);
            assertEquals(30 * MiB, gt.get("peak_reserved_bytes"), allocator);
            assertTrue(ReplayJson.toJson(o, false).contains("\"comparable\":false,\"reason\":\"not comparable with"),
                    allocator);
            assertTrue(ReplayJson.toJson(o, false).contains("\"match\":null,\"first_difference\":null}"), allocator);
        }
    }

    @Test
    void otherFormatsHaveNoGroundTruthAndAnArrayHoldsSeveralReplays() throws IOException {
        ReplayOutcome o = ReplayerTest.replay(ReplayOptions.defaults().withAllocator("direct").withDevice("sim:1GiB"),
                TestTraces.of(TraceFormat.VALGRIND).alloc(0, 100).free(0).free(7));
        Map<String, Object> m = ReplayJson.toMap(o);
        assertFalse(m.containsKey("ground_truth"));
        assertEquals(1L, m.get("unknown_frees"));
        assertEquals(List.of("1 frees of keys that were not live were skipped"), m.get("notes"));
        String array = ReplayJson.toJson(List.of(o, o), false);
        assertTrue(array.startsWith("[{\"trace\":\"t\"") && array.endsWith("}]") && array.contains("},{"), array);
    }
}
