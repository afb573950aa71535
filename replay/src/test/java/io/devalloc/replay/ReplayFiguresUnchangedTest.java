package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every replay figure of every real trace stays what it was: {@code golden-figures.tsv} holds the figures
 * {@code ./devalloc compare} printed (as JSON) for each trace of {@code ../shared/traces} and the shipped OPT trace,
 * cold through seven allocator set-ups and, for PyTorch traces, warm (with empty-cache calls) through three, recorded
 * before the trace tools moved into modules of their own. Each row is replayed again here and compared field by
 * field (events per second aside). Traces that are absent are skipped, the shipped one never is.
 *
 * <p>A change that moves a figure on purpose (a fidelity fix) updates the file in the same commit, saying why.
 */
class ReplayFiguresUnchangedTest {

    private static final String FIRST_DIFFERENCE = "ground_truth.first_difference=";

    record Row(String trace, String mode, String allocator, String conf, Map<String, String> figures) {
        @Override
        public String toString() {
            return trace + " " + mode + " " + allocator + (conf.isEmpty() ? "" : ":" + conf);
        }
    }

    static Stream<Arguments> rows() throws IOException {
        List<Arguments> out = new ArrayList<>();
        try (InputStream in = ReplayFiguresUnchangedTest.class.getResourceAsStream("golden-figures.tsv")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] c = line.split("\t", 5);
                out.add(Arguments.of(new Row(c[0], c[1], c[2], c[3].equals("-") ? "" : c[3], figures(c[4]))));
            }
        }
        return out.stream();
    }

    private static Map<String, String> figures(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        String rest = text;
        int fd = rest.indexOf(FIRST_DIFFERENCE);
        if (fd >= 0) {
            // The last field, and free text that may hold anything but a tab.
            m.put("ground_truth.first_difference", rest.substring(fd + FIRST_DIFFERENCE.length()));
            rest = rest.substring(0, Math.max(0, fd - 1));
        }
        for (String kv : rest.split(";")) {
            int eq = kv.indexOf('=');
            m.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return m;
    }

    private static Path trace(String name) {
        if (name.startsWith("shipped:")) {
            Path shipped = Path.of("..", "traces").resolve(name.substring("shipped:".length()));
            assertTrue(Files.isRegularFile(shipped), shipped + " is part of the project");
            return shipped;
        }
        return SharedTraceReplayTest.require(name.substring("shared:".length()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void theFiguresAreTheOnesRecorded(Row row) throws IOException {
        Path file = trace(row.trace());
        ReplayOptions options = ReplayOptions.defaults().withAllocator(row.allocator()).withConf(row.conf());
        if (row.mode().equals("warm")) {
            options = options.withWarm(true).withEmptyCacheAtSegmentFree(true);
        }
        assumeTrue(Files.isRegularFile(file));
        ReplayOutcome o = new Replayer(options).replay(file.getFileName().toString(), TraceSources.of(file));
        ReplayResult r = o.result();
        Map<String, String> actual = new LinkedHashMap<>();
        actual.put("warm_start", "\"" + o.warmStart().name().toLowerCase(Locale.ROOT) + "\"");
        actual.put("events", Long.toString(r.events()));
        actual.put("allocs", Long.toString(r.allocs()));
        actual.put("frees", Long.toString(r.frees()));
        actual.put("unknown_frees", Long.toString(o.unknownFrees()));
        actual.put("device_mallocs", Long.toString(r.deviceMallocs()));
        actual.put("device_frees", Long.toString(r.deviceFrees()));
        actual.put("peak_reserved_bytes", Long.toString(r.peakReservedBytes()));
        actual.put("peak_allocated_bytes", Long.toString(r.peakAllocatedBytes()));
        actual.put("peak_requested_bytes", Long.toString(r.peakRequestedBytes()));
        actual.put("end_reserved_bytes", Long.toString(r.endReservedBytes()));
        actual.put("ooms", Long.toString(r.ooms()));
        actual.put("alloc_retries", Long.toString(r.allocRetries()));
        actual.put("fragmentation", Double.toString(r.fragmentation()));
        actual.put("requested_fragmentation", Double.toString(r.requestedFragmentation()));
        actual.put("empty_cache_calls", Long.toString(o.emptyCacheCalls()));
        actual.put("streams", Long.toString(o.streams()));
        ReplayResult.GroundTruth g = r.groundTruth();
        if (g != null) {
            actual.put("ground_truth.device_mallocs", Long.toString(g.deviceMallocs()));
            actual.put("ground_truth.device_frees", Long.toString(g.deviceFrees()));
            actual.put("ground_truth.peak_reserved_bytes", Long.toString(g.peakReservedBytes()));
            actual.put("ground_truth.match", Boolean.toString(g.match()));
            actual.put("ground_truth.first_difference", String.valueOf(g.firstDifference()));
        }
        List<String> differences = new ArrayList<>();
        for (Map.Entry<String, String> e : row.figures().entrySet()) {
            String got = actual.get(e.getKey());
            if (!same(e.getValue(), got)) {
                differences.add(e.getKey() + ": recorded " + e.getValue() + ", now " + got);
            }
        }
        assertEquals(row.figures().keySet(), actual.keySet(), row + ": the same figures");
        assertTrue(differences.isEmpty(), row + ": " + differences);
    }

    /** Equal as text, or as numbers (Python and Java print some doubles differently). */
    private static boolean same(String recorded, String now) {
        if (recorded.equals(now)) {
            return true;
        }
        try {
            return now != null && Double.parseDouble(recorded) == Double.parseDouble(now);
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
