package io.devalloc.replay;

import static io.devalloc.replay.TestTraces.MiB;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.trace.TraceFormatException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A trace read once into a {@link CompactTrace} replays with exactly the figures of a replay of its file: every
 * figure of the result and its JSON (events per second aside), the timeline point by point, the peak snapshot block
 * by block, the notes; on the shipped OPT trace through every allocator set-up of the golden figures, cold and warm,
 * and on the shared traces when they are present. Replays of one compact trace on several threads at once give the
 * figures of one at a time.
 */
class CompactTraceTest {

    /** The allocator set-ups of the golden figures ({@code /tmp/golden/run.sh}'s {@code compare} runs). */
    static final List<String[]> SETUPS = List.of(
            new String[] {"direct", ""},
            new String[] {"bfc", ""},
            new String[] {"bfc", "allow_growth:true,garbage_collection:true"},
            new String[] {"caching", ""},
            new String[] {"caching", "expandable_segments:True"},
            new String[] {"caching", "max_split_size_mb:128,roundup_power2_divisions:4"},
            new String[] {"caching-host", ""});

    static Stream<Arguments> optSetups() {
        List<Arguments> out = new ArrayList<>();
        for (String[] s : SETUPS) {
            out.add(Arguments.of(s[0], s[1], false));
        }
        out.add(Arguments.of("caching", "", true));
        out.add(Arguments.of("caching", "expandable_segments:True", true));
        out.add(Arguments.of("bfc", "", true));
        return out.stream();
    }

    private static ReplayOptions options(String allocator, String conf, boolean warm) {
        return ReplayOptions.defaults().withAllocator(allocator).withConf(conf).withWarm(warm)
                .withEmptyCacheAtSegmentFree(warm);
    }

    @ParameterizedTest(name = "{0}:{1} warm={2}")
    @MethodSource("optSetups")
    void theShippedOptTraceReplaysWithTheFiguresOfItsFile(String allocator, String conf, boolean warm)
            throws IOException {
        Path file = SharedTraceReplayTest.opt("memory.csv");
        CompactTrace compact = CompactTrace.read(file);
        assertSameAsFile(file, compact, options(allocator, conf, warm));
    }

    static Stream<Arguments> sharedTraces() {
        return Stream.of(
                "pt-cnn-eor-small/snapshot.pickle",
                "pt-cnn-eor-small/snapshot.csv",
                "pt-cs336-medium/medium_1024_inference_memory_snapshot.pickle",
                "pt-cs336-medium/medium_1024_training_memory_snapshot.csv",
                "malloc-weealloc-valgrind/gcc-hello.trace",
                "malloc-aosp-memory-replay/systemui.zip").map(Arguments::of);
    }

    /** The shared traces (when present): the caching allocator cold and warm, bfc with growth cold. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("sharedTraces")
    void sharedTracesReplayWithTheFiguresOfTheirFiles(String relative) throws IOException {
        Path file = SharedTraceReplayTest.require(relative);
        CompactTrace compact = CompactTrace.read(file);
        assertSameAsFile(file, compact, options("caching", "", false));
        assertSameAsFile(file, compact, options("bfc", "allow_growth:true,garbage_collection:true", false));
        if (relative.startsWith("pt-")) {
            assertSameAsFile(file, compact, options("caching", "", true));
        }
    }

    @Test
    void replaysOnSeveralThreadsAtOnceGiveTheFiguresOfOneAtATime() throws Exception {
        Path file = SharedTraceReplayTest.opt("memory.csv");
        CompactTrace compact = CompactTrace.read(file);
        List<ReplayOptions> runs = new ArrayList<>();
        for (int round = 0; round < 2; round++) {
            for (String[] s : SETUPS) {
                runs.add(options(s[0], s[1], false));
            }
            runs.add(options("caching", "", true));
        }
        List<ReplayOutcome> alone = new ArrayList<>();
        for (ReplayOptions o : runs) {
            alone.add(new Replayer(o).replay(compact));
        }
        Replayer shared = new Replayer(ReplayOptions.defaults());
        List<Future<ReplayOutcome>> futures = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
            for (ReplayOptions o : runs) {
                futures.add(pool.submit(() -> shared.withOptions(o).replay(compact)));
            }
            for (int k = 0; k < runs.size(); k++) {
                assertSameFigures(alone.get(k), futures.get(k).get(), runs.get(k).toString());
            }
        }
    }

    @Test
    void eachEventTakesTwentyOneBytesInPrimitiveColumns() throws IOException {
        assertEquals(21, CompactTrace.BYTES_PER_EVENT);
        TestTraces.Builder t = TestTraces.pytorch();
        // More than one chunk, on three streams.
        int n = CompactTrace.CHUNK_EVENTS + 10;
        for (int i = 0; i < n / 2; i++) {
            t.alloc(100 + i, 512 + i, i % 3 == 0 ? 0 : 7 + i % 3).free(100 + i);
        }
        CompactTrace c = CompactTrace.read("t", t.source());
        assertEquals(t.size(), c.events());
        assertEquals(2, c.chunks());
        assertEquals(2, c.streams());
        assertEquals(t.size() * 21L + 3 * Long.BYTES, c.columnBytes());
        assertEquals(t.size() - CompactTrace.CHUNK_EVENTS, c.keys[1].length, "the last chunk is trimmed");
        assertSameAsSource(t, c, ReplayOptions.defaults().withDevice("sim:1GiB"));
        assertSameAsSource(t, c, ReplayOptions.defaults().withDevice("sim:1GiB").withWarm(true));
    }

    @Test
    void theWarmSampleAndTheEmptyCacheSampleReplayAsTheirSources() throws IOException {
        for (TestTraces.Builder t : List.of(TestTraces.warmSample(), TestTraces.emptyCacheSample())) {
            CompactTrace c = CompactTrace.read("t", t.source());
            for (boolean warm : List.of(false, true)) {
                assertSameAsSource(t, c, options("caching", "", warm).withDevice("sim:1GiB"));
                assertSameAsSource(t, c, options("caching", "expandable_segments:True", warm)
                        .withDevice("sim:1GiB"));
                assertSameAsSource(t, c, options("bfc", "", warm).withDevice("sim:1GiB"));
            }
        }
    }

    /** A warm row after the recorded events fails a warm replay with the source's message; a cold one ignores it. */
    @Test
    void aWarmRowAfterTheRecordedEventsFailsOnlyAWarmReplayWithTheSourcesMessage() throws IOException {
        TestTraces.Builder t = TestTraces.pytorch().alloc(1, MiB).free(1).presegment(TestTraces.A, 2 * MiB);
        CompactTrace c = CompactTrace.read("t", t.source());
        ReplayOptions warm = ReplayOptions.defaults().withDevice("sim:1GiB").withWarm(true);
        IllegalArgumentException fromSource = assertThrows(IllegalArgumentException.class,
                () -> new Replayer(warm).replay("t", t.source()));
        IllegalArgumentException fromCompact = assertThrows(IllegalArgumentException.class,
                () -> new Replayer(warm).replay(c));
        assertEquals(fromSource.getMessage(), fromCompact.getMessage());
        assertSameAsSource(t, c, ReplayOptions.defaults().withDevice("sim:1GiB"));
    }

    @Test
    void aMalformedFileFailsWhileItIsReadNamingTheLine(@TempDir Path dir)
            throws IOException {
        Path bad = dir.resolve("bad.csv");
        List<String> lines =
                new ArrayList<>(Files.readAllLines(SharedTraceReplayTest.opt("memory.csv")).subList(0, 50));
        lines.add("49,alloc,notanumber,512,0,0");
        Files.write(bad, lines);
        Exception e = assertThrows(TraceFormatException.class, () -> CompactTrace.read(bad));
        assertTrue(e.getMessage().contains("bad.csv") && e.getMessage().contains("51"), e.getMessage());
    }

    // ------------------------------------------------------------------------------------------ comparison

    private static void assertSameAsFile(Path file, CompactTrace compact, ReplayOptions options) throws IOException {
        ReplayOutcome fromFile = new Replayer(options).replay(file.getFileName().toString(), TraceSources.of(file));
        ReplayOutcome fromCompact = new Replayer(options).replay(compact);
        assertSameFigures(fromFile, fromCompact, file + " " + options);
    }

    private static void assertSameAsSource(TestTraces.Builder t, CompactTrace compact, ReplayOptions options)
            throws IOException {
        ReplayOutcome fromSource = new Replayer(options).replay("t", t.source());
        ReplayOutcome fromCompact = new Replayer(options).replay(compact);
        assertSameFigures(fromSource, fromCompact, options.toString());
    }

    /** Every figure but the speed, the timeline's points and the peak snapshot's blocks. */
    static void assertSameFigures(ReplayOutcome expected, ReplayOutcome actual, String what) {
        Map<String, Object> e = ReplayJson.toMap(expected);
        Map<String, Object> a = ReplayJson.toMap(actual);
        e.remove("events_per_second");
        a.remove("events_per_second");
        assertEquals(e, a, what);
        ReplayResult.Timeline te = expected.result().timeline();
        ReplayResult.Timeline ta = actual.result().timeline();
        assertArrayEquals(te.event(), ta.event(), what + ": timeline events");
        assertArrayEquals(te.allocated(), ta.allocated(), what + ": timeline allocated");
        assertArrayEquals(te.reserved(), ta.reserved(), what + ": timeline reserved");
        MemorySnapshot se = expected.result().peakSnapshot();
        MemorySnapshot sa = actual.result().peakSnapshot();
        assertNotNull(se, what);
        assertNotNull(sa, what);
        assertEquals(se.segments(), sa.segments(), what + ": peak snapshot");
        assertEquals(se.stats(), sa.stats(), what + ": peak snapshot stats");
    }
}
