package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.examples.LauncherTest.Run;
import io.devalloc.replay.ReplayJson;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceSource;
import io.devalloc.replay.TraceSources;
import io.devalloc.replay.cli.TraceReplays;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.pytorch.PyTorchSnapshots;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code devalloc replay} of a PyTorch pickle loads it once (a pickle is loaded whole), not once per pass, and gives
 * the figures of a replay that reads it in every pass.
 */
class PickleReplayReadsOnceTest {

    @TempDir
    Path dir;

    private final Function<Path, TraceSource> saved = TraceReplays.sources;

    @AfterEach
    void restoreTraces() {
        TraceReplays.sources = saved;
    }

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
    void aPickleIsOpenedOnceAndReplaysWithTheFiguresOfItsSource() throws IOException {
        Path file = recordedPickle();
        AtomicInteger opens = new AtomicInteger();
        TraceReplays.sources = path -> {
            TraceSource real = TraceSources.of(path);
            return new TraceSource() {
                @Override
                public TraceReader open() throws IOException {
                    opens.incrementAndGet();
                    return real.open();
                }

                @Override
                public long sizeBytes() {
                    return real.sizeBytes();
                }
            };
        };
        Run r = run("replay", file.toString(), "--json");
        assertEquals(0, r.exitCode(), r::toString);
        assertEquals(1, opens.get(), "the pickle is loaded once");

        // The same trace replayed from its source, read in each pass.
        String expected = ReplayJson.toJson(new Replayer(ReplayOptions.defaults())
                .replay(file.toString(), TraceSources.of(file)), false);
        assertTrue(r.out().contains("\"peak_reserved_bytes\""), r::toString);
        assertEquals(withoutSpeed(expected), withoutSpeed(r.out().strip()));
    }

    private static String withoutSpeed(String json) {
        return json.replaceAll("\"events_per_second\":[0-9.eE+-]+", "");
    }
}
