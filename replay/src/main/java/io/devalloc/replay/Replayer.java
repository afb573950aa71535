package io.devalloc.replay;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.spi.DeviceSpec;
import io.devalloc.api.spi.EnvironmentConfig;
import io.devalloc.api.spi.MappedPages;
import io.devalloc.api.spi.PyTorchMemoryHistory;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.api.spi.SizeRounding;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.ReplayOutcome.WarmStartKind;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.sim.SimulatedDeviceProvider;
import io.devalloc.trace.TraceEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Replays a trace through any allocator on any device and measures what the allocator did; for PyTorch traces,
 * compares it with what PyTorch's allocator did. See the package documentation for the rules. One replayer can
 * replay any number of traces; each replay opens its own device and allocator and closes them. Replays of a
 * {@link CompactTrace} may run on several threads at once (see {@link #replay(CompactTrace)}); a replay of a
 * {@link TraceSource} reports to the replayer's progress, one at a time.
 */
public final class Replayer {

    /** The most points a result's {@link ReplayResult.Timeline} has. */
    public static final int MAX_TIMELINE_POINTS = 2000;
    /** The warm start's simulated address space ends here: the recorded addresses (about 2^35) lie below. */
    static final long WARM_TOP_ADDRESS = 1L << 47;
    /** ... and starts at 2 MiB. */
    static final long WARM_ADDRESS_SPACE = WARM_TOP_ADDRESS - 2 * ByteSize.MiB;
    /** Where the warm start's simulated device reserves expandable segments. */
    static final ExpandableLayout.AddressSpace WARM_SPACE = new ExpandableLayout.AddressSpace(
            WARM_TOP_ADDRESS - WARM_ADDRESS_SPACE, WARM_TOP_ADDRESS, SimulatedDevice.VM_GRANULARITY);

    /** The rounding of an allocator that does not round: the size requested. */
    private static final SizeRounding EXACT_SIZE = requested -> {
        if (requested < 0) {
            throw new IllegalArgumentException("a request of " + requested + " B");
        }
        return requested;
    };

    private final ReplayOptions options;
    private final AllocatorRegistry allocators;
    private final DeviceRegistry devices;
    private final ReplayProgress progress;
    /** Told of every successful allocation (the trace's key, our address); for tests of block placement. */
    private AllocationHook allocationHook;
    private ReplayObserver observer = ReplayObserver.NONE;
    private boolean observed;
    /** Told the replaying pass's PyTorch snapshot (its allocator's memory history) at its end, or null. */
    private HistorySink historySink;

    /**
     * Receives what a replay's allocator recorded, as PyTorch's {@code _snapshot()} dict: the segments at the end of
     * the replaying pass and the memory history of its events (from the first event on, not a warm start's
     * restore), to write as a snapshot that PyTorch's memory viewer opens.
     */
    @FunctionalInterface
    public interface HistorySink {
        /** The replaying pass has ended; {@code snapshotDict} is its allocator's. */
        void replayed(Map<String, Object> snapshotDict);
    }

    /** Sees every allocation a replay makes (package-private: the real-trace placement tests use it). */
    interface AllocationHook {
        void allocated(long traceKey, long address);
    }

    /** A replayer with the allocators and devices on the class path, reporting no progress. */
    public Replayer(ReplayOptions options) {
        this(options, AllocatorRegistry.load(), DeviceRegistry.load(), ReplayProgress.NONE);
    }

    /** A replayer with the allocators and devices on the class path, reporting progress to {@code progress}. */
    public Replayer(ReplayOptions options, ReplayProgress progress) {
        this(options, AllocatorRegistry.load(), DeviceRegistry.load(), progress);
    }

    /**
     * A replayer that finds allocators among {@code allocators} and devices among {@code devices} (the providers
     * {@link java.util.ServiceLoader} would find, or others: one reading a given environment, say).
     */
    public Replayer(ReplayOptions options, List<? extends AllocatorProvider> allocators,
                    List<? extends DeviceMemoryProvider> devices, ReplayProgress progress) {
        this(options, AllocatorRegistry.of(allocators), DeviceRegistry.of(devices), progress);
    }

    private Replayer(ReplayOptions options, AllocatorRegistry allocators, DeviceRegistry devices,
                     ReplayProgress progress) {
        this.options = Objects.requireNonNull(options, "options");
        this.allocators = Objects.requireNonNull(allocators, "allocators");
        this.devices = Objects.requireNonNull(devices, "devices");
        this.progress = Objects.requireNonNull(progress, "progress");
    }

    public ReplayOptions options() {
        return options;
    }

    /** Sets the hook every later replay reports its allocations to. */
    Replayer allocationHook(AllocationHook hook) {
        this.allocationHook = hook;
        return this;
    }

    /**
     * Watches every later replay's replaying pass with {@code observer} (see {@link ReplayObserver});
     * {@link ReplayObserver#NONE}, the default, watches nothing and costs nothing.
     */
    public Replayer observer(ReplayObserver observer) {
        this.observer = Objects.requireNonNull(observer, "observer");
        this.observed = !ReplayObserver.NONE.equals(observer);
        return this;
    }

    /**
     * Records every later replay's history with its allocator's {@link PyTorchMemoryHistory} and hands it to
     * {@code sink} at the end of the replaying pass.
     *
     * @throws IllegalArgumentException (from a replay) when the replay's allocator keeps no PyTorch memory history
     */
    public Replayer history(HistorySink sink) {
        this.historySink = Objects.requireNonNull(sink, "sink");
        return this;
    }

    /**
     * A replayer with these options that shares this one's allocators, devices and progress: what a replay under
     * many settings uses, so that the providers are looked up once. The observer is not shared: it watches one
     * replay's allocator.
     */
    public Replayer withOptions(ReplayOptions options) {
        Replayer r = new Replayer(options, allocators, devices, progress);
        r.allocationHook = allocationHook;
        return r;
    }

    /**
     * Runs {@code body} with the request rounding ({@link SizeRounding}) of this replayer's allocator under its
     * configuration, made on a fresh device of its options' device and closed after: what the bounds of a trace
     * ({@link io.devalloc.replay.bounds}) are computed with. An allocator that does not round gives the exact size.
     * Thread-safe as {@link #replay(CompactTrace)} is: each call makes its own allocator.
     *
     * @throws IllegalArgumentException if the allocator, the device or the configuration is unknown or invalid
     */
    public <T> T withSizeRounding(Function<SizeRounding, ? extends T> body) {
        Objects.requireNonNull(body, "body");
        AllocatorProvider provider = allocators.get(options.allocator());
        try (DeviceMemory device = devices.open(options.device());
             DeviceAllocator allocator = provider.create(device, options.conf())) {
            return body.apply(allocator.unwrap(SizeRounding.class).orElse(EXACT_SIZE));
        }
    }

    /**
     * Replays {@code source}: in one pass, or in two with {@link ReplayOptions#warm()} (a first pass for the state
     * to restore, then the replay); with {@link ReplayOptions#peakSnapshot()}, once more up to the peak for its
     * snapshot.
     *
     * @param traceName the trace's name in the result (its file name)
     * @throws io.devalloc.api.error.DevallocException                 for an unknown allocator or device, or a
     *                                                                  refused configuration
     * @throws IllegalArgumentException                                 if a warm start's rows describe no state
     *                                                                  PyTorch could have had
     * @throws io.devalloc.trace.TraceFormatException          for a malformed trace
     * @throws IOException                                              if the trace cannot be read
     */
    public ReplayOutcome replay(String traceName, TraceSource source) throws IOException {
        Objects.requireNonNull(traceName, "traceName");
        Objects.requireNonNull(source, "source");
        return run(traceName, run -> run.execute(source));
    }

    /**
     * Replays a trace read once into memory, with exactly the figures {@link #replay(String, TraceSource)} gives for
     * its source and these options. Reads nothing: the events come from the compact trace's arrays, which any
     * number of replays may read at once. This method may run on several threads at once, on one replayer or on
     * several, provided the replayer's {@link ReplayProgress} is {@link ReplayProgress#NONE} or thread-safe.
     *
     * @throws io.devalloc.api.error.DevallocException for an unknown allocator or device, or a refused configuration
     * @throws IllegalArgumentException                 with {@link ReplayOptions#warm()}, if the trace's warm rows
     *                                                  describe no state PyTorch could have had
     */
    public ReplayOutcome replay(CompactTrace trace) {
        Objects.requireNonNull(trace, "trace");
        try {
            return run(trace.name(), run -> run.execute(trace));
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a compact trace is in memory: nothing is read
        }
    }

    /** What a replay does with its {@link Run} once the allocator and the device are known. */
    @FunctionalInterface
    private interface RunBody {
        ReplayOutcome execute(Run run) throws IOException;
    }

    /**
     * Looks the allocator and the device up (so that an unknown one fails first), runs {@code body} on a new
     * {@link Run}, and closes it and the progress whatever happens, the failure first.
     */
    private ReplayOutcome run(String traceName, RunBody body) throws IOException {
        AllocatorProvider provider = allocators.get(options.allocator());
        DeviceSpec spec = devices.resolve(options.device());
        Run run = new Run(traceName, provider, spec);
        Throwable failure = null;
        try {
            return body.execute(run);
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            progress.finish();
            run.close(failure);
        }
    }

    /** The peak snapshot and what it shows, from the replay up to the peak. */
    private record PeakState(MemorySnapshot snapshot, WasteAtPeak waste, String note) {
    }

    /** The replaying pass: its parts and what it found, read by the hot loop's {@link Run#step}. */
    private static final class Pass {
        final TraceScan scan;
        /** Whether the ground truth is collected as the events go (one pass over a source). */
        final boolean collectGroundTruth;
        /** The sampling of a replay that knows its event count in advance (a warm replay). */
        final boolean twoPasses;
        /** The event count when known, else -1. */
        final long total;
        final EventDispatch dispatch;
        final PeakSampler sampler;
        final WarmStartPlan.Setup warm;
        /** The reader of a one-pass replay, for the progress estimate; null otherwise. */
        ReadAhead reader;
        long events;
        long nanos;
        long seenOoms;
        ReplayResult.OomPoint firstOom;
        boolean stoppedAtOom;
        // What the pass's device and allocator showed at its end, before a replay up to the peak replaces them.
        AllocatorStats end;
        ReplayResult.GroundTruth groundTruth;
        long deviceGrows;
        long deviceShrinks;
        String deviceName;

        Pass(TraceScan scan, boolean collectGroundTruth, boolean twoPasses, long total, EventDispatch dispatch,
             PeakSampler sampler, WarmStartPlan.Setup warm) {
            this.scan = scan;
            this.collectGroundTruth = collectGroundTruth;
            this.twoPasses = twoPasses;
            this.total = total;
            this.dispatch = dispatch;
            this.sampler = sampler;
            this.warm = warm;
        }
    }

    /**
     * One replay: opens the device and the allocator, restores a warm start, drives the events through an
     * {@link EventDispatch} with a {@link PeakSampler} after each, gathers the outcome and the ground truth, and
     * replays again up to the peak for its snapshot.
     */
    private final class Run implements ObservedDevice.Listener {

        private final String trace;
        private final AllocatorProvider provider;
        private final DeviceSpec spec;
        private ObservedDevice device;
        private DeviceAllocator allocator;
        /** Applies the events to the allocator; a new one for each device opened. */
        private EventDispatch dispatch;
        /**
         * The configuration the allocator runs with, as the result reports it: the one given, and what the provider
         * took from environment variables (see {@link AllocatorProvider#configFromEnvironment}).
         */
        private String configDescription;

        // Ground truth: the trace's segment sizes (the scan's), compared with ours as either arrives (PyTorch traces).
        private SegmentComparison segments;
        private boolean compareSegments;
        /** The replay up to the peak for its snapshot: no ground truth, no allocation hook. */
        private boolean snapshotPass;
        /** The warm start, worked out on the replaying pass and executed again on the replay up to the peak. */
        private WarmStartPlan warmPlan;
        /** What the replaying pass's allocator and device tell, passed to the observer once its events start. */
        private final ListenerRelay relay = new ListenerRelay();

        Run(String trace, AllocatorProvider provider, DeviceSpec spec) {
            this.trace = trace;
            this.provider = provider;
            this.spec = spec;
        }

        ReplayOutcome execute(TraceSource source) throws IOException {
            // Device and allocator first, so that a bad spec or configuration fails before the trace is read.
            open(devices.open(options.device()));
            // With --warm the state to restore must be known before the replay: a first pass. Otherwise one pass,
            // which collects the ground truth as it goes.
            Pass pass;
            if (options.warm()) {
                TraceScan scan = TraceScan.of(trace, source);
                try (ReadAhead events = new ReadAhead(source, trace)) {
                    pass = begin(scan, scan.segments, false, true, scan.events);
                    replayBatches(pass, events);
                }
            } else if (options.emptyCacheAtSegmentFree()) {
                // The program's empty_cache() calls are told from the allocator's own flushes by what follows each
                // run and by the trace's peak, so the whole trace is scanned first; sampled as one pass still.
                TraceScan scan = TraceScan.collectingAll(trace, source);
                try (ReadAhead events = new ReadAhead(source, trace)) {
                    pass = begin(scan, scan.segments, false, false, -1);
                    pass.reader = events;
                    replayBatches(pass, events);
                }
            } else {
                try (ReadAhead events = new ReadAhead(source, trace)) {
                    TraceScan scan = TraceScan.streaming(trace, events.format());
                    pass = begin(scan, scan.segments, true, false, -1);
                    pass.reader = events;
                    replayBatches(pass, events);
                }
            }
            finish(pass);
            if (!options.peakSnapshot()) {
                return outcome(pass, null);
            }
            long peakEvent = pass.sampler.peakEvent();
            reopenForSnapshot(pass.scan);
            if (peakEvent > 0) {
                try (ReadAhead events = new ReadAhead(source, trace)) {
                    replayBatchesTo(peakEvent, events);
                }
            }
            return outcome(pass, peakState(pass));
        }

        ReplayOutcome execute(CompactTrace compact) {
            open(devices.open(options.device()));
            if (options.warm()) {
                compact.scan.requireWarmRowsFirst();
            }
            // The timeline is sampled as a replay of the source samples it: a warm one knows its event count in
            // advance (after its first pass), a cold one does not (one pass). The progress knows it either way.
            Pass pass = begin(compact.scan, compact.scan.newSegmentComparison(), false, options.warm(),
                    compact.events());
            replayColumns(pass, compact);
            finish(pass);
            if (!options.peakSnapshot()) {
                return outcome(pass, null);
            }
            reopenForSnapshot(compact.scan);
            replayColumnsTo(pass.sampler.peakEvent(), compact);
            return outcome(pass, peakState(pass));
        }

        /** Restores the warm state, starts counting and sampling: the replaying pass, ready for its first event. */
        private Pass begin(TraceScan scan, SegmentComparison comparison, boolean collectGroundTruth,
                           boolean twoPasses, long total) {
            WarmStartPlan.Setup warm = setUpWarm(scan);
            if (observed) {
                relay.to(AllocatorListener.all(List.of(observer.listener(device.descriptor()))));
                observer.opened(allocator);
            }
            compareSegments = scan.isPyTorch();
            segments = comparison;
            if (historySink != null) {
                history().recordHistory(Integer.MAX_VALUE);
            }
            device.startObserving();
            PeakSampler sampler = new PeakSampler(allocator, device, twoPasses ? total : -1);
            sampler.start();
            dispatch.start(warm.kind() == WarmStartKind.RESTORED, options.emptyCacheAtSegmentFree(), reproduces(),
                    scan.decidedFlushes());
            return new Pass(scan, collectGroundTruth, twoPasses, total, dispatch, sampler, warm);
        }

        /** The replaying pass over a source's events, to the end or the first out-of-memory error when asked. */
        private void replayBatches(Pass p, ReadAhead events) throws IOException {
            long i = 0;
            long start = System.nanoTime();
            batches:
            for (ReadAhead.Batch b = events.next(); b != null; b = events.next()) {
                int n = b.count;
                byte[] kind = b.kind;
                long[] key = b.key;
                long[] size = b.size;
                long[] stream = b.stream;
                for (int k = 0; k < n; k++) {
                    i++;
                    if (!step(p, i, kind[k], key[k], size[k], stream[k])) {
                        break batches;
                    }
                }
                b.throwFailure();
            }
            endPass(p, i, start);
        }

        /** The replaying pass over a compact trace's columns. */
        private void replayColumns(Pass p, CompactTrace t) {
            long i = 0;
            long start = System.nanoTime();
            long[] streamTable = t.streamTable;
            chunks:
            for (int c = 0; c < t.chunks(); c++) {
                byte[] kind = t.kinds[c];
                long[] key = t.keys[c];
                long[] size = t.sizes[c];
                int[] stream = t.streams[c];
                int n = kind.length;
                for (int k = 0; k < n; k++) {
                    i++;
                    if (!step(p, i, kind[k], key[k], size[k], streamTable[stream[k]])) {
                        break chunks;
                    }
                }
            }
            endPass(p, i, start);
        }

        /**
         * Applies event {@code i} and samples after it.
         *
         * @return false when the replay stops here: its first out-of-memory error, when asked to stop there
         */
        private boolean step(Pass p, long i, byte kind, long key, long size, long stream) {
            TraceEvent.Kind k = p.dispatch.apply(kind, key, size, stream);
            if (p.collectGroundTruth) {
                if (k != TraceEvent.Kind.ALLOC && k != TraceEvent.Kind.FREE) {
                    // The ground truth, collected as it goes: the rare rows only (allocs and frees just count).
                    p.scan.accept(new TraceEvent(k, key, size, stream, 0, 0));
                } else {
                    p.scan.recordedEvents++;
                }
            }
            boolean go = true;
            if (p.dispatch.ooms() != p.seenOoms) {
                p.seenOoms = p.dispatch.ooms();
                if (p.firstOom == null) {
                    p.firstOom = new ReplayResult.OomPoint(i, p.dispatch.lastOomRequest(), p.sampler.reservedNow(),
                            p.sampler.allocatedNow());
                    go = !options.stopAtFirstOom();
                }
            }
            p.sampler.afterEvent(i);
            if ((i & (ReplayProgress.INTERVAL - 1)) == 0) {
                progress.update(i, p.total >= 0 ? p.total : p.reader != null ? p.reader.estimatedEvents(i) : -1);
            }
            return go;
        }

        private void endPass(Pass p, long i, long start) {
            p.nanos = Math.max(1, System.nanoTime() - start);
            p.events = i;
            p.stoppedAtOom = p.firstOom != null && options.stopAtFirstOom();
            progress.update(i, i);
            if (p.twoPasses && !p.stoppedAtOom && i != p.total) {
                throw new IllegalStateException(trace + " changed while it was replayed: " + p.total
                        + " events in the first pass, " + i + " in the second");
            }
        }

        /** The end of the replaying pass: its last samples, and what its device and the ground truth say. */
        private void finish(Pass p) {
            if (observed) {
                observer.finished(allocator);
            }
            if (historySink != null) {
                historySink.replayed(history().snapshotDict());
            }
            p.end = p.sampler.finish(p.events);
            p.groundTruth = p.scan.hasGroundTruth() && !p.stoppedAtOom
                    ? groundTruth(p.scan, p.warm.kind(), p.sampler.peakReserved()) : null;
            p.deviceGrows = device.grows();
            p.deviceShrinks = device.shrinks();
            p.deviceName = device.descriptor().toString();
        }

        // ------------------------------------------------------------------------------------------ warm start

        /**
         * Sets the trace's warm state up as the plan says, working the plan out on the first call (the replaying
         * pass) and executing the same plan on the replay up to the peak: reopens a simulated device scripted with
         * the recorded addresses when the plan places segments, then restores.
         */
        private WarmStartPlan.Setup setUpWarm(TraceScan scan) {
            if (warmPlan == null) {
                boolean sim = spec.provider().equals(SimulatedDeviceProvider.NAME);
                warmPlan = WarmStartPlan.of(options, scan, allocator.unwrap(PyTorchStateRestore.class).orElse(null),
                        sim ? WARM_SPACE : null, options.allocator());
            }
            if (warmPlan.scriptedAddresses() != null) {
                reopenScripted(warmPlan.scriptedAddresses());
            }
            PyTorchStateRestore restore = warmPlan.kind() != WarmStartKind.RESTORED ? null
                    : allocator.unwrap(PyTorchStateRestore.class).orElseThrow(() -> new IllegalStateException(
                            "allocator '" + options.allocator() + "' changed kind on a new device"));
            return warmPlan.execute(scan, restore, dispatch::stream, dispatch.live());
        }

        // ------------------------------------------------------------------------------------------ peak snapshot

        /**
         * Closes the replay's device and allocator and opens new ones, restored as the replay was: ready to replay
         * the events again, up to the peak. Everything is deterministic on a simulated device (the same calls give
         * the same addresses), so the state there is the peak's.
         */
        private void reopenForSnapshot(TraceScan scan) {
            close(null);
            snapshotPass = true;
            open(devices.open(options.device()));
            WarmStartPlan.Setup warm = setUpWarm(scan);
            dispatch.start(warm.kind() == WarmStartKind.RESTORED, options.emptyCacheAtSegmentFree(), reproduces(),
                    scan.decidedFlushes());
        }

        /** Applies a source's events 1 to {@code last}. */
        private void replayBatchesTo(long last, ReadAhead events) throws IOException {
            long i = 0;
            EventDispatch d = dispatch;
            for (ReadAhead.Batch b = events.next(); b != null; b = events.next()) {
                int n = (int) Math.min(b.count, last - i);
                for (int k = 0; k < n; k++) {
                    d.apply(b.kind[k], b.key[k], b.size[k], b.stream[k]);
                }
                i += n;
                if (i == last) {
                    return;
                }
                b.throwFailure();
            }
            throw new IllegalStateException(trace + " changed while it was replayed: it ended after " + i
                    + " events, before the peak at event " + last);
        }

        /** Applies a compact trace's events 1 to {@code last}. */
        private void replayColumnsTo(long last, CompactTrace t) {
            long i = 0;
            EventDispatch d = dispatch;
            long[] streamTable = t.streamTable;
            for (int c = 0; c < t.chunks() && i < last; c++) {
                byte[] kind = t.kinds[c];
                long[] key = t.keys[c];
                long[] size = t.sizes[c];
                int[] stream = t.streams[c];
                int n = (int) Math.min(kind.length, last - i);
                for (int k = 0; k < n; k++) {
                    d.apply(kind[k], key[k], size[k], streamTable[stream[k]]);
                }
                i += n;
            }
        }

        /** The snapshot at the peak, once the replay up to it is done, and the waste it shows. */
        private PeakState peakState(Pass p) {
            MemorySnapshot snapshot = allocator.snapshot();
            WasteAtPeak waste = WasteAtPeak.of(snapshot, allocator.unwrap(SizeRounding.class).orElse(null),
                    allocator.unwrap(MappedPages.class).orElse(null));
            PeakSampler s = p.sampler;
            String note = null;
            if (snapshot.stats().reservedBytes() != s.peakReserved()
                    || snapshot.stats().allocatedBytes() != s.allocatedAtPeak()) {
                note = "the peak snapshot comes from a second replay up to the peak (event " + s.peakEvent()
                        + "), where this device placed memory differently: it shows "
                        + snapshot.stats().reservedBytes() + " B reserved and " + snapshot.stats().allocatedBytes()
                        + " B allocated, the peak had " + s.peakReserved() + " B and " + s.allocatedAtPeak() + " B";
            }
            return new PeakState(snapshot, waste, note);
        }

        // ------------------------------------------------------------------------------------------ outcome

        private ReplayOutcome outcome(Pass p, PeakState peakState) {
            AllocatorStats end = p.end;
            PeakSampler sampler = p.sampler;
            EventDispatch dispatch = p.dispatch;
            TraceScan scan = p.scan;
            long i = p.events;
            List<String> notes = new ArrayList<>(p.warm.notes());
            if (!p.twoPasses && scan.startsWarm()) {
                notes.add("the trace starts warm (" + scan.presegments + " presegments, " + scan.preallocs
                        + " prealloc blocks): replayed from an empty allocator, its prealloc rows allocated with"
                        + " malloc; --warm restores the recorded state");
            }
            long peak = Math.max(sampler.peakReserved(), end.peakReservedBytes());

            if (p.stoppedAtOom) {
                notes.add("stopped at the first out-of-memory error, event " + p.firstOom.event() + " (a request of "
                        + p.firstOom.requestBytes() + " B): the figures describe the events up to it"
                        + (scan.hasGroundTruth() ? ", and the trace's ground truth is not compared" : ""));
            }
            CacheFlushes flushes = scan.cacheFlushes();
            if (options.emptyCacheAtSegmentFree() && dispatch.emptyCacheCalls() == 0 && !p.stoppedAtOom) {
                notes.add(flushes == null || flushes.runs() == 0
                        ? "--empty-cache-at-segment-free: the trace has no segment_free or segment_unmap rows"
                        : "--empty-cache-at-segment-free: the trace records no empty_cache() call of the program (its "
                        + flushes.runs() + " run" + (flushes.runs() == 1 ? " of segment frees is" : "s of segment"
                        + " frees are") + " the allocator's own flush" + (flushes.runs() == 1 ? "" : "es") + ")");
            }
            if (flushes != null && flushes.capacity() != null && options.device().equals(ReplayOptions.DEFAULT_DEVICE)
                    && !p.twoPasses) {
                notes.add("the trace tells the capacity it was recorded on: " + ByteSize.format(
                        flushes.capacity().bytes()) + " (" + flushes.capacity().reason() + "); --device sim:"
                        + flushes.capacity().bytes() + "B replays it on a device of that size, where its allocator"
                        + " runs short as the recorded one did");
            }
            if (flushes != null && flushes.allocatorFlushes() > 0) {
                notes.add("the recorded allocator flushed its own cache " + flushes.allocatorFlushes() + " time"
                        + (flushes.allocatorFlushes() == 1 ? "" : "s") + " (a device malloc failed, or its garbage"
                        + " collection ran): " + (reproduces() ? "reproduced, the device refusing that malloc until"
                        + " as many segments were freed (" + dispatch.reproducedFlushes() + ")"
                        : "not replayed as empty_cache(); this replay's allocator flushes where its own device runs"
                        + " short"));
            }
            if (dispatch.traceOoms() > 0) {
                notes.add(traceOomNote(dispatch));
            }
            if (dispatch.unknownFrees() > 0) {
                notes.add(dispatch.unknownFrees() + " frees of keys that were not live were skipped");
            }
            if (dispatch.failedFrees() > 0) {
                notes.add(dispatch.failedFrees() + " frees of allocations that had run out of memory were skipped");
            }
            if (dispatch.reallocations() > 0) {
                notes.add(dispatch.reallocations() + " allocations reused a key that was still live (the trace lost"
                        + " a free): the older allocation was freed");
            }
            if (retryOff) {
                notes.add("bfc ran with retry_timeout_ms:0: a single-threaded replay never frees while an allocation"
                        + " waits, so TensorFlow's 10 s wait for frees could only stall; set retry_timeout_ms to keep"
                        + " it");
            }
            if (peakState != null && peakState.note() != null) {
                notes.add(peakState.note());
            }

            ReplayResult.Peak atPeak = new ReplayResult.Peak(sampler.peakEvent(), sampler.peakReserved(),
                    sampler.allocatedAtPeak(), sampler.requestedAtPeak(), sampler.exact(),
                    peakState == null ? null : peakState.waste());
            ReplayResult result = ReplayResult.builder().trace(trace).allocator(options.allocator())
                    .device(options.device()).conf(configDescription).events(i).allocs(dispatch.allocs())
                    .frees(dispatch.frees()).deviceMallocs(p.deviceGrows).deviceFrees(p.deviceShrinks)
                    .peakReservedBytes(peak).peakAllocatedBytes(end.peakAllocatedBytes())
                    .peakRequestedBytes(end.peakRequestedBytes()).endReservedBytes(end.reservedBytes())
                    .ooms(dispatch.ooms()).allocRetries(end.allocationRetries()).fragmentation(sampler.fragmentation())
                    .requestedFragmentation(sampler.requestedFragmentation()).eventsPerSecond(i * 1e9 / p.nanos)
                    .groundTruth(p.groundTruth).timeline(sampler.timeline())
                    .peakSnapshot(peakState == null ? null : peakState.snapshot()).peak(atPeak).firstOom(p.firstOom)
                    .stoppedAtOom(p.stoppedAtOom).build();
            FlushReplay flushReplay = new FlushReplay(flushes, dispatch.reproducedFlushes(),
                    dispatch.reproducedOoms(), dispatch.oomsNotReproduced(), dispatch.failedRequestsServed());
            return new ReplayOutcome(result, scan.format, p.deviceName, dispatch.unknownFrees(),
                    dispatch.failedFrees(), dispatch.reallocations(), dispatch.streamCount(),
                    dispatch.emptyCacheCalls(), p.warm.kind(), p.warm.restoredSegments(), p.warm.restoredBlocks(),
                    notes, flushReplay);
        }

        /** Whether this replay reproduces the recorded allocator's own flushes and failures (warm, unless told not). */
        private boolean reproduces() {
            return options.warm() && options.reproduceRecorded();
        }

        /** What became of the trace's out-of-memory rows, in words. */
        private String traceOomNote(EventDispatch dispatch) {
            long n = dispatch.traceOoms();
            String rows = "the trace records " + n + " out-of-memory failure" + (n == 1 ? "" : "s")
                    + " of the recorded allocator";
            if (dispatch.oomRequests() == 0) {
                return rows + " (without the request that failed: not replayed); this replay had "
                        + errors(dispatch.ooms());
            }
            if (reproduces()) {
                return rows + ": reproduced, the device refusing to grow for the request that failed ("
                        + dispatch.reproducedOoms() + " failed here too" + (dispatch.oomsNotReproduced() > 0 ? ", "
                        + dispatch.oomsNotReproduced() + " were served from this replay's cache: the replay and the"
                        + " recording part there" : "") + ")";
            }
            return rows + ": each request that failed was asked for again here, " + dispatch.failedRequestsServed()
                    + " served (freed at once: the program never had them); this replay had "
                    + errors(dispatch.ooms()) + " in all";
        }

        private static String errors(long n) {
            return n + " out-of-memory error" + (n == 1 ? "" : "s");
        }

        /** The replay's allocator's PyTorch memory history, which a replay that exports needs. */
        private PyTorchMemoryHistory history() {
            return allocator.unwrap(PyTorchMemoryHistory.class).orElseThrow(() -> new IllegalArgumentException(
                    "allocator '" + options.allocator() + "' keeps no PyTorch memory history, so its replay cannot be"
                            + " written as a PyTorch snapshot; replay through caching (PyTorch's allocator) for that"));
        }

        // ------------------------------------------------------------------------------------------ device

        /** Whether the provider changed the configuration for a replay on one thread (BFC's retry turned off). */
        private boolean retryOff;

        /** The configuration given, as the provider replays it on one thread (its {@code replayConfig}). */
        private String effectiveConf() {
            String conf = provider.replayConfig(options.conf());
            retryOff = !conf.equals(options.conf());
            return conf;
        }

        private void open(DeviceMemory raw) {
            device = new ObservedDevice(raw, this);
            String conf = effectiveConf();
            try {
                DeviceAllocators.Builder builder = DeviceAllocators.builder().device(device).allocator(provider)
                        .config(conf);
                if (observed && !snapshotPass) {
                    // The device calls seen by a wrapper, the rest by the allocator and a decorator (out-of-memory
                    // errors), as the builder does for any listener. All through the relay, which tells the observer
                    // from the first event on (not a warm start's restore).
                    builder.listener(relay);
                }
                allocator = builder.build();
            } catch (RuntimeException | Error e) {
                device.close();
                device = null;
                throw e;
            }
            try {
                configDescription = EnvironmentConfig.describe(options.conf(), provider.configFromEnvironment(conf));
            } catch (RuntimeException | Error e) {
                close(e);
                throw e;
            }
            dispatch = new EventDispatch(allocator, device, snapshotPass ? null : allocationHook);
        }

        /**
         * Replaces the registry's simulated device with one that hands out {@code addresses} first, in order (to
         * mallocs and reservations alike: the presegment addresses in row order, or the bases of the expandable
         * segments to restore), from the address space [2 MiB, 2^47), with the same capacity.
         */
        private void reopenScripted(List<Long> addresses) {
            long capacity = device.descriptor().totalBytes();
            SimulatedDevice scripted;
            try {
                scripted = SimulatedDevice.builder()
                        .capacity(capacity)
                        .topAddress(WARM_TOP_ADDRESS)
                        .addressSpace(WARM_ADDRESS_SPACE)
                        .scriptedAddresses(addresses)
                        .build();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(trace + ": warm start on a simulated device: " + e.getMessage(), e);
            }
            close(null);
            open(scripted);
        }

        void close(Throwable failure) {
            RuntimeException first = null;
            try {
                if (allocator != null) {
                    allocator.close();
                }
            } catch (RuntimeException e) {
                first = e;
            }
            try {
                if (device != null) {
                    device.close();
                }
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
            allocator = null;
            device = null;
            dispatch = null;
            if (first != null) {
                if (failure != null) {
                    failure.addSuppressed(first);
                } else {
                    throw first;
                }
            }
        }

        // ------------------------------------------------------------------------------------------ ground truth

        @Override
        public void grew(long bytes, boolean map) {
            if (compareSegments && !snapshotPass) {
                segments.ours(bytes, map);
            }
        }

        @Override
        public void shrank(long bytes, boolean unmap) {
            // Counted by the device; the comparison uses the counts only.
        }

        private ReplayResult.GroundTruth groundTruth(TraceScan scan, WarmStartKind warm, long peakReserved) {
            long traceMallocs = scan.groundTruthMallocs();
            long traceFrees = scan.groundTruthFrees();
            long tracePeak = scan.groundTruthPeakReserved();
            // First the sequence of segment sizes (or their count), then the frees, then the peak.
            String diff = segments.firstDifference();
            if (diff == null && device.shrinks() != traceFrees) {
                diff = "device frees: " + device.shrinks() + " here, " + traceFrees + " in the trace";
                if (scan.segmentFrees + scan.segmentUnmaps > 0 && !options.emptyCacheAtSegmentFree()) {
                    diff += " (where the program called empty_cache, --empty-cache-at-segment-free does too)";
                }
            } else if (diff == null && peakReserved != tracePeak) {
                diff = "peak reserved: " + peakReserved + " B here, " + tracePeak + " B in the trace";
            }
            if (diff != null && scan.startsWarm() && warm != WarmStartKind.RESTORED) {
                diff += " (the trace starts warm: its " + ByteSize.format(scan.presegmentBytes)
                        + " of presegments were not restored)";
            }
            return new ReplayResult.GroundTruth(traceMallocs, traceFrees, tracePeak, diff == null, diff);
        }
    }
}
