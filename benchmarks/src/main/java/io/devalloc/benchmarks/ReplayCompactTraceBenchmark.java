package io.devalloc.benchmarks;

import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.Replayer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * One replay of the shipped OPT trace ({@code traces/pt-opt-zeroth-order-fl/memory.csv}, or
 * {@code -Ddevalloc.trace=...}) from a {@link CompactTrace} read once per trial, as the advisor replays it under
 * each setting: a fresh simulated 80 GiB device and allocator, the exact peak read after every event, the timeline,
 * the ground truth and, with {@code peakSnapshot}, the second replay up to the peak for its snapshot and the waste
 * there. One op = one whole replay (the score is milliseconds per replay); {@code -t N} runs N replays of the same
 * compact trace at once.
 *
 * <p>{@code setting}: {@code caching} (PyTorch's defaults), {@code caching-expandable}
 * ({@code expandable_segments:True}), {@code bfc-growth} ({@code allow_growth:true}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class ReplayCompactTraceBenchmark {

    @Param({"caching", "caching-expandable", "bfc-growth"})
    public String setting;

    @Param({"true", "false"})
    public boolean peakSnapshot;

    private CompactTrace trace;
    private Replayer replayer;

    @Setup(Level.Trial)
    public void readTrace() throws IOException {
        readTrace(BenchmarkTraces.chosen(BenchmarkTraces.OPT_CSV));
    }

    void readTrace(Path path) throws IOException {
        trace = CompactTrace.read(BenchmarkTraces.existing(path));
        replayer = new Replayer(options(setting).withPeakSnapshot(peakSnapshot));
    }

    static ReplayOptions options(String setting) {
        return switch (setting) {
            case "caching" -> ReplayOptions.defaults();
            case "caching-expandable" -> ReplayOptions.defaults().withConf("expandable_segments:True");
            case "bfc-growth" -> ReplayOptions.defaults().withAllocator("bfc").withConf("allow_growth:true");
            default -> throw new IllegalArgumentException("unknown setting " + setting);
        };
    }

    /** One replay of the whole trace. */
    @Benchmark
    public ReplayOutcome replay() {
        ReplayOutcome outcome = replayer.replay(trace);
        if (outcome.result().events() != trace.events()) {
            throw new IllegalStateException("replayed " + outcome.result().events() + " events, not "
                    + trace.events());
        }
        return outcome;
    }
}
