package io.devalloc.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher on the module path, as {@code ./devalloc} runs it: every devalloc module is a named module
 * (module-info), services are found through {@code uses}/{@code provides}, picocli reaches the commands through the
 * {@code opens}, and slf4j finds its provider. The module path is the build's runtime class path
 * ({@code target/runtime-module-path.txt}, written by the dependency plugin) plus this module's classes.
 */
class ModulePathLauncherTest {

    private static final Path TARGET = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().resolve("target");

    private record Run(int exitCode, String out) {
    }

    private static Run launch(String... args) throws Exception {
        Path listing = TARGET.resolve("runtime-module-path.txt");
        assertTrue(Files.isRegularFile(listing), "the build writes " + listing);
        String modulePath = Files.readString(listing, StandardCharsets.UTF_8).strip() + File.pathSeparator
                + TARGET.resolve("classes");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java,
                "--enable-native-access=io.devalloc.host,io.devalloc.cuda,jcuda",
                "--module-path", modulePath, "--module", "io.devalloc.examples/io.devalloc.examples.Launcher"));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("DEVALLOC_") || k.startsWith("PYTORCH_")
                || k.startsWith("TF_"));
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        // A guard against a hung child, not a timing check.
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the launcher did not finish");
        return new Run(p.exitValue(), out.replace(System.lineSeparator(), "\n"));
    }

    @Test
    void devicesFindsEveryProviderThroughTheModuleGraph() throws Exception {
        Run r = launch("devices");
        assertEquals(0, r.exitCode(), r.out());
        for (String provider : List.of("cuda", "cuda-host", "host", "pinned-host", "sim")) {
            assertTrue(r.out().contains("\n  " + provider + " "), provider + " in\n" + r.out());
        }
        for (String allocator : List.of("direct", "bfc", "caching", "caching-host")) {
            assertTrue(r.out().contains("\n  " + allocator + " "), allocator + " in\n" + r.out());
        }
        assertFalse(r.out().contains("WARNING"), "no native-access or other JVM warnings:\n" + r.out());
    }

    @Test
    void demoRunsOnHostMemoryWithNativeAccessGranted() throws Exception {
        Run r = launch("demo", "--device", "host:1GiB", "--allocator", "caching", "--steps", "1");
        assertEquals(0, r.exitCode(), r.out());
        assertTrue(r.out().contains("allocator closed: true"), r.out());
        assertFalse(r.out().contains("WARNING"), "no native-access warning:\n" + r.out());
    }

    @Test
    void adviseKeepsTheCapacitySearchsExpectedOutOfMemoryWarningsForVerbose(@TempDir Path dir) throws Exception {
        // Every setting's search replays one step below its smallest capacity, where BFC logs its out-of-memory
        // warning with a chunk map; a child JVM, so that the logger is configured as on a user's command line.
        Path trace = Files.write(dir.resolve("steps.trace"), List.of("Alloc(30000000),", "Alloc(30000000),",
                "Free(0),", "Alloc(50000000),", "Free(1),", "Free(2),"));
        Run quiet = launch("advise", trace.toString(), "--allocator", "bfc", "--threads", "1");
        assertEquals(0, quiet.exitCode(), quiet.out());
        assertTrue(quiet.out().contains("Recommendation: "), quiet.out());
        assertFalse(quiet.out().contains("ran out of memory"), quiet.out());
        Run verbose = launch("advise", trace.toString(), "--allocator", "bfc", "--threads", "1", "--verbose");
        assertEquals(0, verbose.exitCode(), verbose.out());
        assertTrue(verbose.out().contains("ran out of memory"), "--verbose shows them:\n" + verbose.out());
    }

    @Test
    void versionComesFromTheModuleDescriptor() throws Exception {
        Run r = launch("--version");
        assertEquals(0, r.exitCode(), r.out());
        assertTrue(r.out().matches("(?s)devalloc \\d+\\.\\d+\\.\\d+\\S*\nJava .*"), r.out());
    }
}
