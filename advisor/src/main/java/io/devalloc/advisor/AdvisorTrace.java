package io.devalloc.advisor;

import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.DeviceTrace;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceFile;
import io.devalloc.replay.TraceSource;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.pytorch.PyTorchPickleReader;
import io.devalloc.trace.pytorch.RecordedAllocatorSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * One device's trace as the advisor replays it, read once: its events in a {@link CompactTrace} (primitive columns,
 * {@value CompactTrace#BYTES_PER_EVENT} bytes per event, no object per event), which every replay of every setting
 * reads without reading or parsing the file again, and what the advisor needs before the first replay: the settings
 * it was recorded with (a PyTorch snapshot's {@code allocator_settings}), how many allocations it makes, its first
 * and its largest request. Immutable; any number of threads may replay it at once.
 */
public final class AdvisorTrace {

    private final String name;
    private final DeviceTrace device;
    private final RecordedAllocatorSettings recorded;

    private AdvisorTrace(String name, DeviceTrace device, RecordedAllocatorSettings recorded) {
        this.name = name;
        this.device = device;
        this.recorded = recorded;
    }

    /** Device {@code device} of {@code file}, named as the file (reports name the device beside it). */
    public static AdvisorTrace of(TraceFile file, DeviceTrace device) {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(device, "device");
        return new AdvisorTrace(file.file(), device, file.settings());
    }

    /**
     * Reads {@code file} (any format the replay reads, detected from its content), named by its path: its only
     * device with a history.
     *
     * @throws IllegalArgumentException                if it is not a readable regular file, or it has a history on
     *                                                 several devices (read it with {@link TraceFile#read} and advise
     *                                                 on each: {@link Advisor#advise(TraceFile,
     *                                                 Advisor.Options, io.devalloc.replay.ReplayProgress)})
     * @throws io.devalloc.trace.TraceFormatException naming the file and the line, for a malformed trace
     * @throws IOException                             if it cannot be read
     */
    public static AdvisorTrace read(Path file) throws IOException {
        Objects.requireNonNull(file, "file");
        TraceFile read = TraceFile.read(file, TraceFile.ALL_DEVICES);
        List<DeviceTrace> with = read.withHistory();
        if (with.size() > 1) {
            throw new TraceFormatException(file.toString(), 0, "the snapshot has a history on " + with.size()
                    + " devices: advise on the whole file, or on one device");
        }
        return of(read, with.isEmpty() ? read.devices().getFirst() : with.getFirst());
    }

    /**
     * Reads {@code source} once, into memory: its events and, for a PyTorch snapshot pickle, its recorded settings;
     * a trace of no named device.
     *
     * @param name the trace's name in reports
     * @throws io.devalloc.trace.TraceFormatException for a malformed trace
     * @throws IOException                             if it cannot be read
     */
    public static AdvisorTrace read(String name, TraceSource source) throws IOException {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        RecordedAllocatorSettings[] settings = {null};
        CompactTrace compact = CompactTrace.read(name, () -> {
            TraceReader reader = source.open();
            if (reader instanceof PyTorchPickleReader pickle) {
                settings[0] = pickle.recordedSettings();
            }
            return reader;
        });
        return new AdvisorTrace(name, new DeviceTrace(DeviceTrace.NO_DEVICE, compact), settings[0]);
    }

    /** Replays the trace with {@code replayer}'s options: from memory, reading nothing. */
    ReplayOutcome replay(Replayer replayer) {
        return replayer.replay(device.trace());
    }

    /** The trace in memory, as every replay reads it. */
    public CompactTrace compact() {
        return device.trace();
    }

    /** The trace's name in reports (the path given). */
    public String name() {
        return name;
    }

    /** The CUDA device index, or {@link DeviceTrace#NO_DEVICE}. */
    public int cudaDevice() {
        return device.cudaDevice();
    }

    /** Whether the device has a recorded history (else only its end state). */
    public boolean hasHistory() {
        return device.hasHistory();
    }

    /** The format it was read in. */
    public TraceFormat format() {
        return device.trace().format();
    }

    /** The settings a PyTorch snapshot was recorded with, or null when the trace is not one. */
    public RecordedAllocatorSettings recordedSettings() {
        return recorded;
    }

    /** Its events, every kind counted. */
    public long events() {
        return device.trace().events();
    }

    /** Its allocations ({@code alloc} rows, and the blocks live when recording began). */
    public long allocations() {
        return device.trace().allocations();
    }

    /** The size of its first allocation, 0 when it has none. */
    public long firstRequest() {
        return device.trace().firstRequest();
    }

    /** The size of its largest allocation, 0 when it has none. */
    public long largestRequest() {
        return device.trace().largestRequest();
    }
}
