package io.devalloc.benchmarks;

import io.devalloc.examples.replay.ReplayOptions;
import io.devalloc.examples.replay.ReplayOutcome;
import io.devalloc.examples.replay.Replayer;
import io.devalloc.examples.replay.TraceSources;
import io.devalloc.examples.trace.PyTorchCsvReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@code ./devalloc replay} end to end: the real {@link Replayer} (both passes over the file, the PyTorch CSV
 * reader, the allocator on a fresh simulated 80 GiB device, peaks, timeline and snapshots) on a generated PyTorch CSV
 * of {@value #EVENTS} events, written to a temporary file once per trial. Each invocation is one cold replay of the
 * whole file (the file is in the page cache after the first). {@link OperationsPerInvocation} is the event count, so
 * the score (ops/s) is trace events per second of the whole replay, first pass included — stricter than the
 * {@code events_per_second} that {@code replay} reports, which times the replay pass only.
 *
 * <p>The trace: seeded, alternately allocating (sizes 512 B to 20 MiB, stream 0, addresses that never repeat) and
 * freeing a random live allocation, with at most 2,000 live; {@code seq} and {@code time_us} as PyTorch writes them.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ReplayEndToEndBenchmark {

    /** Events in the generated trace: one per row after the header. */
    public static final int EVENTS = 3_000_000;

    private static final long[] SIZES = {512, 777, 1024, 4096, 65536, 123456, 1 << 20, 3 << 20, 20 << 20};

    @Param({"caching", "bfc"})
    public String allocator;

    private Path trace;
    private Replayer replayer;

    @Setup(Level.Trial)
    public void writeTrace() throws IOException {
        trace = Files.createTempFile("devalloc-replay-bench", ".csv");
        write(trace, EVENTS, 1);
        replayer = new Replayer(ReplayOptions.defaults().withAllocator(allocator));
    }

    @TearDown(Level.Trial)
    public void deleteTrace() throws IOException {
        Files.deleteIfExists(trace);
    }

    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public ReplayOutcome replay() throws IOException {
        ReplayOutcome outcome = replayer.replay(trace.getFileName().toString(), TraceSources.of(trace));
        if (outcome.result().events() != EVENTS) {
            throw new IllegalStateException("replayed " + outcome.result().events() + " events, not " + EVENTS);
        }
        return outcome;
    }

    /** Writes a PyTorch CSV of {@code events} alloc and free_completed rows. */
    static void write(Path file, int events, long seed) throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        long[] liveAddr = new long[2001];
        long[] liveSize = new long[2001];
        int live = 0;
        long next = 139_800_000_000_000L;
        long time = 1_763_324_225_770_003L;
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
            out.write(PyTorchCsvReader.HEADER);
            out.write('\n');
            StringBuilder row = new StringBuilder(64);
            for (int seq = 0; seq < events; seq++) {
                row.setLength(0);
                if (live > 0 && (live >= 2000 || random.nextBoolean())) {
                    int k = random.nextInt(live);
                    row.append(seq).append(",free_completed,").append(liveAddr[k]).append(',').append(liveSize[k]);
                    live--;
                    liveAddr[k] = liveAddr[live];
                    liveSize[k] = liveSize[live];
                } else {
                    long size = SIZES[random.nextInt(SIZES.length)];
                    row.append(seq).append(",alloc,").append(next).append(',').append(size);
                    liveAddr[live] = next;
                    liveSize[live] = size;
                    live++;
                    next += size + 512;
                }
                row.append(",0,").append(time).append('\n');
                time += 3;
                out.append(row);
            }
        }
    }
}
