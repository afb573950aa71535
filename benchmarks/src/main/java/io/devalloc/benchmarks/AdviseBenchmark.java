package io.devalloc.benchmarks;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.AdvisorTrace;
import io.devalloc.advisor.Objective;
import io.devalloc.replay.ReplayProgress;
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
 * {@code devalloc advise} on the shipped OPT trace ({@code traces/pt-opt-zeroth-order-fl/memory.pickle}, or
 * {@code -Ddevalloc.trace=...}) without the JVM's start: the caching allocator's default grid, each setting's
 * figures (with the peak's snapshot) and its capacity search to 2 MiB, and the trust replay, on {@code threads}
 * threads. One op is one whole advice, so the score is advices per second (multiply by the replays of one advice,
 * which the set-up prints, for replays per second).
 *
 * <ul>
 *   <li>{@link #advise()}: the trace already read into memory (once per trial), as the advisor replays it;</li>
 *   <li>{@link #readAndAdvise()}: reading and unpickling the trace too, what the command does after the JVM
 *       started.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class AdviseBenchmark {

    /** Replays at once ({@code --threads}). */
    @Param({"1", "2"})
    public int threads;

    private Path path;
    private AdvisorTrace trace;
    private Advisor advisor;
    private Advisor.Options options;

    @Setup(Level.Trial)
    public void readTrace() throws IOException {
        readTrace(BenchmarkTraces.chosen(BenchmarkTraces.OPT_PICKLE));
    }

    void readTrace(Path file) throws IOException {
        path = BenchmarkTraces.existing(file);
        trace = AdvisorTrace.read(file);
        advisor = new Advisor();
        options = new Advisor.Options("caching", null, -1, Objective.CAPACITY, threads);
    }

    /** The default grid's advice on the trace in memory. */
    @Benchmark
    public Advice advise() {
        return checked(advisor.advise(trace, options, ReplayProgress.NONE));
    }

    /** Reading the trace, then the default grid's advice: the command but for the JVM's start and the report. */
    @Benchmark
    public Advice readAndAdvise() throws IOException {
        return checked(advisor.advise(AdvisorTrace.read(path), options, ReplayProgress.NONE));
    }

    private static Advice checked(Advice advice) {
        if (advice.recommendation() == null || advice.settings().size() < 10) {
            throw new IllegalStateException("the default grid gave no recommendation: " + advice.settings());
        }
        return advice;
    }
}
