package io.devalloc.caching.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.devalloc.caching.CachingOptions;
import io.devalloc.caching.TraceAction;
import io.devalloc.caching.trace.CsvTrace.Action;
import io.devalloc.caching.trace.CsvTrace.Row;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The eight {@code pt-cs336-medium} snapshots (a 24-layer transformer, one training step or one forward pass,
 * recorded on a warm allocator): seeded from their {@code presegment}/{@code prealloc} rows (see the package
 * documentation), the replay must give the summary's figures: reserved bytes at the start, the segment events of the
 * window (segment_alloc count and sizes; no segment_free, segment_map or segment_unmap), peak and end reserved
 * bytes, the allocated bytes and segment count at the end; and every traced block lands at PyTorch's address.
 *
 * <p>Skipped when {@code ../shared} is absent (see {@link SharedTraces}).
 */
class WarmTraceReplayTest {

    private static final String DIR = "pt-cs336-medium/";

    private record Loaded(CsvTrace trace, Path summary) {
        long summary(String field) {
            return CsvTrace.summaryLong(summary, field);
        }
    }

    private static Loaded load(String name) {
        Path csv = SharedTraces.require(DIR + name + ".csv");
        Path summary = SharedTraces.require(DIR + name + ".summary.json");
        return new Loaded(CsvTrace.read(csv), summary);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "medium_128_inference_memory_snapshot", "medium_128_training_memory_snapshot",
        "medium_256_inference_memory_snapshot", "medium_256_training_memory_snapshot",
        "medium_512_inference_memory_snapshot", "medium_512_training_memory_snapshot",
        "medium_1024_inference_memory_snapshot", "medium_1024_training_memory_snapshot"})
    void seededFromItsStartStateTheReplayMatchesTheSummary(String name) {
        Loaded t = load(name);
        List<Row> traceSegments = t.trace().rows(Action.SEGMENT_ALLOC);
        TraceReplayer replayer = TraceReplayer.of(t.trace());
        TraceReplayer.Result r = replayer.replay();

        // Seeding: every presegment restored, every prealloc block live.
        long presegmentBytes = t.trace().rows(Action.PRESEGMENT).stream().mapToLong(Row::size).sum();
        assertEquals(t.summary("start_reserved_bytes"), presegmentBytes);
        assertEquals(t.summary("start_reserved_bytes"), r.startReserved(), "reserved bytes after seeding");
        assertEquals(t.summary("start_segments"), t.trace().count(Action.PRESEGMENT));
        assertEquals(t.summary("prealloc_blocks"), replayer.restoredBlocks().size());

        // The window's segment events.
        assertEquals(t.summary("segment_allocs_in_trace"), r.mallocSizes().size(), "segment_alloc count");
        assertEquals(traceSegments.stream().map(Row::size).toList(), r.mallocSizes(), "segment_alloc sizes");
        assertEquals(r.traceMallocSeqs(), r.mallocSeqs(), "the alloc rows that needed a new segment");
        assertEquals(0, t.summary("segment_frees_in_trace"));
        assertEquals(0, t.summary("segment_maps_in_trace"));
        assertEquals(Map.of(TraceAction.SEGMENT_ALLOC, (long) traceSegments.size(), TraceAction.SEGMENT_FREE, 0L,
                TraceAction.SEGMENT_MAP, 0L, TraceAction.SEGMENT_UNMAP, 0L), r.segmentEvents());
        assertEquals(0, r.deviceFrees());

        // Reserved and allocated bytes.
        assertEquals(t.summary("peak_reserved_bytes"), r.peakReserved(), "reserved_bytes.all.peak");
        assertEquals(t.summary("end_reserved_bytes"), r.endReserved(), "reserved_bytes.all.current at the end");
        assertEquals(t.summary("end_allocated_bytes"), r.endAllocated(), "allocated_bytes.all.current at the end");
        assertEquals(t.summary("end_segments"),
                replayer.allocator().memoryStats().get("segment.all.current"), "segments at the end");

        // Every traced alloc at PyTorch's address (new segments compared by their offset in the paired segment).
        assertEquals(t.trace().count(Action.ALLOC), r.allocs());
        assertEquals(0, r.placementMismatches(), r.firstMismatch());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"medium_512_training_memory_snapshot"})
    void atTheTracesOwnSegmentAddressesTheNewSegmentSitsWherePyTorchsDid(String name) {
        Loaded t = load(name);
        TraceReplayer.Result r = TraceReplayer.of(t.trace(), CachingOptions.defaults(), true).replay();

        assertEquals(t.trace().rows(Action.SEGMENT_ALLOC).stream().map(Row::addr).toList(), r.mallocAddresses());
        assertEquals(List.of(64L << 20), r.mallocSizes());
        assertEquals(0, r.placementMismatches(), r.firstMismatch());
        assertEquals(t.summary("peak_reserved_bytes"), r.peakReserved());
        assertEquals(t.summary("end_allocated_bytes"), r.endAllocated());
    }
}
