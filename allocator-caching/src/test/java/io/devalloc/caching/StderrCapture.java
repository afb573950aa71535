package io.devalloc.caching;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Captures what slf4j-simple (the test binding, which looks {@code System.err} up at every line) prints while a
 * piece of code runs, so that tests can check upstream's warnings.
 */
final class StderrCapture {

    private StderrCapture() {
    }

    /** Runs {@code r} and returns what it printed on standard error. */
    static synchronized String during(Runnable r) {
        PrintStream original = System.err;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            r.run();
        } finally {
            System.setErr(original);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
