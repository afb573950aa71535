package io.devalloc.trace.pytorch;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Reads the pickle that {@code torch.cuda.memory._dump_snapshot()} writes, giving the events that
 * {@link PyTorchCsvReader} gives for the CSV that {@code pickle_to_csv.py --prepend-segments --prepend-live} makes
 * from the same pickle, in the same order, except where this reader rebuilds expandable segments exactly (below):
 * <ol>
 *   <li>one {@link Kind#PRESEGMENT} per segment that existed when recording began, worked out by walking the trace
 *       back from the segments at its end (for the device). Ordinary segments ({@code is_expandable} false or
 *       absent), by address: those at the end, less those a traced {@code segment_alloc} created, plus those a
 *       traced {@code segment_free} released. Expandable segments, as mapped ranges: the ranges at the end (each
 *       {@code is_expandable} segment is one contiguous mapped range, as PyTorch reports them), with each traced
 *       {@code segment_map} undone by unmapping its range (which shrinks a range, moves its start, splits it in two
 *       or removes it) and each traced {@code segment_unmap} undone by mapping its range again (merged with the
 *       adjacent ranges of the same stream, but never across the boundary between two segments: the snapshot's
 *       expandable segments that touch belong to different segments, and ranges of different
 *       {@code segment_type}s are never one; see {@code MappedRanges}). One row per ordinary segment and per mapped
 *       range, ordered by address: two rows that touch are ranges of two different expandable segments.</li>
 *   <li>one {@link Kind#PREALLOC} per block that was live when recording began: first, in trace order, each
 *       {@code free_completed} of an address not allocated earlier in the trace (its size and stream); then each
 *       block still allocated in the end state ({@code active_allocated}, {@code active_pending_free},
 *       {@code active_awaiting_free}; {@code requested_size}, else {@code size}; the segment's stream) whose address
 *       is neither live from a traced {@code alloc} nor among those freed addresses, in segment then block
 *       order.</li>
 *   <li>the device's trace, each entry mapped as {@link PyTorchCsvReader} maps its row ({@code free_requested} and
 *       {@code snapshot} skipped), except {@code oom}: the entry's {@code device_free} is the event's key (as the
 *       CSV's) and its {@code size}, the rounded request that failed, which the CSV loses, is the event's size.
 *       A {@code segment_free} or {@code segment_unmap} event is flagged {@link TraceEvent#FLUSH_IN_MALLOC} when its
 *       stack frames are the very frames of the entry after its run (the allocator's own flush inside
 *       {@code malloc}), {@link TraceEvent#FLUSH_ELSEWHERE} when they are other frames (the program's
 *       {@code empty_cache()}), neither when one of the two has no frames.</li>
 * </ol>
 * The device is the one given, or by default the only one with a history ({@link #ONLY_DEVICE}); a snapshot with a
 * history on several devices is read device by device ({@link PyTorchSnapshotFile}). An event's
 * {@link TraceEvent#line() line} is its record number: the 1-based row it has in that CSV below the header (the
 * CSV's {@code seq} + 1).
 *
 * <p><b>Where it differs from {@code pickle_to_csv.py}.</b> The script undoes a {@code segment_map} or
 * {@code segment_unmap} by shrinking or growing "the segment with the largest base at or below the address" by the
 * entry's size. That is right only while a map extends a range at its end and an unmap takes its end or its start
 * off; it invents segments (or loses them) when an unmap split a mapped range in two (both halves are segments at
 * the end, and the script grows the lower one), when a map extended a range downwards (the range's start moved), or
 * when a map filled the gap between two ranges. This reader keeps the mapped ranges as intervals instead, so a
 * history recorded from an empty allocator starts with no presegment, and a window that starts later starts with
 * the ranges mapped at that moment. Only {@code is_expandable} segments take part: a {@code segment_map} or
 * {@code segment_unmap} is checked against them, and one that does not fit (undoing a map of a range that is not
 * mapped as a whole, or an unmap of a range that is still partly mapped) is a {@link TraceFormatException} naming
 * the entry, where the script would quietly produce a wrong start. For snapshots without expandable segments the
 * events are the same as the script's.
 *
 * <p><b>Newer snapshots.</b> A trace entry's {@code pool_id} (newest PyTorch: a tuple, {@code (0, 0)} for the default
 * pools), the top-level {@code host_segments} and {@code host_traces} (the pinned host allocator's, with device -1)
 * and {@code external_annotations} are read past: the events are the device's ({@code allocator_settings} is kept:
 * {@link #recordedSettings()}). A device without a trace list or with an empty one (a snapshot taken with
 * {@code include_traces=False}) has no recorded events: its events are just the warm-start rows worked out from its
 * {@code segments} (a presegment per segment, a prealloc per live block), its end state. A dict with neither
 * {@code segments} nor {@code device_traces} is not a snapshot.
 *
 * <p><b>Memory.</b> Unlike the other readers this one does not stream its events: the first events (the warm-start
 * rows) depend on the last entry of the trace and on the segments, and a pickle's memo lets any later object refer to
 * any earlier one, so the snapshot is loaded ({@link PyTorchSnapshotFile}) and the warm-start rows worked out before
 * the first event. What bounds the load (see {@link RestrictedUnpickler}): the file is read through a buffer, twice
 * (a scan of which memo entries are read again and where last, then the load), never whole; stack frames, most of a
 * real snapshot, are dropped as each entry is built (this reader never reads them); a memoized object is kept only
 * until its last read; dicts are compact and equal short strings shared; and each trace entry becomes an
 * {@link EntryRow} of 64 bytes (what this reader reads of it) as soon as it is appended to its device's list, so that
 * a million entries are never a million dicts. What stays is about 64 bytes per trace entry plus the end state's
 * segments; the entries are released as they are read. Measured (docs/benchmarks.md, "advise on a million trace
 * entries"): a million entries with 32 shared stack frames each (282 MB) load in about 4 s with less than 200 MB of
 * heap live at the end of the load, where the whole file's bytes and dicts took more than 700 MB and twice the
 * time before. {@code devalloc replay} and {@code compare} load a pickle once per run (into {@code CompactTrace}
 * columns, not once per pass).
 *
 * <p><b>Safety.</b> The pickle is read by Pyrolite restricted to plain data (see {@link RestrictedUnpickler}): a
 * pickle that names a class or function, or constructs anything, is refused with a {@link TraceFormatException}
 * before any of it runs. Structural errors in the pickle are reported with line 0 and the byte offset in the message.
 * A malformed trace entry is reported with its record number when it is read, or with line 0 when the warm-start
 * analysis (which needs every entry's address and size) meets it first; the message names it as
 * {@code device_traces[d][i]} either way.
 */
public final class PyTorchPickleReader implements TraceReader {

    /**
     * Pass as the device to read the snapshot's only device with a history ({@link PyTorchSnapshotFile#onlyDevice()});
     * a snapshot with a history on several devices is then refused, naming them.
     */
    public static final int ONLY_DEVICE = -1;

    private static final Set<String> ALLOCATED_STATES =
            Set.of("active_allocated", "active_pending_free", "active_awaiting_free");

    private final String file;
    private final int device;
    private final List<TraceEvent> prefix;
    private final List<Object> trace;
    private final RecordedAllocatorSettings settings;
    private int prefixIndex;
    private int traceIndex;
    private long skipped;
    /** The index of the first entry after the run of segment frees and unmaps being read; -1 before the first. */
    private int runEnd = -1;
    /** The stack frames' identity of the entry after that run, or null when it has none (or there is none). */
    private Long runFollowerFrames;

    /** Reads a file's only device with a history ({@link #ONLY_DEVICE}). */
    public PyTorchPickleReader(Path file) throws IOException {
        this(file, ONLY_DEVICE);
    }

    /** Reads one device of a file (or {@link #ONLY_DEVICE}). */
    public PyTorchPickleReader(Path file, int device) throws IOException {
        this(PyTorchSnapshotFile.read(file), device);
    }

    /**
     * Reads one device of a pickle from a stream (read to its end here, not closed).
     *
     * @param in     the pickle
     * @param file   the name messages give
     * @param device the device, or {@link #ONLY_DEVICE}
     */
    public PyTorchPickleReader(InputStream in, String file, int device) throws IOException {
        this(PyTorchSnapshotFile.read(in, file), device);
    }

    /**
     * Reads device {@code device} of a loaded snapshot (or {@link #ONLY_DEVICE}); {@link PyTorchSnapshotFile#reader}
     * is the public way.
     */
    PyTorchPickleReader(PyTorchSnapshotFile snapshot, int device) throws TraceFormatException {
        if (device < ONLY_DEVICE) {
            throw new IllegalArgumentException("device must be >= 0 or ONLY_DEVICE, got " + device);
        }
        this.file = snapshot.file();
        this.device = device == ONLY_DEVICE ? snapshot.onlyDevice() : device;
        @SuppressWarnings("unchecked")
        List<Object> entries = (List<Object>) snapshot.take(this.device);
        this.trace = entries;
        this.settings = snapshot.recordedSettings();
        List<?> segments = snapshot.segments();
        List<TraceEvent> rows = new ArrayList<>();
        segmentsAtStart(segments, rows);
        liveAtStart(segments, rows);
        this.prefix = rows;
    }

    @Override
    public TraceFormat format() {
        return TraceFormat.PYTORCH_PICKLE;
    }

    /**
     * The allocator settings the snapshot was recorded with ({@code allocator_settings}), with their configuration
     * text for allocator {@code caching}; PyTorch's defaults, with a note, when the snapshot has none.
     */
    public RecordedAllocatorSettings recordedSettings() {
        return settings;
    }

    /** The device whose trace is read. */
    public int device() {
        return device;
    }

    /** The {@code free_requested} and {@code snapshot} entries read so far (checked, no event). */
    public long skipped() {
        return skipped;
    }

    @Override
    public TraceEvent next() throws IOException {
        if (prefixIndex < prefix.size()) {
            return prefix.get(prefixIndex++);
        }
        while (traceIndex < trace.size()) {
            int i = traceIndex++;
            Entry e = entry(i);
            PyTorchAction action = e.action();
            long addr;
            long size;
            if (action == PyTorchAction.OOM) {
                // The key is the device's free bytes, the size the (rounded) request: TraceEvent's OOM fields.
                addr = e.has("device_free") ? e.size("device_free") : TraceEvent.FREE_BYTES_UNKNOWN;
                size = e.optionalSize("size");
            } else {
                addr = action.needsAddressAndSize ? e.required("addr") : e.optional("addr", 0);
                size = action.needsAddressAndSize ? e.size("size") : e.optionalSize("size");
            }
            long stream = e.optional("stream", 0);
            if (action.kind == null) {
                trace.set(i, null);
                skipped++;
                continue;
            }
            int flags = action == PyTorchAction.SEGMENT_FREE || action == PyTorchAction.SEGMENT_UNMAP
                    ? flushContext(i, trace.get(i)) : 0;
            trace.set(i, null);
            return new TraceEvent(action.kind, addr, size, stream, 0, e.record, flags);
        }
        return null;
    }

    @Override
    public void close() {
        prefixIndex = prefix.size();
        traceIndex = trace.size();
    }

    // ---- the warm start, as pickle_to_csv.py's segments_at_start and analyse()["_pre"] work it out ----

    /**
     * The {@code presegment} rows: the segments at the end walked back through the trace, ordinary segments by
     * address and expandable ones as mapped ranges (see the class documentation).
     */
    private void segmentsAtStart(List<?> segments, List<TraceEvent> rows) throws TraceFormatException {
        TreeMap<Long, long[]> ordinary = new TreeMap<>(Long::compareUnsigned);
        MappedRanges mapped = new MappedRanges();
        for (int s = 0; s < segments.size(); s++) {
            String where = "segments[" + s + "]";
            Map<?, ?> seg = dict(segments.get(s), where);
            if (!onDevice(seg)) {
                continue;
            }
            long address = unsigned(seg, "address", where);
            long size = unsigned(seg, "total_size", where);
            long stream = stream(seg, where);
            if (isExpandable(seg, where)) {
                if (!mapped.addSegment(address, size, stream, pool(seg))) {
                    throw new TraceFormatException(file, 0, where + ": the expandable segment of " + size
                            + " B at " + Long.toUnsignedString(address) + " is empty, ends beyond 2^64 or overlaps"
                            + " another one");
                }
            } else {
                ordinary.put(address, new long[] {size, stream});
            }
        }
        for (int i = trace.size() - 1; i >= 0; i--) {
            Entry e = entry(i);
            String a = e.actionText();
            if ("segment_alloc".equals(a)) {
                ordinary.remove(e.required("addr"));
            } else if ("segment_free".equals(a)) {
                ordinary.put(e.required("addr"), new long[] {e.size("size"), e.optional("stream", 0)});
            } else if ("segment_map".equals(a)) {
                long addr = e.required("addr");
                long size = e.size("size");
                if (size > 0 && !mapped.remove(addr, size)) {
                    throw e.error("segment_map of " + size + " B at " + Long.toUnsignedString(addr) + " cannot be"
                            + " undone: that range is not mapped as a whole in the expandable segments after it (the"
                            + " snapshot's is_expandable segments walked back to here)");
                }
            } else if ("segment_unmap".equals(a)) {
                long addr = e.required("addr");
                long size = e.size("size");
                if (size > 0 && !mapped.add(addr, size, e.optional("stream", 0))) {
                    throw e.error("segment_unmap of " + size + " B at " + Long.toUnsignedString(addr) + " cannot be"
                            + " undone: that range overlaps memory still mapped after it, spans the boundary between"
                            + " two expandable segments that touch in the snapshot, or ends beyond 2^64");
                }
            }
        }
        TreeMap<Long, long[]> start = new TreeMap<>(Long::compareUnsigned);
        start.putAll(ordinary);
        for (Map.Entry<Long, long[]> r : mapped.ranges().entrySet()) {
            start.put(r.getKey(), new long[] {r.getValue()[0] - r.getKey(), r.getValue()[1]});
        }
        long record = 1;
        for (Map.Entry<Long, long[]> s : start.entrySet()) {
            rows.add(new TraceEvent(Kind.PRESEGMENT, s.getKey(), s.getValue()[0], s.getValue()[1], 0, record++));
        }
    }

    /** The {@code prealloc} rows. */
    private void liveAtStart(List<?> segments, List<TraceEvent> rows) throws TraceFormatException {
        Set<Long> live = new HashSet<>();
        List<long[]> pre = new ArrayList<>();
        Set<Long> preAddresses = new HashSet<>();
        for (int i = 0; i < trace.size(); i++) {
            Entry e = entry(i);
            String a = e.actionText();
            if ("alloc".equals(a)) {
                e.size("size");
                live.add(e.required("addr"));
            } else if ("free_completed".equals(a)) {
                long addr = e.required("addr");
                if (!live.remove(addr)) {
                    pre.add(new long[] {addr, e.size("size"), e.optional("stream", 0)});
                    preAddresses.add(addr);
                }
            }
        }
        Map<Long, long[]> endLive = new LinkedHashMap<>();
        for (int s = 0; s < segments.size(); s++) {
            String where = "segments[" + s + "]";
            Map<?, ?> seg = dict(segments.get(s), where);
            if (!onDevice(seg)) {
                continue;
            }
            List<?> blocks = list(seg.containsKey("blocks") ? seg.get("blocks") : List.of(), where + "['blocks']");
            for (int b = 0; b < blocks.size(); b++) {
                String at = where + "['blocks'][" + b + "]";
                Map<?, ?> block = dict(blocks.get(b), at);
                Object state = block.get("state");
                if (!(state instanceof String text) || !ALLOCATED_STATES.contains(text)) {
                    continue;
                }
                long size = size(block, "size", at);
                if (block.containsKey("requested_size")) {
                    size = size(block, "requested_size", at);
                }
                endLive.put(unsigned(block, "address", at), new long[] {size, stream(seg, where)});
            }
        }
        for (Map.Entry<Long, long[]> b : endLive.entrySet()) {
            if (!live.contains(b.getKey()) && !preAddresses.contains(b.getKey())) {
                pre.add(new long[] {b.getKey(), b.getValue()[0], b.getValue()[1]});
            }
        }
        long record = rows.size() + 1L;
        for (long[] p : pre) {
            rows.add(new TraceEvent(Kind.PREALLOC, p[0], p[1], p[2], 0, record++));
        }
    }

    /**
     * The pool of an expandable segment, from its {@code segment_type} ({@code "small"} or {@code "large"}); unknown
     * when it is missing or says something else (the pool only keeps touching ranges of two segments apart).
     */
    private static int pool(Map<?, ?> seg) {
        Object type = seg.get("segment_type");
        if ("small".equals(type)) {
            return MappedRanges.SMALL_POOL;
        }
        return "large".equals(type) ? MappedRanges.LARGE_POOL : MappedRanges.UNKNOWN_POOL;
    }

    /** {@code seg.get("is_expandable", False)}, which must be a bool when present. */
    private boolean isExpandable(Map<?, ?> seg, String where) throws TraceFormatException {
        Object v = seg.get("is_expandable");
        if (v == null && !seg.containsKey("is_expandable")) {
            return false;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        throw new TraceFormatException(file, 0, where + ": 'is_expandable': expected a bool, got " + show(v));
    }

    /** {@code seg.get("device", device) == device}. */
    private boolean onDevice(Map<?, ?> seg) {
        if (!seg.containsKey("device")) {
            return true;
        }
        Object d = seg.get("device");
        return isInteger(d) && toBig(d).equals(BigInteger.valueOf(device));
    }

    private long stream(Map<?, ?> seg, String where) throws TraceFormatException {
        return seg.containsKey("stream") ? unsigned(seg, "stream", where) : 0;
    }

    // ---- trace entries ----

    /** Entry {@code i} of the device's trace, with its record number. */
    private Entry entry(int i) throws TraceFormatException {
        long record = prefix == null ? 0 : prefix.size() + i + 1;
        Object o = trace.get(i);
        if (o instanceof EntryRow row) {
            return new Entry(null, row, i, record);
        }
        if (!(o instanceof Map<?, ?> map)) {
            throw new TraceFormatException(file, record, entryName(i) + ": expected a dict, got " + pythonType(o));
        }
        return new Entry(map, null, i, record);
    }

    /** How messages name trace entry {@code i}. */
    private String entryName(int i) {
        return "device_traces[" + device + "][" + i + "]";
    }

    /** The {@link EntryRow} bit of a numeric key of a trace entry. */
    private static int bit(String key) {
        return switch (key) {
            case "addr" -> EntryRow.ADDR;
            case "size" -> EntryRow.SIZE;
            case "stream" -> EntryRow.STREAM;
            case "device_free" -> EntryRow.DEVICE_FREE;
            default -> throw new IllegalArgumentException("not a numeric key of a trace entry: " + key);
        };
    }

    /**
     * One trace entry: its fields, read the way {@code pickle_to_csv.py} writes them, from its {@link EntryRow} (what
     * the load kept of an entry that reads as it did) or from its dict (any other entry, checked here).
     */
    private final class Entry {
        /** The dict, or null for a row. */
        final Map<?, ?> map;
        /** The row, or null for a dict. */
        final EntryRow row;
        /** The entry's index in the device's trace; its name in messages is made only for a message. */
        final int index;
        final long record;

        Entry(Map<?, ?> map, EntryRow row, int index, long record) {
            this.map = map;
            this.row = row;
            this.index = index;
            this.record = record;
        }

        String actionText() {
            if (row != null) {
                return row.action().text;
            }
            return map.get("action") instanceof String s ? s : null;
        }

        PyTorchAction action() throws TraceFormatException {
            if (row != null) {
                return row.action();
            }
            Object a = map.get("action");
            PyTorchAction action = a instanceof String s ? PyTorchAction.of(s) : null;
            if (action == null) {
                // The action is the file's text: quoted bounded, its control characters escaped.
                throw error("unknown action " + (a instanceof String s ? "'" + UntrustedText.excerpt(s) + "'"
                        : pythonType(a))
                        + ": expected one of " + PyTorchAction.EXPECTED);
            }
            return action;
        }

        /** Whether the entry has {@code key}: {@code addr}, {@code size}, {@code stream} or {@code device_free}. */
        boolean has(String key) {
            return row != null ? row.has(bit(key)) : map.containsKey(key);
        }

        long required(String key) throws TraceFormatException {
            if (!has(key)) {
                throw error("'" + key + "' is missing");
            }
            // A row holds only values in range: what unsignedValue would return.
            return row != null ? row.value(bit(key)) : unsignedValue(map.get(key), key);
        }

        long size(String key) throws TraceFormatException {
            long v = required(key);
            if (v < 0) {
                throw error("'" + key + "': expected a size below 2^63, got " + Long.toUnsignedString(v));
            }
            return v;
        }

        long optionalSize(String key) throws TraceFormatException {
            return has(key) ? size(key) : 0;
        }

        long optional(String key, long otherwise) throws TraceFormatException {
            return has(key) ? required(key) : otherwise;
        }

        private long unsignedValue(Object v, String key) throws TraceFormatException {
            Long value = asUnsigned(v);
            if (value == null) {
                throw error("'" + key + "': expected a non-negative integer below 2^64, got " + show(v));
            }
            return value;
        }

        TraceFormatException error(String problem) {
            return new TraceFormatException(file, record, entryName(index) + ": " + problem);
        }
    }

    // ---- what the allocator was doing when it freed segments ----

    /**
     * The flag of the {@code segment_free} or {@code segment_unmap} entry {@code i}: whether it was recorded with the
     * same stack frames as the entry that follows its run ({@link TraceEvent#FLUSH_IN_MALLOC}), other frames
     * ({@link TraceEvent#FLUSH_ELSEWHERE}), or 0 when either has none. PyTorch records every entry one allocator
     * call makes with that call's context, and its snapshot turns one context into one list object of frames
     * (py_symbolize), which the pickle keeps as one memo entry: the release steps of {@code malloc}'s retry ladder
     * (and its garbage collection) share the frames of the {@code segment_alloc}, {@code segment_map} or {@code oom}
     * entry of the same call, which follows them; {@code empty_cache()} gathers a context of its own.
     */
    private int flushContext(int i, Object entry) {
        if (i >= runEnd) {
            int j = i + 1;
            while (j < trace.size() && isFlushRow(trace.get(j))) {
                j++;
            }
            runEnd = j;
            runFollowerFrames = j < trace.size() ? framesIdentity(trace.get(j)) : null;
        }
        Long own = framesIdentity(entry);
        if (own == null || runFollowerFrames == null) {
            return 0;
        }
        return own.equals(runFollowerFrames) ? TraceEvent.FLUSH_IN_MALLOC : TraceEvent.FLUSH_ELSEWHERE;
    }

    private static boolean isFlushRow(Object entry) {
        if (entry instanceof EntryRow row) {
            return row.action() == PyTorchAction.SEGMENT_FREE || row.action() == PyTorchAction.SEGMENT_UNMAP;
        }
        return entry instanceof Map<?, ?> m && ("segment_free".equals(m.get("action"))
                || "segment_unmap".equals(m.get("action")));
    }

    /** The identity of an entry's stack frames in the pickle, or null when it has none that tell. */
    private static Long framesIdentity(Object entry) {
        if (entry instanceof EntryRow row) {
            return row.frames() != SkippedValue.NO_IDENTITY ? row.frames() : null;
        }
        if (entry instanceof Map<?, ?> m && m.get("frames") instanceof SkippedValue frames
                && frames.identity() != SkippedValue.NO_IDENTITY) {
            return frames.identity();
        }
        return null;
    }

    // ---- plain values ----

    private Map<?, ?> dict(Object o, String what) throws TraceFormatException {
        return SnapshotValues.dict(file, o, what);
    }

    private List<?> list(Object o, String what) throws TraceFormatException {
        return SnapshotValues.list(file, o, what);
    }

    private long unsigned(Map<?, ?> map, String key, String where) throws TraceFormatException {
        return SnapshotValues.unsigned(file, map, key, where);
    }

    private long size(Map<?, ?> map, String key, String where) throws TraceFormatException {
        return SnapshotValues.size(file, map, key, where);
    }

    private static boolean isInteger(Object v) {
        return SnapshotValues.isInteger(v);
    }

    private static BigInteger toBig(Object v) {
        return SnapshotValues.toBig(v);
    }

    private static Long asUnsigned(Object v) {
        return SnapshotValues.asUnsigned(v);
    }

    private static String show(Object v) {
        return SnapshotValues.show(v);
    }

    private static String pythonType(Object o) {
        return SnapshotValues.pythonType(o);
    }
}
