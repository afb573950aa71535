package io.devalloc.advisor.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.AdvisorTrace;
import io.devalloc.advisor.JobAdvice;
import io.devalloc.advisor.Objective;
import io.devalloc.replay.ReplayProgress;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JSON object's keys (the schema docs/advisor.md documents), the terminal report and the page's sections. */
class AdviceJsonTest {

    static final Path OPT_CSV = Path.of("..", "traces", "pt-opt-zeroth-order-fl", "memory.csv");

    @TempDir
    static Path dir;
    static Advice advice;

    @BeforeAll
    static void advise() throws IOException {
        Path grid = Files.write(dir.resolve("grid.txt"), List.of("defaults", "expandable_segments:True",
                "max_split_size_mb:1"));
        advice = new Advisor().advise(AdvisorTrace.read(OPT_CSV),
                new Advisor.Options("caching", grid.toString(), -1, Objective.CAPACITY, 2), ReplayProgress.NONE);
    }

    @Test
    void theObjectHasEveryKeyTheSchemaLists() {
        Map<String, Object> m = AdviceJson.device(advice);
        assertTrue(m.keySet().containsAll(List.of("schema", "trace", "allocator", "capacity_bytes", "baseline",
                "settings", "recommendation", "objective", "grid", "notes")), m.keySet().toString());
        assertEquals(null, m.get("capacity_bytes"));
        Map<?, ?> baseline = (Map<?, ?>) m.get("baseline");
        assertTrue(baseline.keySet().containsAll(List.of("config", "ground_truth")), baseline.toString());
        Map<?, ?> truth = (Map<?, ?>) baseline.get("ground_truth");
        assertTrue(truth.keySet().containsAll(List.of("match", "first_difference")), truth.toString());
        for (Object o : (List<?>) m.get("settings")) {
            Map<?, ?> s = (Map<?, ?>) o;
            assertTrue(s.keySet().containsAll(List.of("config", "peak_reserved_bytes", "peak_allocated_bytes",
                    "peak_requested_bytes", "min_capacity_bytes", "device_mallocs", "device_frees", "alloc_retries",
                    "ooms_at_capacity", "fragmentation", "waste_at_peak")), s.keySet().toString());
            assertTrue(s.get("min_capacity_bytes") instanceof Long, s.toString());
            Map<?, ?> waste = (Map<?, ?>) s.get("waste_at_peak");
            assertEquals(List.of("rounding", "unsplit_remainder", "free_in_used_segments", "free_segments",
                    "unmapped_page_tails", "total"), List.copyOf(waste.keySet()), s.toString());
            long sum = 0;
            for (String cause : List.of("rounding", "unsplit_remainder", "free_in_used_segments", "free_segments",
                    "unmapped_page_tails")) {
                sum += (Long) waste.get(cause);
            }
            assertEquals(waste.get("total"), sum, s.toString());
            assertTrue((Long) s.get("peak_reserved_bytes") - (Long) s.get("peak_requested_bytes") <= sum,
                    "at the reserved peak no more is requested than at the requested peak: " + s);
        }
        Map<?, ?> rec = (Map<?, ?>) m.get("recommendation");
        assertTrue(rec.keySet().containsAll(List.of("config", "env", "saving_bytes", "saving_fraction", "caveats",
                "saving_device_calls", "saving_device_calls_fraction")), rec.toString());
        Map<?, ?> grid = (Map<?, ?>) m.get("grid");
        assertEquals(1, ((List<?>) grid.get("problems")).size(), grid.toString());
        assertTrue(m.keySet().containsAll(List.of("device", "history", "card", "min_saving", "flushes",
                "end_state")), m.keySet().toString());
        assertEquals(null, m.get("device"), "a CSV names no device");
        assertEquals(true, m.get("history"));
        for (Object o : (List<?>) m.get("settings")) {
            Map<?, ?> s = (Map<?, ?>) o;
            assertTrue(s.containsKey("retries_at_min_capacity"), s.toString());
        }
        assertTrue(rec.keySet().containsAll(List.of("why", "runner_up", "costs")), rec.toString());
        String json = AdviceJson.toJson(JobAdvice.of(advice), false);
        assertTrue(json.startsWith("{\"schema\":2,\"trace\":"), json);
        Map<String, Object> job = AdviceJson.toMap(JobAdvice.of(advice));
        assertEquals(List.of("schema", "trace", "allocator", "objective", "capacity_bytes", "min_saving",
                "granularity_bytes", "devices", "unused_devices", "most_memory_device", "runs", "threads"),
                List.copyOf(job.keySet()));
        assertEquals(List.of(m), job.get("devices"), "one object per device, each with every key of schema 1");
    }

    @Test
    void theTerminalReportLeadsWithTheTrustLineAndTheLineToPaste() {
        StringWriter text = new StringWriter();
        AdviceText.print(new PrintWriter(text), advice);
        String out = text.toString();
        int trust = out.indexOf("Trust: ");
        int paste = out.indexOf("PYTORCH_CUDA_ALLOC_CONF=");
        int table = out.indexOf("#  CONFIG");
        assertTrue(trust > 0 && trust < paste && paste < table, out);
        assertTrue(out.contains("max_split_size_mb too small"), out);
    }

    @Test
    void thePageOpensWithTheRecommendationAndTheTrustLine() {
        String html = AdviceHtml.render(advice);
        int rec = html.indexOf("id=\"d0-recommendation\"");
        int trust = html.indexOf("id=\"d0-trust\"");
        int ranking = html.indexOf("id=\"d0-ranking\"");
        int chart = html.indexOf("id=\"d0-timeline\"");
        int maps = html.indexOf("id=\"d0-segments\"");
        int waste = html.indexOf("id=\"d0-waste\"");
        assertTrue(rec > 0 && rec < trust && trust < ranking && ranking < chart && chart < maps && maps < waste,
                "sections in order");
        assertTrue(html.contains("PYTORCH_CUDA_ALLOC_CONF="), "the line to paste");
        assertTrue(html.contains("<select class=\"chart-choice\" data-device=\"d0\">"), "other settings selectable");
        assertTrue(html.contains("<td>unmapped page tails</td>") && !html.contains("did not explain"),
                "the waste at the peak by cause");
        assertTrue(html.contains("at its reserved peak"), "the segment maps at the peaks");
        assertTrue(!html.contains("http://") && !html.contains("https://"), "nothing fetched");
        // A CSV does not record the settings: its baseline is the defaults, never called "recorded".
        assertTrue(html.contains("<span class=\"dim\">baseline (defaults)</span>"), "the baseline named as it is");
        assertFalse(html.contains("recorded</span>") || html.contains("(recorded)"), "no recorded setting here");
    }
}
