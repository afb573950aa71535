package io.devalloc.examples;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.replay.TrainingLoopWorkload;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;

class LauncherTest {

    /** What one launcher run printed and returned. */
    record Run(int exitCode, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    /**
     * Runs the launcher with no {@code devalloc.*} system property and no {@code DEVALLOC_*} variable, whatever the
     * machine running the tests has set.
     */
    static Run run(String... args) {
        return runWith(Map.of(), Map.of(), args);
    }

    /** Runs the launcher with these system properties and environment variables standing for the JVM's. */
    static Run runWith(Map<String, String> properties, Map<String, String> environment, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = Launcher.run(o, e, properties, environment, args);
        }
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The value in the demo's name/value table for {@code name}. */
    static String row(Run run, String name) {
        Matcher m = Pattern.compile("(?m)^  " + Pattern.quote(name) + " {2,}(.+)$").matcher(run.out());
        assertTrue(m.find(), "no row '" + name + "' in\n" + run);
        return m.group(1);
    }

    static void assertNoStackTrace(Run run) {
        assertFalse(run.err().contains("\tat "), "stack trace without --verbose:\n" + run);
        assertFalse(run.out().contains("\tat "), "stack trace on stdout:\n" + run);
    }

    @Test
    void devicesListsEveryProviderWithItsStatusAndTheAllocators() {
        Run r = run("devices");
        assertEquals(0, r.exitCode(), r::toString);
        assertAll(
                // Table rows: name, priority, device count, status.
                () -> assertTrue(Pattern.compile("(?m)^  sim +1 +\\d+ +available ").matcher(r.out()).find(),
                        r::toString),
                () -> assertTrue(Pattern.compile("(?m)^  host +5 +\\d+ +available ").matcher(r.out()).find(),
                        r::toString),
                () -> assertTrue(Pattern.compile("(?m)^  pinned-host +4 +\\d+ +(un)?available ")
                        .matcher(r.out()).find(), r::toString),
                () -> assertTrue(r.out().contains("auto: opens 'host'"), r::toString),
                // Listed with their status whether or not this machine has a GPU; without one, the reason says why.
                () -> assertTrue(Pattern.compile("(?m)^  cuda +10 +\\d+ +(un)?available ").matcher(r.out()).find(),
                        r::toString),
                () -> assertTrue(Pattern.compile("(?m)^  cuda-host +6 +\\d+ +(un)?available ").matcher(r.out()).find(),
                        r::toString),
                () -> assertTrue(Pattern.compile("(?m)^  cuda +10 +\\d+ +available ").matcher(r.out()).find()
                        || r.out().contains("libcuda.so.1") || r.out().contains("cudaError"),
                        "an unavailable cuda says why: " + r),
                () -> assertTrue(Pattern.compile("(?m)^  direct +memory_limit_mb +no caching").matcher(r.out()).find(),
                        r::toString),
                // The class behind each provider is for plug-in authors: only with --verbose.
                () -> assertFalse(r.out().contains("io.devalloc."), r::toString));
        assertNoStackTrace(r);
        Run verbose = run("devices", "--verbose");
        assertTrue(verbose.out().contains("class io.devalloc.sim."), verbose::toString);
    }

    @Test
    void demoOnTheSimulatorPrintsBalancedFigures() {
        Run r = run("demo", "--device", "sim:80GiB", "--steps", "3");
        assertEquals(0, r.exitCode(), r::toString);
        long allocations = Long.parseLong(row(r, "allocations"));
        long frees = Long.parseLong(row(r, "frees"));
        long planned = TrainingLoopWorkload.generate(new TrainingLoopWorkload.Spec(
                TrainingLoopWorkload.Spec.DEFAULT_LAYERS, 3, TrainingLoopWorkload.Spec.DEFAULT_SEED)).allocationCount();
        assertAll(
                () -> assertEquals(planned, allocations),
                () -> assertEquals(allocations, frees),
                () -> assertTrue(row(r, "device").startsWith("sim:0"), r::toString),
                () -> assertEquals("direct", row(r, "allocator")),
                () -> assertEquals("(defaults)", row(r, "config")),
                () -> assertEquals("3", row(r, "steps")),
                () -> assertEquals("0", row(r, "live allocations at end")),
                () -> assertEquals("0", row(r, "out-of-memory errors")),
                () -> assertEquals(allocations + " / " + frees, row(r, "device mallocs / frees")),
                () -> assertTrue(row(r, "mean ns per malloc+free").matches("\\d+"), r::toString),
                () -> assertTrue(r.out().contains("reserved after releaseCachedMemory():  0 B"), r::toString),
                () -> assertTrue(r.out().contains("allocator closed: true"), r::toString));
    }

    @Test
    void demoRunsWithTheBfcAllocator() {
        Run r = run("demo", "--device", "sim:80GiB", "--allocator", "bfc", "--steps", "3", "--config",
                "allow_growth:true");
        assertEquals(0, r.exitCode(), r::toString);
        long allocations = Long.parseLong(row(r, "allocations"));
        String[] device = row(r, "device mallocs / frees").split(" / ");
        assertAll(
                () -> assertEquals("bfc", row(r, "allocator")),
                () -> assertEquals(allocations, Long.parseLong(row(r, "frees"))),
                () -> assertTrue(Long.parseLong(device[0]) < allocations / 10,
                        "a pool reaches the device far less often: " + r),
                () -> assertEquals("0", row(r, "out-of-memory errors")),
                () -> assertTrue(r.out().contains("reserved after releaseCachedMemory():  0 B"), r::toString));
    }

    @Test
    void demoRunsWithTheCachingAllocator() {
        Run r = run("demo", "--device", "sim:80GiB", "--allocator", "caching", "--steps", "3", "--config",
                "expandable_segments:True");
        assertEquals(0, r.exitCode(), r::toString);
        long allocations = Long.parseLong(row(r, "allocations"));
        String[] device = row(r, "device mallocs / frees").split(" / ");
        assertAll(
                () -> assertEquals("caching", row(r, "allocator")),
                () -> assertEquals(allocations, Long.parseLong(row(r, "frees"))),
                () -> assertTrue(Long.parseLong(device[0]) < allocations / 10, r::toString),
                () -> assertTrue(r.out().contains("reserved after releaseCachedMemory():  0 B"), r::toString));
    }

    @Test
    void demoRunsTheCachingAllocatorWithExpandableSegmentsOnHostMemory() {
        Run r = run("demo", "--device", "host:4GiB", "--allocator", "caching", "--steps", "2", "--config",
                "expandable_segments:True");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(row(r, "device").startsWith("host:0"), r::toString);
        assertEquals("0", row(r, "out-of-memory errors"));
        assertEquals(row(r, "allocations"), row(r, "frees"));
        assertTrue(r.out().contains("reserved after releaseCachedMemory():  0 B"), r::toString);
    }

    @Test
    void demoRunsThePinnedHostCachingAllocator() {
        Run r = run("demo", "--device", "sim:80GiB", "--allocator", "caching-host", "--steps", "2");
        assertEquals(0, r.exitCode(), r::toString);
        assertEquals("caching-host", row(r, "allocator"));
        assertEquals(row(r, "allocations"), row(r, "frees"));
    }

    @Test
    void demoRunsOnTheDefaultDevice() {
        Run r = run("demo");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(row(r, "device").startsWith("host"), r::toString);
        long allocations = Long.parseLong(row(r, "allocations"));
        assertEquals(TrainingLoopWorkload.generate().allocationCount(), allocations);
        assertEquals(allocations, Long.parseLong(row(r, "frees")));
    }

    @Test
    void demoWithALimitReportsOutOfMemoryAndStillFinishes() {
        Run r = run("demo", "--device", "sim:80GiB", "--steps", "2", "--config", "memory_limit_mb:64");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(Long.parseLong(row(r, "out-of-memory errors")) > 0, r::toString);
        assertEquals("0", row(r, "live allocations at end"));
        assertEquals("memory_limit_mb:64", row(r, "config"));
    }

    @Test
    void anUnknownDeviceNamesTheKnownProviders() {
        Run r = run("demo", "--device", "nosuch");
        assertEquals(2, r.exitCode(), r::toString);
        assertTrue(r.err().startsWith("devalloc: error: unknown device provider 'nosuch'"), r::toString);
        assertTrue(r.err().contains("sim") && r.err().contains("host") && r.err().contains("pinned-host"), r::toString);
        assertEquals("", r.out(), "nothing but the error:\n" + r);
        assertNoStackTrace(r);
    }

    @Test
    void anUnknownConfigurationKeyIsNamed() {
        Run r = run("demo", "--config", "bogus:1");
        assertEquals(2, r.exitCode(), r::toString);
        assertTrue(r.err().startsWith("devalloc: error: "), r::toString);
        assertTrue(r.err().contains("'bogus'"), r::toString);
        assertTrue(r.err().contains("memory_limit_mb"), "should say which keys are accepted:\n" + r);
        assertEquals(1, r.err().strip().lines().count(), "one line:\n" + r);
    }

    @Test
    void anUnknownAllocatorNamesTheKnownOnes() {
        Run r = run("demo", "--allocator", "nosuch");
        assertEquals(2, r.exitCode(), r::toString);
        assertTrue(r.err().contains("unknown allocator 'nosuch'") && r.err().contains("direct"), r::toString);
    }

    @Test
    void outOfRangeStepsAreAUsageError() {
        Run r = run("demo", "--steps", "0");
        assertEquals(2, r.exitCode(), r::toString);
        assertTrue(r.err().contains("devalloc: error: steps must be between 1 and"), r::toString);
        assertNoStackTrace(r);
    }

    @Test
    void aNonNumericOptionValueIsAUsageError() {
        Run r = run("demo", "--steps", "many");
        assertEquals(2, r.exitCode(), r::toString);
        assertTrue(r.err().startsWith("devalloc: error: ") && r.err().contains("'many'"), r::toString);
        assertTrue(r.err().contains("Run 'devalloc demo --help' for usage."), r::toString);
    }

    @Test
    void anUnknownCommandIsAUsageErrorListingTheCommands() {
        Run r = run("frobnicate");
        assertEquals(2, r.exitCode(), r::toString);
        assertTrue(r.err().startsWith("devalloc: error: unknown command 'frobnicate';"
                + " commands: devices, check, demo, replay, compare, advise, help"), r::toString);
    }

    @Test
    void anUnknownOptionIsAUsageError() {
        Run r = run("demo", "--frobnicate");
        assertEquals(2, r.exitCode(), r::toString);
        assertTrue(r.err().startsWith("devalloc: error: Unknown option: '--frobnicate'"), r::toString);
    }

    @Test
    void noCommandIsAUsageErrorThatShowsTheCommands() {
        Run r = run();
        assertEquals(2, r.exitCode(), r::toString);
        assertTrue(r.err().startsWith("devalloc: error: no command given"), r::toString);
        assertTrue(r.err().contains("Usage: devalloc"), r::toString);
        assertEquals("", r.out());
    }

    @Test
    void helpAndVersionSucceed() {
        Run help = run("--help");
        assertEquals(0, help.exitCode(), help::toString);
        assertTrue(help.out().contains("devices") && help.out().contains("demo"), help::toString);
        assertTrue(help.out().contains("replay") && help.out().contains("compare"), help::toString);

        Run demoHelp = run("help", "demo");
        assertEquals(0, demoHelp.exitCode(), demoHelp::toString);
        assertTrue(demoHelp.out().contains("--device=SPEC") && demoHelp.out().contains("--seed=S"), demoHelp::toString);

        Run version = run("--version");
        assertEquals(0, version.exitCode(), version::toString);
        assertTrue(version.out().startsWith("devalloc "), version::toString);
        assertTrue(version.out().contains("Java " + Runtime.version().feature()), version::toString);
    }

    @Test
    void everyCommandsHelpIsFormattedWithoutAFallback() {
        // picocli formats each description with String.format; a lone '%' fails, and picocli then warns on the
        // console and prints the text raw, its '%%' escapes and all.
        StringWriter ignored = new StringWriter();
        CommandLine cmd = Launcher.commandLine(new PrintWriter(ignored), new PrintWriter(ignored));
        for (Map.Entry<String, CommandLine> sub : cmd.getSubcommands().entrySet()) {
            String usage = sub.getValue().getUsageMessage(CommandLine.Help.Ansi.OFF);
            assertFalse(usage.contains("%%"), sub.getKey() + ": " + usage);
        }
        for (Map.Entry<String, CommandLine> sub : cmd.getSubcommands().entrySet()) {
            for (String line : sub.getValue().getCommandSpec().usageMessage().footer()) {
                // picocli wraps at 80 columns, wherever that falls: an example must fit, or it is cut mid-word.
                assertTrue(line.length() <= sub.getValue().getCommandSpec().usageMessage().width(),
                        sub.getKey() + ": " + line);
            }
        }
        String advise = cmd.getSubcommands().get("advise").getUsageMessage(CommandLine.Help.Ansi.OFF)
                .replaceAll("\\s+", " ");
        assertTrue(advise.contains("2%,128MiB") && advise.contains("Default: 1%,64MiB."), advise);
    }

    @Test
    void everySubcommandWithVersionOptionsPrintsTheLaunchersVersion() {
        Run root = run("-V");
        assertEquals(0, root.exitCode(), root::toString);
        assertTrue(root.out().startsWith("devalloc "), root::toString);
        StringWriter ignored = new StringWriter();
        CommandLine cmd = Launcher.commandLine(new PrintWriter(ignored), new PrintWriter(ignored));
        int checked = 0;
        for (Map.Entry<String, CommandLine> sub : cmd.getSubcommands().entrySet()) {
            if (!sub.getValue().getCommandSpec().mixinStandardHelpOptions()) {
                continue;
            }
            for (String option : new String[] {"-V", "--version"}) {
                Run r = run(sub.getKey(), option);
                assertEquals(0, r.exitCode(), r::toString);
                assertEquals(root.out(), r.out(), sub.getKey() + " " + option);
                assertEquals("", r.err(), r::toString);
            }
            checked++;
        }
        // devices, check, demo, replay, compare, advise: each declares the standard help options.
        assertEquals(6, checked, cmd.getSubcommands()::toString);
    }

    @Test
    void verboseAddsTheStackTraceWhereverItIsGiven() {
        for (String[] args : new String[][] {
                {"--verbose", "demo", "--device", "nosuch"},
                {"demo", "--device", "nosuch", "-v"}}) {
            Run r = run(args);
            assertEquals(2, r.exitCode(), r::toString);
            assertTrue(r.err().startsWith("devalloc: error: unknown device provider"), r::toString);
            assertTrue(r.err().contains("DeviceUnavailableException") && r.err().contains("\tat io.devalloc."),
                    r::toString);
        }
    }

    /** A subcommand that fails with a bug, to check how unexpected exceptions are reported. */
    @Command(name = "boom")
    static final class Boom implements Callable<Integer> {
        @Override
        public Integer call() {
            throw new IllegalStateException("kaput");
        }
    }

    @Test
    void anAddedSubcommandRunsAndItsBugsExitWithOne() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = Launcher.commandLine(new PrintWriter(out, true), new PrintWriter(err, true));
        cmd.addSubcommand(new Boom());

        assertEquals(Launcher.EXIT_INTERNAL, cmd.execute("boom"));
        // The message names no class; --verbose shows the exception with its stack trace.
        assertEquals("devalloc: internal error: kaput"
                + System.lineSeparator() + "Run again with --verbose for the stack trace." + System.lineSeparator(),
                err.toString());

        err.getBuffer().setLength(0);
        assertEquals(Launcher.EXIT_INTERNAL, cmd.execute("--verbose", "boom"));
        assertTrue(err.toString().contains("\tat io.devalloc.examples.LauncherTest$Boom.call"), err::toString);
    }
}
