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
        for (String benchmark : new String[] {"CachedAllocFreeBenchmark",
                "CachedAllocFreeTwoThreadsBenchmark", "ObservabilityBenchmark", "OfflinePlanBenchmark",
                "PoolScaleBenchmark",
                "RandomAllocationsBenchmark", "ReplayCompactTraceBenchmark", "ReplayEndToEndBenchmark",
                "TraceReplayBenchmark", "LongSnapshotBenchmark"}) {
            assertTrue(list.contains("io.devalloc.benchmarks." + benchmark), benchmark + " is not in the list");
        }
        // A line per benchmark method: its class, then its method name.
        for (String[] method : new String[][] {{"RandomAllocationsBenchmark", "n100000"},
                {"CachedAllocFreeBenchmark", "allocateFree"}, {"CachedAllocFreeTwoThreadsBenchmark", "allocateFree"},
                {"ObservabilityBenchmark", "cachedPair"}, {"ObservabilityBenchmark", "devicePair"}}) {
            assertTrue(list.lines().anyMatch(line -> line.contains("io.devalloc.benchmarks." + method[0] + " ")
                    && line.contains(" " + method[1] + " ")), method[0] + "." + method[1] + " is not in the list");
        }
    }
}
