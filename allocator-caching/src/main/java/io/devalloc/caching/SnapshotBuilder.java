package io.devalloc.caching;

import static io.devalloc.caching.BlockTable.NONE;

import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.PythonTuple;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The caching allocator's snapshots, built from its blocks: the segments of {@code snapshot()} (devalloc's
 * {@link io.devalloc.api.snapshot.MemorySnapshot}) and PyTorch's {@code _snapshot()} dict of {@code snapshotDict()},
 * as {@code torch/csrc/cuda/memory_snapshot.cpp} writes it (kept apart from the allocator, as upstream keeps it
 * apart from {@code CUDACachingAllocator.cpp}).
 *
 * <p>Both report one segment per contiguous run of mapped blocks (an expandable segment shows each mapped run as a
 * segment of its own, as PyTorch reports it), in the order of the segment heads the arena passes (address order),
 * and a block whose free waits on events keeps its request, as PyTorch's snapshot does.
 *
 * <p>Stateless; the caller holds the arena's lock while these run.
 */
final class SnapshotBuilder {

    private SnapshotBuilder() {
    }

    /** The segments of {@code snapshot()}: for each head, its blocks in address order, split at unmapped blocks. */
    static List<SegmentSnapshot> segments(BlockTable blocks, List<Integer> heads) {
        List<SegmentSnapshot> segments = new ArrayList<>();
        for (int head : heads) {
            List<BlockSnapshot> run = new ArrayList<>();
            long start = 0;
            long total = 0;
            for (int b = head; b != NONE; b = blocks.next[b]) {
                if (!blocks.mapped[b]) {
                    if (!run.isEmpty()) {
                        segments.add(new SegmentSnapshot(start, total, blocks.stream[head], poolName(blocks, head),
                                run));
                        run = new ArrayList<>();
                    }
                    continue;
                }
                if (run.isEmpty()) {
                    start = blocks.ptr[b];
                    total = 0;
                }
                BlockState state = blocks.stateOf(b);
                boolean active = state == BlockState.ALLOCATED || state == BlockState.PENDING_FREE;
                run.add(new BlockSnapshot(blocks.ptr[b], blocks.size[b], active ? blocks.requested[b] : 0, state));
                total += blocks.size[b];
            }
            if (!run.isEmpty()) {
                segments.add(new SegmentSnapshot(start, total, blocks.stream[head], poolName(blocks, head), run));
            }
        }
        return segments;
    }

    /**
     * PyTorch's {@code _snapshot()} structure: {@code segments}, {@code device_traces} (one history per device index,
     * {@code device_traces[i]} being device i's; this allocator has one device, so the lists before its own are
     * empty), {@code allocator_settings} and {@code external_annotations}.
     *
     * @param deviceIndex the index of the allocator's device
     * @param history     the recorded history, oldest first
     * @param settings    {@link CachingOptions#allocatorSettings()}
     */
    static Map<String, Object> dict(BlockTable blocks, List<Integer> heads, int deviceIndex, List<TraceEntry> history,
                                    Map<String, Object> settings) {
        List<Object> segments = segmentDicts(blocks, heads, deviceIndex);
        List<Object> deviceTraces = new ArrayList<>(deviceIndex + 1);
        for (int i = 0; i < deviceIndex; i++) {
            deviceTraces.add(List.of());
        }
        deviceTraces.add(traceDicts(history));
        Map<String, Object> snapshot = new LinkedHashMap<>();
        snapshot.put("segments", segments);
        snapshot.put("device_traces", deviceTraces);
        snapshot.put("allocator_settings", settings);
        snapshot.put("external_annotations", List.of());
        return snapshot;
    }

    private static List<Object> segmentDicts(BlockTable blocks, List<Integer> heads, int deviceIndex) {
        List<Object> segments = new ArrayList<>();
        for (int head : heads) {
            List<Object> runBlocks = new ArrayList<>();
            long start = -1;
            long total = 0;
            long allocatedSize = 0;
            long activeSize = 0;
            long requestedSize = 0;
            for (int b = head; ; b = blocks.next[b]) {
                boolean end = b == NONE || !blocks.mapped[b];
                if (end && !runBlocks.isEmpty()) {
                    Map<String, Object> seg = new LinkedHashMap<>();
                    seg.put("device", deviceIndex);
                    seg.put("address", start);
                    seg.put("total_size", total);
                    seg.put("allocated_size", allocatedSize);
                    seg.put("active_size", activeSize);
                    seg.put("requested_size", requestedSize);
                    seg.put("stream", blocks.stream[head]);
                    seg.put("segment_type", poolName(blocks, head));
                    seg.put("segment_pool_id", PythonTuple.DEFAULT_POOL_ID);
                    seg.put("is_expandable", blocks.expandable[head] != NONE);
                    seg.put("frames", List.of());
                    seg.put("blocks", runBlocks);
                    segments.add(seg);
                    runBlocks = new ArrayList<>();
                    start = -1;
                    total = allocatedSize = activeSize = requestedSize = 0;
                }
                if (b == NONE) {
                    break;
                }
                if (!blocks.mapped[b]) {
                    continue;
                }
                if (start < 0) {
                    start = blocks.ptr[b];
                }
                BlockState state = blocks.stateOf(b);
                Map<String, Object> block = new LinkedHashMap<>();
                block.put("address", blocks.ptr[b]);
                block.put("size", blocks.size[b]);
                block.put("requested_size", blocks.requested[b]);
                block.put("state", state.wireName());
                block.put("frames", List.of());
                runBlocks.add(block);
                total += blocks.size[b];
                if (state == BlockState.ALLOCATED) {
                    allocatedSize += blocks.size[b];
                }
                if (state == BlockState.ALLOCATED || state == BlockState.PENDING_FREE) {
                    activeSize += blocks.size[b];
                    requestedSize += blocks.requested[b];
                }
            }
        }
        return segments;
    }

    /**
     * The history as PyTorch's trace entries. The entries of one allocator call share one list of stack frames, the
     * same object (one frame naming the call), as PyTorch's snapshot gives the entries of one context the same list:
     * a reader can then tell the cache flushes of {@code malloc}'s retry ladder (recorded in the malloc) from an
     * {@code empty_cache()}, and a pickle writer that keeps sharing writes the list once.
     */
    private static List<Object> traceDicts(List<TraceEntry> history) {
        List<Object> traces = new ArrayList<>();
        long lastCall = -1;
        List<Object> frames = List.of();
        for (int i = 0; i < history.size(); i++) {
            TraceEntry e = history.get(i);
            if (e.call() != lastCall || traces.isEmpty()) {
                lastCall = e.call();
                frames = callFrames(history, i);
            }
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("action", e.action().wireName());
            t.put(e.action() == TraceAction.OOM ? "device_free" : "addr", e.address());
            t.put("size", e.size());
            t.put("stream", e.stream());
            t.put("time_us", e.timeUs());
            t.put("compile_context", "N/A");
            t.put("user_metadata", "");
            t.put("frames", frames);
            // Every block here is in the default pools (no CUDA graph pools), which PyTorch writes as (0, 0).
            t.put("pool_id", PythonTuple.DEFAULT_POOL_ID);
            traces.add(t);
        }
        return traces;
    }

    /**
     * The stack frames of the call whose first entry is {@code history.get(from)}: one frame naming devalloc's call,
     * {@code malloc}, {@code free}, {@code empty_cache}, {@code snapshot} or {@code restore}, by the entries it made.
     */
    private static List<Object> callFrames(List<TraceEntry> history, int from) {
        Map<String, Object> frame = new LinkedHashMap<>();
        frame.put("name", "devalloc." + callName(history, from));
        frame.put("filename", "devalloc");
        frame.put("line", 0);
        List<Object> frames = new ArrayList<>(1);
        frames.add(frame);
        return frames;
    }

    private static String callName(List<TraceEntry> history, int from) {
        TraceEntry first = history.get(from);
        for (int i = from; i < history.size() && history.get(i).call() == first.call(); i++) {
            switch (history.get(i).action()) {
                case ALLOC, OOM -> {
                    return "malloc";
                }
                case FREE_REQUESTED -> {
                    return "free";
                }
                case SNAPSHOT -> {
                    return "snapshot";
                }
                default -> {
                    // a flush, a segment or a completed free: the call's kind is told by a later entry, if any
                }
            }
        }
        return first.action() == TraceAction.SEGMENT_FREE || first.action() == TraceAction.SEGMENT_UNMAP
                || first.action() == TraceAction.FREE_COMPLETED ? "empty_cache" : "restore";
    }

    private static String poolName(BlockTable blocks, int head) {
        return blocks.small[head] ? "small" : "large";
    }
}
