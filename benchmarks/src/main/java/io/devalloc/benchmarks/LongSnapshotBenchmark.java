package io.devalloc.benchmarks;

import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.JobAdvice;
import io.devalloc.advisor.Objective;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.TraceFile;
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
 * {@code devalloc advise} on a PyTorch snapshot of a long job, without the JVM's start: the snapshot of
 * {@link LongSnapshot} ({@code entries} trace entries with 32 shared stack frames each, written as CPython writes
 * real ones), made once into {@code -Ddevalloc.longSnapshot.dir} (default: the temporary directory) and reused.
 * Single shot: one op is one whole piece of work, in seconds.
 *
 * <ul>
 *   <li>{@link #read()}: the snapshot read from its file into per-device compact traces
 *       ({@link TraceFile#read}), what {@code advise} and {@code replay} do before their first replay;</li>
 *   <li>{@link #advise()}: the caching allocator's default grid on the trace already read, on {@code threads}
 *       threads, as {@code advise} runs it (the default objective, every device).</li>
 * </ul>
 *
 * <p>Run with {@code -f 1 -wi 1 -i 3} or so; a trial reads the file in its set-up for {@link #advise()}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.SECONDS)
public class LongSnapshotBenchmark {

    /** Trace entries of the snapshot. */
    @Param({"1000000"})
    public int entries;

    /** Replays at once ({@code --threads}). */
    @Param({"2"})
    public int threads;

    private Path path;
    private TraceFile file;
    private Advisor advisor;
    private Advisor.Options options;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        Path dir = Path.of(System.getProperty("devalloc.longSnapshot.dir", System.getProperty("java.io.tmpdir")));
        setUp(LongSnapshot.cached(entries, dir));
    }

    void setUp(Path snapshot) throws IOException {
        path = snapshot;
        file = TraceFile.read(path, TraceFile.ALL_DEVICES);
        advisor = new Advisor();
        options = new Advisor.Options("caching", null, -1, Objective.RESERVED, threads);
    }

    /** The snapshot read into per-device compact traces. */
    @Benchmark
    public TraceFile read() throws IOException {
        return TraceFile.read(path, TraceFile.ALL_DEVICES);
    }

    /** The default grid's advice on every device of the snapshot in memory. */
    @Benchmark
    public JobAdvice advise() {
        JobAdvice advice = advisor.advise(file, options, ReplayProgress.NONE);
        if (advice.devices().isEmpty() || advice.devices().getFirst().recommendation() == null) {
            throw new IllegalStateException("no recommendation: " + advice.devices());
        }
        return advice;
    }
}
