package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code advise} on every real PyTorch snapshot the project has (the shipped one, and those of {@code ../shared} when
 * it is checked out): every setting's figures are what a replay of that setting alone gives, the trust line matches
 * what PyTorch's allocator did, and the recommendation holds no more of the card than the recorded setting.
 */
class AdvisorSharedTracesTest {

    @TempDir
    static Path dir;

    private static Path trace(String relative) {
        if (relative.startsWith("shipped:")) {
            return Path.of("..", "traces", relative.substring("shipped:".length()));
        }
        String shared = System.getProperty("devalloc.shared.dir");
        assumeTrue(shared != null && !shared.isBlank(), "system property devalloc.shared.dir is not set");
        Path file = Path.of(shared, "traces").resolve(relative).normalize();
        assumeTrue(Files.isRegularFile(file), () -> file + " is absent: the shared traces are not checked out here");
        return file;
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "shipped:pt-opt-zeroth-order-fl/memory.pickle",
        "pt-cnn-eor-small/snapshot.pickle",
        "pt-cs336-medium/medium_128_inference_memory_snapshot.pickle",
        "pt-cs336-medium/medium_512_training_memory_snapshot.pickle",
        "pt-cs336-medium/medium_1024_training_memory_snapshot.pickle",
    })
    void everyFigureIsAReplayOfThatSettingAloneAndTheRecommendationHoldsNoMore(String relative) throws IOException {
        Path file = trace(relative);
        Path grid = Files.write(dir.resolve("grid-" + relative.hashCode() + ".txt"), List.of("defaults",
                "expandable_segments:True", "max_split_size_mb:64"));
        JobAdvice job = new Advisor().advise(TraceFile.read(file, TraceFile.ALL_DEVICES),
                new Advisor.Options("caching", grid.toString(), -1, Objective.RESERVED, 2), ReplayProgress.NONE);
        TraceFile read = TraceFile.read(file, TraceFile.ALL_DEVICES);
        assertEquals(read.devices().size(), job.devices().size());
        for (int d = 0; d < job.devices().size(); d++) {
            Advice a = job.devices().get(d);
            assertEquals(TrustLine.Verdict.MATCH, a.trust().verdict(), relative + ": " + a.trust().firstDifference());
            for (SettingResult s : a.settings()) {
                ReplayOptions whatIf = new ReplayOptions("caching", "sim:80GiB", s.config(), false, true);
                ReplayResult alone = new Replayer(whatIf).replay(TraceFile.read(file, a.cudaDevice())
                        .devices().getFirst().trace()).result();
                ReplayResult mine = s.result();
                String what = relative + " " + s.config();
                assertEquals(alone.peakReservedBytes(), mine.peakReservedBytes(), what);
                assertEquals(alone.peakAllocatedBytes(), mine.peakAllocatedBytes(), what);
                assertEquals(alone.deviceMallocs(), mine.deviceMallocs(), what);
                assertEquals(alone.deviceFrees(), mine.deviceFrees(), what);
                assertEquals(alone.allocRetries(), mine.allocRetries(), what);
                assertEquals(alone.peak(), mine.peak(), what);
            }
            Recommendation rec = a.recommendation();
            assertNotNull(rec, relative);
            SettingResult base = a.baseline();
            assertTrue(rec.setting().peakReservedOnCard() <= base.peakReservedOnCard(), relative + ": " + rec);
        }
    }
}
