package io.devalloc.replay;

import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.detect.TraceFormats;
import io.devalloc.trace.pytorch.PyTorchSnapshotFile;
import io.devalloc.trace.pytorch.RecordedAllocatorSettings;
import io.devalloc.trace.pytorch.SnapshotDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A trace file read into memory, device by device. A PyTorch snapshot pickle of a job that used several GPUs holds one
 * history per device ({@code device_traces[i]}) and segments naming their device: each device is its own trace, and
 * none is chosen for the user. Every device the snapshot holds is read, with a history or with only its end state
 * (its segments and live blocks, {@link DeviceTrace#hasHistory()} false); the {@code device_traces} lists of GPUs the
 * process never used are {@link #unusedDevices()}. Every other format holds one device's history, of no named device.
 *
 * @param file          the path read, as given
 * @param format        its format, detected from its content
 * @param settings      the allocator settings a PyTorch snapshot recorded, or null for other formats
 * @param devices       its devices, by index
 * @param unusedDevices the indexes of empty {@code device_traces} lists on devices without segments
 */
public record TraceFile(String file, TraceFormat format, RecordedAllocatorSettings settings, List<DeviceTrace> devices,
                        List<Integer> unusedDevices) {

    /** Pass as the device to read every device. */
    public static final int ALL_DEVICES = -1;

    public TraceFile {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(format, "format");
        devices = List.copyOf(devices);
        unusedDevices = List.copyOf(unusedDevices);
    }

    /**
     * Reads {@code path}: every device, or only {@code cudaDevice}.
     *
     * @param cudaDevice a CUDA device index, or {@link #ALL_DEVICES}
     * @throws IllegalArgumentException when the file is not a readable regular file, or a device is asked of a format
     *                                  that names none
     * @throws TraceFormatException     naming the file, for a malformed trace or a device the snapshot does not hold
     * @throws IOException              when it cannot be read
     */
    public static TraceFile read(Path path, int cudaDevice) throws IOException {
        Objects.requireNonNull(path, "path");
        if (cudaDevice < ALL_DEVICES) {
            throw new IllegalArgumentException("a CUDA device index is 0 or more, got " + cudaDevice);
        }
        String name = path.toString();
        TraceSource plain = TraceSources.of(path);
        TraceFormat format = Files.isRegularFile(path) ? TraceFormats.detect(path) : null;
        if (format != TraceFormat.PYTORCH_PICKLE) {
            if (cudaDevice != ALL_DEVICES) {
                throw new IllegalArgumentException("--cuda-device: " + name + " is " + describe(format)
                        + ", which holds one device's history without naming it; --cuda-device chooses among the"
                        + " devices of a PyTorch snapshot pickle");
            }
            CompactTrace trace = CompactTrace.read(name, plain);
            return new TraceFile(name, trace.format(), null, List.of(new DeviceTrace(DeviceTrace.NO_DEVICE, trace)),
                    List.of());
        }
        PyTorchSnapshotFile snapshot = PyTorchSnapshotFile.read(path);
        List<SnapshotDevice> held = snapshot.devices();
        List<DeviceTrace> devices = new ArrayList<>();
        if (cudaDevice != ALL_DEVICES) {
            // Refused here, naming what the snapshot holds, when it does not hold that device.
            devices.add(readDevice(snapshot, cudaDevice, name));
        } else if (held.isEmpty()) {
            devices.add(readDevice(snapshot, 0, name));
        } else {
            for (SnapshotDevice d : held) {
                devices.add(readDevice(snapshot, d.index(), held.size() == 1 ? name : name + " cuda:" + d.index()));
            }
        }
        return new TraceFile(name, TraceFormat.PYTORCH_PICKLE, snapshot.recordedSettings(), devices,
                cudaDevice == ALL_DEVICES ? snapshot.unusedDevices() : List.of());
    }

    private static DeviceTrace readDevice(PyTorchSnapshotFile snapshot, int device, String name) throws IOException {
        TraceReader reader = snapshot.reader(device);
        boolean[] opened = {false};
        TraceSource once = () -> {
            if (opened[0]) {
                throw new IllegalStateException("a device of a loaded snapshot is read once");
            }
            opened[0] = true;
            return reader;
        };
        return new DeviceTrace(device, CompactTrace.read(name, once));
    }

    private static String describe(TraceFormat format) {
        if (format == null) {
            return "not a trace file";
        }
        return switch (format) {
            case PYTORCH_PICKLE -> "a PyTorch snapshot pickle";
            case PYTORCH_CSV -> "a PyTorch CSV";
            case RMM_CSV -> "an RMM replay log";
            case VALGRIND -> "a valgrind malloc trace";
            case ANDROID_MEMORY_REPLAY -> "an Android memory_replay trace";
        };
    }

    /** The devices with a recorded history, by index. */
    public List<DeviceTrace> withHistory() {
        List<DeviceTrace> with = new ArrayList<>();
        for (DeviceTrace d : devices) {
            if (d.hasHistory()) {
                with.add(d);
            }
        }
        return with;
    }

    /** Whether the file names its devices (a PyTorch snapshot pickle). */
    public boolean namesDevices() {
        return format == TraceFormat.PYTORCH_PICKLE;
    }
}
