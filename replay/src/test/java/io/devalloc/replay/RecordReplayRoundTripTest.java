package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.record.RecordingAllocator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Record a workload with {@link RecordingAllocator}, read the file back with the trace readers and replay it through
 * the same allocator on the same device: the replay gives the same figures as the recorded run.
 */
class RecordReplayRoundTripTest {

    @ParameterizedTest
    @EnumSource(RecordingAllocator.Format.class)
    void aRecordedWorkloadReplaysToTheSameFigures(RecordingAllocator.Format format, @TempDir Path dir)
            throws Exception {
        Path file = dir.resolve("run.csv");
        long recordedPeakRequested;
        long recordedPeakReserved;
        long allocs = 0;
        long frees = 0;
        // Big enough that nothing fails: a failed allocation's retry ladder (releasing the cache) is not replayed.
        try (DeviceAllocator a = DeviceAllocators.builder().device("sim:8GiB").allocator("caching")
                .decorate(RecordingAllocator.to(file, format)).build()) {
            Random r = new Random(11);
            List<Long> live = new ArrayList<>();
            for (int i = 0; i < 3000; i++) {
                if (live.isEmpty() || r.nextInt(100) < 55) {
                    long size = 1 + r.nextLong(r.nextInt(20) == 0 ? 300L << 20 : 4L << 20);
                    live.add(a.malloc(size, DeviceStream.DEFAULT));
                    allocs++;
                } else {
                    a.free(live.remove(r.nextInt(live.size())));
                    frees++;
                }
            }
            recordedPeakRequested = a.stats().peakRequestedBytes();
            recordedPeakReserved = a.stats().peakReservedBytes();
        }
        ReplayOutcome outcome = new Replayer(ReplayOptions.defaults().withDevice("sim:8GiB"))
                .replay(file.getFileName().toString(), TraceSources.of(file));
        ReplayResult result = outcome.result();
        assertEquals(format == RecordingAllocator.Format.RMM_CSV ? TraceFormat.RMM_CSV : TraceFormat.PYTORCH_CSV,
                outcome.format());
        assertEquals(allocs, result.allocs());
        assertEquals(frees, result.frees());
        assertEquals(0, outcome.unknownFrees());
        assertEquals(recordedPeakRequested, result.peakRequestedBytes());
        assertEquals(recordedPeakReserved, result.peakReservedBytes(), "the same allocator gives the same peak");
        assertNull(result.groundTruth(), "a recording has no segment rows, so nothing to compare with");
        assertTrue(Files.size(file) > 0);
    }
}
