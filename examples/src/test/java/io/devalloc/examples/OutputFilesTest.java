package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.assertNoStackTrace;
import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.examples.LauncherTest.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The files the commands write after their run ({@code --html}, {@code --export}, {@code --jfr}): a path that cannot
 * be written is refused before the run with exit code 2, and a write that fails at the end (on {@code /dev/full},
 * which every open accepts and every write refuses, root included) loses nothing else and exits with 4.
 */
@ExtendWith(InjectedTraces.class)
class OutputFilesTest {

    private static final Path FULL = Path.of("/dev/full");

    @TempDir
    Path dir;

    private static void assertRefusedBeforeTheRun(Run r, String option, Path path, String why) {
        assertEquals(Launcher.EXIT_USAGE, r.exitCode(), r::toString);
        String expected = "devalloc: error: " + option + " " + path + ": cannot be written: " + why;
        assertTrue(r.err().startsWith(expected), "expected '" + expected + "':\n" + r);
        assertEquals(1, r.err().strip().lines().count(), "one line:\n" + r);
        assertEquals("", r.out(), "nothing was replayed:\n" + r);
        assertNoStackTrace(r);
    }

    @Test
    void aPathUnderAFileIsRefusedBeforeTheRunForEveryOption() throws IOException {
        Path file = Files.writeString(dir.resolve("file.txt"), "kept");
        Path under = file.resolve("out.html");
        String notAFolder = file + " is not a folder";
        assertRefusedBeforeTheRun(run("replay", "warm.csv", "--html", under.toString()), "--html", under, notAFolder);
        assertRefusedBeforeTheRun(run("replay", "warm.csv", "--export", under.toString()), "--export", under,
                notAFolder);
        assertRefusedBeforeTheRun(run("replay", "warm.csv", "--jfr", under.toString()), "--jfr", under, notAFolder);
        assertRefusedBeforeTheRun(run("demo", "--device", "sim:1GiB", "--jfr", under.toString()), "--jfr", under,
                notAFolder);
        assertRefusedBeforeTheRun(run("compare", "warm.csv", "--html", under.toString()), "--html", under,
                notAFolder);
        assertRefusedBeforeTheRun(run("advise", AdviseCommandTest.OPT_CSV, "--threads", "1", "--html",
                under.toString()), "--html", under, notAFolder);
        assertEquals("kept", Files.readString(file));
    }

    @Test
    void aFolderIsRefusedBeforeTheRun() {
        String why = "it is a directory; give a file name";
        assertRefusedBeforeTheRun(run("replay", "warm.csv", "--html", dir.toString()), "--html", dir, why);
        assertRefusedBeforeTheRun(run("compare", "warm.csv", "--html", dir.toString()), "--html", dir, why);
        assertRefusedBeforeTheRun(run("replay", "warm.csv", "--jfr", dir.toString()), "--jfr", dir, why);
    }

    @Test
    void aReadOnlyFolderOrFileIsRefusedBeforeTheRunAndAnExistingFileIsLeftAsItWas() throws IOException {
        Path readOnly = Files.createDirectory(dir.resolve("read-only"));
        Path existing = Files.writeString(readOnly.resolve("old.html"), "the old report");
        Files.setPosixFilePermissions(existing, PosixFilePermissions.fromString("r--r--r--"));
        Files.setPosixFilePermissions(readOnly, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            assumeTrue(!Files.isWritable(readOnly) && !Files.isWritable(existing),
                    "permissions do not bind this user (root): nothing to refuse");
            Path fresh = readOnly.resolve("new.html");
            assertRefusedBeforeTheRun(run("replay", "warm.csv", "--html", fresh.toString()), "--html", fresh,
                    "no file can be created in " + readOnly + " (permission denied)");
            assertRefusedBeforeTheRun(run("replay", "warm.csv", "--html", existing.toString()), "--html", existing,
                    "the file cannot be opened for writing (permission denied)");
            assertRefusedBeforeTheRun(run("advise", AdviseCommandTest.OPT_CSV, "--threads", "1", "--html",
                    fresh.toString()), "--html", fresh, "no file can be created in " + readOnly);
            assertEquals("the old report", Files.readString(existing));
            try (var left = Files.list(readOnly)) {
                assertEquals(List.of(existing), left.toList(), "the check left no probe file behind");
            }
        } finally {
            Files.setPosixFilePermissions(readOnly, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    @Test
    void aWritableFileInAMissingFolderIsAcceptedAndTheFolderMade() {
        Path html = dir.resolve("new").resolve("folders").resolve("report.html");
        Path jfr = dir.resolve("jfr").resolve("run.jfr");
        Run r = run("replay", "warm.csv", "--html", html.toString(), "--jfr", jfr.toString());
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(Files.isRegularFile(html) && Files.isRegularFile(jfr), r::toString);
    }

    /** Skips where {@code /dev/full} is missing (not Linux) or not writable. */
    private static void assumeDevFull() {
        assumeTrue(Files.isWritable(FULL), "no writable /dev/full here");
    }

    @Test
    void anHtmlFileThatFailsAtTheEndLosesNeitherTheJsonNorTheMetersNorTheRecording() throws IOException {
        assumeDevFull();
        Path jfr = dir.resolve("run.jfr");
        Run r = run("replay", "warm.csv", "--json", "--metrics", "--jfr", jfr.toString(), "--html", FULL.toString());
        assertEquals(Launcher.EXIT_OUTPUT, r.exitCode(), r::toString);
        assertTrue(r.out().strip().startsWith("{") && r.out().strip().endsWith("}"), "the JSON is printed:\n" + r);
        assertTrue(r.err().contains("devalloc: error: --html " + FULL + ": could not be written after the run ("),
                r::toString);
        assertTrue(r.err().contains("Meters (Micrometer"), "the meters are printed:\n" + r);
        assertTrue(r.err().contains("JFR recording: " + jfr), r::toString);
        assertTrue(Files.size(jfr) > 0, "the recording is written");
        assertNoStackTrace(r);

        Run table = run("replay", "warm.csv", "--html", FULL.toString());
        assertEquals(Launcher.EXIT_OUTPUT, table.exitCode(), table::toString);
        assertTrue(table.out().contains("peak reserved"), "the figures are printed:\n" + table);
        assertFalse(table.out().contains("HTML report:"), "no report is announced:\n" + table);
    }

    @Test
    void anExportThatFailsAtTheEndStillPrintsTheFigures() {
        assumeDevFull();
        Run r = run("replay", "warm.csv", "--export", FULL.toString());
        assertEquals(Launcher.EXIT_OUTPUT, r.exitCode(), r::toString);
        assertTrue(r.out().contains("peak reserved"), r::toString);
        assertFalse(r.out().contains("PyTorch snapshot:"), r::toString);
        assertTrue(r.err().startsWith("devalloc: error: --export " + FULL + ": could not be written after the run"),
                r::toString);
        assertNoStackTrace(r);
    }

    @Test
    void aRecordingThatCannotBeWrittenIsKeptElsewhereAndSaysWhere() throws IOException {
        assumeDevFull();
        Run r = run("replay", "warm.csv", "--metrics", "--jfr", FULL.toString());
        assertEquals(Launcher.EXIT_OUTPUT, r.exitCode(), r::toString);
        assertTrue(r.out().contains("peak reserved") && r.out().contains("Meters (Micrometer"), r::toString);
        assertTrue(r.err().contains("devalloc: error: --jfr " + FULL + ": could not be written after the run ("),
                r::toString);
        Matcher kept = Pattern.compile("the JFR recording was kept in (\\S+\\.jfr) ").matcher(r.err());
        assertTrue(kept.find(), r::toString);
        Path file = Path.of(kept.group(1));
        try {
            assertTrue(Files.size(file) > 0, "the kept recording has the run's events");
        } finally {
            Files.deleteIfExists(file);
        }
        assertNoStackTrace(r);

        Run demo = run("demo", "--device", "sim:1GiB", "--steps", "2", "--jfr", FULL.toString());
        assertEquals(Launcher.EXIT_OUTPUT, demo.exitCode(), demo::toString);
        Matcher demoKept = Pattern.compile("the JFR recording was kept in (\\S+\\.jfr) ").matcher(demo.err());
        assertTrue(demoKept.find(), demo::toString);
        Files.deleteIfExists(Path.of(demoKept.group(1)));
    }

    @Test
    void compareAndAdviseStillPrintWhenTheirPageFailsAtTheEnd() {
        assumeDevFull();
        Run compare = run("compare", "warm.csv", "--json", "--html", FULL.toString());
        assertEquals(Launcher.EXIT_OUTPUT, compare.exitCode(), compare::toString);
        assertTrue(compare.out().strip().startsWith("["), compare::toString);
        assertTrue(compare.err().contains("devalloc: error: --html " + FULL + ": could not be written after the run"),
                compare::toString);
        Run advise = run("advise", AdviseCommandTest.OPT_CSV, "--threads", "1", "--json", "--html", FULL.toString());
        assertEquals(Launcher.EXIT_OUTPUT, advise.exitCode(), advise::toString);
        assertTrue(advise.out().strip().startsWith("{"), advise::toString);
        assertTrue(advise.err().contains("devalloc: error: --html " + FULL + ": could not be written after the run"),
                advise::toString);
        assertNoStackTrace(advise);
    }
}
