package io.devalloc.examples.trace;

import io.devalloc.examples.trace.TraceEvent.Kind;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import net.razorvine.pickle.PickleException;

/**
 * Reads the pickle that {@code torch.cuda.memory._dump_snapshot()} writes, giving exactly the events that
 * {@link PyTorchCsvReader} gives for the CSV that {@code pickle_to_csv.py --prepend-segments --prepend-live} makes
 * from the same pickle, in the same order:
 * <ol>
 *   <li>one {@link Kind#PRESEGMENT} per segment that existed when recording began: the segments at the end of the
 *       trace (for the device), less those a traced {@code segment_alloc} created, plus those a traced
 *       {@code segment_free} released, walked backwards; an expandable segment's traced {@code segment_map} and
 *       {@code segment_unmap} are undone on the segment with the largest base at or below the address (dropped
 *       when nothing is left). Ordered by address.</li>
 *   <li>one {@link Kind#PREALLOC} per block that was live when recording began: first, in trace order, each
 *       {@code free_completed} of an address not allocated earlier in the trace (its size and stream); then each
 *       block still allocated in the end state ({@code active_allocated}, {@code active_pending_free},
 *       {@code active_awaiting_free}; {@code requested_size}, else {@code size}; the segment's stream) whose address
 *       is neither live from a traced {@code alloc} nor among those freed addresses, in segment then block
 *       order.</li>
 *   <li>the device's trace, each entry mapped as {@link PyTorchCsvReader} maps its row ({@code free_requested} and
 *       {@code snapshot} skipped; {@code oom} with key 0 and the entry's {@code device_free} as the size).</li>
 * </ol>
 * The device is the one given, or by default the one whose trace has the most entries (the first of equals). An
 * event's {@link TraceEvent#line() line} is its record number: the 1-based row it has in that CSV below the header
 * (the CSV's {@code seq} + 1).
 *
 * <p><b>Memory.</b> Unlike the other readers this one is not streaming: a pickle is a single object graph that has
 * to be loaded whole, so the file's bytes, then the snapshot (every trace entry with its stack frames, every
 * segment) are in memory, and the warm-start rows are worked out from them before the first event. Trace entries are
 * released as they are read. Convert a large snapshot to CSV once ({@code pickle_to_csv.py}) to replay it in
 * constant memory.
 *
 * <p><b>Safety.</b> The pickle is read by Pyrolite restricted to plain data (see {@link RestrictedUnpickler}): a
 * pickle that names a class or function, or constructs anything, is refused with a {@link TraceFormatException}
 * before any of it runs. Structural errors in the pickle are reported with line 0 and the byte offset in the message.
 * A malformed trace entry is reported with its record number when it is read, or with line 0 when the warm-start
 * analysis (which needs every entry's address and size) meets it first; the message names it as
 * {@code device_traces[d][i]} either way.
 */
public final class PyTorchPickleReader implements TraceReader {

    /** Pass as the device to read the device whose trace has the most entries. */
    public static final int BUSIEST_DEVICE = -1;

    private static final Set<String> ALLOCATED_STATES =
            Set.of("active_allocated", "active_pending_free", "active_awaiting_free");

    private final String file;
    private final int device;
    private final List<TraceEvent> prefix;
    private final List<Object> trace;
    private int prefixIndex;
    private int traceIndex;
    private long skipped;

    /** Reads a file, for the device with the most trace entries. */
    public PyTorchPickleReader(Path file) throws IOException {
        this(file, BUSIEST_DEVICE);
    }

    /** Reads a file, for the given device (or {@link #BUSIEST_DEVICE}). */
    public PyTorchPickleReader(Path file, int device) throws IOException {
        this(Files.readAllBytes(file), file.toString(), device);
    }

    /**
     * Reads a pickle from a stream (read to its end here, not closed).
     *
     * @param in     the pickle
     * @param file   the name messages give
     * @param device the device, or {@link #BUSIEST_DEVICE}
     */
    public PyTorchPickleReader(InputStream in, String file, int device) throws IOException {
        this(in.readAllBytes(), file, device);
    }

    private PyTorchPickleReader(byte[] data, String file, int device) throws IOException {
        if (device < BUSIEST_DEVICE) {
            throw new IllegalArgumentException("device must be >= 0 or BUSIEST_DEVICE, got " + device);
        }
        this.file = file;
        Map<?, ?> snapshot = dict(unpickle(data, file), "the snapshot");
        List<?> traces = list(snapshot.containsKey("device_traces") ? snapshot.get("device_traces") : List.of(),
                "device_traces");
        if (traces.isEmpty()) {
            throw new TraceFormatException(file, 0, "the snapshot has no device_traces");
        }
        int chosen = device;
        if (chosen == BUSIEST_DEVICE) {
            chosen = 0;
            for (int i = 0; i < traces.size(); i++) {
                if (list(traces.get(i), "device_traces[" + i + "]").size()
                        > list(traces.get(chosen), "device_traces[" + chosen + "]").size()) {
                    chosen = i;
                }
            }
        } else if (chosen >= traces.size()) {
            throw new TraceFormatException(file, 0, "device " + chosen + " has no trace: the snapshot has "
                    + traces.size() + " device_traces");
        }
        this.device = chosen;
        @SuppressWarnings("unchecked")
        List<Object> entries = (List<Object>) list(traces.get(chosen), "device_traces[" + chosen + "]");
        this.trace = entries;
        List<?> segments = list(snapshot.containsKey("segments") ? snapshot.get("segments") : List.of(), "segments");
        List<TraceEvent> rows = new ArrayList<>();
        segmentsAtStart(segments, rows);
        liveAtStart(segments, rows);
        this.prefix = rows;
    }

    @Override
    public TraceFormat format() {
        return TraceFormat.PYTORCH_PICKLE;
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
            trace.set(i, null);
            PyTorchAction action = e.action();
            long addr = action.needsAddressAndSize ? e.required("addr") : e.optional("addr", 0);
            long size = action == PyTorchAction.OOM && e.map.containsKey("device_free") ? e.size("device_free")
                    : action.needsAddressAndSize ? e.size("size") : e.optionalSize("size");
            long stream = e.optional("stream", 0);
            if (action.kind == null) {
                skipped++;
                continue;
            }
            return new TraceEvent(action.kind, addr, size, stream, 0, e.record);
        }
        return null;
    }

    @Override
    public void close() {
        prefixIndex = prefix.size();
        traceIndex = trace.size();
    }

    // ---- the warm start, as pickle_to_csv.py's segments_at_start and analyse()["_pre"] work it out ----

    /** The {@code presegment} rows. */
    private void segmentsAtStart(List<?> segments, List<TraceEvent> rows) throws TraceFormatException {
        TreeMap<Long, long[]> state = new TreeMap<>(Long::compareUnsigned);
        for (int s = 0; s < segments.size(); s++) {
            String where = "segments[" + s + "]";
            Map<?, ?> seg = dict(segments.get(s), where);
            if (!onDevice(seg)) {
                continue;
            }
            state.put(unsigned(seg, "address", where), new long[] {unsigned(seg, "total_size", where),
                stream(seg, where)});
        }
        for (int i = trace.size() - 1; i >= 0; i--) {
            Entry e = entry(i);
            String a = e.actionText();
            if ("segment_alloc".equals(a)) {
                state.remove(e.required("addr"));
            } else if ("segment_free".equals(a)) {
                state.put(e.required("addr"), new long[] {e.size("size"), e.optional("stream", 0)});
            } else if ("segment_map".equals(a) || "segment_unmap".equals(a)) {
                long addr = e.required("addr");
                Long base = state.floorKey(addr);
                if (base == null) {
                    continue;
                }
                long[] seg = state.get(base);
                long size;
                try {
                    size = "segment_map".equals(a) ? Math.subtractExact(seg[0], e.size("size"))
                            : Math.addExact(seg[0], e.size("size"));
                } catch (ArithmeticException overflow) {
                    throw e.error("'size' makes the segment at " + base + " larger than 2^63");
                }
                if (size > 0) {
                    state.put(base, new long[] {size, seg[1]});
                } else {
                    state.remove(base);
                }
            }
        }
        long record = 1;
        for (Map.Entry<Long, long[]> s : state.entrySet()) {
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
        long record = rows.size() + 1;
        for (long[] p : pre) {
            rows.add(new TraceEvent(Kind.PREALLOC, p[0], p[1], p[2], 0, record++));
        }
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
        String where = "device_traces[" + device + "][" + i + "]";
        Object o = trace.get(i);
        if (!(o instanceof Map<?, ?> map)) {
            throw new TraceFormatException(file, record, where + ": expected a dict, got " + pythonType(o));
        }
        return new Entry(map, where, record);
    }

    /** One trace entry: its fields, read the way {@code pickle_to_csv.py} writes them. */
    private final class Entry {
        final Map<?, ?> map;
        final String where;
        final long record;

        Entry(Map<?, ?> map, String where, long record) {
            this.map = map;
            this.where = where;
            this.record = record;
        }

        String actionText() {
            return map.get("action") instanceof String s ? s : null;
        }

        PyTorchAction action() throws TraceFormatException {
            Object a = map.get("action");
            PyTorchAction action = a instanceof String s ? PyTorchAction.of(s) : null;
            if (action == null) {
                throw error("unknown action " + (a instanceof String s ? "'" + s + "'" : pythonType(a))
                        + ": expected one of " + PyTorchAction.EXPECTED);
            }
            return action;
        }

        long required(String key) throws TraceFormatException {
            if (!map.containsKey(key)) {
                throw error("'" + key + "' is missing");
            }
            return unsignedValue(map.get(key), key);
        }

        long size(String key) throws TraceFormatException {
            long v = required(key);
            if (v < 0) {
                throw error("'" + key + "': expected a size below 2^63, got " + Long.toUnsignedString(v));
            }
            return v;
        }

        long optionalSize(String key) throws TraceFormatException {
            return map.containsKey(key) ? size(key) : 0;
        }

        long optional(String key, long otherwise) throws TraceFormatException {
            return map.containsKey(key) ? unsignedValue(map.get(key), key) : otherwise;
        }

        private long unsignedValue(Object v, String key) throws TraceFormatException {
            Long value = asUnsigned(v);
            if (value == null) {
                throw error("'" + key + "': expected a non-negative integer below 2^64, got " + show(v));
            }
            return value;
        }

        TraceFormatException error(String problem) {
            return new TraceFormatException(file, record, where + ": " + problem);
        }
    }

    // ---- plain values ----

    private static Object unpickle(byte[] data, String file) throws TraceFormatException {
        try {
            return RestrictedUnpickler.load(data);
        } catch (RestrictedUnpickler.Refused e) {
            throw new TraceFormatException(file, 0, e.getMessage());
        } catch (PickleException e) {
            throw new TraceFormatException(file, 0, "not a readable pickle: " + e.getMessage());
        } catch (IOException | RuntimeException e) {
            throw new TraceFormatException(file, 0, "not a readable pickle: " + e);
        }
    }

    private Map<?, ?> dict(Object o, String what) throws TraceFormatException {
        if (o instanceof Map<?, ?> m) {
            return m;
        }
        throw new TraceFormatException(file, 0, what + ": expected a dict, got " + pythonType(o));
    }

    private List<?> list(Object o, String what) throws TraceFormatException {
        if (o instanceof List<?> l) {
            return l;
        }
        if (o instanceof Object[] tuple) {
            return Arrays.asList(tuple);
        }
        throw new TraceFormatException(file, 0, what + ": expected a list, got " + pythonType(o));
    }

    private long unsigned(Map<?, ?> map, String key, String where) throws TraceFormatException {
        if (!map.containsKey(key)) {
            throw new TraceFormatException(file, 0, where + ": '" + key + "' is missing");
        }
        Long v = asUnsigned(map.get(key));
        if (v == null) {
            throw new TraceFormatException(file, 0, where + ": '" + key
                    + "': expected a non-negative integer below 2^64, got " + show(map.get(key)));
        }
        return v;
    }

    private long size(Map<?, ?> map, String key, String where) throws TraceFormatException {
        long v = unsigned(map, key, where);
        if (v < 0) {
            throw new TraceFormatException(file, 0, where + ": '" + key + "': expected a size below 2^63, got "
                    + Long.toUnsignedString(v));
        }
        return v;
    }

    private static boolean isInteger(Object v) {
        return v instanceof Integer || v instanceof Long || v instanceof BigInteger || v instanceof Short
                || v instanceof Byte;
    }

    private static BigInteger toBig(Object v) {
        return v instanceof BigInteger b ? b : BigInteger.valueOf(((Number) v).longValue());
    }

    private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);

    /** A Python int in [0, 2^64) as an unsigned long, or null (booleans, floats, strings, out of range). */
    private static Long asUnsigned(Object v) {
        if (!isInteger(v)) {
            return null;
        }
        BigInteger b = toBig(v);
        if (b.signum() < 0 || b.compareTo(TWO_TO_64) >= 0) {
            return null;
        }
        return b.longValue();
    }

    private static String show(Object v) {
        String text = v instanceof String s ? "'" + s + "'" : v instanceof Object[] ? "a tuple" : String.valueOf(v);
        return text.length() > 60 ? text.substring(0, 60) + "..." : text;
    }

    private static String pythonType(Object o) {
        if (o == null) {
            return "None";
        }
        if (o instanceof Map) {
            return "a dict";
        }
        if (o instanceof List) {
            return "a list";
        }
        if (o instanceof Object[]) {
            return "a tuple";
        }
        if (o instanceof String) {
            return "a str";
        }
        if (o instanceof Boolean) {
            return "a bool";
        }
        if (o instanceof Double) {
            return "a float";
        }
        if (isInteger(o)) {
            return "an int";
        }
        return "a " + o.getClass().getSimpleName();
    }
}
