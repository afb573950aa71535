package io.devalloc.examples;

import io.devalloc.replay.TraceSource;
import io.devalloc.replay.cli.TraceReplays;
import java.nio.file.Path;
import java.util.function.Function;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Serves the commands the hand-written traces of {@link ReplayCommandTest#source} in place of files, for each test
 * of a class that extends with it ({@code @ExtendWith(InjectedTraces.class)}), and puts back what served them before.
 */
final class InjectedTraces implements BeforeEachCallback, AfterEachCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(InjectedTraces.class);
    private static final String SAVED = "saved";

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NAMESPACE).put(SAVED, TraceReplays.sources);
        TraceReplays.sources = ReplayCommandTest::source;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void afterEach(ExtensionContext context) {
        TraceReplays.sources = (Function<Path, TraceSource>) context.getStore(NAMESPACE).get(SAVED);
    }
}
