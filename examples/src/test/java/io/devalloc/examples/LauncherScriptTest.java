package io.devalloc.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./devalloc} script at the repository root, run with bash against fake JDKs and a fake Maven wrapper:
 * how it picks a JDK, when it rebuilds the launcher jar, and what it runs. Nothing here builds or starts a JVM.
 */
@DisabledOnOs(OS.WINDOWS)
class LauncherScriptTest {

    /** Surefire runs in the module directory; the script is one level up. */
    private static final Path SCRIPT = Path.of(System.getProperty("basedir", ".")).toAbsolutePath()
            .resolve("../devalloc").normalize();

    @TempDir
    Path tmp;

    record Result(int exitCode, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    @BeforeEach
    void scriptExists() {
        assertTrue(Files.isRegularFile(SCRIPT), "no script at " + SCRIPT);
    }

    /** Runs bash with a clean JAVA_HOME and JAVA25_HOME, plus {@code env}, in {@code dir}. */
    private Result bash(Path dir, Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("bash");
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().remove("JAVA_HOME");
        pb.environment().remove("JAVA25_HOME");
        pb.environment().putAll(env);
        Path out = Files.createTempFile(tmp, "out", ".txt");
        Path err = Files.createTempFile(tmp, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
        Process p = pb.start();
        p.getOutputStream().close();
        // A guard against a hung script, not a timing check: these scripts finish in milliseconds.
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("bash " + args[0] + " did not finish");
        }
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /**
     * Runs a snippet with the script's functions defined. Sourcing runs nothing; the script is a parameter rather
     * than {@code $0}, so that even a guard comparing {@code $0} with {@code BASH_SOURCE} could not mistake the
     * source for a run (which would build the real tree).
     */
    private Result withFunctions(Map<String, String> env, String snippet) throws IOException, InterruptedException {
        return bash(tmp, env, "-c", "source \"$1\"; " + snippet, "bash", SCRIPT.toString());
    }

    /** A fake JDK whose java reports {@code versionOutput} for -version and echoes its arguments otherwise. */
    private Path fakeJdk(String name, String versionOutput) throws IOException {
        Path home = tmp.resolve(name);
        Path java = home.resolve("bin/java");
        Files.createDirectories(java.getParent());
        Files.writeString(java, "#!/bin/sh\n"
                + "if [ \"$1\" = -version ]; then printf '%s\\n' '" + versionOutput.replace("\n", "' '")
                + "' >&2; exit 0; fi\n"
                + "echo \"java-args: $*\"\n");
        executable(java);
        return home;
    }

    private static void executable(Path file) throws IOException {
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void theScriptIsExecutable() {
        assertTrue(Files.isExecutable(SCRIPT), SCRIPT + " must be chmod +x");
    }

    @Test
    void readsTheFeatureVersionOfEveryVersionFormat() throws Exception {
        Map<String, String> expected = Map.of(
                "openjdk version \"25\" 2025-09-16", "25",
                "openjdk version \"25.0.1\" 2025-10-21 LTS", "25",
                "openjdk version \"26-ea\" 2026-03-17", "26",
                "java version \"1.8.0_392\"", "8",
                "Picked up JAVA_TOOL_OPTIONS: -Dfoo=\"1\"\nopenjdk version \"17.0.15\" 2025-04-15", "17");
        int i = 0;
        for (Map.Entry<String, String> e : expected.entrySet()) {
            Path jdk = fakeJdk("jdk" + i++, e.getKey());
            Result r = withFunctions(Map.of(), "java_feature_version '" + jdk.resolve("bin/java") + "'");
            assertEquals(0, r.exitCode(), r::toString);
            assertEquals(e.getValue() + "\n", r.out(), () -> "for " + e.getKey() + ": " + r);
        }
        Result missing = withFunctions(Map.of(), "java_feature_version '" + tmp.resolve("nothing/bin/java") + "'");
        assertEquals(1, missing.exitCode(), missing::toString);
    }

    /**
     * A JDK's release file gives the version without starting a JVM (each start costs every command about 0.1 s per
     * candidate): its java here fails if run, and a link to it elsewhere (as /usr/bin/java) finds the file too.
     */
    @Test
    void readsTheVersionFromTheReleaseFileWithoutRunningJava() throws Exception {
        Path home = tmp.resolve("jdk-release");
        Path java = home.resolve("bin/java");
        Files.createDirectories(java.getParent());
        Files.writeString(java, "#!/bin/sh\necho ran >&2\nexit 3\n");
        executable(java);
        Files.writeString(home.resolve("release"), "IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"25.0.3\"\n");
        Result r = withFunctions(Map.of(), "java_feature_version '" + java + "'");
        assertEquals(0, r.exitCode(), r::toString);
        assertEquals("25\n", r.out(), r::toString);
        Path links = Files.createDirectories(tmp.resolve("usr/bin"));
        Path link = Files.createSymbolicLink(links.resolve("java"), java);
        Result viaLink = withFunctions(Map.of(), "java_feature_version '" + link + "'");
        assertEquals("25\n", viaLink.out(), viaLink::toString);
        // Without a version in the file, java is asked.
        Path other = fakeJdk("jdk-no-version", "openjdk version \"21.0.1\" 2023-10-17");
        Files.writeString(other.resolve("release"), "IMPLEMENTOR=\"x\"\n");
        Result asked = withFunctions(Map.of(), "java_feature_version '" + other.resolve("bin/java") + "'");
        assertEquals(0, asked.exitCode(), asked::toString);
        assertEquals("21\n", asked.out(), asked::toString);
    }

    /** A JDK whose release file says 25 but whose java does not run is passed over, and named if nothing else fits. */
    @Test
    void aJdkThatDoesNotRunIsPassedOver() throws Exception {
        Path broken = tmp.resolve("jdk-broken");
        Files.createDirectories(broken.resolve("bin"));
        Files.writeString(broken.resolve("bin/java"), "#!/bin/sh\nexit 1\n");
        executable(broken.resolve("bin/java"));
        Files.writeString(broken.resolve("release"), "JAVA_VERSION=\"25.0.1\"\n");
        Path jdk25 = fakeJdk("jdk25", "openjdk version \"25.0.1\" 2025-10-21");
        Result r = withFunctions(Map.of("JAVA_HOME", broken.toString(), "JAVA25_HOME", jdk25.toString()), "find_java");
        assertEquals(jdk25.resolve("bin/java") + "\n", r.out(), r::toString);
        Result none = withFunctions(Map.of(),
                "java_candidates() { echo '" + broken.resolve("bin/java") + "'; }; find_java");
        assertEquals(1, none.exitCode(), none::toString);
        assertTrue(none.err().contains(broken.resolve("bin/java") + " (Java 25, does not run)"), none::toString);
    }

    @Test
    void javaHomeWinsWhenItIsNewEnough() throws Exception {
        Path jdk26 = fakeJdk("jdk26", "openjdk version \"26\" 2026-03-17");
        Path jdk25 = fakeJdk("jdk25", "openjdk version \"25.0.1\" 2025-10-21");
        Result r = withFunctions(Map.of("JAVA_HOME", jdk26.toString(), "JAVA25_HOME", jdk25.toString()), "find_java");
        assertEquals(jdk26.resolve("bin/java") + "\n", r.out(), r::toString);
    }

    @Test
    void anOldJavaHomeFallsBackToJava25Home() throws Exception {
        Path jdk17 = fakeJdk("jdk17", "openjdk version \"17.0.15\" 2025-04-15");
        Path jdk25 = fakeJdk("jdk25", "openjdk version \"25.0.1\" 2025-10-21");
        Result r = withFunctions(Map.of("JAVA_HOME", jdk17.toString(), "JAVA25_HOME", jdk25.toString()), "find_java");
        assertEquals(jdk25.resolve("bin/java") + "\n", r.out(), r::toString);
    }

    @Test
    void withoutAJdk25ItSaysWhatItNeedsAndWhatItFound() throws Exception {
        Path jdk17 = fakeJdk("jdk17", "openjdk version \"17.0.15\" 2025-04-15");
        // Replaces the folder search, so the machine's own JDKs do not count.
        Result r = withFunctions(Map.of(),
                "java_candidates() { echo '" + jdk17.resolve("bin/java") + "'; }; find_java");
        assertEquals(1, r.exitCode(), r::toString);
        assertEquals("", r.out());
        assertTrue(r.err().startsWith("devalloc: error: devalloc needs JDK 25 or newer; set JAVA_HOME="), r::toString);
        assertTrue(r.err().contains(jdk17.resolve("bin/java") + " (Java 17)"), r::toString);
    }

    /**
     * A copy of the script in a fake source tree whose mvnw logs its arguments, prints what Maven prints in batch
     * mode (the reactor's "Building" lines, info and warning lines, on stdout and stderr) and creates the jar.
     */
    private Path fakeTree(boolean buildSucceeds) throws IOException {
        Path root = tmp.resolve("tree");
        Files.createDirectories(root.resolve("core/src/main/java"));
        Files.writeString(root.resolve("pom.xml"), "<project/>");
        Files.writeString(root.resolve("core/src/main/java/A.java"), "class A {}");
        Files.copy(SCRIPT, root.resolve("devalloc"), StandardCopyOption.COPY_ATTRIBUTES);
        Files.writeString(root.resolve("mvnw"), "#!/bin/sh\n"
                + "echo \"$*\" >> mvnw.calls\n"
                + "echo 'maven says hello'\n"
                + "echo '[INFO] Scanning for projects...'\n"
                + "echo '[INFO] Downloading from central: https://repo.example/a.pom'\n"
                + "echo '[INFO] Downloading from central: https://repo.example/b.pom'\n"
                + "echo '[INFO] Building devalloc 0.1.0-SNAPSHOT                                  [1/2]'\n"
                + "echo '[WARNING] a warning that -q would hide' >&2\n"
                + "echo '[INFO] Building devalloc :: core 0.1.0-SNAPSHOT                     [2/2]'\n"
                + (buildSucceeds
                    ? "mkdir -p examples/target/launcher/modules"
                        + " && touch examples/target/launcher/modules/examples.jar\n"
                        + "echo '[INFO] BUILD SUCCESS'\n"
                    : "echo '[ERROR] COMPILATION ERROR: A.java:[1,9] class, interface or enum expected' >&2\n"
                        + "echo '[INFO] BUILD FAILURE'; exit 3\n"));
        executable(root.resolve("mvnw"));
        return root;
    }

    private static List<String> mavenCalls(Path root) throws IOException {
        Path calls = root.resolve("mvnw.calls");
        return Files.exists(calls) ? Files.readAllLines(calls, StandardCharsets.UTF_8) : List.of();
    }

    private static void setModified(Path file, FileTime reference, long secondsLater) throws IOException {
        Files.setLastModifiedTime(file, FileTime.fromMillis(reference.toMillis() + secondsLater * 1000));
    }

    @Test
    void buildsTheJarWhenMissingOrStaleAndRunsItFromAnyDirectory() throws Exception {
        Path root = fakeTree(true);
        Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
        Map<String, String> env = Map.of("JAVA_HOME", fakeJdk("jdk25", "openjdk version \"25\" 2025-09-16").toString());
        Path jar = root.resolve("examples/target/launcher/modules/examples.jar");
        String expectedRun = "java-args: --enable-native-access=io.devalloc.host,io.devalloc.cuda,jcuda --module-path "
                + root.resolve("examples/target/launcher/modules")
                + " --module io.devalloc.examples/io.devalloc.examples.Launcher devices --verbose\n";

        Result first = bash(elsewhere, env, root.resolve("devalloc").toString(), "devices", "--verbose");
        assertEquals(0, first.exitCode(), first::toString);
        assertEquals(expectedRun, first.out(), "build output must stay off stdout: " + first);
        assertTrue(first.err().contains("maven says hello"), first::toString);
        assertEquals(List.of("-B -Ddevalloc.launcher -pl examples -am package"), mavenCalls(root));

        Result second = bash(elsewhere, env, root.resolve("devalloc").toString(), "devices", "--verbose");
        assertEquals(expectedRun, second.out(), second::toString);
        assertEquals(1, mavenCalls(root).size(), "an up-to-date jar is not rebuilt");

        // Output under target/ does not make the jar stale; a source file does.
        Path generated = root.resolve("core/target/classes/A.class");
        Files.createDirectories(generated.getParent());
        Files.writeString(generated, "");
        setModified(generated, Files.getLastModifiedTime(jar), 10);
        bash(elsewhere, env, root.resolve("devalloc").toString(), "devices");
        assertEquals(1, mavenCalls(root).size(), "target/ is not source");

        setModified(root.resolve("core/src/main/java/A.java"), Files.getLastModifiedTime(jar), 10);
        Result afterEdit = bash(elsewhere, env, root.resolve("devalloc").toString(), "demo");
        assertEquals(0, afterEdit.exitCode(), afterEdit::toString);
        assertEquals(2, mavenCalls(root).size(), "a source newer than the jar triggers a build");

        setModified(root.resolve("pom.xml"), Files.getLastModifiedTime(jar), 10);
        bash(elsewhere, env, root.resolve("devalloc").toString(), "demo");
        assertEquals(3, mavenCalls(root).size(), "a pom newer than the jar triggers a build");
    }

    @Test
    void theBuildShowsOneLinePerModuleAndSaysItHappensOnce() throws Exception {
        Path root = fakeTree(true);
        Map<String, String> env = Map.of("JAVA_HOME", fakeJdk("jdk25", "openjdk version \"25\" 2025-09-16").toString());
        Result r = bash(tmp, env, root.resolve("devalloc").toString(), "devices");
        assertEquals(0, r.exitCode(), r::toString);
        List<String> err = r.err().lines().toList();
        assertEquals(List.of(
                "devalloc: building the launcher (./mvnw -B -Ddevalloc.launcher -pl examples -am package)",
                "devalloc: this happens once (under a minute on a fresh clone), and again only when sources change",
                "maven says hello",
                "devalloc: downloading Maven plugins and libraries (the first build only)",
                "devalloc: [1/2] devalloc",
                "devalloc: [2/2] core"), err.subList(0, err.size() - 1), r::toString);
        assertTrue(err.getLast().matches("devalloc: built 2 modules in \\d+ s"), r::toString);
        // Maven's whole output is kept, warnings and info lines included.
        String log = Files.readString(root.resolve("examples/target/devalloc-build.log"));
        assertTrue(log.contains("[WARNING] a warning that -q would hide") && log.contains("[INFO] BUILD SUCCESS"), log);
        for (String line : err) {
            assertTrue(line.length() <= 120, "within 120 columns: " + line);
        }
    }

    @Test
    void sourcingDefinesTheFunctionsAndRunsNothing() throws Exception {
        Path root = fakeTree(true);
        Map<String, String> env = Map.of("JAVA_HOME", fakeJdk("jdk25", "openjdk version \"25\" 2025-09-16").toString());
        // $0 is the script itself here, the case a BASH_SOURCE == $0 guard gets wrong.
        Result r = bash(tmp, env, "-c", "source \"$0\"; type -t find_java", root.resolve("devalloc").toString());
        assertEquals(0, r.exitCode(), r::toString);
        assertEquals("function\n", r.out(), r::toString);
        assertEquals(List.of(), mavenCalls(root), "sourcing must not build");
    }

    @Test
    void worksThroughASymlink() throws Exception {
        Path root = fakeTree(true);
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Files.createSymbolicLink(bin.resolve("devalloc"), root.resolve("devalloc"));
        Map<String, String> env = Map.of("JAVA_HOME", fakeJdk("jdk25", "openjdk version \"25\" 2025-09-16").toString());
        Result r = bash(bin, env, bin.resolve("devalloc").toString(), "devices");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().contains("--module-path " + root.resolve("examples/target/launcher/modules") + " "),
                r::toString);
    }

    @Test
    void aFailedBuildStopsWithAClearError() throws Exception {
        Path root = fakeTree(false);
        Map<String, String> env = Map.of("JAVA_HOME", fakeJdk("jdk25", "openjdk version \"25\" 2025-09-16").toString());
        Result r = bash(tmp, env, root.resolve("devalloc").toString(), "devices");
        assertEquals(1, r.exitCode(), r::toString);
        assertFalse(r.out().contains("java-args"), r::toString);
        // Maven's errors reach the terminal; its info lines stay in the log, whose path the error gives.
        assertTrue(r.err().contains("[ERROR] COMPILATION ERROR: A.java:[1,9]"), r::toString);
        assertFalse(r.err().contains("[INFO]"), r::toString);
        Path log = root.resolve("examples/target/devalloc-build.log");
        assertTrue(r.err().contains("devalloc: error: the build failed; see the Maven errors above, and the whole"
                + " output in " + log), r::toString);
        assertTrue(Files.readString(log).contains("[INFO] BUILD FAILURE"), log::toString);
        assertFalse(r.err().contains("devalloc: built"), r::toString);
    }
}
