package io.devalloc.trace.pytorch;

import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.PythonTuple;
import io.devalloc.trace.text.JsonWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Any allocator's {@link MemorySnapshot} in the structure of PyTorch's {@code torch.cuda.memory._snapshot()}, so
 * that PyTorch's memory visualiser (https://pytorch.org/memory_viz) and Python tools read the segments of
 * {@code direct}, {@code bfc}, {@code caching} or any allocator found through the SPI:
 * <pre>{@code
 * try (OutputStream out = Files.newOutputStream(Path.of("snapshot.pickle"))) {
 *     PyTorchSnapshots.writePickle(allocator.snapshot(), out);   // drag it onto memory_viz
 * }
 * }</pre>
 *
 * <h2>Structure</h2>
 * A dict, keys in PyTorch's order:
 * <ul>
 *   <li>{@code segments}: one dict per segment, sorted by address, with {@code device} (the device index),
 *       {@code address}, {@code total_size}, {@code allocated_size} (bytes of {@code active_allocated} blocks),
 *       {@code active_size} (bytes of {@code active_allocated} and {@code active_pending_free} blocks),
 *       {@code requested_size} (requested bytes of those active blocks, pending frees included, as PyTorch),
 *       {@code stream}, {@code segment_type} ({@code "small"} when the snapshot's pool is {@code "small"},
 *       otherwise {@code "large"}: PyTorch has only those two), {@code segment_pool_id} the tuple {@code (0, 0)}
 *       (the default pool, a {@link PythonTuple} as PyTorch writes it, so that Python's {@code == (0, 0)} holds; an
 *       array in JSON), {@code is_expandable}, {@code frames} {@code []} and {@code blocks}.</li>
 *   <li>each block: {@code address}, {@code size}, {@code requested_size} ({@link BlockSnapshot#requestedSize()}:
 *       what the caller asked for, kept while the block is {@code active_pending_free}), {@code state}
 *       ({@link BlockState#wireName()}: {@code active_allocated}, {@code active_pending_free} or {@code inactive})
 *       and {@code frames} {@code []}.</li>
 *   <li>{@code device_traces}: an empty list per device index up to the snapshot's device, so that
 *       {@code device_traces[device]} exists as in PyTorch: {@code [[]]} for device 0, {@code [[], []]} for device
 *       1 (no history: a {@link MemorySnapshot} has none; the caching allocator's own {@code snapshotDict()} has
 *       its history here, in the same shape).</li>
 *   <li>{@code allocator_settings}: the snapshot's {@link MemorySnapshot#settings() settings} (for
 *       {@code caching} PyTorch's own keys; for the other allocators their options, see their
 *       {@code snapshot()}), {@code {}} when it has none; {@code external_annotations}: {@code []}.</li>
 * </ul>
 * PyTorch has no unmapped blocks: a segment with {@link BlockState#UNMAPPED} blocks (virtual memory, expandable
 * segments) is written as one segment per run of mapped blocks, each with {@code is_expandable} true, as PyTorch
 * shows an expandable segment; a segment with no mapped block is left out. All other segments have
 * {@code is_expandable} false. Integers are {@link Long}s except {@code device} ({@link Integer}); no stack frames
 * are recorded.
 *
 * <p>Stateless and thread-safe.
 */
public final class PyTorchSnapshots {

    /** PyTorch's {@code segment_pool_id} (and a trace entry's {@code pool_id}) of the default pools. */
    public static final PythonTuple DEFAULT_POOL_ID = PythonTuple.DEFAULT_POOL_ID;

    private PyTorchSnapshots() {
    }

    /**
     * The {@code _snapshot()} dict of {@code snapshot}: a new tree of mutable {@link LinkedHashMap}s and
     * {@link ArrayList}s (add traces if you have them; {@code segment_pool_id} is an immutable
     * {@link PythonTuple}), ready for {@link PickleWriter} and {@link JsonWriter}.
     */
    public static Map<String, Object> toDict(MemorySnapshot snapshot) {
        Objects.requireNonNull(snapshot, "snapshot");
        int device = snapshot.device().index();
        List<SegmentSnapshot> sorted = new ArrayList<>(snapshot.segments());
        sorted.sort(Comparator.comparingLong(SegmentSnapshot::address));
        List<Object> segments = new ArrayList<>(sorted.size());
        for (SegmentSnapshot segment : sorted) {
            boolean expandable = segment.bytesIn(BlockState.UNMAPPED) > 0;
            List<BlockSnapshot> run = new ArrayList<>();
            for (BlockSnapshot block : segment.blocks()) {
                if (block.state() == BlockState.UNMAPPED) {
                    addSegment(segments, device, segment, run, expandable);
                    run = new ArrayList<>();
                } else {
                    run.add(block);
                }
            }
            addSegment(segments, device, segment, run, expandable);
        }
        List<Object> deviceTraces = new ArrayList<>(device + 1);
        for (int i = 0; i <= device; i++) {
            deviceTraces.add(new ArrayList<>()); // indexed by device, as PyTorch's: device_traces[device] exists
        }
        Map<String, Object> dict = new LinkedHashMap<>();
        dict.put("segments", segments);
        dict.put("device_traces", deviceTraces);
        dict.put("allocator_settings", mutableCopy(snapshot.settings()));
        dict.put("external_annotations", new ArrayList<>());
        return dict;
    }

    private static void addSegment(List<Object> segments, int device, SegmentSnapshot segment,
                                   List<BlockSnapshot> run, boolean expandable) {
        if (run.isEmpty()) {
            return;
        }
        long total = 0;
        long allocated = 0;
        long active = 0;
        long requested = 0;
        List<Object> blocks = new ArrayList<>(run.size());
        for (BlockSnapshot b : run) {
            total += b.size();
            if (b.state() == BlockState.ALLOCATED) {
                allocated += b.size();
            }
            if (b.state() == BlockState.ALLOCATED || b.state() == BlockState.PENDING_FREE) {
                active += b.size();
                requested += b.requestedSize();
            }
            Map<String, Object> block = new LinkedHashMap<>();
            block.put("address", b.address());
            block.put("size", b.size());
            block.put("requested_size", b.requestedSize());
            block.put("state", b.state().wireName());
            block.put("frames", new ArrayList<>());
            blocks.add(block);
        }
        Map<String, Object> seg = new LinkedHashMap<>();
        seg.put("device", device);
        seg.put("address", run.getFirst().address());
        seg.put("total_size", total);
        seg.put("allocated_size", allocated);
        seg.put("active_size", active);
        seg.put("requested_size", requested);
        seg.put("stream", segment.stream());
        seg.put("segment_type", "small".equals(segment.pool()) ? "small" : "large");
        seg.put("segment_pool_id", DEFAULT_POOL_ID);
        seg.put("is_expandable", expandable);
        seg.put("frames", new ArrayList<>());
        seg.put("blocks", blocks);
        segments.add(seg);
    }

    /** A mutable copy of a settings tree (maps and lists copied, the rest immutable values). */
    private static Object mutableCopy(Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> copy = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                copy.put((String) e.getKey(), mutableCopy(e.getValue()));
            }
            return copy;
        }
        if (value instanceof List<?> list) {
            List<Object> copy = new ArrayList<>(list.size());
            for (Object o : list) {
                copy.add(mutableCopy(o));
            }
            return copy;
        }
        return value;
    }

    /**
     * Writes {@link #toDict(MemorySnapshot)} as a protocol-2 pickle, the format of
     * {@code torch.cuda.memory._dump_snapshot()}; {@code out} is not closed.
     */
    public static void writePickle(MemorySnapshot snapshot, OutputStream out) throws IOException {
        PickleWriter.write(toDict(snapshot), out);
    }

    /**
     * Writes a {@code _snapshot()} dict as a protocol-2 pickle: the caching allocator's
     * {@code CachingAllocator.snapshotDict()} (segments, history and settings, as PyTorch's own) or
     * {@link #toDict(MemorySnapshot)}; {@code out} is not closed.
     */
    public static void writePickle(Map<String, Object> snapshotDict, OutputStream out) throws IOException {
        PickleWriter.write(snapshotDict, out);
    }

    /** A {@code _snapshot()} dict as JSON, pretty-printed (two-space indent) when {@code pretty}. */
    public static String json(Map<String, Object> snapshotDict, boolean pretty) {
        return JsonWriter.toString(snapshotDict, pretty);
    }

    /** {@link #toDict(MemorySnapshot)} as compact JSON. */
    public static String json(MemorySnapshot snapshot) {
        return json(snapshot, false);
    }

    /** {@link #toDict(MemorySnapshot)} as JSON, pretty-printed (two-space indent) when {@code pretty}. */
    public static String json(MemorySnapshot snapshot, boolean pretty) {
        return JsonWriter.toString(toDict(snapshot), pretty);
    }
}
