package io.devalloc.benchmarks;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.sim.SimulatedDevice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
import org.openjdk.jmh.annotations.TearDown;

/**
 * Replays the recorded PyTorch trace {@code pt-opt-zeroth-order-fl/memory.csv} (23,105 rows, of which 7,946 allocs
 * and 7,549 completed frees are replayed; the other rows are what PyTorch did) through an allocator on a fresh
 * simulated 80 GiB device, from an empty allocator each time. The trace is parsed before measuring, so this measures
 * the allocator calls of a replay, not the trace readers. The score is milliseconds per whole replay; operations
 * per second = 15,495 / score.
 *
 * <p>The trace is read from {@code -Ddevalloc.trace=...}, by default {@code traces/pt-opt-zeroth-order-fl/memory.csv}
 * relative to the working directory (the repository root), where the project ships the trace.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class TraceReplayBenchmark {

    /** Operations (allocations and frees) one replay makes, for operations per second. */
    public static final int REPLAYED_OPERATIONS = 15_495;

    @Param({"caching", "bfc"})
    public String allocator;

    /** Replay plan: for each op, the size (&gt; 0 to allocate into the slot, 0 to free the slot). */
    private long[] sizes;
    private int[] slots;
    private long[] live;
    private SimulatedDevice device;
    private DeviceAllocator alloc;

    @Setup(Level.Trial)
    public void loadTrace() {
        Path path = BenchmarkTraces.chosen(BenchmarkTraces.OPT_CSV);
        List<String> lines;
        try {
            lines = Files.readAllLines(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the trace " + path.toAbsolutePath()
                    + "; run from the repository root (the project ships the trace in traces/), or pass"
                    + " -Ddevalloc.trace=<csv>", e);
        }
        Map<Long, Integer> slotOf = new HashMap<>();
        long[] s = new long[lines.size()];
        int[] sl = new int[lines.size()];
        int n = 0;
        int nextSlot = 0;
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",");
            String action = f[1];
            long addr = Long.parseLong(f[2]);
            if (action.equals("alloc")) {
                int slot = nextSlot++;
                slotOf.put(addr, slot);
                s[n] = Long.parseLong(f[3]);
                sl[n++] = slot;
            } else if (action.equals("free_completed")) {
                Integer slot = slotOf.remove(addr);
                if (slot != null) {
                    s[n] = 0;
                    sl[n++] = slot;
                }
            }
        }
        sizes = Arrays.copyOf(s, n);
        slots = Arrays.copyOf(sl, n);
        live = new long[nextSlot];
    }

    @Setup(Level.Invocation)
    public void freshAllocator() {
        device = BenchmarkAllocators.device();
        alloc = BenchmarkAllocators.create(allocator, device);
    }

    @TearDown(Level.Invocation)
    public void closeAllocator() {
        alloc.close();
        device.close();
    }

    @Benchmark
    public long replay() {
        long[] s = sizes;
        int[] sl = slots;
        long[] l = live;
        DeviceAllocator a = alloc;
        long sum = 0;
        for (int i = 0; i < s.length; i++) {
            if (s[i] > 0) {
                long p = a.malloc(s[i], DeviceStream.DEFAULT);
                l[sl[i]] = p;
                sum += p;
            } else {
                a.free(l[sl[i]]);
            }
        }
        return sum;
    }
}
