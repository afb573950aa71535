package io.devalloc.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.android.AndroidMemoryReplayReader;
import io.devalloc.trace.detect.TraceFormats;
import io.devalloc.trace.pytorch.PyTorchCsvReader;
import io.devalloc.trace.pytorch.PyTorchPickleReader;
import io.devalloc.trace.valgrind.ValgrindReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The readers on the real traces in {@code ../shared/traces} (skipped where they are absent): every file read to
 * its end, the counts those folders' summaries and SOURCE.md give, and for each PyTorch snapshot, the pickle read
 * directly giving exactly the events of the CSV that {@code pickle_to_csv.py} made from it.
 */
class RealTracesTest {

    private static final String[] PYTORCH = {
        "pt-opt-zeroth-order-fl/memory",
        "pt-cnn-eor-small/snapshot",
        "pt-cs336-medium/medium_128_inference_memory_snapshot",
        "pt-cs336-medium/medium_128_training_memory_snapshot",
        "pt-cs336-medium/medium_256_inference_memory_snapshot",
        "pt-cs336-medium/medium_256_training_memory_snapshot",
        "pt-cs336-medium/medium_512_inference_memory_snapshot",
        "pt-cs336-medium/medium_512_training_memory_snapshot",
        "pt-cs336-medium/medium_1024_inference_memory_snapshot",
        "pt-cs336-medium/medium_1024_training_memory_snapshot",
    };

    @ParameterizedTest(name = "{0}")
    @MethodSource("pytorchTraces")
    void pytorchCsvCountsAreTheSummarys(String name) throws IOException {
        Path csv = SharedTraces.require(name + ".csv");
        Path summary = SharedTraces.require(name + ".summary.json");
        assertEquals(TraceFormat.PYTORCH_CSV, TraceFormats.detect(csv));
        PyTorchCsvReader reader = new PyTorchCsvReader(csv);
        List<TraceEvent> events = Events.readAll(reader);
        checkAgainstSummary(events, reader.skipped(), summary);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pytorchTraces")
    void thePickleGivesTheEventsOfItsCsv(String name) throws IOException {
        Path pickle = SharedTraces.require(name + ".pickle");
        Path csv = SharedTraces.require(name + ".csv");
        Path summary = SharedTraces.require(name + ".summary.json");
        assertEquals(TraceFormat.PYTORCH_PICKLE, TraceFormats.detect(pickle));

        PyTorchPickleReader fromPickle = new PyTorchPickleReader(pickle);
        List<TraceEvent> pickled = Events.readAll(fromPickle);
        List<TraceEvent> csvEvents = Events.readAll(new PyTorchCsvReader(csv));

        assertEquals(Events.withoutLines(csvEvents), Events.withoutLines(pickled));
        // The pickle's record numbers are the CSV's lines less the header.
        for (int i = 0; i < pickled.size(); i++) {
            assertEquals(csvEvents.get(i).line() - 1, pickled.get(i).line(), "record of event " + i);
        }
        checkAgainstSummary(pickled, fromPickle.skipped(), summary);
        assertEquals(0, fromPickle.device());
    }

    private static void checkAgainstSummary(List<TraceEvent> events, long skipped, Path summary) {
        Map<String, Long> actions = SharedTraces.summaryActions(summary);
        Map<Kind, Long> counts = Events.counts(events);
        assertEquals(SharedTraces.summaryLong(summary, "start_segments"), counts.getOrDefault(Kind.PRESEGMENT, 0L));
        assertEquals(SharedTraces.summaryLong(summary, "prealloc_blocks"), counts.getOrDefault(Kind.PREALLOC, 0L));
        assertEquals(actions.getOrDefault("alloc", 0L), counts.getOrDefault(Kind.ALLOC, 0L));
        assertEquals(actions.getOrDefault("free_completed", 0L), counts.getOrDefault(Kind.FREE, 0L));
        assertEquals(actions.getOrDefault("segment_alloc", 0L), counts.getOrDefault(Kind.SEGMENT_ALLOC, 0L));
        assertEquals(actions.getOrDefault("segment_free", 0L), counts.getOrDefault(Kind.SEGMENT_FREE, 0L));
        assertEquals(actions.getOrDefault("segment_map", 0L), counts.getOrDefault(Kind.SEGMENT_MAP, 0L));
        assertEquals(actions.getOrDefault("segment_unmap", 0L), counts.getOrDefault(Kind.SEGMENT_UNMAP, 0L));
        assertEquals(actions.getOrDefault("oom", 0L), counts.getOrDefault(Kind.OOM, 0L));
        assertEquals(actions.getOrDefault("free_requested", 0L) + actions.getOrDefault("snapshot", 0L), skipped);
        long traced = events.size() - counts.getOrDefault(Kind.PRESEGMENT, 0L)
                - counts.getOrDefault(Kind.PREALLOC, 0L) + skipped;
        assertEquals(SharedTraces.summaryLong(summary, "events"), traced, "trace entries read");
        long presegmentBytes = events.stream().filter(e -> e.kind() == Kind.PRESEGMENT).mapToLong(TraceEvent::size)
                .sum();
        assertEquals(SharedTraces.summaryLong(summary, "start_reserved_bytes"), presegmentBytes);
        long preallocBytes = events.stream().filter(e -> e.kind() == Kind.PREALLOC).mapToLong(TraceEvent::size)
                .sum();
        assertEquals(SharedTraces.summaryLong(summary, "prealloc_bytes"), preallocBytes);
    }

    @Test
    void theOptTraceHas61SegmentAllocsFromAnEmptyAllocator() throws IOException {
        Path pickle = SharedTraces.require("pt-opt-zeroth-order-fl/memory.pickle");
        List<TraceEvent> events = Events.readAll(TraceFormats.open(pickle));
        List<Long> mib = events.stream().filter(e -> e.kind() == Kind.SEGMENT_ALLOC).map(e -> e.size() >> 20)
                .toList();
        assertEquals(61, mib.size());
        assertEquals(List.of(148L, 20L, 2L), mib.subList(0, 3));
        assertEquals(1_897_922_560L, events.stream().filter(e -> e.kind() == Kind.SEGMENT_ALLOC)
                .mapToLong(TraceEvent::size).sum());
        assertTrue(events.stream().noneMatch(e -> e.kind() == Kind.PRESEGMENT || e.kind() == Kind.PREALLOC));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "cpp-demangle.trace, 62, 40, 16197, 14613",
        "dogfood.trace, 32472, 13604, 1359176, 1185922",
        "ffmpeg.trace, 1832, 1805, 604146, 32748",
        "find.trace, 567, 563, 66494, 696",
        "gcc-hello.trace, 11431, 6344, 9303005, 6044736",
        "grep-random-data.trace, 122, 76, 53926, 49812",
        "grep-recursive.trace, 657, 619, 117450, 48680",
        "ls.trace, 45, 37, 55989, 19535",
        "source-map.trace, 2087, 315, 1735775, 250596"})
    void valgrindTracesReadFullyWithTheirSourceFigures(String name, long allocs, long frees, long peakLive,
                                                       long endLive) throws IOException {
        Path file = SharedTraces.require("malloc-weealloc-valgrind/" + name);
        assertEquals(TraceFormat.VALGRIND, TraceFormats.detect(file));
        TraceReader reader = TraceFormats.open(file);
        assertInstanceOf(ValgrindReader.class, reader);
        List<TraceEvent> events = Events.readAll(reader);
        Map<Kind, Long> counts = Events.counts(events);
        assertEquals(allocs, counts.getOrDefault(Kind.ALLOC, 0L));
        assertEquals(frees, counts.getOrDefault(Kind.FREE, 0L));
        assertEquals(allocs + frees, events.get(events.size() - 1).line(), "one event per line, every line");
        Live live = Live.of(events);
        assertEquals(0, live.unmatchedFrees);
        assertEquals(peakLive, live.peak);
        assertEquals(endLive, live.current);
    }

    @Test
    void theAndroidSystemuiZipReadsFullyWithItsSourceFigures() throws IOException {
        Path zip = SharedTraces.require("malloc-aosp-memory-replay/systemui.zip");
        assertEquals(TraceFormat.ANDROID_MEMORY_REPLAY, TraceFormats.detect(zip));
        AndroidMemoryReplayReader reader = new AndroidMemoryReplayReader(zip);
        List<TraceEvent> events = Events.readAll(reader);
        Map<Kind, Long> counts = Events.counts(events);

        // SOURCE.md: 786,454 lines = 383,154 malloc + 7,847 calloc + 1,066 memalign + 29,167 realloc
        // + 364,863 free + 357 thread_done (the last not in its table). 10,623 reallocs have old_ptr 0x0 and 15,818
        // frees are free(NULL): those give one event and no event respectively.
        assertEquals(383_154 + 7_847 + 1_066 + 29_167, counts.get(Kind.ALLOC));
        assertEquals((364_863 - 15_818) + (29_167 - 10_623), counts.get(Kind.FREE));
        assertEquals(788_823, events.size());
        assertEquals(15_818 + 357, reader.skipped());
        Set<Long> linesWithEvents = new HashSet<>();
        Set<Long> threads = new HashSet<>();
        for (TraceEvent e : events) {
            linesWithEvents.add(e.line());
            threads.add(e.thread());
        }
        assertEquals(786_454, linesWithEvents.size() + reader.skipped(), "every line of the trace");
        assertEquals(393, threads.size(), "SOURCE.md: 393 threads");

        Live live = Live.of(events);
        assertEquals(0, live.unmatchedFrees, "SOURCE.md: every free matches a live pointer");
        assertEquals(10_441_709, live.peak);
        assertEquals(8_396_631, live.current);
        assertEquals(278_528, events.stream().mapToLong(TraceEvent::size).max().orElseThrow());
    }

    /** Live bytes over a trace, by key. */
    private static final class Live {
        long current;
        long peak;
        long unmatchedFrees;

        static Live of(List<TraceEvent> events) {
            Live live = new Live();
            Map<Long, Long> sizes = new HashMap<>();
            for (TraceEvent e : events) {
                if (e.kind() == Kind.ALLOC) {
                    sizes.put(e.key(), e.size());
                    live.current += e.size();
                    live.peak = Math.max(live.peak, live.current);
                } else if (e.kind() == Kind.FREE) {
                    Long size = sizes.remove(e.key());
                    if (size == null) {
                        live.unmatchedFrees++;
                    } else {
                        live.current -= size;
                    }
                }
            }
            return live;
        }
    }

    /** The PyTorch snapshots: each has a .pickle, the .csv made from it, and a .summary.json. */
    static String[] pytorchTraces() {
        return PYTORCH.clone();
    }
}
