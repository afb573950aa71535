package io.devalloc.benchmarks;

import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceSources;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.pytorch.PyTorchCsvReader;
import io.devalloc.trace.rmm.RmmCsvWriter;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
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
 * {@code ./devalloc replay} end to end: the real {@link Replayer} (opening the file, the PyTorch CSV reader on its
 * read-ahead thread, the allocator on a fresh simulated 80 GiB device, ground truth, peaks, timeline and snapshots)
 * on a PyTorch CSV of {@value #EVENTS} events, written to a temporary file once per trial. Each invocation is one
 * cold replay of the whole file (the file is in the page cache after the first). {@link OperationsPerInvocation} is
 * the event count, so the score (ops/s) is trace events per second of the whole replay, from opening the device to
 * the result.
 *
 * <p>Two workloads:
 * <ul>
 *   <li>{@code opt-repeated}: a real program's requests, the shipped OPT trace
 *       ({@code traces/pt-opt-zeroth-order-fl/memory.csv}, or {@code -Ddevalloc.trace=...}) played again and
 *       again as a long training run would (about 193 times, cut at {@value #EVENTS} events): every row kept (its
 *       {@code free_requested} rows too, which are parsed and skipped), addresses moved to a fresh range in each
 *       repetition, the blocks still live at the end of a repetition freed there, and the {@code segment_alloc}
 *       rows of the first repetition only;</li>
 *   <li>{@code random}: a stress pattern, seeded, alternately allocating (sizes 512 B to 20 MiB, stream 0,
 *       addresses that never repeat) and freeing a random live allocation, with at most 2,000 live: far more
 *       fragmented than real programs, so the caching allocator's pools stay large;</li>
 *   <li>{@code random-rmm}: the same events as RMM's replay log ({@code Thread,Time,Action,Pointer,Size,Stream}), as
 *       the recording decorator or RMM's logging adaptor writes it.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ReplayEndToEndBenchmark {

    /** Events in either trace. */
    public static final int EVENTS = 3_000_000;

    private static final long[] SIZES = {512, 777, 1024, 4096, 65536, 123456, 1 << 20, 3 << 20, 20 << 20};

    @Param({"caching", "bfc"})
    public String allocator;

    @Param({"opt-repeated", "random", "random-rmm"})
    public String workload;

    private Path trace;
    private Replayer replayer;

    @Setup(Level.Trial)
    public void writeTrace() throws IOException {
        trace = Files.createTempFile("devalloc-replay-bench", ".csv");
        switch (workload) {
            case "random" -> write(trace, EVENTS, 1);
            case "random-rmm" -> writeRmm(trace, EVENTS, 1);
            case "opt-repeated" -> writeRepeated(trace, optTrace(), EVENTS);
            default -> throw new IllegalArgumentException("unknown workload " + workload);
        }
        replayer = new Replayer(ReplayOptions.defaults().withAllocator(allocator));
    }

    @TearDown(Level.Trial)
    public void deleteTrace() throws IOException {
        Files.deleteIfExists(trace);
    }

    /** One cold replay of the whole trace: {@value #EVENTS} events. */
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

    /** The OPT trace's rows (without the header), from {@code -Ddevalloc.trace} or the repository's copy. */
    static List<String> optTrace() throws IOException {
        Path path = BenchmarkTraces.existing(BenchmarkTraces.chosen(BenchmarkTraces.OPT_CSV));
        List<String> lines = Files.readAllLines(path, StandardCharsets.US_ASCII);
        if (lines.isEmpty() || !lines.getFirst().equals(PyTorchCsvReader.HEADER)) {
            throw new IOException(path + " is not a PyTorch CSV trace");
        }
        return lines.subList(1, lines.size());
    }

    /**
     * Writes {@code rows} (PyTorch CSV rows) again and again until {@code events} events are written: addresses
     * moved by 2^40 per repetition, the blocks still live at the end of a repetition freed there (a
     * {@code free_requested} and a {@code free_completed} row each), {@code segment_alloc} rows in the first
     * repetition only (later ones reuse the cache, as a training loop's steps do).
     */
    static void writeRepeated(Path file, List<String> rows, int events) throws IOException {
        long written = 0;
        long seq = 0;
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
            out.write(PyTorchCsvReader.HEADER);
            out.write('\n');
            for (long rep = 0; written < events; rep++) {
                long shift = rep << 40;
                LinkedHashMap<Long, String> live = new LinkedHashMap<>();
                for (String row : rows) {
                    if (written == events) {
                        break;
                    }
                    String[] f = row.split(",", -1);
                    String action = f[1];
                    if (action.equals("segment_alloc") && rep > 0) {
                        continue;
                    }
                    long addr = Long.parseLong(f[2]) + shift;
                    if (action.equals("alloc")) {
                        live.put(addr, f[3]);
                    } else if (action.equals("free_completed")) {
                        live.remove(addr);
                    }
                    out.write(seq++ + "," + action + "," + addr + "," + f[3] + "," + f[4] + "," + f[5] + "\n");
                    if (!action.equals("free_requested")) {
                        written++;
                    }
                }
                for (var e : live.entrySet()) {
                    if (written == events) {
                        break;
                    }
                    out.write(seq++ + ",free_requested," + e.getKey() + "," + e.getValue() + ",0,0\n");
                    out.write(seq++ + ",free_completed," + e.getKey() + "," + e.getValue() + ",0,0\n");
                    written++;
                }
            }
        }
    }

    /** The {@link #write random} trace's events as RMM's replay log. */
    static void writeRmm(Path file, int events, long seed) throws IOException {
        Path csv = Files.createTempFile("devalloc-replay-bench", ".pytorch.csv");
        try {
            write(csv, events, seed);
            try (PyTorchCsvReader in = new PyTorchCsvReader(csv); RmmCsvWriter out = new RmmCsvWriter(file)) {
                for (TraceEvent e = in.next(); e != null; e = in.next()) {
                    out.write(e);
                }
            }
        } finally {
            Files.deleteIfExists(csv);
        }
    }
}
