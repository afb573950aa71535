package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.assertNoStackTrace;
import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.examples.LauncherTest.Run;
import io.devalloc.replay.cli.CompareCommand;
import io.devalloc.replay.cli.TraceReplays;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code devalloc compare} on hand-written traces injected through {@link TraceReplays#sources}. */
@ExtendWith(InjectedTraces.class)
class CompareCommandTest {

    /** The cells of the first table row {@code name}, one per run, a marked one ending in " *". */
    static List<String> cells(Run run, String name) {
        Matcher m = Pattern.compile("(?m)^  " + Pattern.quote(name) + " {2,}(.+)$").matcher(run.out());
        assertTrue(m.find(), "no row '" + name + "' in\n" + run);
        return split(m.group(1));
    }

    /** Splits a row's cells on runs of two or more spaces and attaches each mark to the figure before it. */
    static List<String> split(String row) {
        List<String> cells = new ArrayList<>();
        for (String token : row.strip().split(" {2,}")) {
            if (token.equals(CompareCommand.BEST)) {
                cells.set(cells.size() - 1, cells.getLast() + " " + CompareCommand.BEST);
            } else {
                cells.add(token);
            }
        }
        return cells;
    }

    @Test
    void theDefaultRunsSideBySideWithTheBestMarked() {
        Run r = run("compare", "cache.csv", "--empty-cache-at-segment-free");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().startsWith("cache.csv (PyTorch CSV, 8 events) on sim:80GiB"), r::toString);
        // bfc runs with growth by default, and its label says so.
        assertTrue(Pattern.compile("(?m)^ +direct +bfc allow_growth:true +caching +caching expandable_segments:True$")
                .matcher(r.out()).find(), r::toString);
        List<String> peak = cells(r, "peak reserved");
        assertEquals(4, peak.size(), peak::toString);
        // With growth bfc reserves what the trace needs (two 2 MiB-doubling regions here), not the whole device.
        assertFalse(peak.get(1).startsWith("80.00 GiB"), peak::toString);
        // Two allocations, two device mallocs in every run: they paid alike, so all are ranked on memory held.
        assertTrue(peak.stream().anyMatch(c -> c.endsWith(" *")), peak::toString);
        assertEquals(List.of("2", "2", "2", "2"), cells(r, "device mallocs"));
        assertFalse(r.out().contains("not ranked on"), r::toString);
        assertTrue(r.out().replaceAll("\\s+", " ").contains("note (bfc allow_growth:true): a default run of compare:"
                + " bfc grows its regions as needed here (allow_growth:true); TensorFlow's GPU default"
                + " (allow_growth:false) reserves its whole memory limit, by default the whole device, at the first"
                + " allocation"), r::toString);
        // caching makes the trace's own segments; direct and bfc are other allocators: not comparable, no
        // difference listed, one note for both.
        assertEquals(List.of("not comparable", "not comparable", "MATCH", "differs"), cells(r, "same as PyTorch"));
        assertTrue(r.out().contains("  PyTorch (the trace's segment rows): 2 device mallocs, 2 device frees,"
                + " peak reserved 30.00 MiB"), r::toString);
        assertFalse(r.out().contains("  direct: device malloc"), r::toString);
        assertFalse(r.out().contains("  bfc allow_growth:true: device malloc"), r::toString);
        assertTrue(r.out().contains("  caching expandable_segments:True: device "), r::toString);
        assertTrue(r.out().contains("  note (direct, bfc allow_growth:true): not comparable with the trace's ground"
                + " truth:"), r::toString);
        assertEquals(1, r.out().split("not comparable with the trace's ground truth", -1).length - 1, r::toString);
        // Equal figures are not marked: every run replays the same requests.
        assertFalse(cells(r, "peak requested").stream().anyMatch(c -> c.endsWith("*")), r::toString);
        // The speed differs from run to run but is never marked: it measures the machine and the JVM's warm-up.
        List<String> speed = cells(r, "events/s (wall clock)");
        assertEquals(4, speed.size(), speed::toString);
        assertFalse(speed.stream().anyMatch(c -> c.endsWith("*")), r::toString);
        assertTrue(r.out().replaceAll("\\s+", " ").contains("Lower is better; * marks the best of each row (ties"
                + " share it). Peak reserved, end reserved and fragmentation at peak rank only the runs that cache"),
                r::toString);
        assertTrue(r.out().replaceAll("\\s+", " ").contains("(a note names it). events/s (wall clock) is how fast this"
                + " machine replayed the trace"), r::toString);
        assertFalse(r.out().contains("All "), "one trace, no summary table:\n" + r);
        assertEquals("", r.err());
    }

    @Test
    void memoryHeldIsMarkedOnlyAmongTheRunsThatCache() {
        Run r = run("compare", AdviseCommandTest.OPT_CSV);
        assertEquals(0, r.exitCode(), r::toString);
        // direct makes a device malloc for every one of the trace's 7,946 allocations: it holds the least memory,
        // paid for with those calls, so the marks on memory held go to the runs that cache.
        assertEquals(List.of("7,946", "4 *", "61", "52"), cells(r, "device mallocs"));
        assertEquals(List.of("1.66 GiB", "2.00 GiB", "1.77 GiB", "1.69 GiB *"), cells(r, "peak reserved"));
        assertEquals(List.of("964.63 MiB", "2.00 GiB", "1.77 GiB", "1.69 GiB *"), cells(r, "end reserved"));
        assertEquals(List.of("0.0%", "10.8%", "5.6%", "1.4% *"), cells(r, "fragmentation at peak"));
        String text = r.out().replaceAll("\\s+", " ");
        assertTrue(text.contains("note (direct): not ranked on peak reserved, end reserved and fragmentation at peak:"
                + " 7,946 device mallocs for 7,946 allocations, at least one device call per allocation where"
                + " another run made 4, so its low figures there are paid for with those calls"),
                r::toString);
        assertTrue(text.contains("Peak reserved, end reserved and fragmentation at peak rank only the runs that"
                + " cache: a run that made at least one device malloc per allocation (as direct does) while another"
                + " run made fewer"), r::toString);
        assertEquals("", r.err());

        // Over several traces too: direct is not ranked on the sum of peak reserved.
        Run two = run("compare", AdviseCommandTest.OPT_CSV, AdviseCommandTest.OPT_CSV, "--run", "direct", "--run",
                "caching", "--run", "caching:expandable_segments:True");
        assertEquals(List.of("3.32 GiB", "3.54 GiB", "3.37 GiB *"), lastCells(two, "sum of peak reserved"));
    }

    @Test
    void severalTracesGetATableEachAndOneOverAll() {
        Run r = run("compare", "cache.csv", "warm.csv", "--run", "caching", "--run", "direct", "--warm");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().contains("cache.csv (PyTorch CSV, 8 events)"), r::toString);
        assertTrue(r.out().contains("warm.csv (PyTorch CSV, 14 events)"), r::toString);
        assertTrue(r.out().contains("All 2 traces"), r::toString);
        // caching matches the warm trace, not cache.csv (no --empty-cache-at-segment-free); direct is not
        // comparable, so caching has nothing to be best against.
        assertEquals(List.of("1/2", "not comparable"), lastCells(r, "same as PyTorch"));
        Run two = run("compare", "cache.csv", "warm.csv", "--run", "caching", "--run",
                "caching:expandable_segments:True", "--run", "direct", "--warm");
        assertEquals(List.of("1/2 *", "0/2", "not comparable"), lastCells(two, "same as PyTorch"));
        assertTrue(r.out().contains("note (direct): warm start: allocator 'direct' cannot restore"), r::toString);
        // A note every run has is printed once.
        assertTrue(r.out().contains("  note: --warm: the trace has no presegment or prealloc rows"), r::toString);
    }

    /** The cells of the last row named {@code name} (the all-traces table comes last). */
    static List<String> lastCells(Run run, String name) {
        Matcher m = Pattern.compile("(?m)^  " + Pattern.quote(name) + " {2,}(.+)$").matcher(run.out());
        List<String> last = null;
        while (m.find()) {
            last = split(m.group(1));
        }
        assertTrue(last != null, "no row '" + name + "' in\n" + run);
        return last;
    }

    @Test
    void bfcAskedForByNameKeepsItsNoGrowthDefaultAndANoteExplainsTheReservation() {
        Run r = run("compare", "cache.csv", "--run", "bfc", "--run", "caching");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(Pattern.compile("(?m)^ +bfc +caching$").matcher(r.out()).find(), r::toString);
        assertEquals("80.00 GiB", cells(r, "peak reserved").get(0));
        String fragmentation = cells(r, "fragmentation at peak").get(0);
        String text = r.out().replaceAll("\\s+", " ");
        assertTrue(text.contains("note (bfc): bfc ran with allow_growth:false, TensorFlow's GPU default: it reserved"
                + " its whole memory limit (80.00 GiB, the whole device) in one region at its first allocation, so"
                + " its peak and end reserved are that reservation and its fragmentation at the peak ("
                + fragmentation + ") is the part of it this workload never used"), r::toString);
        assertFalse(text.contains("a default run of compare"), r::toString);

        // Growth asked for by name gets no note about either.
        Run growth = run("compare", "cache.csv", "--run", "bfc:allow_growth:true", "--run", "caching");
        assertFalse(growth.out().contains("allow_growth:false"), growth::toString);
        assertFalse(growth.out().contains("a default run of compare"), growth::toString);
    }

    @Test
    void jsonIsAnArrayOfTheReplays() {
        Run r = run("compare", "cache.csv", "rmm.csv", "--run", "caching", "--run", "bfc:allow_growth:true",
                "--json");
        assertEquals(0, r.exitCode(), r::toString);
        String json = r.out().strip();
        assertFalse(json.contains("\n"), r::toString);
        assertTrue(json.startsWith("[{\"trace\":\"cache.csv\"") && json.endsWith("}]"), json);
        assertEquals(4, json.split("\\{\"trace\":", -1).length - 1, json);
        assertTrue(json.contains("\"allocator\":\"bfc\",\"device\":\"sim:80GiB\""), json);
        assertTrue(json.contains("\"conf\":\"allow_growth:true\""), json);
    }

    @Test
    void writesOneHtmlReportForEveryRun(@TempDir Path dir) throws IOException {
        Path html = dir.resolve("compare.html");
        Run r = run("compare", "cache.csv", "warm.csv", "--run", "caching", "--run", "direct", "--html",
                html.toString());
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().contains("HTML report: " + html), r::toString);
        String page = Files.readString(html);
        assertTrue(page.contains("cache.csv") && page.contains("warm.csv"), "both traces on the page");
    }

    @Test
    void theDefaultReportShowsEveryRunOnOneReadableScaleAndNoGrowthBfcGoesOffIt(@TempDir Path dir)
            throws IOException {
        Path defaults = dir.resolve("defaults.html");
        Run r = run("compare", "cache.csv", "--empty-cache-at-segment-free", "--html", defaults.toString());
        assertEquals(0, r.exitCode(), r::toString);
        String page = Files.readString(defaults);
        // The default bfc grows and says so; nothing is far enough above the rest to leave the scale.
        assertTrue(page.contains(">bfc allow_growth:true</span>"), "the label names the growth");
        assertFalse(page.contains("Off the scale"), "no run off the scale");
        // direct and bfc did not record the trace: not comparable, not a red difference.
        assertEquals(2, page.split(">not comparable</span>", -1).length - 1, "two runs not comparable");
        assertEquals(1, page.split("class=\"gt-diff\"", -1).length - 1, "caching matches; only caching with"
                + " expandable segments shows a difference");
        assertEquals(1, page.split("class=\"gt-match\"", -1).length - 1, "caching matches");
        assertTrue(page.contains("a default run of compare: bfc grows its regions as needed here"), "the note");

        // TensorFlow's no-growth default, asked for by name, takes the whole device: off the scale, and said so.
        Path noGrowth = dir.resolve("no-growth.html");
        Run b = run("compare", "cache.csv", "--run", "bfc", "--run", "caching", "--html", noGrowth.toString());
        assertEquals(0, b.exitCode(), b::toString);
        String bfcPage = Files.readString(noGrowth);
        assertTrue(bfcPage.contains("<figcaption class=\"off-scale\">Off the scale: <span class=\"setup\">"),
                "the caption");
        assertTrue(bfcPage.contains("bfc</span> (peak reserved 80.00 GiB). The y axis ends at "), "bfc is named");
    }

    @Test
    void usageErrorsExitWithTwoAndAClearMessage() {
        record Case(String[] args, String message) {
        }
        List<Case> cases = List.of(
                new Case(new String[] {"compare"}, "devalloc: error: Missing required parameter: 'TRACE'"),
                new Case(new String[] {"compare", "cache.csv", "--run", ":x"},
                        "devalloc: error: --run ':x' names no allocator; expected NAME[:CONF]"),
                new Case(new String[] {"compare", "cache.csv", "--run", "nope"},
                        "devalloc: error: unknown allocator 'nope'"),
                new Case(new String[] {"compare", "cache.csv", "--run", "caching:bogus:1"},
                        "devalloc: error: Unrecognized key 'bogus'"),
                new Case(new String[] {"compare", "cache.csv", "no/such.csv"},
                        "devalloc: error: no such trace file: no/such.csv"),
                // Refused before the first trace runs, though no trace is a pickle.
                new Case(new String[] {"compare", "cache.csv", "--cuda-device", "-1"},
                        "devalloc: error: --cuda-device: a device index is 0 or more, got -1"));
        for (Case c : cases) {
            Run r = run(c.args());
            assertEquals(Launcher.EXIT_USAGE, r.exitCode(), r::toString);
            assertTrue(r.err().startsWith(c.message()), "expected '" + c.message() + "':\n" + r);
            assertNoStackTrace(r);
        }
    }
}
