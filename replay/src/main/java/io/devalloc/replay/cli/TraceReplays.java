package io.devalloc.replay.cli;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.UntrustedText;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.DevallocException;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.spi.EnvironmentConfig;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.DeviceTrace;
import io.devalloc.replay.GroundTruthComparability;
import io.devalloc.replay.ProgressBar;
import io.devalloc.replay.ReplayObserver;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceFile;
import io.devalloc.replay.TraceSource;
import io.devalloc.replay.TraceSources;
import io.devalloc.replay.report.HtmlReport;
import io.devalloc.replay.report.Percent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.detect.TraceFormats;
import io.devalloc.trace.pytorch.RecordedAllocatorSettings;
import java.io.EOFException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * What {@code devalloc replay} and {@code devalloc compare} share: turning a trace path into a source, running a
 * replay with a progress bar on a terminal, turning bad input into usage errors, writing the HTML report, and
 * formatting figures.
 */
public final class TraceReplays {

    /**
     * How a trace path becomes a source: {@link TraceSources#of(Path)}. A test hook: tests in this package replace
     * it with list-backed sources (and put it back).
     */
    public static volatile Function<Path, TraceSource> sources = TraceSources::of;

    /** What the outputs say for a ground truth that cannot judge the run ({@link GroundTruthComparability}). */
    static final String NOT_COMPARABLE = "not comparable";

    private TraceReplays() {
    }

    /**
     * Replays the trace at {@code path} with {@code options}; a progress bar goes to {@code err} on a terminal.
     *
     * @throws IllegalArgumentException for a missing, unreadable or malformed trace (a usage error, exit 2)
     */
    static ReplayOutcome replay(Path path, ReplayOptions options, PrintWriter err, String progressLabel) {
        return replay(path, options, err, progressLabel, ReplayObserver.NONE);
    }

    /** {@link #replay(Path, ReplayOptions, PrintWriter, String)}, its replaying pass watched by {@code observer}. */
    static ReplayOutcome replay(Path path, ReplayOptions options, PrintWriter err, String progressLabel,
                                ReplayObserver observer) {
        String name = path.toString();
        TraceSource source = sources.apply(path);
        Replayer replayer = new Replayer(options, ProgressBar.forTerminal(err, progressLabel)).observer(observer);
        try {
            if (isPickle(path)) {
                // A pickle is loaded whole whatever happens (PyTorchPickleReader), and a replay opens its source
                // once per pass (twice: the replay and the pass to the peak, three times with --warm): read it once
                // into columns, a few percent of the loaded pickle, and replay those, with the same figures.
                return explained(replayer.replay(CompactTrace.read(name, source)));
            }
            return explained(replayer.replay(name, source));
        } catch (IOException e) {
            throw unreadable(name, e);
        } catch (OutOfMemoryError | StackOverflowError e) {
            throw tooBig(name, e);
        }
    }

    /**
     * One device's replay of a trace file.
     *
     * @param cudaDevice the CUDA device ({@link DeviceTrace#NO_DEVICE} for a format that names none)
     * @param history    whether the device has a recorded history; a device with only its end state is restored
     *                   (as {@code --warm}) and its figures are that state's
     * @param outcome    the replay
     * @param traceOoms  the trace's {@code oom} entries on the device (where the recording ran out of memory)
     */
    record DeviceReplay(int cudaDevice, boolean history, ReplayOutcome outcome, long traceOoms) {

        /** {@code cuda:1}, or the empty string. */
        String label() {
            return cudaDevice == DeviceTrace.NO_DEVICE ? "" : "cuda:" + cudaDevice;
        }
    }

    /**
     * The devices of one trace file replayed: each device's replay, in index order, and the devices the snapshot
     * lists without any trace entry or segment (GPUs the process could see and never used).
     */
    record DeviceReplays(List<DeviceReplay> devices, List<Integer> unusedDevices) {

        DeviceReplays {
            devices = List.copyOf(devices);
            unusedDevices = List.copyOf(unusedDevices);
        }

        /** Whether the file names more than one device (used or not): reports then lead with a summary. */
        boolean several() {
            return devices.size() + unusedDevices.size() > 1;
        }
    }

    /**
     * The configuration a replay uses, and what the report says of where it comes from.
     *
     * @param conf               the configuration text
     * @param withoutEnvironment whether the allocator runs without the environment (a {@code PYTORCH_CUDA_ALLOC_CONF}
     *                           in the shell does not change it): the snapshot's own settings, or PyTorch's defaults
     *                           for a snapshot that records none
     * @param note               the report's note on it, or null when there is nothing to say (no snapshot)
     */
    record Config(String conf, boolean withoutEnvironment, String note) {
    }

    /**
     * The configuration of a replay of {@code file}: the one given ({@code --config}, or the launcher's
     * {@code DEVALLOC_CONFIG} default, {@code givenFrom} naming it), else, for PyTorch's allocator replaying a
     * snapshot, the settings the snapshot recorded ({@code allocator_settings}), or PyTorch's defaults when it recorded
     * none (the shell's {@code PYTORCH_CUDA_ALLOC_CONF} says nothing of the recording); else none (and PyTorch's
     * allocator reads the shell's variables, as for any other trace).
     *
     * @param given     the configuration given, or null
     * @param givenFrom where a given configuration comes from when not the command line (e.g.
     *                  {@code DEVALLOC_CONFIG=...}), or null
     */
    static Config config(String given, String givenFrom, String allocator, TraceFile file) {
        RecordedAllocatorSettings settings = file == null ? null : file.settings();
        // A TraceFile here is a snapshot pickle's (the other formats are replayed from their file).
        boolean snapshot = file != null && allocator.equals(ReplayOptions.DEFAULT_ALLOCATOR);
        boolean recorded = snapshot && settings != null && !settings.values().isEmpty();
        String instead = recorded ? ", not the snapshot's recorded allocator_settings ('" + settings.config() + "')"
                : "";
        if (given != null) {
            if (givenFrom != null) {
                return new Config(given, false, "configuration: '" + given + "', from " + givenFrom + instead);
            }
            // Given on the command line as the snapshot recorded it: nothing to say.
            return new Config(given, false, recorded && !settings.config().equals(given.strip())
                    ? "configuration: '" + given + "', given with --config" + instead : null);
        }
        if (!snapshot) {
            return new Config("", false, null);
        }
        if (!recorded) {
            return new Config("", true, "configuration: PyTorch's defaults: the snapshot records no"
                    + " allocator_settings (PyTorch before 2.1 wrote none)" + environmentUnused(allocator)
                    + "; --config replays another setting");
        }
        String refusal = refusal(allocator, settings.config());
        if (refusal != null) {
            return new Config("", true, "configuration: the defaults: the snapshot's allocator_settings ('"
                    + settings.config() + "') are refused here: " + refusal);
        }
        return new Config(settings.config(), true, "configuration: the snapshot's recorded allocator_settings ('"
                + settings.config() + "')" + environmentUnused(allocator) + "; --config replays another setting");
    }

    /** {@code ; PYTORCH_CUDA_ALLOC_CONF=... in this environment is not used}, or nothing when none is set. */
    private static String environmentUnused(String allocator) {
        List<EnvironmentConfig> set;
        try {
            set = AllocatorRegistry.load().get(allocator).configFromEnvironment("");
        } catch (DevallocException | IllegalArgumentException e) {
            // The message may quote the variable's text, which can be megabytes: quoted bounded.
            return "; the environment's configuration is not used ("
                    + UntrustedText.excerpt(String.valueOf(e.getMessage())) + ")";
        }
        StringBuilder out = new StringBuilder();
        for (EnvironmentConfig e : set) {
            out.append("; ").append(e.variable()).append('=').append(UntrustedText.excerpt(e.config()))
                    .append(" in this environment is not used");
        }
        return out.toString();
    }

    /** The allocator's message when it refuses {@code conf}, or null. */
    private static String refusal(String allocator, String conf) {
        try (DeviceMemory device = DeviceRegistry.load().open("sim:1GiB");
             DeviceAllocator a = AllocatorRegistry.load().get(allocator).withoutEnvironment().create(device, conf)) {
            return a == null ? "no allocator" : null;
        } catch (DevallocException | IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /**
     * Replays {@code path} device by device: a PyTorch snapshot pickle, read once into memory, one replay per device
     * it holds (or only {@code cudaDevice}), each device with a history replayed with {@code options}, a device with
     * only its end state restored instead (as {@code --warm}: there is no run to replay); any other format, one
     * replay as {@link #replay(Path, ReplayOptions, PrintWriter, String, ReplayObserver)} does. With
     * {@code options.conf()} null, a snapshot's recorded settings are used ({@link #config}).
     *
     * @param cudaDevice a CUDA device index, or {@link TraceFile#ALL_DEVICES}
     * @param history    told each replay's PyTorch snapshot, or null
     * @param oneDevice  whether only one device may be replayed (an observer watches one replay)
     * @throws IllegalArgumentException for a missing, unreadable or malformed trace, or a device it does not hold,
     *                                  or several devices where {@code oneDevice}
     */
    static DeviceReplays replayDevices(Path path, int cudaDevice, String allocator, String device, String given,
                                       String givenFrom, boolean warm, boolean emptyCache, PrintWriter err,
                                       ReplayObserver observer, Replayer.HistorySink history,
                                       List<String> configNotes, boolean oneDevice) {
        if (!isPickle(path)) {
            if (cudaDevice != TraceFile.ALL_DEVICES) {
                readFile(path, cudaDevice); // refuses the device, naming the format
            }
            Config config = config(given, givenFrom, allocator, null);
            if (config.note() != null) {
                configNotes.add(config.note());
            }
            ReplayOptions options = new ReplayOptions(allocator, device, config.conf(), warm, emptyCache);
            ReplayOutcome outcome = history != null
                    ? replay(path, options, err, path.toString(), observer, history)
                    : replay(path, options, err, path.toString(), observer);
            return new DeviceReplays(List.of(new DeviceReplay(DeviceTrace.NO_DEVICE, true, outcome, 0)), List.of());
        }
        TraceFile file = readFile(path, cudaDevice);
        if (oneDevice && file.devices().size() > 1) {
            throw new IllegalArgumentException("--metrics and --jfr watch one replay, and " + path + " holds "
                    + file.devices().size() + " devices: choose one with --cuda-device N");
        }
        Config config = config(given, givenFrom, allocator, file);
        if (config.note() != null) {
            configNotes.add(config.note());
        }
        List<DeviceReplay> replays = new ArrayList<>();
        for (DeviceTrace d : file.devices()) {
            boolean restoreOnly = !d.hasHistory();
            ReplayOptions options = new ReplayOptions(allocator, device, config.conf(), warm || restoreOnly,
                    emptyCache);
            Replayer replayer = replayer(options, config.withoutEnvironment(), err, path + (d.label().isEmpty() ? ""
                    : " " + d.label())).observer(observer);
            if (history != null) {
                replayer.history(history);
            }
            ReplayOutcome outcome = explained(replayer.replay(d.trace()));
            if (restoreOnly) {
                outcome = withNotes(outcome, List.of("end state only: the trace records no event on "
                        + (d.label().isEmpty() ? "this device" : d.label()) + " after its start state, so there is"
                        + " no run to replay; these figures are that state (its segments and live blocks),"
                        + " restored as --warm restores it"));
            }
            replays.add(new DeviceReplay(d.cudaDevice(), d.hasHistory(), outcome, d.trace().oomEntries()));
        }
        return new DeviceReplays(replays, file.unusedDevices());
    }

    /** Replays one device of a trace file read into memory, with a progress bar on a terminal. */
    static ReplayOutcome replay(DeviceTrace device, ReplayOptions options, PrintWriter err, String progressLabel) {
        return explained(new Replayer(options, ProgressBar.forTerminal(err, progressLabel)).replay(device.trace()));
    }

    /** A replayer for {@code options}: without the environment for a snapshot's recorded settings. */
    private static Replayer replayer(ReplayOptions options, boolean withoutEnvironment, PrintWriter err,
                                     String progressLabel) {
        ReplayProgress progress = ProgressBar.forTerminal(err, progressLabel);
        if (!withoutEnvironment) {
            return new Replayer(options, progress);
        }
        List<AllocatorProvider> plain = new ArrayList<>();
        for (AllocatorProvider p : AllocatorRegistry.load().providers()) {
            plain.add(p.withoutEnvironment());
        }
        List<DeviceMemoryProvider> devices = new ArrayList<>();
        DeviceRegistry registry = DeviceRegistry.load();
        for (String name : registry.names()) {
            devices.add(registry.provider(name));
        }
        return new Replayer(options, plain, devices, progress);
    }

    /**
     * {@code path} read device by device ({@link TraceFile#read}), as the commands read it ({@code advise} too).
     *
     * @param cudaDevice the one device to read, or a negative number for every device
     * @throws IllegalArgumentException for a missing, unreadable or malformed trace, or a device it does not hold,
     *                                  with the message a command prints
     */
    public static TraceFile readFile(Path path, int cudaDevice) {
        try {
            return TraceFile.read(path, cudaDevice);
        } catch (IOException e) {
            throw unreadable(path.toString(), e);
        } catch (OutOfMemoryError | StackOverflowError e) {
            throw tooBig(path.toString(), e);
        }
    }

    /** {@link #replay(Path, ReplayOptions, PrintWriter, String, ReplayObserver)}, its history told {@code sink}. */
    static ReplayOutcome replay(Path path, ReplayOptions options, PrintWriter err, String progressLabel,
                                ReplayObserver observer, Replayer.HistorySink sink) {
        String name = path.toString();
        TraceSource source = sources.apply(path);
        Replayer replayer = new Replayer(options, ProgressBar.forTerminal(err, progressLabel)).observer(observer)
                .history(sink);
        try {
            return explained(replayer.replay(name, source));
        } catch (IOException e) {
            throw unreadable(name, e);
        } catch (OutOfMemoryError | StackOverflowError e) {
            throw tooBig(name, e);
        }
    }

    /**
     * The error a command prints for a trace it could not read: the format's own message (file and line) for a
     * malformed one, else what went wrong with the file.
     */
    private static IllegalArgumentException unreadable(String name, IOException e) {
        return switch (e) {
            case TraceFormatException f -> new IllegalArgumentException(f.getMessage(), f);
            case NoSuchFileException f -> new IllegalArgumentException("no such trace file: " + f.getFile(), f);
            case AccessDeniedException f ->
                    new IllegalArgumentException("trace file is not readable: " + f.getFile(), f);
            default -> new IllegalArgumentException("cannot read trace " + name + ": " + ioProblem(e), e);
        };
    }

    /**
     * What went wrong, in words: an I/O error's message, bounded (it may quote the file), or for one without a
     * message, what its kind means, never the exception's class name.
     */
    static String ioProblem(IOException e) {
        String m = e.getMessage();
        if (m != null && !m.isBlank()) {
            return UntrustedText.excerpt(m.strip());
        }
        return e instanceof EOFException ? "the file ends in the middle of its content (cut short?)"
                : "the system reported an input error without saying which";
    }

    /**
     * The error a command prints when reading or replaying {@code name} ran the JVM out of heap or of stack: one
     * line that names the file and what to do, not the JVM's stack trace (the launcher's {@code --verbose} shows it).
     * Catching the error is safe here: what the read held is unreachable once it has unwound, and the command ends.
     */
    public static IllegalArgumentException tooBig(String name, VirtualMachineError e) {
        if (e instanceof StackOverflowError) {
            return new IllegalArgumentException(name + ": nested too deep to read with this Java thread's stack:"
                    + " no real trace nests so deep; if this one must be read, give Java a larger stack with"
                    + " JDK_JAVA_OPTIONS=-Xss64m", e);
        }
        return new IllegalArgumentException(name + ": this file needs more memory than the Java heap allows (-Xmx, "
                + ByteSize.format(Runtime.getRuntime().maxMemory()) + " now): give Java more with"
                + " JDK_JAVA_OPTIONS=-Xmx16g (or as much as this machine has)", e);
    }

    /**
     * Whether {@code path} is a file in PyTorch's pickle format; false for anything that cannot tell (a missing
     * file, an unknown format: the replay then reports it as usual).
     */
    static boolean isPickle(Path path) {
        if (!Files.isRegularFile(path)) {
            return false;
        }
        try {
            return TraceFormats.detect(path) == TraceFormat.PYTORCH_PICKLE;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The outcome with the notes its figures need to be read right, after the replay's own: why the ground truth of
     * a PyTorch trace is not comparable with an allocator other than {@code caching}
     * ({@link GroundTruthComparability}), and what a {@code bfc} run without growth reserved ({@link #noGrowthNote}).
     */
    static ReplayOutcome explained(ReplayOutcome outcome) {
        ReplayResult r = outcome.result();
        List<String> extra = new ArrayList<>(2);
        if (r.groundTruth() != null && !GroundTruthComparability.comparable(r.allocator())) {
            extra.add(GroundTruthComparability.whyNot(r.allocator()));
        }
        String noGrowth = noGrowthNote(r);
        if (noGrowth != null) {
            extra.add(noGrowth);
        }
        return withNotes(outcome, extra);
    }

    /** The outcome with {@code extra} after its notes. */
    static ReplayOutcome withNotes(ReplayOutcome o, List<String> extra) {
        if (extra.isEmpty()) {
            return o;
        }
        List<String> notes = new ArrayList<>(o.notes());
        notes.addAll(extra);
        return o.withNotes(notes);
    }

    /**
     * Whether the allocator ran without growth, from the settings in effect that its snapshot reports (for
     * {@code bfc}, the only one with the setting: the configuration given, {@code TF_FORCE_GPU_ALLOW_GROWTH}
     * applied): {@code allow_growth} false.
     */
    static boolean bfcWithoutGrowth(ReplayResult r) {
        MemorySnapshot s = r.peakSnapshot();
        return s != null && Boolean.FALSE.equals(s.settings().get("allow_growth"));
    }

    /**
     * For {@code bfc} without growth (TensorFlow's GPU default) that reserved anything: a note that its reserved
     * bytes are its whole memory limit, taken at the first allocation, and what that does to its fragmentation
     * figure; else null.
     */
    static String noGrowthNote(ReplayResult r) {
        if (!bfcWithoutGrowth(r) || r.peakReservedBytes() == 0) {
            return null;
        }
        MemorySnapshot s = r.peakSnapshot();
        long limit = s.settings().get("memory_limit_bytes") instanceof Long l ? l : r.peakReservedBytes();
        String whole = limit == s.device().totalBytes() ? ", the whole device" : "";
        return "bfc ran with allow_growth:false, TensorFlow's GPU default: it reserved its whole memory limit ("
                + bytes(limit) + whole + ") in one region at its first allocation, so its peak and end reserved are"
                + " that reservation and its fragmentation at the peak (" + percent(r.fragmentation()) + ") is the"
                + " part of it this workload never used; with allow_growth:true it grows regions as the workload"
                + " needs them";
    }

    /**
     * Writes the HTML report of {@code outcomes} to {@code file}, which was checked before the run
     * ({@link OutputFiles#checkWritable}).
     *
     * @throws UncheckedIOException when the file cannot be written (the caller reports it and keeps the rest)
     */
    static void writeReport(Path file, String title, List<ReplayOutcome> outcomes) {
        List<ReplayResult> results = new ArrayList<>(outcomes.size());
        List<List<String>> notes = new ArrayList<>(outcomes.size());
        for (ReplayOutcome o : outcomes) {
            results.add(o.result());
            notes.add(o.notes());
        }
        HtmlReport.write(file, title, results, notes);
    }

    /** {@code PyTorch CSV} for {@link TraceFormat#PYTORCH_CSV}; the valgrind format is a {@code malloc trace}. */
    static String formatName(TraceFormat format) {
        String kind = TraceSources.formatKind(format);
        return format == TraceFormat.VALGRIND ? kind + " trace" : kind;
    }


    /** {@code 1.77 GiB}. */
    static String bytes(long bytes) {
        return ByteSize.format(bytes);
    }

    /** {@code 1.77 GiB (1,897,922,560 B)}. */
    static String bytesExact(long bytes) {
        return bytes < ByteSize.KiB ? bytes + " B" : ByteSize.format(bytes) + " (" + count(bytes) + " B)";
    }

    /** {@code 1,234,567}. */
    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** A fraction as every report prints it ({@link Percent}). */
    static String percent(double fraction) {
        return Percent.of(fraction);
    }

    /**
     * {@code MATCH}, {@code differs}, {@code not comparable} for an allocator other than the one that recorded the
     * trace ({@link GroundTruthComparability}), or {@code -} when the trace has no ground truth.
     */
    static String groundTruthWord(ReplayResult r) {
        ReplayResult.GroundTruth g = r.groundTruth();
        return g == null ? "-" : !GroundTruthComparability.comparable(r.allocator()) ? NOT_COMPARABLE
                : g.match() ? "MATCH" : "differs";
    }
}
