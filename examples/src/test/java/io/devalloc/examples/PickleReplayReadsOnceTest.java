package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.examples.LauncherTest.Run;
import io.devalloc.replay.ReplayJson;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceFile;
import io.devalloc.replay.TraceSources;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.pytorch.PyTorchSnapshotFile;
import io.devalloc.trace.pytorch.PyTorchSnapshots;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code devalloc replay} of a PyTorch pickle loads it once (a pickle is loaded whole), not once per pass, and gives
 * the figures of a replay that reads it in every pass.
 */
class PickleReplayReadsOnceTest {

    @TempDir
    Path dir;

    /** A pickle of the caching allocator's history: a few hundred allocations and frees of mixed sizes. */
    private Path recordedPickle() throws IOException {
        SimulatedDevice device = SimulatedDevice.builder().capacity(1L << 34).build();
        Path file = dir.resolve("history.pickle");
        try (CachingAllocator a = new CachingAllocatorProvider().create(device, "")) {
            a.recordHistory(10_000);
            long[] live = new long[16];
            for (int i = 0; i < 400; i++) {
                int slot = i % live.length;
                if (live[slot] != 0) {
                    a.free(live[slot]);
                }
                live[slot] = a.malloc((512L << (i % 13)) + i, DeviceStream.DEFAULT);
            }
            try (OutputStream out = Files.newOutputStream(file)) {
                PyTorchSnapshots.writePickle(a.snapshotDict(), out);
            }
        }
        return file;
    }

    @Test
    void aPickleIsLoadedOnceAndReplaysWithTheFiguresOfItsSource() throws IOException {
        Path file = recordedPickle();
        // The launcher reads a pickle device by device into memory: each device's events once, whatever the passes
        // (a warm replay, the pass to the peak); a second read of a device is refused.
        TraceFile read = TraceFile.read(file, TraceFile.ALL_DEVICES);
        assertEquals(1, read.devices().size());
        PyTorchSnapshotFile loaded = PyTorchSnapshotFile.read(file);
        loaded.reader(0);
        assertThrows(IllegalStateException.class, () -> loaded.reader(0), "a device's entries go as they are read");
        // --config given: the defaults, as the replay below (without it: the recorded settings, and a note saying so).
        Run r = run("replay", file.toString(), "--json", "--config", "");
        assertEquals(0, r.exitCode(), r::toString);

        // The same trace replayed from its source, read in each pass: the same figures.
        String expected = ReplayJson.toJson(new Replayer(ReplayOptions.defaults())
                .replay(file.toString(), TraceSources.of(file)), false);
        assertTrue(r.out().contains("\"peak_reserved_bytes\""), r::toString);
        String json = r.out().strip();
        assertTrue(json.endsWith(",\"cuda_device\":0,\"history\":true}"), json);
        String withoutDevice = json.substring(0, json.length() - ",\"cuda_device\":0,\"history\":true}".length())
                + "}";
        assertEquals(withoutSpeed(expected), withoutSpeed(withoutDevice));
    }

    private static String withoutSpeed(String json) {
        return json.replaceAll("\"events_per_second\":[0-9.eE+-]+", "");
    }
}
