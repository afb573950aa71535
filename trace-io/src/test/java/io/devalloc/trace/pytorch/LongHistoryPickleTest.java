package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A long synthetic workload recorded with the caching allocator's history and exported with devalloc's own pickle
 * writer, then read back by {@link PyTorchPickleReader}: every allocation and completed free comes back, in order.
 *
 * <p>Also the tool that makes the large pickle of {@code docs/benchmarks.md} ("a pickle of a million entries"): with
 * {@code -Ddevalloc.longHistory.entries=1000000} it records about that many trace entries and keeps the pickle as
 * {@code trace-io/target/long-history.pickle} (not committed; about 174 MB). By default it records a small one in a
 * temporary file.
 */
class LongHistoryPickleTest {

    private static final String ENTRIES = "devalloc.longHistory.entries";

    /** What a recording gave: the pickle file and the allocations and frees the workload made. */
    record Recorded(Path pickle, long allocs, long frees, int entries) {
    }

    /**
     * Records a training-like workload until about {@code entries} trace entries: a working set of up to 256 live
     * blocks of 512 B to 8 MiB, each step freeing a random live block or allocating a new one (a fixed seed, so the
     * same file each time); every block is freed at the end.
     */
    static Recorded record(int entries, Path file) throws IOException {
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
        int recorded = ((List<?>) traces.get(0)).size();
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            PyTorchSnapshots.writePickle(dict, out);
        }
        return new Recorded(file, allocs, frees, recorded);
    }

    @Test
    void aLongRecordedHistoryReadsBackEveryAllocationAndFreeInOrder() throws IOException {
        int entries = Integer.getInteger(ENTRIES, 30_000);
        Path file;
        if (System.getProperty(ENTRIES) != null) {
            Files.createDirectories(Path.of("target"));
            file = Path.of("target", "long-history.pickle");
        } else {
            file = Files.createTempFile("long-history", ".pickle");
        }
        try {
            Recorded r = record(entries, file);
            assertTrue(r.entries() >= entries * 0.99, () -> "recorded " + r.entries() + " entries");
            long allocs = 0;
            long frees = 0;
            long last = 0;
            try (PyTorchPickleReader reader = new PyTorchPickleReader(file)) {
                for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                    assertTrue(e.line() > last, "records in order");
                    last = e.line();
                    if (e.kind() == Kind.ALLOC) {
                        allocs++;
                    } else if (e.kind() == Kind.FREE) {
                        frees++;
                    }
                }
            }
            assertEquals(r.allocs(), allocs);
            assertEquals(r.frees(), frees);
        } finally {
            if (System.getProperty(ENTRIES) == null) {
                Files.deleteIfExists(file);
            }
        }
    }
}
