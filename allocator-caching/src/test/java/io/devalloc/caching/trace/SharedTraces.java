package io.devalloc.caching.trace;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the real traces are: {@code <devalloc.shared.dir>/traces}, the system property surefire sets to
 * {@code ${maven.multiModuleProjectDirectory}/../shared}. The traces are not part of the project (see
 * {@code ../shared/traces/README.md} for their licences), so tests that need them are skipped, not failed, when they
 * are absent (a fresh clone without {@code ../shared}).
 */
final class SharedTraces {

    static final String PROPERTY = "devalloc.shared.dir";

    private SharedTraces() {
    }

    /**
     * The file at {@code relative} under the traces folder; aborts the calling test (JUnit assumption: reported as
     * skipped) when the property is unset or the file is absent.
     */
    static Path require(String relative) {
        String dir = System.getProperty(PROPERTY);
        assumeTrue(dir != null && !dir.isBlank(), "system property " + PROPERTY + " is not set");
        Path file = Path.of(dir, "traces").resolve(relative).normalize();
        assumeTrue(Files.isRegularFile(file), () -> file + " is absent: the shared traces are not checked out here");
        return file;
    }
}
