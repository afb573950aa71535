package io.devalloc.replay.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.bfc.BfcAllocatorProvider;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.replay.ReplayJson;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TestTraces;
import io.devalloc.replay.report.HtmlReport;
import io.devalloc.sim.SimulatedDeviceProvider;
import io.devalloc.trace.TraceFormat;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A configuration that the allocator's provider took from the environment ({@code PYTORCH_CUDA_ALLOC_CONF} for
 * {@code caching}, TensorFlow's switches for {@code bfc}) is named in every output: the replay table, the compare
 * table, the JSON and the HTML report. The providers get a fake environment through their constructors.
 */
class ConfigFromEnvironmentOutputTest {

    private static final String PYTORCH = "max_split_size_mb:128 (from PYTORCH_CUDA_ALLOC_CONF)";
    private static final String TENSORFLOW = "allow_growth:true (from TF_FORCE_GPU_ALLOW_GROWTH)";

    /** Allocators whose providers read this environment. */
    private static List<AllocatorProvider> registry(Map<String, String> environment) {
        return List.of(new DirectAllocatorProvider(), new BfcAllocatorProvider(environment),
                new CachingAllocatorProvider(environment));
    }

    private static final Map<String, String> ENVIRONMENT = Map.of("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128",
            "TF_FORCE_GPU_ALLOW_GROWTH", "true");

    private static ReplayOutcome replay(Map<String, String> environment, String allocator, String conf)
            throws IOException {
        TestTraces.Builder trace = TestTraces.pytorch()
                .segmentAlloc(TestTraces.A, 200 * TestTraces.MiB)
                .alloc(TestTraces.A, 150 * TestTraces.MiB)
                .alloc(TestTraces.A + 150 * TestTraces.MiB, 1000)
                .free(TestTraces.A)
                .alloc(TestTraces.A, 30 * TestTraces.MiB)
                .free(TestTraces.A)
                .free(TestTraces.A + 150 * TestTraces.MiB);
        ReplayOptions options = ReplayOptions.defaults().withAllocator(allocator).withDevice("sim:4GiB").withConf(conf);
        return new Replayer(options, registry(environment), List.of(new SimulatedDeviceProvider()),
                ReplayProgress.NONE)
                .replay("t.csv", trace.source());
    }

    private static String printed(Consumer<PrintWriter> printer) {
        StringWriter text = new StringWriter();
        try (PrintWriter out = new PrintWriter(text)) {
            printer.accept(out);
        }
        return text.toString().replace(System.lineSeparator(), "\n");
    }

    @Test
    void theResultCarriesWhatCameFromTheEnvironment() throws IOException {
        ReplayOutcome caching = replay(ENVIRONMENT, "caching", "");
        ReplayOutcome bfc = replay(ENVIRONMENT, "bfc", "");
        assertEquals(PYTORCH, caching.result().conf());
        assertEquals(TENSORFLOW, bfc.result().conf());
        assertEquals("memory_limit_mb:1024; " + TENSORFLOW, replay(ENVIRONMENT, "bfc", "memory_limit_mb:1024")
                .result().conf(), "the configuration given, then the environment's part");
        assertEquals("expandable_segments:True", replay(ENVIRONMENT, "caching", "expandable_segments:True")
                .result().conf(), "a configuration given wins over PYTORCH_CUDA_ALLOC_CONF, which is not named");
        assertEquals("", replay(Map.of(), "caching", "").result().conf(), "the defaults");
        assertEquals("", replay(Map.of("PYTORCH_CUDA_ALLOC_CONF", ""), "caching", "").result().conf(),
                "an empty variable gives the defaults");
    }

    @Test
    void theFiguresAreThoseOfTheConfigurationNamed() throws IOException {
        ReplayResult fromEnvironment = replay(ENVIRONMENT, "bfc", "").result();
        ReplayResult given = replay(Map.of(), "bfc", "allow_growth:true").result();
        ReplayResult defaults = replay(Map.of(), "bfc", "").result();
        assertEquals(given.peakReservedBytes(), fromEnvironment.peakReservedBytes());
        assertEquals(given.deviceMallocs(), fromEnvironment.deviceMallocs());
        assertTrue(fromEnvironment.peakReservedBytes() < defaults.peakReservedBytes(),
                "growth takes less than one region of the whole device");
        assertEquals(replay(Map.of(), "caching", "max_split_size_mb:128").result().peakReservedBytes(),
                replay(ENVIRONMENT, "caching", "").result().peakReservedBytes());
    }

    @Test
    void everyOutputNamesTheVariable() throws IOException {
        ReplayOutcome caching = replay(ENVIRONMENT, "caching", "");
        ReplayOutcome expandable = replay(ENVIRONMENT, "caching", "expandable_segments:True");
        ReplayOutcome bfc = replay(ENVIRONMENT, "bfc", "");
        String table = printed(out -> ReplayCommand.print(out, caching));
        String compare = printed(out -> CompareCommand.printTrace(out, List.of(caching, bfc, expandable)));
        String json = ReplayJson.toJson(caching, false);
        String html = HtmlReport.render("t", List.of(caching.result(), bfc.result()));
        assertAll(
                () -> assertTrue(table.contains("\n  config                   " + PYTORCH + "\n"), table),
                () -> assertFalse(table.contains("(defaults)"), table),
                () -> assertTrue(json.contains("\"conf\":\"" + PYTORCH + "\""), json),
                () -> assertTrue(html.contains(PYTORCH) && html.contains(TENSORFLOW), "the report's conf column"),
                // The compare table's headers wrap the long labels; their words are all there.
                () -> assertTrue(compare.contains("(from PYTORCH_CUDA_ALLOC_CONF)"), compare),
                () -> assertTrue(compare.contains("(from TF_FORCE_GPU_ALLOW_GROWTH)"), compare),
                () -> assertTrue(compare.contains("max_split_size_mb:128"), compare));
        for (String line : compare.split("\n")) {
            assertTrue(line.length() <= TextWrap.MAX_WIDTH, line.length() + " columns: " + line);
        }
    }

    @Test
    void withoutTheEnvironmentTheOutputsSayDefaultsAsBefore() throws IOException {
        ReplayOutcome caching = replay(Map.of(), "caching", "");
        assertTrue(printed(out -> ReplayCommand.print(out, caching))
                .contains("\n  config                   (defaults)\n"));
        assertTrue(ReplayJson.toJson(caching, false).contains("\"conf\":\"\""));
        assertEquals("caching", caching.label());
        assertEquals(TraceFormat.PYTORCH_CSV, caching.format());
    }
}
