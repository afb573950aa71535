package io.devalloc.replay.report;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Debian's {@code chromium}, run headless on a local file: a screenshot, or the DOM after parsing. Every run has a
 * fresh profile directory, no sandbox (tests may run as root), no GPU, no background networking, and a host
 * resolver that resolves nothing, so a page that tried to fetch anything would get nothing. Runs are bounded: a
 * browser that has not finished after {@link #BOUND_SECONDS} seconds is killed with its child processes.
 */
final class Chromium {

    static final long BOUND_SECONDS = 120;

    private final Path executable;

    private Chromium(Path executable) {
        this.executable = executable;
    }

    /** The {@code chromium} on the PATH, if there is one. */
    static Optional<Chromium> onPath() {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, "chromium");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(new Chromium(candidate));
            }
        }
        return Optional.empty();
    }

    Path executable() {
        return executable;
    }

    /** Takes a screenshot of {@code html} in a window of the given size; {@code work} holds the profile and logs. */
    void screenshot(Path html, Path png, int width, int height, Path work) throws IOException, InterruptedException {
        screenshot(html, png, width, height, 1.0, work);
    }

    /**
     * Takes a screenshot of {@code html} in a window of {@code width} × {@code height} CSS pixels, rendered at
     * {@code scale} device pixels per CSS pixel (so the image is {@code scale} times the window, with text drawn
     * at that size rather than resampled).
     */
    void screenshot(Path html, Path png, int width, int height, double scale, Path work)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("--screenshot=" + png.toAbsolutePath(),
                "--window-size=" + width + "," + height));
        if (scale != 1.0) {
            args.add("--force-device-scale-factor=" + scale);
        }
        args.add(html.toAbsolutePath().toUri().toString());
        run(work, args);
        if (!Files.isRegularFile(png)) {
            throw new AssertionError("chromium wrote no screenshot to " + png + "; its log ends with:\n"
                    + tail(work.resolve("chromium.log")));
        }
    }

    /** The DOM of {@code html} as chromium parsed it, serialized. */
    String dumpDom(Path html, Path work) throws IOException, InterruptedException {
        Path out = run(work, List.of("--dump-dom", html.toAbsolutePath().toUri().toString()));
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    /** Runs chromium with the common flags and {@code args}; returns the file that holds its standard output. */
    private Path run(Path work, List<String> args) throws IOException, InterruptedException {
        Files.createDirectories(work);
        Path profile = Files.createTempDirectory(work, "profile-");
        Path stdout = work.resolve("chromium.out");
        Path log = work.resolve("chromium.log");
        List<String> command = new ArrayList<>(List.of(executable.toString(), "--headless", "--no-sandbox",
                "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-extensions", "--hide-scrollbars",
                "--mute-audio", "--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=" + profile));
        command.addAll(args);
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectOutput(stdout.toFile()).redirectError(log.toFile()).start();
        process.getOutputStream().close();
        if (!process.waitFor(BOUND_SECONDS, TimeUnit.SECONDS)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("chromium did not finish within " + BOUND_SECONDS + " s: " + command
                    + "\nits log ends with:\n" + tail(log));
        }
        if (process.exitValue() != 0) {
            throw new AssertionError("chromium exited with " + process.exitValue() + ": " + command
                    + "\nits log ends with:\n" + tail(log));
        }
        return stdout;
    }

    private static String tail(Path log) throws IOException {
        if (!Files.isRegularFile(log)) {
            return "(no log)";
        }
        List<String> lines = new String(Files.readAllBytes(log), StandardCharsets.UTF_8).lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    }
}
