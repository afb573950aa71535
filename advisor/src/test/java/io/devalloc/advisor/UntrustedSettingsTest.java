package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.advisor.report.AdviceText;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.sim.SimulatedDeviceProvider;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Settings texts from a stranger's grid file or from the environment, quoted bounded in what advise reports. */
class UntrustedSettingsTest {

    @TempDir
    Path dir;

    @Test
    void aGridFileOfAHundredThousandBadLinesListsTheFirstFewProblemsAndCountsTheRest() throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add("defaults");
        for (int i = 0; i < 100_000; i++) {
            lines.add("bad_key_" + i + ":\u001b[2J" + "y".repeat(800));
        }
        lines.add("defaults");
        Path file = Files.write(dir.resolve("grid.txt"), lines);
        Grid grid = Grids.read(file, config -> config.isEmpty() ? null : "Unrecognized key in '" + config + "'");
        assertEquals(1, grid.entries().size());
        List<String> problems = grid.problems();
        assertEquals(Grids.MAX_LISTED_PROBLEMS + 1, problems.size(), () -> problems.size() + " problems");
        assertTrue(problems.getFirst().startsWith(file + ":2: Unrecognized key in 'bad_key_0:\\x1b[2Jyyy"),
                problems.getFirst());
        assertEquals(file + ": and 99991 more problems (left out too; the first " + Grids.MAX_LISTED_PROBLEMS
                + " are listed)", problems.getLast());
        int total = problems.stream().mapToInt(String::length).sum();
        assertTrue(total < 10_000, total + " characters of problems");
        assertTrue(problems.stream().allMatch(p -> p.chars().noneMatch(c -> c < 0x20)), problems.toString());
    }

    @Test
    void aFewProblemsAreAllListed() throws IOException {
        Path file = Files.write(dir.resolve("few.txt"), List.of("defaults", "a:1", "b:2", "defaults"));
        Grid grid = Grids.read(file, config -> config.isEmpty() ? null : "no");
        assertEquals(List.of(file + ":2: no", file + ":3: no", file + ":4: the same setting as line 1; left out"),
                grid.problems());
    }

    @Test
    void aHugeConfigurationInTheEnvironmentIsQuotedBoundedInTheNotes() throws IOException {
        String huge = "\u001b]0;owned\u0007" + "k".repeat(4 << 20) + ":1";
        Path grid = Files.write(dir.resolve("one.txt"), List.of("defaults"));
        Advice advice = new Advisor(List.of(new CachingAllocatorProvider(Map.of("PYTORCH_CUDA_ALLOC_CONF", huge))),
                List.of(new SimulatedDeviceProvider())).advise(AdvisorTrace.read(AdvisorTest.OPT_CSV),
                new Advisor.Options("caching", grid.toString(), -1, Objective.CAPACITY, 1), ReplayProgress.NONE);
        List<String> notes = advice.trust().notes();
        assertTrue(notes.stream().anyMatch(n -> n.contains("\\x1b]0;owned\\x07kkk")), notes.toString());
        assertTrue(notes.stream().allMatch(n -> n.length() < 1_000 && n.chars().noneMatch(c -> c < 0x20)),
                () -> notes.stream().map(n -> n.length() + " characters").toList().toString());
        StringWriter text = new StringWriter();
        AdviceText.print(new PrintWriter(text), advice);
        assertTrue(text.toString().length() < 20_000, text.toString().length() + " characters of advice");
    }

    @Test
    void aDirectoryGivenAsTheGridIsRefusedAsADirectory() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Grids.resolve(dir.toString(), new CachingAllocatorProvider(Map.of()), 1 << 20, config -> null));
        assertEquals("grid file " + dir + " is a directory: give a file of configuration texts, one per line",
                e.getMessage());
    }
}
