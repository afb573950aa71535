package io.devalloc.benchmarks;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.pytorch.PyTorchSnapshots;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A PyTorch memory snapshot of a long job, written the way CPython writes real ones: the input of
 * {@link LongSnapshotBenchmark} and of the measurements in {@code docs/benchmarks.md} ("advise on a million trace
 * entries"). A training-like workload is recorded through devalloc's caching allocator with its history on (up to
 * 256 live blocks of 512 B to 8 MiB, each step freeing a random live block or allocating a new one, every block
 * freed at the end; a fixed seed, so the same file each time), as {@code LongHistoryPickleTest} in {@code trace-io}
 * records it; then every allocator call's list of stack frames is given {@value #FRAMES_PER_ENTRY} frame dicts
 * ({@code filename}, {@code line}, {@code name}) drawn from {@value #DISTINCT_FRAMES} distinct ones shared between
 * calls, as PyTorch's {@code py_symbolize} gives the entries of one call one list and every call the same dict for
 * the same frame. The entries keep what the recorder gives them ({@code compile_context}, {@code user_metadata},
 * {@code pool_id}), but for {@code time_us}, which is made a clock of its own (an entry every 5 µs from a fixed
 * start) so that the same entries give the same file. Written with devalloc's pickle writer, which writes a shared
 * list or dict once ({@code BINPUT}) and reads it again from the memo ({@code BINGET}), as CPython's pickler does;
 * CPython's {@code pickle.load} reads it with the sharing intact ({@code LongSnapshotTest} checks both).
 *
 * <p>About 320 bytes of pickle per trace entry: 1,000,000 entries make about 330 MB. Making it needs the whole
 * snapshot as Java maps (about 1 KB of heap per entry). Stateless; {@link #write} may run on any thread.
 *
 * <p>From the command line: {@code java -cp benchmarks/target/benchmarks.jar io.devalloc.benchmarks.LongSnapshot
 * ENTRIES FILE}.
 */
public final class LongSnapshot {

    /** Stack frames per allocator call. */
    public static final int FRAMES_PER_ENTRY = 32;
    /** Distinct frame dicts the calls' frames are drawn from. */
    public static final int DISTINCT_FRAMES = 4096;
    /** Python files the frames name. */
    private static final int FILES = 256;
    /** The first entry's {@code time_us} (November 2025, in microseconds since 1970). */
    private static final long START_US = 1_763_324_225_770_000L;
    /** Microseconds between two entries. */
    private static final long STEP_US = 5;

    /**
     * What a recording gave.
     *
     * @param file    the pickle
     * @param entries the trace entries of its one device
     * @param allocs  the allocations the workload made
     * @param frees   the frees it made
     * @param calls   the distinct frames lists (one per allocator call)
     */
    public record Written(Path file, int entries, long allocs, long frees, int calls) {
    }

    private LongSnapshot() {
    }

    /**
     * Records about {@code entries} trace entries and writes them to {@code file} (replaced if it exists).
     *
     * @throws IOException when the file cannot be written
     */
    public static Written write(int entries, Path file) throws IOException {
        if (entries < 3) {
            throw new IllegalArgumentException("at least 3 entries (an alloc and its free), got " + entries);
        }
        SimulatedDevice device = SimulatedDevice.builder().capacity(1L << 36).build();
        long allocs = 0;
        long frees = 0;
        Map<String, Object> dict;
        try (CachingAllocator a = new CachingAllocatorProvider().create(device, "")) {
            a.recordHistory(entries + 1024);
            SplittableRandom random = new SplittableRandom(13);
            long[] live = new long[256];
            int count = 0;
            // Each allocation gives an alloc entry, each free a free_requested and a free_completed one.
            long target = entries / 3;
            while (allocs < target) {
                boolean free = count == live.length || (count > 0 && random.nextInt(100) < 48);
                if (free) {
                    int victim = random.nextInt(count);
                    a.free(live[victim]);
                    live[victim] = live[--count];
                    frees++;
                } else {
                    long size = 512L << random.nextInt(15);
                    live[count++] = a.malloc(size + random.nextLong(size), DeviceStream.DEFAULT);
                    allocs++;
                }
            }
            while (count > 0) {
                a.free(live[--count]);
                frees++;
            }
            dict = a.snapshotDict();
        }
        List<?> traces = (List<?>) dict.get("device_traces");
        List<?> trace = (List<?>) traces.get(traces.size() - 1);
        int calls = giveFrames(trace);
        Path partial = file.resolveSibling(file.getFileName() + ".partial");
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(partial), 1 << 16)) {
            PyTorchSnapshots.writePickle(dict, out);
        }
        Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING);
        return new Written(file, trace.size(), allocs, frees, calls);
    }

    /**
     * The snapshot of {@code entries} in {@code directory} ({@code long-snapshot-ENTRIES.pickle}), written first if
     * it is not there: the same workload gives the same file, so one file serves every run.
     *
     * @throws IOException when it cannot be written
     */
    public static Path cached(int entries, Path directory) throws IOException {
        Path file = directory.resolve("long-snapshot-" + entries + ".pickle");
        if (!Files.isRegularFile(file)) {
            Files.createDirectories(directory);
            write(entries, file);
        }
        return file;
    }

    /**
     * Replaces each entry's frames list (one per allocator call, shared by that call's entries) with a list of
     * {@value #FRAMES_PER_ENTRY} frame dicts drawn from {@value #DISTINCT_FRAMES} shared ones, keeping the sharing,
     * and its {@code time_us} with the synthetic clock.
     *
     * @return the distinct lists given
     */
    @SuppressWarnings("unchecked")
    private static int giveFrames(List<?> trace) {
        SplittableRandom random = new SplittableRandom(29);
        List<Map<String, Object>> distinct = new ArrayList<>(DISTINCT_FRAMES);
        for (int i = 0; i < DISTINCT_FRAMES; i++) {
            Map<String, Object> frame = new LinkedHashMap<>();
            int f = random.nextInt(FILES);
            frame.put("filename", "/opt/conda/lib/python3.11/site-packages/model/layers_" + f + ".py");
            frame.put("line", 1 + random.nextInt(2000));
            frame.put("name", (i % 3 == 0 ? "forward_" : i % 3 == 1 ? "backward_hook_" : "_call_impl_") + i);
            distinct.add(frame);
        }
        IdentityHashMap<Object, List<Object>> given = new IdentityHashMap<>();
        long time = START_US;
        for (Object o : trace) {
            Map<String, Object> entry = (Map<String, Object>) o;
            entry.put("time_us", time);
            time += STEP_US;
            Object old = entry.get("frames");
            List<Object> frames = given.get(old);
            if (frames == null) {
                frames = new ArrayList<>(FRAMES_PER_ENTRY);
                for (int i = 0; i < FRAMES_PER_ENTRY; i++) {
                    frames.add(distinct.get(random.nextInt(DISTINCT_FRAMES)));
                }
                given.put(old, frames);
            }
            entry.put("frames", frames);
        }
        return given.size();
    }

    /**
     * Writes {@code ENTRIES} entries to {@code FILE}.
     *
     * @throws IOException when the file cannot be written
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: LongSnapshot ENTRIES FILE");
            System.exit(2);
        }
        long start = System.nanoTime();
        Written w = write(Integer.parseInt(args[0]), Path.of(args[1]));
        System.out.printf("%s: %,d trace entries (%,d allocs, %,d frees, %,d calls), %,d bytes, %.1f s%n",
                w.file(), w.entries(), w.allocs(), w.frees(), w.calls(), Files.size(w.file()),
                (System.nanoTime() - start) / 1e9);
    }
}
