package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.assertNoStackTrace;
import static io.devalloc.examples.LauncherTest.row;
import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.examples.LauncherTest.Run;
import io.devalloc.replay.GroundTruthComparability;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.TestTraces;
import io.devalloc.replay.TraceSource;
import io.devalloc.replay.TraceSources;
import io.devalloc.replay.cli.TraceReplays;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code devalloc replay} on hand-written traces injected through {@link TraceReplays#sources}. */
@ExtendWith(InjectedTraces.class)
class ReplayCommandTest {

    /** The keys the issue requires of {@code --json}. */
    static final List<String> REQUIRED_KEYS = List.of("trace", "allocator", "device", "conf", "events", "allocs",
            "frees", "device_mallocs", "device_frees", "peak_reserved_bytes", "peak_allocated_bytes",
            "peak_requested_bytes", "end_reserved_bytes", "ooms", "alloc_retries", "fragmentation",
            "events_per_second");

    /** The hand-written traces by name; any other path goes to the real files. */
    static TraceSource source(Path path) {
        return switch (path.toString()) {
            case "warm.csv" -> TestTraces.warmSample().source();
            case "cache.csv" -> TestTraces.emptyCacheSample().source();
            case "rmm.csv" -> TestTraces.of(TraceFormat.RMM_CSV).alloc(1, 1000).free(1).free(2).source();
            case "bad.csv" -> () -> {
                throw new TraceFormatException("bad.csv", 3, "expected 6 fields, got 2");
            };
            default -> TraceSources.of(path);
        };
    }

    @Test
    void printsTheFiguresAndTheComparisonWithPyTorch() {
        Run r = run("replay", "warm.csv", "--warm");
        assertEquals(0, r.exitCode(), r::toString);
        assertAll(
                () -> assertTrue(r.out().startsWith("Replay of warm.csv (PyTorch CSV, 14 events)"), r::toString),
                () -> assertEquals("caching", row(r, "allocator")),
                () -> assertEquals("(defaults)", row(r, "config")),
                () -> assertEquals("sim:80GiB: sim:0 (simulated GPU (80.00 GiB))", row(r, "device")),
                () -> assertEquals("restored 2 segments, 3 blocks", row(r, "warm start")),
                () -> assertEquals("4", row(r, "allocations")),
                () -> assertEquals("3", row(r, "frees")),
                () -> assertEquals("2 / 0", row(r, "device mallocs / frees")),
                () -> assertEquals("54.00 MiB (56,623,104 B)", row(r, "peak reserved")),
                () -> assertTrue(row(r, "fragmentation at peak").matches(
                        "\\d+\\.\\d% \\(1 - allocated/reserved\\), \\d+\\.\\d% \\(1 - requested/reserved\\)"),
                        r::toString),
                () -> assertTrue(r.out().contains("(what PyTorch's allocator did): MATCH"), r::toString),
                () -> assertTrue(Pattern.compile("(?m)^  device mallocs +2 +2$").matcher(r.out()).find(),
                        r::toString),
                () -> assertTrue(r.out().contains("Notes:\n  - warm start: 2 presegments and 3 prealloc blocks"
                        + " restored at their recorded addresses"), r::toString),
                () -> assertEquals("", r.err()));
    }

    @Test
    void namesTheFirstDifferenceFromTheTrace() {
        Run r = run("replay", "cache.csv", "--device", "sim:1GiB");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().contains("(what PyTorch's allocator did): DIFFERS"), r::toString);
        assertTrue(r.out().contains("  first difference: device frees: 0 here, 2 in the trace"), r::toString);

        Run fixed = run("replay", "cache.csv", "--device", "sim:1GiB", "--empty-cache-at-segment-free");
        assertTrue(fixed.out().contains("): MATCH"), fixed::toString);
        assertEquals("2", row(fixed, "empty-cache calls"));
    }

    @Test
    void anotherAllocatorIsNotComparableWithTheTraceAndBfcWithoutGrowthIsExplained() {
        Run r = run("replay", "cache.csv", "--allocator", "bfc");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().contains("(what PyTorch's allocator did): not comparable (see the notes)"), r::toString);
        assertFalse(r.out().contains("first difference"), r::toString);
        // The figures side by side stay: what PyTorch did is worth seeing whatever ran.
        assertTrue(Pattern.compile("(?m)^  device mallocs +1 +2$").matcher(r.out()).find(), r::toString);
        String text = r.out().replaceAll("\\s+", " ");
        assertTrue(text.contains("- not comparable with the trace's ground truth: its segment rows are what PyTorch's"
                + " caching allocator did, which only caching and caching-host replay"), r::toString);
        assertTrue(text.contains("- bfc ran with allow_growth:false, TensorFlow's GPU default: it reserved its whole"
                + " memory limit (80.00 GiB, the whole device) in one region at its first allocation"), r::toString);

        Run json = run("replay", "cache.csv", "--allocator", "direct", "--json");
        assertTrue(json.out().contains("\"comparable\":false,\"reason\":\""
                + GroundTruthComparability.NOT_COMPARABLE_NOTE + "\",\"match\":null,\"first_difference\":null}"),
                json::toString);

        // PyTorch's host caching allocator stays compared, its difference named.
        Run host = run("replay", "cache.csv", "--allocator", "caching-host");
        assertTrue(host.out().contains("(what PyTorch's allocator did): DIFFERS"), host::toString);
        assertTrue(host.out().contains("first difference: "), host::toString);
        Run hostJson = run("replay", "cache.csv", "--allocator", "caching-host", "--json");
        assertTrue(hostJson.out().contains(
                "\"comparable\":true,\"reason\":null,\"match\":false,\"first_difference\":\""),
                hostJson::toString);
    }

    @Test
    void passesTheAllocatorDeviceAndConfigurationThrough() {
        Run r = run("replay", "rmm.csv", "--allocator", "direct", "--device", "sim:1GiB", "--conf",
                "memory_limit_mb:1");
        assertEquals(0, r.exitCode(), r::toString);
        assertEquals("direct", row(r, "allocator"));
        assertEquals("memory_limit_mb:1", row(r, "config"));
        assertTrue(row(r, "device").startsWith("sim:1GiB: "), r::toString);
        assertEquals("1", row(r, "unknown frees (skipped)"));
        assertFalse(r.out().contains("Compared with"), "an RMM log has no ground truth:\n" + r);
        assertTrue(r.out().contains("  - 1 frees of keys that were not live were skipped"), r::toString);
    }

    @Test
    void jsonIsOneObjectWithTheRequiredKeys() {
        Run r = run("replay", "warm.csv", "--warm", "--json");
        assertEquals(0, r.exitCode(), r::toString);
        String json = r.out().strip();
        assertFalse(json.contains("\n"), "exactly one line:\n" + r);
        assertTrue(json.startsWith("{\"trace\":\"warm.csv\"") && json.endsWith("}"), json);
        for (String key : REQUIRED_KEYS) {
            assertTrue(json.contains("\"" + key + "\":"), key + " in " + json);
        }
        assertTrue(json.contains("\"allocator\":\"caching\",\"device\":\"sim:80GiB\""), json);
        assertTrue(json.contains("\"ground_truth\":{\"device_mallocs\":2,\"device_frees\":0,"
                + "\"peak_reserved_bytes\":56623104,\"comparable\":true,\"reason\":null,\"match\":true,"
                + "\"first_difference\":null}"),
                json);

        Run rmm = run("replay", "rmm.csv", "--json", "--allocator", "bfc", "--conf", "allow_growth:true");
        assertEquals(0, rmm.exitCode(), rmm::toString);
        assertFalse(rmm.out().contains("ground_truth"), rmm::toString);
        assertTrue(rmm.out().contains("\"conf\":\"allow_growth:true\""), rmm::toString);
    }

    @Test
    void readsARealFileInAnyFormatTheReadersDetect(@TempDir Path dir) throws IOException {
        Path csv = dir.resolve("memory.csv");
        Files.writeString(csv, String.join("\n", "seq,action,addr,size,stream,time_us",
                "0,segment_alloc,1048576000,2097152,0,1",
                "1,alloc,1048576000,1000,0,2",
                "2,free_requested,1048576000,1000,0,3",
                "3,free_completed,1048576000,1000,0,3", ""));
        Run r = run("replay", csv.toString(), "--json");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().contains("\"format\":\"pytorch_csv\""), r::toString);
        assertTrue(r.out().contains("\"allocs\":1,\"frees\":1,"), r::toString);
        assertTrue(r.out().contains("\"match\":true"), r::toString);

        Path valgrind = dir.resolve("ls.trace");
        Files.writeString(valgrind, "Alloc(100),\nAlloc(200),\nFree(0),\nFree(1),\n");
        Run v = run("replay", valgrind.toString(), "--allocator", "direct", "--device", "sim:1GiB");
        assertEquals(0, v.exitCode(), v::toString);
        assertTrue(v.out().startsWith("Replay of " + valgrind + " (valgrind malloc trace, 4 events)"), v::toString);
        assertEquals("2", row(v, "allocations"));
        assertEquals("2", row(v, "frees"));

        Path bad = dir.resolve("bad.csv");
        Files.writeString(bad, "seq,action,addr,size,stream,time_us\n0,alloc,12\n");
        Run b = run("replay", bad.toString());
        assertEquals(Launcher.EXIT_USAGE, b.exitCode(), b::toString);
        assertTrue(b.err().startsWith("devalloc: error: " + bad + ":2: "), b::toString);
        assertNoStackTrace(b);

        Path empty = dir.resolve("empty.csv");
        Files.writeString(empty, "");
        Run e = run("replay", empty.toString());
        assertEquals(Launcher.EXIT_USAGE, e.exitCode(), e::toString);
        assertTrue(e.err().startsWith("devalloc: error: " + empty + ": the file is empty"), e::toString);
    }

    @Test
    void writesTheHtmlReport(@TempDir Path dir) throws IOException {
        Path html = dir.resolve("out/report.html");
        Run r = run("replay", "warm.csv", "--warm", "--html", html.toString());
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().endsWith("HTML report: " + html + System.lineSeparator()), r::toString);
        String page = Files.readString(html);
        assertTrue(page.startsWith("<!DOCTYPE html>") || page.startsWith("<!doctype html>"), page.substring(0, 40));
        assertTrue(page.contains("warm.csv"), "the page names the trace");

        Path jsonHtml = dir.resolve("json.html");
        Run j = run("replay", "rmm.csv", "--json", "--html", jsonHtml.toString());
        assertEquals(0, j.exitCode(), j::toString);
        assertTrue(j.out().strip().startsWith("{") && j.out().strip().endsWith("}"), "stdout stays one JSON object");
        assertTrue(Files.size(jsonHtml) > 0);

        Run bad = run("replay", "rmm.csv", "--html", dir.toString());
        assertEquals(Launcher.EXIT_USAGE, bad.exitCode(), bad::toString);
        assertTrue(bad.err().startsWith("devalloc: error: --html " + dir + ": cannot be written: it is a directory"),
                bad::toString);
    }

    @Test
    void usageErrorsExitWithTwoAndAClearMessage() {
        record Case(String[] args, String message) {
        }
        List<Case> cases = List.of(
                new Case(new String[] {"replay"}, "devalloc: error: Missing required parameter: 'TRACE'"),
                new Case(new String[] {"replay", "warm.csv", "--allocator", "nope"},
                        "devalloc: error: unknown allocator 'nope'; available: "),
                new Case(new String[] {"replay", "warm.csv", "--conf", "bogus:1"},
                        "devalloc: error: Unrecognized key 'bogus' in CUDA allocator config ("),
                new Case(new String[] {"replay", "warm.csv", "--device", "nosuch"},
                        "devalloc: error: unknown device provider 'nosuch'"),
                new Case(new String[] {"replay", "no/such/trace.csv"},
                        "devalloc: error: no such trace file: no/such/trace.csv"),
                new Case(new String[] {"replay", "bad.csv"}, "devalloc: error: bad.csv:3: expected 6 fields, got 2"),
                new Case(new String[] {"replay", "warm.csv", "--frobnicate"},
                        "devalloc: error: Unknown option: '--frobnicate'"));
        for (Case c : cases) {
            Run r = run(c.args());
            assertEquals(Launcher.EXIT_USAGE, r.exitCode(), r::toString);
            assertTrue(r.err().startsWith(c.message()), "expected '" + c.message() + "':\n" + r);
            assertNoStackTrace(r);
        }
    }

    @Test
    void helpDescribesTheOptionsAndTheirDefaults() {
        Run r = run("help", "replay");
        assertEquals(0, r.exitCode(), r::toString);
        // Picocli wraps long lines, even inside "sim:80GiB": compare with the whitespace taken out.
        String text = r.out().replaceAll("\\s+", "");
        for (String s : List.of("TRACE", "--allocator=NAME", "--device=SPEC", "--config=K:V,...", "--warm",
                "--empty-cache-at-segment-free", "--json", "Default:" + ReplayOptions.DEFAULT_ALLOCATOR,
                "Default:" + ReplayOptions.DEFAULT_DEVICE, "DEVALLOC_DEVICE", "DEVALLOC_ALLOCATOR", "DEVALLOC_CONFIG",
                // Why its defaults differ from the demo's.
                "'devallocdemo'usesthedirectallocatoronthedevice'auto'picks")) {
            assertTrue(text.contains(s), s + " in\n" + r);
        }
        // --conf, the option's old name, still works (see passesTheAllocatorDeviceAndConfigurationThrough) but the
        // usage line and the option list show --config only.
        assertFalse(text.contains("[--conf=") || text.contains("--conf=K:V"), r::toString);
    }

    @Test
    void configAndItsOldNameConfAreOneOption() {
        Run config = run("replay", "rmm.csv", "--allocator", "direct", "--config", "memory_limit_mb:1");
        Run conf = run("replay", "rmm.csv", "--allocator", "direct", "--conf", "memory_limit_mb:1");
        assertEquals("memory_limit_mb:1", row(config, "config"));
        assertEquals("memory_limit_mb:1", row(conf, "config"));

        Run both = run("replay", "rmm.csv", "--config", "a:1", "--conf", "b:2");
        assertEquals(Launcher.EXIT_USAGE, both.exitCode(), both::toString);
        assertTrue(both.err().startsWith("devalloc: error: --config and --conf are the same option"), both::toString);
        assertEquals("", both.out());
    }
}
