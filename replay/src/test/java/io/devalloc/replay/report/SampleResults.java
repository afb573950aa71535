package io.devalloc.replay.report;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.TrainingLoopWorkload;
import io.devalloc.replay.TrainingLoopWorkload.Kind;
import io.devalloc.replay.TrainingLoopWorkload.Operation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Results for the sample report (the README's picture and the browser test): the project's synthetic training
 * loop ({@link TrainingLoopWorkload}) run through the real allocators on a simulated 80 GiB GPU, so the timelines
 * and the segment maps at the peak are what those allocators really do with that allocation pattern. Only the
 * events per second depend on the machine; everything else is the same on every run.
 */
final class SampleResults {

    static final String DEVICE = "sim:80GiB";
    /** The set-ups compared: the allocator and its configuration string. */
    static final List<String[]> SETUPS = List.of(
            new String[] {"direct", ""},
            new String[] {"bfc", "allow_growth:true"},
            new String[] {"caching", ""},
            new String[] {"caching", "expandable_segments:True"});

    private static final int MAX_SAMPLES = 4_000;
    /** Untimed runs first, so that the timed ones run compiled code. */
    private static final int WARM_UP_RUNS = 20;
    private static final int TIMED_RUNS = 5;

    private SampleResults() {
    }

    /** The training loop with the given shape through every set-up in {@link #SETUPS}. */
    static List<ReplayResult> trainingLoop(TrainingLoopWorkload.Spec spec) {
        TrainingLoopWorkload workload = TrainingLoopWorkload.generate(spec);
        String trace = "training-loop " + spec.layers() + " layers × " + spec.steps() + " steps, seed " + spec.seed();
        List<ReplayResult> results = new ArrayList<>();
        for (String[] setup : SETUPS) {
            results.add(replay(workload, trace, setup[0], setup[1]));
        }
        return results;
    }

    /**
     * Replays the workload once, sampling the allocator's stats after each event (thinned to at most
     * {@value #MAX_SAMPLES} samples) and keeping the snapshot at the reserved peak (of the moments at the peak,
     * the one with the most bytes allocated). Then times the same workload on fresh allocators without sampling:
     * {@value #WARM_UP_RUNS} runs to warm up, and the fastest of {@value #TIMED_RUNS} more gives the events per
     * second.
     */
    static ReplayResult replay(TrainingLoopWorkload workload, String trace, String allocatorName, String conf) {
        List<Operation> ops = workload.operations();
        int n = ops.size();
        int stride = Math.max(1, (n + MAX_SAMPLES - 1) / MAX_SAMPLES);
        int samples = (n + stride - 1) / stride + 1;
        long[] event = new long[samples];
        long[] allocated = new long[samples];
        long[] reserved = new long[samples];
        int s = 0;
        MemorySnapshot peak = null;
        long ooms = 0;
        AllocatorStats end;
        try (DeviceAllocator allocator = open(allocatorName, conf)) {
            long[] addresses = new long[workload.slotCount()];
            long peakReserved = -1;
            long allocatedAtPeak = -1;
            for (int i = 0; i < n; i++) {
                Operation op = ops.get(i);
                if (op.kind() == Kind.MALLOC) {
                    try {
                        addresses[op.slot()] = allocator.malloc(op.bytes());
                    } catch (OutOfMemoryException e) {
                        addresses[op.slot()] = 0;
                        ooms++;
                    }
                } else if (addresses[op.slot()] != 0) {
                    allocator.free(addresses[op.slot()]);
                    addresses[op.slot()] = 0;
                }
                AllocatorStats st = allocator.stats();
                if (st.reservedBytes() > peakReserved
                        || (st.reservedBytes() == peakReserved && st.allocatedBytes() > allocatedAtPeak)) {
                    peakReserved = st.reservedBytes();
                    allocatedAtPeak = st.allocatedBytes();
                    peak = allocator.snapshot();
                }
                if (i % stride == 0 || i == n - 1) {
                    event[s] = i + 1L;
                    allocated[s] = st.allocatedBytes();
                    reserved[s] = st.reservedBytes();
                    s++;
                }
            }
            end = allocator.stats();
        }
        long bestNanos = Long.MAX_VALUE;
        for (int run = 0; run < WARM_UP_RUNS + TIMED_RUNS; run++) {
            try (DeviceAllocator allocator = open(allocatorName, conf)) {
                long nanos = workload.replay(allocator).elapsedNanos();
                if (run >= WARM_UP_RUNS) {
                    bestNanos = Math.min(bestNanos, nanos);
                }
            }
        }
        AllocatorStats atPeak = peak.stats();
        double fragmentation = 1.0 - (double) atPeak.allocatedBytes() / atPeak.reservedBytes();
        double requestedFragmentation = 1.0 - (double) atPeak.requestedBytes() / atPeak.reservedBytes();
        ReplayResult.Timeline timeline = new ReplayResult.Timeline(Arrays.copyOf(event, s),
                Arrays.copyOf(allocated, s), Arrays.copyOf(reserved, s));
        return ReplayResult.builder().trace(trace).allocator(allocatorName).device(DEVICE).conf(conf).events(n)
                .allocs(end.allocationCount()).frees(end.freeCount()).deviceMallocs(end.deviceMallocs())
                .deviceFrees(end.deviceFrees()).peakReservedBytes(end.peakReservedBytes())
                .peakAllocatedBytes(end.peakAllocatedBytes()).peakRequestedBytes(end.peakRequestedBytes())
                .endReservedBytes(end.reservedBytes()).ooms(ooms).allocRetries(end.allocationRetries())
                .fragmentation(fragmentation).requestedFragmentation(requestedFragmentation)
                .eventsPerSecond(n / (bestNanos / 1e9)).timeline(timeline).peakSnapshot(peak).build();
    }

    private static DeviceAllocator open(String allocator, String conf) {
        return DeviceAllocators.builder().device(DEVICE).allocator(allocator).config(conf).build();
    }
}
