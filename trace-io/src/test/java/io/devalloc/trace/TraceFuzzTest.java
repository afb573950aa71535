package io.devalloc.trace;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.trace.detect.TraceFormats;
import io.devalloc.trace.pytorch.PyTorchPickleReader;
import io.devalloc.trace.pytorch.PyTorchSnapshotFile;
import io.devalloc.trace.pytorch.SnapshotDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

/**
 * Seeded hostile inputs of every format ({@link HostileInputs}) through detection and a full read, as the commands
 * read a file: each must give its events or one clean refusal (a {@link TraceFormatException} that names the file in
 * a bounded line with no control character and no Java class name), within a time bound and the test heap
 * (surefire's {@code -Xmx1g}: running out of it is a crash like any other throwable). A few hundred inputs here;
 * {@code -Ddevalloc.fuzz.inputs=100000} runs the long version, {@code -Ddevalloc.fuzz.seed=S
 * -Ddevalloc.fuzz.inputs=1} reproduces the input of seed S (the same bytes: each input is made from its seed alone).
 */
class TraceFuzzTest {

    private static final long DEFAULT_SEED = 20_261_127L;
    private static final int DEFAULT_INPUTS = 300;
    /** Generous for a loaded 2-core build machine: the largest input reads in well under a second. */
    private static final Duration BOUND = Duration.ofSeconds(5);
    /**
     * A message beyond the file's name: what a refusal may take on one line. 600 characters, and 200 more for the
     * escapes of a quoted line of binary: each of its 80 characters may be written as 4 ({@code \x03}).
     */
    private static final int MAX_MESSAGE = 800;
    /** A zip entry's name as a refusal quotes it ({@link UntrustedText#DEFAULT_LIMIT}, and what was cut counted). */
    private static final int ENTRY_NAME = 1 + UntrustedText.DEFAULT_LIMIT + 40;
    /**
     * A Java name in a message: a package, an exception's name, or an object's default {@code toString}
     * ({@code PickleDict@1b2c3d}: a class name before the hash, since a quoted field may hold {@code 1783k@98740}),
     * or the JDK's zip classes that its zip messages begin with.
     */
    private static final Pattern JAVA_NAME = Pattern.compile("java\\.|io\\.devalloc\\.|Exception:"
            + "|[A-Z][a-z]+(Exception|Error)\\b|\\b[A-Z][a-z]+[A-Za-z0-9$]*@[0-9a-f]{4,}|\\bZip(File|InputStream)\\b");
    /** How many crashes the failure lists in full; the count covers them all. */
    private static final int SHOWN = 10;

    @Test
    void everyHostileInputIsReadOrRefusedCleanly(@TempDir Path dir) throws IOException {
        long base = Long.getLong("devalloc.fuzz.seed", DEFAULT_SEED);
        int inputs = Integer.getInteger("devalloc.fuzz.inputs", DEFAULT_INPUTS);
        String shared = System.getProperty(SharedTraces.PROPERTY);
        HostileInputs generator = new HostileInputs(shared == null ? null : Path.of(shared, "traces"));
        Map<String, long[]> byKind = new TreeMap<>(); // inputs, refusals, results, crashes
        List<String> crashes = new ArrayList<>();
        long refusals = 0;
        long results = 0;
        long events = 0;
        long start = System.nanoTime();
        for (int i = 0; i < inputs; i++) {
            HostileInputs.Input input = generator.make(base + i, dir);
            String kind = input.kind().startsWith("large zip") ? "large zip" : input.kind();
            long[] counts = byKind.computeIfAbsent(kind, k -> new long[4]);
            counts[0]++;
            String crash = null;
            try {
                events += assertTimeoutPreemptively(BOUND, () -> readToTheEnd(input.file()));
                results++;
                counts[2]++;
            } catch (AssertionFailedError e) {
                crash = "ran past " + BOUND.toSeconds() + " s";
            } catch (Throwable e) { // any but a refusal, errors included, is what the suite is here to find
                crash = e instanceof TraceFormatException f ? badMessage(f, input.file()) : describe(e);
                if (crash == null) {
                    refusals++;
                    counts[1]++;
                }
            } finally {
                Files.deleteIfExists(input.file());
            }
            if (crash != null) {
                counts[3]++;
                crashes.add("seed " + input.seed() + " (" + input.kind() + "): " + crash);
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        StringBuilder summary = new StringBuilder().append(String.format(Locale.ROOT, "fuzzed the readers: %d"
                + " inputs (seeds %d to %d, %d real traces mutated), %d refusals, %d results (%d events), %d crashes,"
                + " %d ms", inputs, base, base + inputs - 1, generator.reals(), refusals, results, events,
                crashes.size(), millis));
        byKind.forEach((k, c) -> summary.append(String.format(Locale.ROOT, "%n  %-60s %6d inputs %6d refused"
                + " %6d read %3d crashed", k, c[0], c[1], c[2], c[3])));
        // The figures are the run's report (docs/testing.md quotes the long run's), so they are printed, not logged
        // at a level the build hides.
        System.out.println(summary);
        assertTrue(crashes.isEmpty(), () -> summary + "\ncrashes:\n  "
                + String.join("\n  ", crashes.subList(0, Math.min(SHOWN, crashes.size())))
                + (crashes.size() > SHOWN ? "\nand more, first lines:\n  " + String.join("\n  ", crashes
                .subList(SHOWN, crashes.size()).stream().map(c -> c.lines().findFirst().orElse(c)).toList()) : ""));
    }

    /**
     * Detection, then every event of every device: for a pickle, the snapshot loaded once and each device's reader
     * (as {@code TraceFile.read} does), and the choice of "the" device; for the rest, the format's reader.
     *
     * @return the events read
     */
    private static long readToTheEnd(Path file) throws IOException {
        TraceFormat format = TraceFormats.detect(file);
        long events = 0;
        if (format == TraceFormat.PYTORCH_PICKLE) {
            PyTorchSnapshotFile snapshot = PyTorchSnapshotFile.read(file);
            if (snapshot.devicesWithHistory().size() <= 1) {
                snapshot.onlyDevice();
            }
            // A snapshot of no device reads as device 0's empty trace, as the reader of "the" device does.
            List<Integer> devices = snapshot.devices().isEmpty() ? List.of(0)
                    : snapshot.devices().stream().map(SnapshotDevice::index).toList();
            for (int device : devices) {
                try (PyTorchPickleReader reader = snapshot.reader(device)) {
                    events += count(reader);
                }
            }
            return events;
        }
        try (TraceReader reader = TraceFormats.open(file, format)) {
            return count(reader);
        }
    }

    private static long count(TraceReader reader) throws IOException {
        long n = 0;
        while (reader.next() != null) {
            n++;
        }
        return n;
    }

    /** Why a refusal's message is not one a user can be shown, or null when it is. */
    private static String badMessage(TraceFormatException e, Path file) {
        String m = e.getMessage();
        String name = file.toString();
        if (m == null || !m.startsWith(name) || !e.file().startsWith(name)) {
            return "the refusal does not name the file: " + describe(e);
        }
        // The name may end in a zip's entry, which the reader quotes as untrusted text: bounded, counted apart.
        if (e.file().length() - name.length() > ENTRY_NAME) {
            return "a refusal whose file name is " + e.file().length() + " characters long: "
                    + UntrustedText.excerpt(m, 300);
        }
        if (m.length() - e.file().length() > MAX_MESSAGE) {
            return "a refusal of " + m.length() + " characters: " + UntrustedText.excerpt(m, 300);
        }
        if (m.chars().anyMatch(c -> c < 0x20 || (c >= 0x7f && c <= 0x9f))) {
            return "a refusal with a control character: " + UntrustedText.excerpt(m, 300);
        }
        if (JAVA_NAME.matcher(m).find()) {
            return "a refusal that names a Java class: " + UntrustedText.excerpt(m, 300);
        }
        return null;
    }

    /** A throwable in one line: its class, its message, and where it was thrown from (the first frames). */
    private static String describe(Throwable e) {
        StringBuilder b = new StringBuilder(e.getClass().getName()).append(": ")
                .append(UntrustedText.excerpt(String.valueOf(e.getMessage()), 300));
        StackTraceElement[] frames = e.getStackTrace();
        for (int i = 0; i < Math.min(6, frames.length); i++) {
            b.append("\n      at ").append(frames[i]);
        }
        return b.toString();
    }
}
