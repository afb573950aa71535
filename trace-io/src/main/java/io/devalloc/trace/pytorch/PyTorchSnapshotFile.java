package io.devalloc.trace.pytorch;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.trace.TraceFormatException;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import net.razorvine.pickle.PickleException;

/**
 * A PyTorch memory snapshot pickle ({@code torch.cuda.memory._dump_snapshot()}), loaded once and split by CUDA
 * device: a job that used several GPUs has one history per device ({@code device_traces[i]} is device i's) and
 * segments that each name their device. {@link #devices()} lists every device the snapshot holds, with history or
 * only an end state, as PyTorch's memory_viz page offers them; {@link #reader(int)} reads one device's events with
 * {@link PyTorchPickleReader}. Nothing is chosen silently: {@link #onlyDevice()} is the one device of a snapshot
 * that has history on exactly one, and a snapshot with history on several must be read device by device.
 *
 * <p>Loading unpickles the whole file, read through a buffer (see {@link PyTorchPickleReader} for what that costs
 * and what is dropped on the way): each trace entry is kept as an {@link EntryRow} as soon as it is read; a device's
 * trace entries are released as its reader reads them, so each device can be read once. Not thread-safe: one
 * thread reads the devices, one after the other.
 */
public final class PyTorchSnapshotFile {

    /** The largest device index accepted: more GPUs than any machine has. */
    static final int MAX_DEVICE = 1 << 16;

    /** Dict keys whose values this reader never reads: dropped as the pickle loads ({@link RestrictedUnpickler}). */
    private static final Set<String> SKIPPED_KEYS = Set.of("frames");
    /** The root key whose lists hold trace entries, kept as {@link EntryRow}s as they load. */
    private static final String TRACES = "device_traces";

    private final String file;
    private final RecordedAllocatorSettings settings;
    private final List<?> traces;
    private final List<?> segments;
    private final List<SnapshotDevice> devices;
    private final List<Integer> unused;
    private final Set<Integer> read = new HashSet<>();

    private PyTorchSnapshotFile(Object unpickled, String file) throws TraceFormatException {
        this.file = file;
        Map<?, ?> snapshot = SnapshotValues.dict(file, unpickled, "the snapshot");
        if (!snapshot.containsKey("device_traces") && !snapshot.containsKey("segments")) {
            throw new TraceFormatException(file, 0, "not a memory snapshot: the dict has neither device_traces nor"
                    + " segments");
        }
        Object recorded = snapshot.get("allocator_settings");
        if (recorded instanceof Map<?, ?> m) {
            this.settings = RecordedAllocatorSettings.of(m);
        } else if (recorded == null) {
            this.settings = RecordedAllocatorSettings.absent();
        } else {
            this.settings = new RecordedAllocatorSettings(Map.of(), "", List.of("the snapshot's allocator_settings"
                    + " is " + SnapshotValues.pythonType(recorded) + ", not a dict: PyTorch's defaults are assumed"));
        }
        this.traces = SnapshotValues.list(file, snapshot.containsKey("device_traces")
                ? snapshot.get("device_traces") : List.of(), "device_traces");
        this.segments = SnapshotValues.list(file, snapshot.containsKey("segments") ? snapshot.get("segments")
                : List.of(), "segments");
        IdentityHashMap<Object, String> met = new IdentityHashMap<>();
        TreeMap<Integer, long[]> found = new TreeMap<>();
        for (int i = 0; i < traces.size(); i++) {
            once(met, traces.get(i), "device_traces[" + i + "]");
            List<?> entries = SnapshotValues.list(file, traces.get(i), "device_traces[" + i + "]");
            long events = 0;
            for (Object entry : entries) {
                if (entry instanceof EntryRow row) {
                    if (row.action().kind != null) {
                        events++;
                    }
                } else if (entry instanceof Map<?, ?> m && m.get("action") instanceof String a) {
                    PyTorchAction action = PyTorchAction.of(a);
                    if (action != null && action.kind != null) {
                        events++;
                    }
                }
            }
            found.put(i, new long[] {entries.size(), events, 0, 0});
        }
        for (int s = 0; s < segments.size(); s++) {
            String where = "segments[" + s + "]";
            Map<?, ?> seg = SnapshotValues.dict(file, segments.get(s), where);
            once(met, seg, where);
            Object blocks = seg.get("blocks");
            once(met, blocks, where + "['blocks']");
            if (blocks instanceof List<?> || blocks instanceof Object[]) {
                List<?> listed = SnapshotValues.list(file, blocks, where + "['blocks']");
                for (int b = 0; b < listed.size(); b++) {
                    once(met, listed.get(b), where + "['blocks'][" + b + "]");
                }
            }
            int device = segmentDevice(seg, where);
            long[] counts = found.computeIfAbsent(device, d -> new long[4]);
            counts[2]++;
            Object size = seg.get("total_size");
            Long bytes = SnapshotValues.asUnsigned(size);
            if (bytes != null && bytes > 0) {
                counts[3] = saturatedAdd(counts[3], bytes);
            }
        }
        List<SnapshotDevice> listed = new ArrayList<>();
        List<Integer> empty = new ArrayList<>();
        for (Map.Entry<Integer, long[]> e : found.entrySet()) {
            long[] c = e.getValue();
            if (c[0] == 0 && c[2] == 0) {
                empty.add(e.getKey());
            } else {
                listed.add(new SnapshotDevice(e.getKey(), c[0], c[1], c[2], c[3]));
            }
        }
        this.devices = List.copyOf(listed);
        this.unused = List.copyOf(empty);
    }

    /**
     * Loads the snapshot in {@code file}.
     *
     * @throws TraceFormatException naming the file, when it is not a readable snapshot pickle
     * @throws IOException          when it cannot be read
     */
    public static PyTorchSnapshotFile read(Path file) throws IOException {
        String name = file.toString();
        return withinResources(name, () -> new PyTorchSnapshotFile(unpickle(name, () -> RestrictedUnpickler.load(
                file, SKIPPED_KEYS, TRACES, EntryRow::of)), name));
    }

    /**
     * Loads a snapshot from a stream (read to its end here, not closed).
     *
     * @param file the name messages give
     * @throws TraceFormatException naming the file, when it is not a readable snapshot pickle
     * @throws IOException          when it cannot be read
     */
    public static PyTorchSnapshotFile read(InputStream in, String file) throws IOException {
        byte[] data = in.readAllBytes();
        return withinResources(file, () -> new PyTorchSnapshotFile(unpickle(file, () -> RestrictedUnpickler.load(
                data, SKIPPED_KEYS, TRACES, EntryRow::of)), file));
    }

    /** The name messages give (the path read). */
    public String file() {
        return file;
    }

    /**
     * The allocator settings the snapshot was recorded with ({@code allocator_settings}), with their configuration
     * text for allocator {@code caching}; PyTorch's defaults, with a note, when the snapshot has none. One process
     * has one allocator configuration, so they hold for every device.
     */
    public RecordedAllocatorSettings recordedSettings() {
        return settings;
    }

    /**
     * Every device the snapshot holds, by index: each with a trace entry or a segment. A segment without a
     * {@code device} key counts as device 0's.
     */
    public List<SnapshotDevice> devices() {
        return devices;
    }

    /** The devices with a recorded history ({@link SnapshotDevice#hasHistory()}), by index. */
    public List<SnapshotDevice> devicesWithHistory() {
        return devices.stream().filter(SnapshotDevice::hasHistory).toList();
    }

    /**
     * The indexes of {@code device_traces} lists that are empty on a device without segments: GPUs the process could
     * see and never used (PyTorch writes a list for every visible device).
     */
    public List<Integer> unusedDevices() {
        return unused;
    }

    /**
     * The device a reader of "the" snapshot reads: the only device with a history; with none, the lowest device
     * with segments (0 for an empty snapshot).
     *
     * @throws TraceFormatException when several devices have a history, naming them: each is its own trace
     */
    public int onlyDevice() throws TraceFormatException {
        List<SnapshotDevice> with = devicesWithHistory();
        if (with.size() > 1) {
            throw new TraceFormatException(file, 0, "the snapshot has a history on " + with.size() + " devices ("
                    + indexes(with) + "): each is a trace of its own; read one device (its index), or all of them"
                    + " one after the other");
        }
        if (with.size() == 1) {
            return with.getFirst().index();
        }
        return devices.isEmpty() ? 0 : devices.getFirst().index();
    }

    /** The listing of {@code devices}' indexes, {@code 0, 1 and 3}. */
    static String indexes(List<SnapshotDevice> devices) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < devices.size(); i++) {
            if (i > 0) {
                b.append(i == devices.size() - 1 ? " and " : ", ");
            }
            b.append(devices.get(i).index());
        }
        return b.toString();
    }

    /** The device with index {@code index}, or null when the snapshot does not hold it. */
    public SnapshotDevice device(int index) {
        for (SnapshotDevice d : devices) {
            if (d.index() == index) {
                return d;
            }
        }
        return null;
    }

    /**
     * A reader of device {@code device}'s events (its warm-start rows, then its trace); each device may be read
     * once, since its trace entries are released as they are read.
     *
     * @throws TraceFormatException     when the snapshot does not hold that device, naming those it holds, or the
     *                                  device's entries or segments are malformed
     * @throws IllegalStateException    when that device was read already
     */
    public PyTorchPickleReader reader(int device) throws TraceFormatException {
        return new PyTorchPickleReader(this, device);
    }

    /**
     * Device {@code device}'s trace entries, for its reader (which releases them as it reads): empty for a device
     * with segments only; checked once per device.
     *
     * @throws TraceFormatException  when the snapshot does not hold that device, naming those it holds
     * @throws IllegalStateException when that device was taken already
     */
    List<?> take(int device) throws TraceFormatException {
        if (device(device) == null && !(devices.isEmpty() && device == 0)) {
            String holds = devices.isEmpty() ? "it holds no device (no trace entry, no segment)"
                    : "it holds device" + (devices.size() == 1 ? " " : "s ") + indexes(devices);
            throw new TraceFormatException(file, 0, unusedDevices().contains(device)
                    ? "device " + device + " is unused in the snapshot (an empty trace list and no segment: a GPU"
                    + " the process could see and never used), so there is nothing to replay; " + holds
                    : "device " + device + " is not in the snapshot: " + holds);
        }
        if (!read.add(device)) {
            throw new IllegalStateException("device " + device + " of " + file + " was read already: its trace"
                    + " entries are released as they are read; load the file again to read it again");
        }
        return device < traces.size()
                ? SnapshotValues.list(file, traces.get(device), "device_traces[" + device + "]") : List.of();
    }

    /** The end state's segments, every device's. */
    List<?> segments() {
        return segments;
    }

    /**
     * Refuses a segment, block list, block or trace list met a second time ({@code met} maps those that something
     * else could reach to where they were first met). PyTorch builds each of them afresh and writes it once; a
     * pickle's memo lets 2 bytes list one segment again, so a file of N references to one segment whose blocks list
     * holds one block M times would cost N x M steps in every walk over the segments and their blocks (a 40 KB file,
     * seconds; 400 KB, minutes). Refused, every walk is linear in the file. Only what the load marked as reachable
     * from elsewhere ({@link PickleDict#shared()}, {@link PickleList#shared()}; any tuple) and is not empty is
     * remembered: in a real snapshot, nothing.
     */
    private void once(IdentityHashMap<Object, String> met, Object value, String where) throws TraceFormatException {
        boolean single = value instanceof PickleDict d ? !d.shared()
                : value instanceof PickleList l ? !l.shared() : !(value instanceof Object[]);
        // An empty one costs nothing to walk again, and picklers that memoize share one (Java's List.of()).
        boolean empty = value instanceof Map<?, ?> m ? m.isEmpty()
                : value instanceof List<?> l ? l.isEmpty() : value instanceof Object[] a && a.length == 0;
        if (single || empty) {
            return;
        }
        String first = met.putIfAbsent(value, where);
        if (first != null) {
            throw new TraceFormatException(file, 0, where + " is the very object " + first + " is (the pickle refers"
                    + " to it again through its memo): PyTorch writes each segment, blocks list, block and trace"
                    + " list once, and reading one again for every reference could take time quadratic in the"
                    + " file's size");
        }
    }

    /** A segment's device: its {@code device} key, 0 when it has none. */
    private int segmentDevice(Map<?, ?> seg, String where) throws TraceFormatException {
        if (!seg.containsKey("device")) {
            return 0;
        }
        Object d = seg.get("device");
        if (!SnapshotValues.isInteger(d) || SnapshotValues.toBig(d).signum() < 0
                || SnapshotValues.toBig(d).compareTo(BigInteger.valueOf(MAX_DEVICE)) > 0) {
            throw new TraceFormatException(file, 0, where + ": 'device': expected a device index from 0 to "
                    + MAX_DEVICE + ", got " + SnapshotValues.show(d));
        }
        return SnapshotValues.toBig(d).intValue();
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    /** The loading and first reading of a snapshot. */
    private interface Read {
        PyTorchSnapshotFile run() throws IOException;
    }

    /**
     * {@code read}'s snapshot, or a {@link TraceFormatException} naming the file where it ran out of heap or stack.
     * Neither should happen: the load ends itself before the heap is full ({@link HeapGuard}) and nothing walks the
     * snapshot recursively. This is the last line, so that a file built to exhaust either is one clear refusal, not
     * a thousand lines of stack; what the load built is garbage by the time the error reaches here.
     */
    private static PyTorchSnapshotFile withinResources(String file, Read read) throws IOException {
        try {
            return read.run();
        } catch (OutOfMemoryError e) {
            throw new TraceFormatException(file, 0, "this file needs more memory than the Java heap allows (-Xmx"
                    + (Runtime.getRuntime().maxMemory() >> 20) + "m): reading it ran out of heap; raise the heap"
                    + " with JAVA_TOOL_OPTIONS=-Xmx8g, or convert it once with traces/pickle_to_csv.py");
        } catch (StackOverflowError e) {
            throw new TraceFormatException(file, 0, "nested too deep: reading it ran out of stack, where PyTorch"
                    + " nests a snapshot's values 5 deep");
        }
    }

    /** A load of the pickle, from a file or from bytes. */
    private interface Load {
        Object run() throws IOException;
    }

    /**
     * The unpickled snapshot, or a {@link TraceFormatException} naming the file for a pickle that is refused or
     * malformed.
     *
     * @throws IOException when the file cannot be read (opened, or read to its end)
     */
    private static Object unpickle(String file, Load load) throws IOException {
        try {
            // Stack frames are not read: dropped as they are built (their identity kept), never all in memory.
            return load.run();
        } catch (PickleInput.SourceFailure e) {
            throw e.getCause(); // the file could not be read: not a format error
        } catch (RestrictedUnpickler.Refused e) {
            throw new TraceFormatException(file, 0, e.getMessage());
        } catch (PickleException e) {
            throw new TraceFormatException(file, 0, "not a readable pickle: " + e.getMessage());
        } catch (IOException e) {
            throw new TraceFormatException(file, 0, "not a readable pickle: it ends early or is cut short ("
                    + UntrustedText.excerpt(String.valueOf(e.getMessage())) + ")");
        } catch (RuntimeException e) {
            // A message names no Java class (the launcher prints it as one line): the error's own text would.
            TraceFormatException refusal = new TraceFormatException(file, 0, "not a readable pickle: an opcode"
                    + " met an argument or a value it cannot work on (a FLOAT that is not a number, say)");
            refusal.initCause(e);
            throw refusal;
        }
    }
}
