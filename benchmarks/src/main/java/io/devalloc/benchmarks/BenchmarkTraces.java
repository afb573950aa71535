package io.devalloc.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The trace files the replay benchmarks read: {@code -Ddevalloc.trace}, or the repository's copy. */
final class BenchmarkTraces {

    /** The OPT trace as the CSV the replay reads, relative to the repository root (where JMH runs). */
    static final String OPT_CSV = "traces/pt-opt-zeroth-order-fl/memory.csv";
    /** The same trace as PyTorch's pickle. */
    static final String OPT_PICKLE = "traces/pt-opt-zeroth-order-fl/memory.pickle";

    private BenchmarkTraces() {
    }

    /** {@code -Ddevalloc.trace} if given, else {@code repositoryCopy}. */
    static Path chosen(String repositoryCopy) {
        return Path.of(System.getProperty("devalloc.trace", repositoryCopy));
    }

    /**
     * {@code file}, which must be a regular file.
     *
     * @throws IOException saying where it was looked for and how to name another
     */
    static Path existing(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException("cannot read the trace " + file.toAbsolutePath()
                    + "; run from the repository root, or pass -Ddevalloc.trace=<trace>");
        }
        return file;
    }
}
