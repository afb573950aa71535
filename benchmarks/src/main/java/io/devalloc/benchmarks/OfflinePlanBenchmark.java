package io.devalloc.benchmarks;

import io.devalloc.api.spi.SizeRounding;
import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.bounds.LiveIntervals;
import io.devalloc.replay.bounds.LowerBound;
import io.devalloc.replay.bounds.OfflinePlan;
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
 * The bounds of a synthetic training-like trace ({@link TrainingLikeTrace}) of {@code events} events, read once per
 * trial into a {@link CompactTrace}: {@link #intervals()} turns it into live intervals, {@link #lowerBound()} sweeps
 * them (PyTorch's rounding), {@link #plan()} places them twice, largest first and longest-lived first
 * ({@link OfflinePlan}). One op = one whole computation; the score is milliseconds per op.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class OfflinePlanBenchmark {

    /** PyTorch's {@code round_size} with the default settings. */
    static final SizeRounding PYTORCH = requested -> requested < 512 ? 512 : (requested + 511) / 512 * 512;

    @Param({"1000", "64000", "1000000"})
    public int events;

    CompactTrace trace;
    LiveIntervals intervals;

    @Setup(Level.Trial)
    public void readTrace() {
        trace = TrainingLikeTrace.of(events);
        intervals = LiveIntervals.of(trace);
    }

    /** The trace's live intervals, in one pass over its columns. */
    @Benchmark
    public LiveIntervals intervals() {
        return LiveIntervals.of(trace);
    }

    /** The lower bound: the requested and the rounded peak. */
    @Benchmark
    public LowerBound lowerBound() {
        return LowerBound.of(intervals, PYTORCH);
    }

    /** The offline plan, both orders. */
    @Benchmark
    public OfflinePlan plan() {
        return OfflinePlan.of(intervals, PYTORCH);
    }
}
