package io.devalloc.replay.bounds;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.api.spi.SizeRounding;
import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.TestTraces;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Traces and roundings for the bounds tests. */
final class BoundsFixtures {

    /** Every request as it is. */
    static final SizeRounding EXACT = requested -> requested;

    /** PyTorch's {@code round_size} with the default settings: below 512 B, 512; else up to a multiple of 512. */
    static final SizeRounding PYTORCH = requested -> requested < 512 ? 512 : (requested + 511) / 512 * 512;

    private BoundsFixtures() {
    }

    /** The built events as a compact trace. */
    static CompactTrace compact(TestTraces.Builder builder) {
        try {
            return CompactTrace.read("test", builder.source());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static LiveIntervals intervals(TestTraces.Builder builder) {
        return LiveIntervals.of(compact(builder));
    }

    /** The OPT trace the project ships ({@code traces/} at the repository root; tests run in the module's folder). */
    static Path opt(String file) {
        Path shipped = Path.of("..", "traces", "pt-opt-zeroth-order-fl", file);
        return Files.isRegularFile(shipped) ? shipped : shared("pt-opt-zeroth-order-fl/" + file);
    }

    /** A shared trace under {@code devalloc.shared.dir}; the test is skipped when it is absent. */
    static Path shared(String relative) {
        String dir = System.getProperty("devalloc.shared.dir");
        assumeTrue(dir != null && !dir.isBlank(), "system property devalloc.shared.dir is not set");
        Path file = Path.of(dir, "traces").resolve(relative).normalize();
        assumeTrue(Files.isRegularFile(file), () -> file + " is absent: the shared traces are not checked out here");
        return file;
    }

    /** A whole-number field of a {@code *.summary.json} that {@code pickle_to_csv.py} wrote. */
    static long summary(Path file, String field) throws IOException {
        Matcher m = Pattern.compile("\"" + Pattern.quote(field) + "\"\\s*:\\s*(\\d+)").matcher(Files.readString(file));
        if (!m.find()) {
            throw new AssertionError(field + " is not in " + file);
        }
        return Long.parseLong(m.group(1));
    }
}
