package io.devalloc.replay;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.caching.TraceAction;
import io.devalloc.caching.TraceEntry;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.pytorch.PickleWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * PyTorch memory snapshots of every shape the advisor and the replay must handle, recorded by running a workload
 * through devalloc's own copy of PyTorch's caching allocator, with its memory history on, on a simulated GPU of a
 * given capacity, and written with devalloc's own pickle writer: as PyTorch writes them, one history per device,
 * the entries of one allocator call sharing one list of stack frames. What each recording did is counted from the
 * allocator's own history, so tests compare the reader's and the advisor's figures with what really happened.
 */
public final class SnapshotScenarios {

    private static final long MIB = ByteSize.MiB;

    private SnapshotScenarios() {
    }

    /**
     * A workload: a training loop with weights, growing activations (so the cache holds blocks no later request fits,
     * and a capped device must flush it), the program's {@code empty_cache()} every {@code emptyCacheEvery} steps
     * (0: never), and at the end, optionally, a request that does not fit (the run's out-of-memory error).
     *
     * @param weightsMiB      the weights, allocated once and kept
     * @param firstMiB        the first step's large activation
     * @param growMiB         how much each step's activation grows
     * @param steps           the steps
     * @param emptyCacheEvery call {@code empty_cache()} after every this many steps; 0 for never
     * @param finalRequestMiB a last request that fails with out of memory on the device, or 0 for none
     */
    public record Workload(long weightsMiB, long firstMiB, long growMiB, int steps, int emptyCacheEvery,
                           long finalRequestMiB) {
    }

    /**
     * One device's recording.
     *
     * @param device           the CUDA device index
     * @param capacity         the simulated device's capacity
     * @param dict             the allocator's {@code _snapshot()} dict, its history and its segments on {@code device}
     * @param programFlushes   {@code empty_cache()} calls that freed at least one segment
     * @param allocatorFlushes mallocs that freed cached segments before their device malloc (the retry ladder)
     * @param ooms             allocations that failed with out of memory
     * @param peakReserved     the highest bytes reserved (over the history kept: from its start, which is not the
 *                         program's when the history was cut to its last entries)
     * @param mallocs          device mallocs made
     * @param frees            device frees made
     */
    public record Recorded(int device, long capacity, Map<String, Object> dict, int programFlushes,
                           int allocatorFlushes, int ooms, long peakReserved, long mallocs, long frees) {
    }

    /**
     * What a recorded program does with the allocator: its allocations and frees, in order; it returns the
     * allocations that failed with out of memory (caught: the program went on, or stopped there).
     */
    @FunctionalInterface
    public interface Program {
        int run(CachingAllocator allocator);
    }

    /** Runs {@code w} through the caching allocator ({@code config}) on a simulated device {@code device}. */
    public static Recorded record(int device, long capacity, String config, Workload w) {
        return record(device, capacity, config, Integer.MAX_VALUE, a -> run(a, w));
    }

    private static int run(CachingAllocator a, Workload w) {
        int ooms = 0;
        a.malloc(w.weightsMiB() * MIB, DeviceStream.DEFAULT);
        for (int step = 0; step < w.steps(); step++) {
            long big = (w.firstMiB() + step * w.growMiB()) * MIB;
            long x = a.malloc(big, DeviceStream.DEFAULT);
            long y = a.malloc(big / 2, DeviceStream.DEFAULT);
            long small = a.malloc(300 * 1024, DeviceStream.DEFAULT);
            a.free(y);
            a.free(x);
            a.free(small);
            if (w.emptyCacheEvery() > 0 && (step + 1) % w.emptyCacheEvery() == 0) {
                a.emptyCache();
            }
        }
        if (w.finalRequestMiB() > 0) {
            try {
                a.free(a.malloc(w.finalRequestMiB() * MIB, DeviceStream.DEFAULT));
            } catch (OutOfMemoryException expected) {
                ooms++;
            }
        }
        // The weights stay live: the snapshot is taken with them, as a running program's is.
        return ooms;
    }

    /**
     * Runs {@code program} through the caching allocator ({@code config}) on a simulated device {@code device} of
     * {@code capacity} bytes, its history kept to the last {@code maxEntries} entries (PyTorch's {@code max_entries}:
     * fewer than the program makes gives a snapshot whose history starts after its first allocations, a warm start).
     * The snapshot is taken when the program returns, before the allocator is closed.
     */
    public static Recorded record(int device, long capacity, String config, int maxEntries, Program program) {
        SimulatedDevice gpu = SimulatedDevice.builder().index(device).capacity(capacity).build();
        CachingAllocator a = new CachingAllocatorProvider(Map.of()).create(gpu, config);
        a.recordHistory(maxEntries);
        int ooms = program.run(a);
        Map<String, Object> dict = a.snapshotDict();
        List<TraceEntry> history = a.history();
        int programFlushes = 0;
        int allocator = 0;
        long reserved = 0;
        long peak = 0;
        long mallocs = 0;
        long frees = 0;
        for (int i = 0; i < history.size(); i++) {
            TraceEntry e = history.get(i);
            switch (e.action()) {
                case SEGMENT_ALLOC, SEGMENT_MAP -> {
                    reserved += e.size();
                    mallocs++;
                }
                case SEGMENT_FREE, SEGMENT_UNMAP -> {
                    reserved -= e.size();
                    frees++;
                }
                default -> {
                    // blocks: not reserved bytes
                }
            }
            peak = Math.max(peak, reserved);
            boolean runStart = (e.action() == TraceAction.SEGMENT_FREE || e.action() == TraceAction.SEGMENT_UNMAP)
                    && (i == 0 || (history.get(i - 1).action() != TraceAction.SEGMENT_FREE
                    && history.get(i - 1).action() != TraceAction.SEGMENT_UNMAP));
            if (runStart) {
                if (madeInMalloc(history, i)) {
                    allocator++;
                } else {
                    programFlushes++;
                }
            }
        }
        a.close();
        return new Recorded(device, capacity, dict, programFlushes, allocator, ooms, peak, mallocs, frees);
    }

    /** Whether the run starting at {@code i} was recorded by a malloc (its call also records an alloc or an oom). */
    private static boolean madeInMalloc(List<TraceEntry> history, int i) {
        long call = history.get(i).call();
        for (int j = i; j < history.size() && history.get(j).call() == call; j++) {
            if (history.get(j).action() == TraceAction.ALLOC || history.get(j).action() == TraceAction.OOM) {
                return true;
            }
        }
        return false;
    }

    /**
     * One snapshot of several devices' recordings, as PyTorch writes a job on several GPUs: {@code device_traces[i]}
     * is device i's history (an empty list for devices in between), the segments of every device, one settings
     * dict. With {@code history} false, the snapshot holds only the end state (no {@code device_traces}, as
     * {@code _snapshot(include_traces=False)}).
     */
    public static Map<String, Object> snapshot(List<Recorded> devices, boolean history) {
        int last = 0;
        for (Recorded r : devices) {
            last = Math.max(last, r.device());
        }
        List<Object> traces = new ArrayList<>();
        for (int i = 0; i <= last; i++) {
            traces.add(new ArrayList<>());
        }
        List<Object> segments = new ArrayList<>();
        Object settings = null;
        for (Recorded r : devices) {
            List<?> own = (List<?>) r.dict().get("device_traces");
            traces.set(r.device(), own.get(r.device()));
            segments.addAll((List<?>) r.dict().get("segments"));
            if (settings == null) {
                settings = r.dict().get("allocator_settings");
            }
        }
        Map<String, Object> snapshot = new LinkedHashMap<>();
        snapshot.put("segments", segments);
        if (history) {
            snapshot.put("device_traces", traces);
        }
        snapshot.put("allocator_settings", settings);
        snapshot.put("external_annotations", List.of());
        return snapshot;
    }

    /** Writes {@code snapshot} with devalloc's pickle writer to {@code file}. */
    public static Path write(Path file, Map<String, Object> snapshot) throws IOException {
        Files.write(file, PickleWriter.toBytes(snapshot));
        return file;
    }

    /**
     * A program that fragments the large pool, then asks for one large block: weights, then {@code segments}
     * segments of 60 MiB (allocated and freed, so that they stay cached), each split into three 20 MiB blocks of
     * which the last two are freed again (one stays live at the start of each, so no flush can free a segment), then
     * a request of {@code requestMiB}. Under PyTorch's defaults the free 40 MiB in each segment cannot be released,
     * so the request fails on a device without room for it on top; with expandable segments (20 MiB pages in the
     * large pool) the flush unmaps those pages and the request fits. With {@code retryMiB} above 0 the program
     * catches that failure, frees the blocks kept live, asks again (served: the flush frees the empty segments),
     * then asks for {@code retryMiB} more, which may fail in turn: a run that goes on after a caught out-of-memory
     * error.
     */
    public static Program fragmenting(long weightsMiB, int segments, long requestMiB, long retryMiB) {
        return a -> {
            int ooms = 0;
            a.malloc(weightsMiB * MIB, DeviceStream.DEFAULT);
            long[] whole = new long[segments];
            for (int s = 0; s < segments; s++) {
                whole[s] = a.malloc(60 * MIB, DeviceStream.DEFAULT);
            }
            for (long w : whole) {
                a.free(w);
            }
            // Best fit takes the smallest free block: each 60 MiB segment is filled with three before the next.
            long[] thirds = new long[segments * 3];
            for (int b = 0; b < thirds.length; b++) {
                thirds[b] = a.malloc(20 * MIB, DeviceStream.DEFAULT);
            }
            long[] kept = new long[segments];
            for (int b = 0; b < thirds.length; b++) {
                if (b % 3 == 0) {
                    kept[b / 3] = thirds[b];
                } else {
                    a.free(thirds[b]);
                }
            }
            long big;
            try {
                big = a.malloc(requestMiB * MIB, DeviceStream.DEFAULT);
            } catch (OutOfMemoryException e) {
                ooms++;
                if (retryMiB <= 0) {
                    return ooms;
                }
                for (long k : kept) {
                    a.free(k);
                }
                big = a.malloc(requestMiB * MIB, DeviceStream.DEFAULT);
            }
            if (retryMiB > 0) {
                try {
                    a.malloc(retryMiB * MIB, DeviceStream.DEFAULT);
                } catch (OutOfMemoryException e) {
                    ooms++;
                }
            }
            a.free(big);
            return ooms;
        };
    }

    /** A near-capacity workload: the device must flush its cache, about every other step. */
    public static Workload nearCapacity(int steps, int emptyCacheEvery, long finalRequestMiB) {
        return new Workload(200, 300, 20, steps, emptyCacheEvery, finalRequestMiB);
    }
}
