package io.devalloc.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.TreeMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Counts the tests that were skipped because the real traces of {@code ../shared} are absent (their assumption
 * messages name the shared traces) and, at the end of a module's test run, appends one line per reason to the file
 * named by the system property {@value #REPORT_PROPERTY}, so that the build can say at its very end how many tests
 * did not run and why, and CI can refuse such skips where the traces are present. Registered as a JUnit Platform
 * listener service for every module that depends on the testkit; does nothing when the property is unset.
 *
 * <p>JUnit calls a listener from one thread at a time per launcher; the counts are guarded anyway.
 */
public final class SharedTraceSkips implements TestExecutionListener {

    /** Created by the JUnit Platform launcher, which finds it through {@link java.util.ServiceLoader}. */
    public SharedTraceSkips() {
    }

    /** The system property naming the report file (the build sets it for every module). */
    public static final String REPORT_PROPERTY = "devalloc.skip.report";
    /** The system property naming the module (the build sets it to the artifact id). */
    public static final String MODULE_PROPERTY = "devalloc.module";

    private final Map<String, Integer> byReason = new TreeMap<>();

    @Override
    public synchronized void executionSkipped(TestIdentifier test, String reason) {
        count(reason);
    }

    @Override
    public synchronized void executionFinished(TestIdentifier test, TestExecutionResult result) {
        if (result.getStatus() == TestExecutionResult.Status.ABORTED && test.isTest()) {
            count(result.getThrowable().map(Throwable::getMessage).orElse(null));
        }
    }

    private void count(String reason) {
        if (reason != null && (reason.contains("shared traces") || reason.contains("devalloc.shared.dir"))) {
            // One reason per kind, not per file: "<file> is absent: ..." would list every trace.
            String kind = reason.contains("devalloc.shared.dir") ? "the system property devalloc.shared.dir is not set"
                    : "../shared/traces is absent";
            byReason.merge(kind, 1, Integer::sum);
        }
    }

    @Override
    public synchronized void testPlanExecutionFinished(TestPlan plan) {
        String report = System.getProperty(REPORT_PROPERTY);
        if (report == null || report.isBlank() || byReason.isEmpty()) {
            return;
        }
        String module = System.getProperty(MODULE_PROPERTY, "tests");
        StringBuilder lines = new StringBuilder();
        byReason.forEach((reason, n) -> lines.append(module).append(": ").append(n).append(" tests skipped: ")
                .append(reason).append('\n'));
        try {
            Path file = Path.of(report);
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, lines, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.getLogger(SharedTraceSkips.class.getName()).log(System.Logger.Level.WARNING,
                    "cannot write the skip report " + report, e);
        }
        byReason.clear();
    }
}
