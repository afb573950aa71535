package io.devalloc.replay.cli;

import io.devalloc.replay.DeviceTrace;
import io.devalloc.trace.pytorch.PickleWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code devalloc replay --export FILE}: each device's replay, as its allocator recorded it in PyTorch's memory
 * history, merged into one snapshot as PyTorch writes a job on several GPUs ({@code device_traces[i]} is device i's
 * history, every segment names its device), written with devalloc's pickle writer in the form
 * {@code torch.cuda.memory._dump_snapshot()} writes, which PyTorch's memory viewer opens. A trace of no named device
 * is written as device 0. The file is checked before the replays, so that a path that cannot be written fails at
 * once; a write that still fails at the end is the caller's to report ({@link OutputFiles#reportFailure}).
 */
final class Exports {

    private final Path file;
    private final List<Map<String, Object>> snapshots = new ArrayList<>();

    private Exports(Path file) {
        this.file = file;
    }

    /**
     * An export to {@code file}, checked now ({@link OutputFiles#checkWritable}); its folder is made when written.
     *
     * @throws IllegalArgumentException when {@code file} cannot be written
     */
    static Exports to(Path file) {
        OutputFiles.checkWritable("--export", file);
        return new Exports(file);
    }

    /** One replay's snapshot, in the order of the devices replayed. */
    void add(Map<String, Object> snapshotDict) {
        snapshots.add(snapshotDict);
    }

    /**
     * Writes the merged snapshot of {@code replays}, whose snapshots were {@linkplain #add added} in their order.
     *
     * @throws UncheckedIOException when the file cannot be written
     */
    void write(TraceReplays.DeviceReplays replayed) {
        List<TraceReplays.DeviceReplay> replays = replayed.devices();
        if (snapshots.size() != replays.size()) {
            throw new IllegalStateException(replays.size() + " replays but " + snapshots.size() + " snapshots");
        }
        // One list per device up to the last the trace names, unused ones (empty) included, as PyTorch writes them.
        int last = 0;
        for (TraceReplays.DeviceReplay r : replays) {
            last = Math.max(last, index(r));
        }
        for (int unused : replayed.unusedDevices()) {
            last = Math.max(last, unused);
        }
        List<Object> traces = new ArrayList<>();
        for (int i = 0; i <= last; i++) {
            traces.add(new ArrayList<>());
        }
        List<Object> segments = new ArrayList<>();
        Object settings = null;
        for (int i = 0; i < replays.size(); i++) {
            int device = index(replays.get(i));
            Map<String, Object> snapshot = snapshots.get(i);
            // The replay ran on a simulated device of its own (index 0 unless the spec said otherwise): each of its
            // segments is moved to the device the trace names, and its history too.
            for (Object s : (List<?>) snapshot.get("segments")) {
                @SuppressWarnings("unchecked")
                Map<String, Object> segment = new LinkedHashMap<>((Map<String, Object>) s);
                segment.put("device", device);
                segments.add(segment);
            }
            List<?> own = (List<?>) snapshot.get("device_traces");
            traces.set(device, own.isEmpty() ? new ArrayList<>() : own.getLast());
            if (settings == null) {
                settings = snapshot.get("allocator_settings");
            }
        }
        Map<String, Object> merged = new LinkedHashMap<>();
        merged.put("segments", segments);
        merged.put("device_traces", traces);
        merged.put("allocator_settings", settings == null ? Map.of() : settings);
        merged.put("external_annotations", List.of());
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            try (OutputStream out = Files.newOutputStream(file)) {
                PickleWriter.write(merged, out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private static int index(TraceReplays.DeviceReplay r) {
        return r.cudaDevice() == DeviceTrace.NO_DEVICE ? 0 : r.cudaDevice();
    }
}
