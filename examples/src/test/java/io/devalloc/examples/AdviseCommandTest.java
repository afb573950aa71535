package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.assertNoStackTrace;
import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.examples.LauncherTest.Run;
import io.devalloc.replay.SnapshotScenarios;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code devalloc advise} end to end through the launcher, on the OPT trace shipped with the project. */
class AdviseCommandTest {

    static final String OPT_CSV = Path.of("..", "traces", "pt-opt-zeroth-order-fl", "memory.csv").toString();

    @TempDir
    Path dir;

    private String grid(String... lines) throws IOException {
        return Files.write(dir.resolve("grid.txt"), List.of(lines)).toString();
    }

    @Test
    void advisesWithTheTableTheJsonAndThePage() throws IOException {
        String grid = grid("defaults", "expandable_segments:True", "max_split_size_mb:5 # refused");
        Path html = dir.resolve("out").resolve("advice.html");
        Run r = run("advise", OPT_CSV, "--grid", grid, "--threads", "2", "--capacity", "4GiB", "--html",
                html.toString());
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().contains("Trust: MATCH"), r::toString);
        assertTrue(r.out().contains("PYTORCH_CUDA_ALLOC_CONF="), r::toString);
        assertTrue(r.out().contains("grid.txt:3: bad value '5' for configuration key 'max_split_size_mb'"),
                r::toString);
        assertTrue(r.out().contains("max_split_size_mb too small, must be >= 20"), "upstream's message: " + r);
        assertTrue(Files.readString(html).contains("id=\"d0-recommendation\""));

        Run json = run("advise", OPT_CSV, "--grid", grid, "--threads", "1", "--json", "--objective", "reserved");
        assertEquals(0, json.exitCode(), json::toString);
        assertTrue(json.out().strip().startsWith("{"), json::toString);
        for (String key : List.of("\"trace\"", "\"allocator\"", "\"capacity_bytes\": null", "\"baseline\"",
                "\"ground_truth\"", "\"settings\"", "\"min_capacity_bytes\"", "\"recommendation\"", "\"env\"",
                "\"saving_fraction\"", "\"objective\": \"reserved\"")) {
            assertTrue(json.out().contains(key), key + " in\n" + json);
        }
    }

    @Test
    void gridProblemsNameTheLineItsTextAndTheProblemInWords() throws IOException {
        String grid = grid("max_split_size_mb", "a:b:c", "expandable_segments:True,,", "expandable_segments:yes",
                "expandable_segments:True,max_split_size_mb:5");
        Run r = run("advise", OPT_CSV, "--grid", grid, "--threads", "2", "--capacity", "4GiB");
        assertEquals(0, r.exitCode(), r::toString);
        String text = r.out().replaceAll("\\s+", " ");
        for (String problem : List.of(
                "grid.txt:1: malformed configuration entry 'max_split_size_mb' for allocator 'caching': expected"
                        + " key:value",
                "grid.txt:2: Unrecognized key 'a' in CUDA allocator config (unknown configuration key 'a' for"
                        + " allocator 'caching'",
                "grid.txt:3: empty entry at position 25 in configuration 'expandable_segments:True,,' (stray comma?)",
                "grid.txt:4: bad value 'yes' for configuration key 'expandable_segments' of allocator 'caching'"
                        + " (Expected 'True' or 'False' but got 'yes'); allowed: True or False",
                "grid.txt:5: bad value '5' for configuration key 'max_split_size_mb' in configuration"
                        + " 'expandable_segments:True,max_split_size_mb:5' of allocator 'caching'")) {
            assertTrue(text.contains(problem), problem + " in\n" + r);
        }
        // PyTorch's boolean message names its tokenizer and a token index, which tell a user nothing.
        assertFalse(r.out().contains("ConfigTokenizer") || r.out().contains("at index"), r::toString);
    }

    @Test
    void badInputGetsOneClearLineAndExitCodeTwo() throws IOException {
        Run unknownGrid = run("advise", OPT_CSV, "--grid", "nonesuch");
        assertEquals(Launcher.EXIT_USAGE, unknownGrid.exitCode(), unknownGrid::toString);
        assertTrue(unknownGrid.err().contains("unknown grid 'nonesuch'"), unknownGrid::toString);
        assertNoStackTrace(unknownGrid);

        Run tooSmall = run("advise", OPT_CSV, "--capacity", "2MiB");
        assertEquals(Launcher.EXIT_USAGE, tooSmall.exitCode(), tooSmall::toString);
        assertTrue(tooSmall.err().contains("smaller than the trace's first request"), tooSmall::toString);

        Path empty = Files.writeString(dir.resolve("empty.csv"), "seq,action,addr,size,stream,time_us\n");
        Run noAllocations = run("advise", empty.toString());
        assertEquals(Launcher.EXIT_USAGE, noAllocations.exitCode(), noAllocations::toString);
        assertTrue(noAllocations.err().contains("has no allocations"), noAllocations::toString);

        Run objective = run("advise", OPT_CSV, "--objective", "speed");
        assertEquals(Launcher.EXIT_USAGE, objective.exitCode(), objective::toString);
        assertTrue(objective.err().contains("unknown objective 'speed'"), objective::toString);

        Run emptyGrid = run("advise", OPT_CSV, "--grid", grid("# nothing here"));
        assertEquals(Launcher.EXIT_USAGE, emptyGrid.exitCode(), emptyGrid::toString);
        assertTrue(emptyGrid.err().contains("holds no setting"), emptyGrid::toString);
        assertFalse(emptyGrid.out().contains("Recommendation"), emptyGrid::toString);

        Run device = run("advise", OPT_CSV, "--cuda-device", "1");
        assertEquals(Launcher.EXIT_USAGE, device.exitCode(), device::toString);
        assertTrue(device.err().contains("--cuda-device: " + OPT_CSV + " is a PyTorch CSV, which holds one device's"
                + " history without naming it"), device::toString);

        Run margin = run("advise", OPT_CSV, "--min-saving", "two percent");
        assertEquals(Launcher.EXIT_USAGE, margin.exitCode(), margin::toString);
        assertTrue(margin.err().contains("--min-saving 'two percent'"), margin::toString);
        assertNoStackTrace(margin);
    }

    @Test
    void aCapacityWithDecimalsIsRoundedDownToAByte() throws IOException {
        String grid = grid("defaults");
        Run r = run("advise", OPT_CSV, "--grid", grid, "--threads", "1", "--capacity", "1.7GiB", "--json");
        assertEquals(0, r.exitCode(), r::toString);
        // 1.7 GiB = 1,825,361,100.8 B: rounded down to a whole byte.
        assertTrue(r.out().contains("\"capacity_bytes\": 1825361100"), r::toString);
    }

    @Test
    void aSnapshotOfThreeGpusIsAdvisedDeviceByDeviceAndOneCanBeChosen() throws IOException {
        long gib = 1L << 30;
        Path file = SnapshotScenarios.write(dir.resolve("three.pickle"), SnapshotScenarios.snapshot(List.of(
                SnapshotScenarios.record(0, 4 * gib, "", SnapshotScenarios.nearCapacity(4, 0, 0)),
                SnapshotScenarios.record(1, gib, "", SnapshotScenarios.nearCapacity(6, 3, 900)),
                SnapshotScenarios.record(3, gib, "", SnapshotScenarios.nearCapacity(6, 0, 0))), true));
        String grid = grid("defaults", "expandable_segments:True");
        Run r = run("advise", file.toString(), "--grid", grid, "--threads", "2");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().startsWith("Devices of " + file + ": 3 with a history, 1 unused"), r::toString);
        assertTrue(r.out().contains("unused: cuda:2"), r::toString);
        assertTrue(r.out().contains("cuda:0 needs the most memory"), r::toString);
        assertTrue(r.out().contains("== cuda:3 "), r::toString);
        Run json = run("advise", file.toString(), "--grid", grid, "--threads", "2", "--json");
        assertEquals(0, json.exitCode(), json::toString);
        String text = json.out().replaceAll("\\s+", "");
        assertTrue(text.contains("\"schema\":2") && text.contains("\"unused_devices\":[2]")
                && text.contains("\"device\":1,\"history\":true") && text.contains("\"source\":\"oom\""),
                json::toString);
        Run one = run("advise", file.toString(), "--grid", grid, "--threads", "2", "--cuda-device", "3");
        assertEquals(0, one.exitCode(), one::toString);
        assertTrue(one.out().startsWith("Advice for " + file + " (cuda:3)"), one::toString);
        Run unused = run("advise", file.toString(), "--cuda-device", "2");
        assertEquals(Launcher.EXIT_USAGE, unused.exitCode(), unused::toString);
        assertTrue(unused.err().contains("device 2 is unused in the snapshot (an empty trace list and no segment"),
                unused::toString);
        Run absent = run("advise", file.toString(), "--cuda-device", "7");
        assertEquals(Launcher.EXIT_USAGE, absent.exitCode(), absent::toString);
        assertTrue(absent.err().contains("device 7 is not in the snapshot: it holds devices 0, 1 and 3"),
                absent::toString);
    }

    /** The README's example of the main command is what the command prints today, line by line. */
    @Test
    void theReadmesExampleIsWhatTheCommandPrints() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"));
        int section = readme.indexOf("## Two commands");
        int start = readme.indexOf("```text\n", section) + "```text\n".length();
        String block = readme.substring(start, readme.indexOf("```", start));
        Run r = run("advise", Path.of("..", "traces", "pt-opt-zeroth-order-fl", "memory.pickle").toString());
        assertEquals(0, r.exitCode(), r::toString);
        int lines = 0;
        for (String line : block.split("\n")) {
            if (line.strip().equals("...") || line.isBlank()) {
                continue;
            }
            assertTrue(r.out().contains(line), "README line not printed: '" + line + "' in\n" + r.out());
            lines++;
        }
        assertTrue(lines > 15, "the example has its lines: " + block);
    }
}
