package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.assertNoStackTrace;
import static io.devalloc.examples.LauncherTest.row;
import static io.devalloc.examples.LauncherTest.runWith;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.examples.LauncherTest.Run;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The {@code DEVALLOC_*} environment variables and {@code devalloc.*} system properties, as the README's
 * configuration section says: the commands' {@code --device}, {@code --allocator} and {@code --config} default to
 * them (the property first), and the options win over both.
 */
@ExtendWith(InjectedTraces.class)
class SettingsDefaultsTest {

    private static final Map<String, String> ENVIRONMENT = Map.of("DEVALLOC_DEVICE", "sim:2GiB",
            "DEVALLOC_ALLOCATOR", "bfc", "DEVALLOC_CONFIG", "allow_growth:true");

    @Test
    void demoTakesTheDeviceAllocatorAndConfigurationFromTheEnvironment() {
        Run r = runWith(Map.of(), ENVIRONMENT, "demo", "--steps", "1");
        assertEquals(0, r.exitCode(), r::toString);
        assertAll(
                () -> assertEquals("sim:0 (simulated GPU (2.00 GiB))", row(r, "device")),
                () -> assertEquals("bfc", row(r, "allocator")),
                () -> assertEquals("allow_growth:true", row(r, "config")));
    }

    @Test
    void optionsWinOverTheEnvironmentAndPropertiesOverVariables() {
        Run options = runWith(Map.of(), ENVIRONMENT, "demo", "--steps", "1", "--device", "sim:1GiB",
                "--allocator", "caching", "--config", "expandable_segments:True");
        assertEquals(0, options.exitCode(), options::toString);
        assertEquals("sim:0 (simulated GPU (1.00 GiB))", row(options, "device"));
        assertEquals("caching", row(options, "allocator"));
        assertEquals("expandable_segments:True", row(options, "config"));

        Run properties = runWith(Map.of("devalloc.allocator", "direct", "devalloc.config", "memory_limit_mb:64"),
                ENVIRONMENT, "demo", "--steps", "1");
        assertEquals(0, properties.exitCode(), properties::toString);
        assertEquals("direct", row(properties, "allocator"));
        assertEquals("memory_limit_mb:64", row(properties, "config"));
        assertEquals("sim:0 (simulated GPU (2.00 GiB))", row(properties, "device"), "the variable, with no property");
    }

    @Test
    void replayTakesThemTooOverItsOwnDefaults() {
        Run r = runWith(Map.of(), Map.of("DEVALLOC_DEVICE", "sim:1GiB", "DEVALLOC_ALLOCATOR", "direct",
                "DEVALLOC_CONFIG", "memory_limit_mb:1"), "replay", "rmm.csv");
        assertEquals(0, r.exitCode(), r::toString);
        assertEquals("direct", row(r, "allocator"));
        assertEquals("memory_limit_mb:1", row(r, "config"));
        assertTrue(row(r, "device").startsWith("sim:1GiB: "), r::toString);

        // A device given as 'auto' is given, though 'auto' is the settings' own default.
        Run auto = runWith(Map.of(), Map.of("DEVALLOC_DEVICE", "auto"), "replay", "rmm.csv", "--allocator", "direct");
        assertEquals(0, auto.exitCode(), auto::toString);
        assertTrue(row(auto, "device").startsWith("auto: host:0"), auto::toString);

        Run options = runWith(Map.of(), ENVIRONMENT, "replay", "rmm.csv", "--device", "sim:80GiB", "--allocator",
                "caching", "--conf", "expandable_segments:True");
        assertEquals("caching", row(options, "allocator"));
        assertEquals("expandable_segments:True", row(options, "config"));
        assertTrue(row(options, "device").startsWith("sim:80GiB: "), options::toString);
    }

    @Test
    void compareTakesTheDeviceButNotTheAllocator() {
        Run r = runWith(Map.of(), ENVIRONMENT, "compare", "warm.csv");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().startsWith("warm.csv (PyTorch CSV, 14 events) on sim:2GiB"), r::toString);
        assertEquals(List.of("direct", "bfc allow_growth:true", "caching", "caching expandable_segments:True"),
                CompareCommandTest.split(r.out().lines().skip(2).findFirst().orElseThrow()),
                "the default runs, not DEVALLOC_ALLOCATOR's: " + r);
    }

    @Test
    void theHelpShowsTheDefaultInEffect() {
        String text = runWith(Map.of(), ENVIRONMENT, "help", "replay").out().replaceAll("\\s+", "");
        assertTrue(text.contains("Default:sim:2GiB(DEVALLOC_DEVICEsetsit)"), text);
        assertTrue(text.contains("Default:bfc(DEVALLOC_ALLOCATORsetsit)"), text);
        String plain = runWith(Map.of(), Map.of(), "help", "demo").out().replaceAll("\\s+", "");
        assertTrue(plain.contains("Default:auto(DEVALLOC_DEVICEsetsit)"), plain);
        assertTrue(plain.contains("Default:direct(DEVALLOC_ALLOCATORsetsit)"), plain);
    }

    @Test
    void anErrorCausedByASettingSaysWhereItCameFrom() {
        Run variable = runWith(Map.of(), Map.of("DEVALLOC_DEVICE", "nosuch"), "demo");
        assertEquals(Launcher.EXIT_USAGE, variable.exitCode(), variable::toString);
        assertTrue(variable.err().startsWith("devalloc: error: unknown device provider 'nosuch'"), variable::toString);
        assertTrue(variable.err().contains("\ndevalloc: note: --device came from DEVALLOC_DEVICE=nosuch\n"),
                variable::toString);
        assertNoStackTrace(variable);

        Run property = runWith(Map.of("devalloc.config", "bogus:1"), Map.of(), "replay", "rmm.csv");
        assertEquals(Launcher.EXIT_USAGE, property.exitCode(), property::toString);
        assertTrue(property.err().contains("devalloc: note: --config came from -Ddevalloc.config=bogus:1"),
                property::toString);

        Run given = runWith(Map.of(), Map.of("DEVALLOC_DEVICE", "sim:1GiB"), "demo", "--device", "nosuch");
        assertEquals(Launcher.EXIT_USAGE, given.exitCode(), given::toString);
        assertFalse(given.err().contains("note:"), "a device given on the command line needs no note: " + given);
    }

    /** Runs the launcher's {@code main} in a child JVM with {@code environment} (and no other DEVALLOC_* set). */
    private static String launchChild(Map<String, String> environment, String... args) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        assertTrue(classPath.split(File.pathSeparator).length > 1, "the test class path: " + classPath);
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp", classPath,
                Launcher.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("DEVALLOC_") || k.startsWith("PYTORCH_")
                || k.startsWith("TF_"));
        pb.environment().putAll(environment);
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        // A guard against a hung child, not a timing check.
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the launcher did not finish");
        assertEquals(0, p.exitValue(), out);
        return out.replace(System.lineSeparator(), "\n");
    }

    /** The real entry point reads the process environment: a launcher in a child JVM with DEVALLOC_* set. */
    @Test
    void theLauncherReadsTheProcessEnvironment() throws Exception {
        String out = launchChild(Map.of("DEVALLOC_DEVICE", "sim:3GiB", "DEVALLOC_ALLOCATOR", "caching",
                "DEVALLOC_CONFIG", "max_split_size_mb:40"), "demo", "--steps", "1");
        assertTrue(out.contains("  device                   sim:0 (simulated GPU (3.00 GiB))"), out);
        assertTrue(out.contains("  allocator                caching"), out);
        assertTrue(out.contains("  config                   max_split_size_mb:40\n"), out);
    }

    /**
     * With {@code PYTORCH_CUDA_ALLOC_CONF} set and no configuration given, the demo and the replay say where the
     * caching allocator's configuration came from (the providers read the process environment).
     */
    @Test
    void aConfigurationFromPytorchsVariableIsNamedAsSuch() throws Exception {
        Map<String, String> pytorch = Map.of("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128");
        String demo = launchChild(pytorch, "demo", "--steps", "1", "--device", "sim:1GiB", "--allocator", "caching");
        assertTrue(demo.contains("  config                   max_split_size_mb:128 (from PYTORCH_CUDA_ALLOC_CONF)\n"),
                demo);
        String replay = launchChild(pytorch, "replay", UserOutputTest.OPT_TRACE.toString());
        assertTrue(replay.contains("  config                   max_split_size_mb:128 (from PYTORCH_CUDA_ALLOC_CONF)\n"),
                replay);
        String given = launchChild(pytorch, "replay", UserOutputTest.OPT_TRACE.toString(), "--json", "--config",
                "max_split_size_mb:128");
        assertTrue(given.contains("\"conf\":\"max_split_size_mb:128\","), "given, not from the variable: " + given);
    }
}
