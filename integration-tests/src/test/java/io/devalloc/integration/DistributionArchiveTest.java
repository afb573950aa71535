package io.devalloc.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distribution archive that {@code ./mvnw package} makes in {@code examples/target}
 * ({@code devalloc-VERSION-linux-x64.tar.gz}: a jlink runtime, the launcher's modules and {@code bin/devalloc}),
 * unpacked and run as on a machine without Java or Maven: {@code JAVA_HOME} unset, and a {@code PATH} on which no
 * {@code java} can be found. It runs {@code devices} and {@code advise} on the shipped OPT snapshot, from another
 * directory and through a symbolic link, and keeps the archive small.
 */
class DistributionArchiveTest {

    /** The archive's size must stay under this: a runtime of seven JDK modules and 16 MB of jars, compressed. */
    private static final long MAX_ARCHIVE_BYTES = 60L * 1024 * 1024;

    @TempDir
    Path dir;

    private static Path archive() throws IOException {
        Path target = Reactor.rootDirectory().resolve("examples/target");
        if (Files.isDirectory(target)) {
            try (Stream<Path> files = Files.list(target)) {
                String name = "devalloc-" + Reactor.read(Reactor.rootDirectory()).version() + "-linux-x64.tar.gz";
                List<Path> found = files.filter(f -> f.getFileName().toString().equals(name)).toList();
                if (found.size() == 1) {
                    return found.getFirst();
                }
            }
        }
        return fail("no distribution archive devalloc-VERSION-linux-x64.tar.gz in " + target + ": './mvnw package'"
                + " (or verify) builds it in examples before this module's tests");
    }

    private record Run(int exitCode, String out) {
    }

    /** Runs {@code command} in {@code directory} with exactly {@code env} as its environment. */
    private static Run run(List<String> command, Path directory, Map<String, String> env) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().putAll(env);
        Process p = builder.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            fail(command + " did not finish");
        }
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    @Test
    void unpackedItAdvisesWithNoJavaAnywhere() throws Exception {
        assumeTrue(System.getProperty("os.name").equals("Linux") && System.getProperty("os.arch").equals("amd64"),
                "the archive is made on Linux x64 only (its runtime is the building JDK's)");
        Path archive = archive();
        assertTrue(Files.size(archive) < MAX_ARCHIVE_BYTES, archive + ": " + Files.size(archive) + " bytes");
        Path unpacked = Files.createDirectories(dir.resolve("unpacked"));
        Run untar = run(List.of("tar", "-xzf", archive.toString(), "-C", unpacked.toString()), dir,
                Map.of("PATH", "/usr/bin:/bin"));
        assertEquals(0, untar.exitCode(), untar.out());
        Path home;
        try (Stream<Path> dirs = Files.list(unpacked)) {
            List<Path> all = dirs.toList();
            assertEquals(1, all.size(), "one top-level directory: " + all);
            home = all.getFirst();
        }
        assertTrue(home.getFileName().toString().startsWith("devalloc-"), home.toString());
        Path script = home.resolve("bin/devalloc");
        assertTrue(Files.isExecutable(script), "bin/devalloc keeps its mode");
        assertTrue(Files.isExecutable(home.resolve("runtime/bin/java")), "the runtime's java keeps its mode");
        assertTrue(Files.isRegularFile(home.resolve("lib/examples.jar")), "the launcher's module");

        // No java on the PATH (an empty directory), no JAVA_HOME: only the runtime in the archive can run it.
        Path emptyBin = Files.createDirectories(dir.resolve("empty-bin"));
        Map<String, String> noJava = Map.of("PATH", emptyBin.toString(), "HOME", dir.toString());
        assertNotEquals(0, run(List.of("/bin/sh", "-c", "command -v java"), dir, noJava).exitCode());

        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Run devices = run(List.of("/bin/sh", script.toString(), "devices"), elsewhere, noJava);
        assertEquals(0, devices.exitCode(), devices.out());
        assertTrue(devices.out().contains("caching"), devices.out());

        Path pickle = Reactor.rootDirectory().resolve("traces/pt-opt-zeroth-order-fl/memory.pickle");
        Run advise = run(List.of("/bin/sh", script.toString(), "advise", pickle.toString()), elsewhere, noJava);
        assertEquals(0, advise.exitCode(), advise.out());
        assertTrue(advise.out().contains("Recommendation: expandable_segments:True"), advise.out());
        assertTrue(advise.out().contains("Bounds ("), advise.out());

        // Through symbolic links in other directories (an absolute one, and a relative one to it), as a user puts it
        // on the PATH; with no java anywhere either.
        Path links = Files.createDirectories(dir.resolve("links"));
        Files.createSymbolicLink(links.resolve("devalloc"), script);
        Path more = Files.createDirectories(dir.resolve("more"));
        Files.createSymbolicLink(more.resolve("devalloc"), Path.of("..", "links", "devalloc"));
        for (Path link : List.of(links.resolve("devalloc"), more.resolve("devalloc"))) {
            Run version = run(List.of("/bin/sh", link.toString(), "--version"), elsewhere, noJava);
            assertEquals(0, version.exitCode(), link + "\n" + version.out());
        }
        // Found on the PATH, by name alone.
        Map<String, String> onPath = Map.of("PATH", more + ":" + emptyBin, "HOME", dir.toString());
        Run byName = run(List.of("/bin/sh", "-c", "devalloc --version"), elsewhere, onPath);
        assertEquals(0, byName.exitCode(), byName.out());
        // Run as 'sh devalloc' from its own directory.
        Run fromBin = run(List.of("/bin/sh", "devalloc", "--version"), home.resolve("bin"), noJava);
        assertEquals(0, fromBin.exitCode(), fromBin.out());
    }
}
