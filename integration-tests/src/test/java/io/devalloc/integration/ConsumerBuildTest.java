package io.devalloc.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * devalloc used from another build, as a user would: {@code ./mvnw install} of the published modules, then
 * {@code examples/consumer} (its own pom, importing devalloc-bom) built, tested and run against what was installed.
 * A module whose jar, pom or module descriptor is broken for a consumer fails here.
 *
 * <p>Both nested builds use a private local repository, {@code target/consumer-repo}, chained to the outer build's
 * repository ({@code maven.repo.local.tail}, read only): plugins and third-party libraries come from there, and
 * nothing is written into it. They run offline when the outer build does, and select the JDK 25 toolchain as the
 * outer build does. The install skips tests (the outer build ran them) and the applications, whose modules set
 * {@code maven.install.skip}; its {@code devalloc.skip.report} points into {@code target/} so that the outer
 * build's report of skipped real-trace tests is left alone.
 */
class ConsumerBuildTest {

    private static final Path TARGET =
            Path.of(System.getProperty("basedir", ".")).toAbsolutePath().resolve("target").normalize();
    private static final long BUILD_TIMEOUT_MINUTES = 15;

    @Test
    void theConsumerProjectBuildsAndRunsAgainstTheInstalledArtifacts() throws Exception {
        Path root = Reactor.rootDirectory();
        Path mvnw = root.resolve("mvnw");
        assumeTrue(Files.isExecutable(mvnw), "no executable Maven wrapper at " + mvnw + ": cannot run nested builds");
        Reactor reactor = Reactor.read(root);
        String version = System.getProperty("devalloc.version", reactor.version());
        Path repository = TARGET.resolve("consumer-repo");
        deleteRecursively(repository);
        List<String> repositoryOptions = repositoryOptions(repository);

        List<String> install = new ArrayList<>(List.of(mvnw.toString(), "-B", "-q"));
        install.addAll(repositoryOptions);
        // The outer build compiled every module. Maven on a JDK older than 25 rewrites each jar (the parent's
        // modular-jar step), which the compiler's incremental check takes for a changed dependency of the next
        // module: 6 minutes of recompiling instead of 40 s. Without that check only stale sources are compiled.
        install.addAll(List.of("install", "-DskipTests", "-Dmaven.compiler.useIncrementalCompilation=false",
                "-pl", reactor.unpublishedExclusions(),
                "-Ddevalloc.skip.report=" + TARGET.resolve("consumer-install-skip-report.txt")));
        long installMillis = run(install, root, TARGET.resolve("consumer-install.log"));

        for (String artifactId : reactor.publishedLibraries()) {
            assertInstalled(repository, artifactId, version, "jar");
            assertInstalled(repository, artifactId, version, "pom");
        }
        assertInstalled(repository, Reactor.BOM, version, "pom");
        assertInstalled(repository, "devalloc-parent", version, "pom");
        for (Reactor.ReactorModule module : reactor.modules()) {
            if (!module.published()) {
                assertFalse(Files.exists(artifactDirectory(repository, module.artifactId(), version)),
                        module.artifactId() + " sets maven.install.skip but was installed");
            }
        }

        Path project = TARGET.resolve("consumer-project");
        deleteRecursively(project);
        copyProject(root.resolve("examples/consumer"), project);
        List<String> consumer = new ArrayList<>(List.of(mvnw.toString(), "-B", "-q"));
        consumer.addAll(repositoryOptions);
        consumer.addAll(List.of("-f", project.resolve("pom.xml").toString(), "-Ddevalloc.version=" + version,
                "verify", "exec:exec"));
        Path consumerLog = TARGET.resolve("consumer-build.log");
        long consumerMillis = run(consumer, project, consumerLog);

        String output = Files.readString(consumerLog);
        List<String> lines = output.lines().toList();
        assertTrue(lines.contains("guice: absent"), output);
        assertTrue(lines.contains("consumer module: com.example.consumer (module path)"), output);
        assertTrue(lines.contains("allocator: caching on sim, 1.00 GiB"), output);
        assertTrue(lines.contains("allocated: 256.00 MiB and 48.00 MiB"), output);
        assertTrue(lines.contains("stats after allocate: 2 live, 304.00 MiB allocated, 304.00 MiB reserved,"
                + " 2 allocations, 0 frees, 2 device mallocs, 0 device frees"), output);
        assertTrue(lines.contains("stats after free: 0 live, 0 B allocated, 306.00 MiB reserved,"
                + " 3 allocations, 3 frees, 3 device mallocs, 0 device frees"), output);
        assertTrue(lines.contains("stats after emptyCache: 0 live, 0 B allocated, 0 B reserved,"
                + " 3 allocations, 3 frees, 3 device mallocs, 3 device frees"), output);

        Path report = project.resolve("target/surefire-reports/TEST-com.example.consumer.ConsumerMainTest.xml");
        assertTrue(Files.exists(report), "the consumer's own test did not run: no " + report);
        Element suite = Reactor.parse(report);
        assertEquals("1", suite.getAttribute("tests"), report::toString);
        assertEquals("0", suite.getAttribute("failures"), report::toString);
        assertEquals("0", suite.getAttribute("errors"), report::toString);
        assertEquals("0", suite.getAttribute("skipped"), report::toString);

        // The README's own project ("Use it from your build"): its pom.xml and Main.java exactly as the README shows
        // them, built and run as it says (Maven 3.9 or later on a JDK 25: this repository's wrapper, on this JVM).
        Path readmeProject = TARGET.resolve("readme-project");
        deleteRecursively(readmeProject);
        String readmePom = writeReadmeProject(root.resolve("README.md"), readmeProject);
        assertTrue(readmePom.contains("<version>" + version + "</version>"), "the README imports devalloc-bom "
                + version + ", the version this build installs");
        List<String> readmeBuild = new ArrayList<>(List.of(mvnw.toString(), "-B", "-q"));
        readmeBuild.addAll(repositoryOptions);
        readmeBuild.addAll(List.of("-f", readmeProject.resolve("pom.xml").toString(), "compile", "exec:java"));
        Path readmeLog = TARGET.resolve("readme-project-build.log");
        long readmeMillis = run(readmeBuild, readmeProject, readmeLog, System.getProperty("java.home"));
        List<String> readmeLines = Files.readAllLines(readmeLog);
        assertTrue(readmeLines.stream().anyMatch(l -> l.startsWith("allocators: [") && l.contains("caching")),
                String.join("\n", readmeLines));
        assertTrue(readmeLines.contains("builder: 1 device malloc"), String.join("\n", readmeLines));
        assertTrue(readmeLines.contains("guice: 1 allocation"), String.join("\n", readmeLines));

        System.out.printf("ConsumerBuildTest: install %.1f s, consumer build and run %.1f s, the README's project"
                + " %.1f s%n", installMillis / 1000.0, consumerMillis / 1000.0, readmeMillis / 1000.0);
    }

    /**
     * Writes the README's "Use it from your build" project into {@code project}: its first {@code xml} block as
     * {@code pom.xml} and its first {@code java} block as {@code src/main/java/Main.java}, verbatim; returns the pom.
     */
    static String writeReadmeProject(Path readme, Path project) throws IOException {
        String text = Files.readString(readme);
        int section = text.indexOf("## Use it from your build");
        assertTrue(section >= 0, "the README has a 'Use it from your build' section");
        String pom = block(text, section, "```xml");
        String main = block(text, section, "```java");
        assertTrue(pom.startsWith("<project") && main.contains("public class Main"), "the README's two files");
        Files.createDirectories(project.resolve("src/main/java"));
        Files.writeString(project.resolve("pom.xml"), pom);
        Files.writeString(project.resolve("src/main/java/Main.java"), main);
        return pom;
    }

    /** The text of the first fenced block opened by {@code fence} after {@code from}, without the fences. */
    private static String block(String text, int from, String fence) {
        int open = text.indexOf("\n" + fence + "\n", from);
        assertTrue(open >= 0, "no " + fence + " block after offset " + from);
        int start = open + fence.length() + 2;
        int end = text.indexOf("\n```\n", start);
        return text.substring(start, end + 1);
    }

    /**
     * The private repository, chained to the outer build's (and to the outer build's own tail, if it has one).
     * Offline when the outer build is: online, what the outer build never needed (the install plugin, on a fresh
     * machine) is downloaded into the private repository.
     */
    private static List<String> repositoryOptions(Path repository) {
        String tail = outerProperty("devalloc.outer.local-repository");
        if (tail == null) {
            tail = Path.of(System.getProperty("user.home"), ".m2", "repository").toString();
        }
        String outerTail = outerProperty("devalloc.outer.local-repository-tail");
        if (outerTail != null) {
            tail = tail + "," + outerTail;
        }
        List<String> options = new ArrayList<>();
        if ("offline=true".equals(outerProperty("devalloc.outer.mode"))) {
            options.add("-o");
        }
        options.add("-Dmaven.repo.local=" + repository);
        options.add("-Dmaven.repo.local.tail=" + tail);
        return options;
    }

    /** A system property the pom passes from the outer build, or null when unset there (left as an expression). */
    private static String outerProperty(String name) {
        String value = System.getProperty(name);
        return value == null || value.isBlank() || value.startsWith("${") ? null : value;
    }

    /** Runs a nested build, its output in {@code log}; fails with the log's end unless it exits with 0. */
    private static long run(List<String> command, Path directory, Path log) throws IOException, InterruptedException {
        return run(command, directory, log, null);
    }

    /** As {@link #run(List, Path, Path)}, with Maven on the JDK at {@code javaHome} when it is not null. */
    private static long run(List<String> command, Path directory, Path log, String javaHome)
            throws IOException, InterruptedException {
        Files.createDirectories(log.getParent());
        long start = System.nanoTime();
        ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        if (javaHome != null) {
            builder.environment().put("JAVA_HOME", javaHome);
        }
        Process process = builder.start();
        process.getOutputStream().close(); // no input: a prompt would read end-of-file rather than wait
        if (!process.waitFor(BUILD_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            fail(String.join(" ", command) + " did not finish in " + BUILD_TIMEOUT_MINUTES + " minutes; see " + log);
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        if (process.exitValue() != 0) {
            List<String> lines = Files.readAllLines(log);
            List<String> end = lines.subList(Math.max(0, lines.size() - 60), lines.size());
            fail(String.join(" ", command) + " in " + directory + " exited with " + process.exitValue()
                    + "; the end of " + log + ":\n" + String.join("\n", end));
        }
        return millis;
    }

    private static Path artifactDirectory(Path repository, String artifactId, String version) {
        return repository.resolve("io/devalloc").resolve(artifactId).resolve(version);
    }

    private static void assertInstalled(Path repository, String artifactId, String version, String extension)
            throws IOException {
        Path file = artifactDirectory(repository, artifactId, version)
                .resolve(artifactId + "-" + version + "." + extension);
        assertTrue(Files.isRegularFile(file), "not installed in the private repository: " + file);
        if (extension.equals("pom")) {
            // A consumer reads these coordinates without devalloc's reactor: they must be literal.
            Element pom = Reactor.parse(file);
            Element parent = Reactor.child(pom, "parent");
            for (Element coordinates : parent == null ? List.of(pom) : List.of(pom, parent)) {
                for (String name : List.of("artifactId", "version")) {
                    Element value = Reactor.child(coordinates, name);
                    assertTrue(value == null || !value.getTextContent().contains("${"), file + ": " + name);
                }
            }
        }
    }

    /** Copies the consumer project's sources (not a {@code target/} left by a manual build). */
    private static void copyProject(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path file : files.filter(f -> !from.relativize(f).startsWith("target")).toList()) {
                Path copy = to.resolve(from.relativize(file).toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(copy);
                } else {
                    Files.copy(file, copy, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private static void deleteRecursively(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(file -> {
                try {
                    Files.delete(file);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
