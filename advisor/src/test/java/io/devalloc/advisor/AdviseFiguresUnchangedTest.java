package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.devalloc.advisor.report.AdviceJson;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.TraceFile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every figure of {@code devalloc advise --json} on the shipped OPT trace (its pickle and its CSV form, the default
 * grid, objective and margin, two threads) stays what it was: {@code advise-figures-*.tsv} holds each number, each
 * yes/no and each configuration the JSON gives, one line per path, recorded on 2026-11-27. Sentences are left out,
 * so rewording a report changes nothing here; a setting, a capacity, a flush or a bound that moves does. A change
 * that moves a figure on purpose rewrites the file in the same commit (run this test with
 * {@code -Ddevalloc.advise.golden.write=true}) and says why.
 */
class AdviseFiguresUnchangedTest {

    /** The string leaves that are figures too: configurations, choices and names of rungs. */
    private static final Set<String> STRING_FIGURES = Set.of("config", "env", "why", "source", "origin",
            "plan_order", "rounding_allocator", "best", "recorded", "runner_up", "rung", "allocator", "objective",
            "verdict", "at_recorded_oom");

    private static Map<String, String> figures(Path trace) throws IOException {
        JobAdvice job = new Advisor().advise(TraceFile.read(trace, TraceFile.ALL_DEVICES),
                new Advisor.Options("caching", null, -1, Objective.RESERVED, 2), ReplayProgress.NONE);
        Map<String, String> out = new LinkedHashMap<>();
        flatten("", AdviceJson.toMap(job), out);
        return out;
    }

    private static void flatten(String path, Object value, Map<String, String> out) {
        if (value instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) {
                flatten(path.isEmpty() ? e.getKey().toString() : path + "." + e.getKey(), e.getValue(), out);
            }
        } else if (value instanceof List<?> l) {
            for (int i = 0; i < l.size(); i++) {
                flatten(path + "[" + i + "]", l.get(i), out);
            }
        } else if (value instanceof Number || value instanceof Boolean) {
            if (!path.endsWith("threads")) {
                out.put(path, value.toString());
            }
        } else if (value instanceof String s) {
            String key = path.substring(path.lastIndexOf('.') + 1);
            if (STRING_FIGURES.contains(key)) {
                out.put(path, s.replace('\t', ' ').replace('\n', ' '));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory.pickle", "memory.csv"})
    void everyFigureOfTheShippedTracesAdviceIsUnchanged(String file) throws IOException {
        Path trace = Path.of("..", "traces", "pt-opt-zeroth-order-fl", file);
        assertTrue(Files.isRegularFile(trace), trace + " is part of the project");
        Map<String, String> now = figures(trace);
        String golden = "advise-figures-" + file.replace('.', '-') + ".tsv";
        if (Boolean.getBoolean("devalloc.advise.golden.write")) {
            Path out = Path.of("src", "test", "resources", "io", "devalloc", "advisor", golden);
            StringBuilder text = new StringBuilder("# devalloc advise --json of traces/pt-opt-zeroth-order-fl/" + file
                    + ": every figure, one path a line (AdviseFiguresUnchangedTest)\n");
            now.forEach((k, v) -> text.append(k).append('\t').append(v).append('\n'));
            Files.writeString(out, text.toString());
            fail("wrote " + out.toAbsolutePath() + ": run again without -Ddevalloc.advise.golden.write");
        }
        Map<String, String> before = new LinkedHashMap<>();
        try (InputStream in = AdviseFiguresUnchangedTest.class.getResourceAsStream(golden)) {
            assertTrue(in != null, "no " + golden);
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    int tab = line.indexOf('\t');
                    before.put(line.substring(0, tab), line.substring(tab + 1));
                }
            }
        }
        List<String> differences = new ArrayList<>();
        for (Map.Entry<String, String> e : before.entrySet()) {
            String v = now.get(e.getKey());
            if (!e.getValue().equals(v)) {
                differences.add(e.getKey() + ": was " + e.getValue() + ", now " + v);
            }
        }
        for (String k : now.keySet()) {
            if (!before.containsKey(k)) {
                differences.add(k + ": new, " + now.get(k));
            }
        }
        assertTrue(differences.isEmpty(), differences.size() + " figures moved:\n" + String.join("\n",
                differences.subList(0, Math.min(40, differences.size()))));
    }
}
