package io.devalloc.trace;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the real traces are: {@code <devalloc.shared.dir>/traces}, the system property surefire sets to
 * {@code ${maven.multiModuleProjectDirectory}/../shared}. They are not part of the project, so tests that need them
 * are skipped (JUnit assumptions), not failed, when they are absent; and the few figures those tests read from the
 * {@code *.summary.json} files that {@code pickle_to_csv.py --summary} wrote.
 */
final class SharedTraces {

    static final String PROPERTY = "devalloc.shared.dir";

    private static final Pattern NUMBER_FIELD = Pattern.compile("\"([a-z_0-9]+)\"\\s*:\\s*(-?\\d+)\\s*[,}\\n]");
    private static final Pattern ACTIONS = Pattern.compile("\"actions\"\\s*:\\s*\\{([^}]*)}");

    private SharedTraces() {
    }

    /** The file at {@code relative} under the traces folder; skips the calling test when it is absent. */
    static Path require(String relative) {
        String dir = System.getProperty(PROPERTY);
        assumeTrue(dir != null && !dir.isBlank(), "system property " + PROPERTY + " is not set");
        Path file = Path.of(dir, "traces").resolve(relative).normalize();
        assumeTrue(Files.isRegularFile(file), () -> file + " is absent: the shared traces are not checked out here");
        return file;
    }

    /** A top-level integer field of a summary. */
    static long summaryLong(Path summary, String field) {
        Matcher m = NUMBER_FIELD.matcher(read(summary));
        while (m.find()) {
            if (m.group(1).equals(field)) {
                return Long.parseLong(m.group(2));
            }
        }
        throw new IllegalArgumentException(summary + " has no integer field '" + field + "'");
    }

    /** The summary's {@code actions} object: how many trace entries of each action. */
    static Map<String, Long> summaryActions(Path summary) {
        Matcher block = ACTIONS.matcher(read(summary));
        if (!block.find()) {
            throw new IllegalArgumentException(summary + " has no 'actions' object");
        }
        Map<String, Long> actions = new LinkedHashMap<>();
        Matcher m = Pattern.compile("\"([a-z_]+)\"\\s*:\\s*(\\d+)").matcher(block.group(1));
        while (m.find()) {
            actions.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return actions;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
