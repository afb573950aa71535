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
        assertEquals(List.of("device_mallocs", "device_frees", "peak_reserved_bytes", "match", "first_difference"),
                List.copyOf(gt.keySet()));
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
                + "\"peak_reserved_bytes\":31457280,\"match\":false,"), json);
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
