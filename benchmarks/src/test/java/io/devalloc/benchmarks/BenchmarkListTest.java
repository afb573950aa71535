package io.devalloc.benchmarks;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * JMH finds benchmarks through {@code META-INF/BenchmarkList}, which its annotation processor writes at compile time.
 * When the compiler's processor path loses that processor (a parent POM's Error Prone path once replaced it), the
 * build still passes and {@code java -jar benchmarks.jar} fails with "Unable to find the resource"; this catches it.
 */
class BenchmarkListTest {

    @Test
    void jmhsGeneratorListedEveryBenchmarkClass() throws IOException {
        String list;
        try (InputStream in = BenchmarkListTest.class.getResourceAsStream("/META-INF/BenchmarkList")) {
            assertTrue(in != null, "no META-INF/BenchmarkList: JMH's annotation processor did not run");
            list = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        for (String benchmark : new String[] {"CachedAllocFreeBenchmark", "PoolScaleBenchmark",
                "RandomAllocationsBenchmark", "ReplayCompactTraceBenchmark", "ReplayEndToEndBenchmark",
                "TraceReplayBenchmark"}) {
            assertTrue(list.contains("io.devalloc.benchmarks." + benchmark), benchmark + " is not in the list");
        }
    }
}
