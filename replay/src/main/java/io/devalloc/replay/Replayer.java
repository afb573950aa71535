package io.devalloc.replay;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.internal.AllocatorRegistry;
import io.devalloc.api.internal.DeviceRegistry;
import io.devalloc.api.internal.DeviceSpec;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.spi.EnvironmentConfig;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.api.spi.TraceStateRestore;
import io.devalloc.replay.ReplayOutcome.WarmStartKind;
import io.devalloc.trace.TraceEvent;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.sim.SimulatedDeviceProvider;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Replays a trace through any allocator on any device and measures what the allocator did; for PyTorch traces,
 * compares it with what PyTorch's allocator did. See the package documentation for the rules. One replayer can
 * replay any number of traces, one at a time; each replay opens its own device and allocator and closes them.
 */
public final class Replayer {

    /** The most points a result's {@link ReplayResult.Timeline} has. */
    public static final int MAX_TIMELINE_POINTS = 2000;
    /** Peak snapshots are taken at most once per this many hundredths of the trace's events ({@link PeakSampler}). */
    public static final int SNAPSHOT_STRIDE_PERCENT = 1;
    /**
     * And no sooner after the last one than this many times as long as it took: snapshots cost at most about
     * 1/(1 + this) of the replay's time, whatever the allocator's snapshot costs.
     */
    public static final int SNAPSHOT_TIME_FACTOR = 9;
    /** The warm start's simulated address space ends here: the recorded addresses (about 2^35) lie below. */
    static final long WARM_TOP_ADDRESS = 1L << 47;
    /** ... and starts at 2 MiB. */
    static final long WARM_ADDRESS_SPACE = WARM_TOP_ADDRESS - 2 * ByteSize.MiB;
    /** Where the warm start's simulated device reserves expandable segments. */
    static final ExpandableLayout.AddressSpace WARM_SPACE = new ExpandableLayout.AddressSpace(
            WARM_TOP_ADDRESS - WARM_ADDRESS_SPACE, WARM_TOP_ADDRESS, SimulatedDevice.VM_GRANULARITY);

    private final ReplayOptions options;
    private final AllocatorRegistry allocators;
    private final DeviceRegistry devices;
    private final ReplayProgress progress;
    /** Told of every successful allocation (the trace's key, our address); for tests of block placement. */
    private AllocationHook allocationHook;

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
     * Replays {@code source}: in one pass, or in two with {@link ReplayOptions#warm()} (a first pass for the state
     * to restore, then the replay).
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
        AllocatorProvider provider = allocators.get(options.allocator());
        DeviceSpec spec = devices.resolve(options.device());
        Run run = new Run(traceName, provider, spec);
        Throwable failure = null;
        try {
            return run.execute(source);
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            progress.finish();
            run.close(failure);
        }
    }

    /**
     * One replay: opens the device and the allocator, restores a warm start, drives the events through an
     * {@link EventDispatch} with a {@link PeakSampler} after each, and gathers the outcome and the ground truth.
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
            if (options.warm()) {
                TraceScan scan = TraceScan.of(trace, source);
                try (ReadAhead events = new ReadAhead(source, trace)) {
                    return replay(scan, events, true);
                }
            }
            try (ReadAhead events = new ReadAhead(source, trace)) {
                return replay(TraceScan.streaming(trace, events.format()), events, false);
            }
        }

        private ReplayOutcome replay(TraceScan scan, ReadAhead events, boolean twoPasses) throws IOException {
            List<String> notes = new ArrayList<>();
            WarmStartKind warm = WarmStartKind.NONE;
            long restoredSegments = 0;
            long restoredBlocks = 0;
            if (options.warm() && scan.startsWarm()) {
                java.util.Optional<TraceStateRestore> restorable = allocator.unwrap(TraceStateRestore.class);
                if (restorable.isPresent()) {
                    TraceStateRestore restore = restorable.get();
                    boolean sim = spec.provider().equals(SimulatedDeviceProvider.NAME);
                    // With expandable segments the presegments are the mapped ranges of expandable segments, unless
                    // the trace shows it was recorded without them.
                    ExpandableLayout layout = restore.expandableSegments() && !scan.presegmentRows.isEmpty()
                            ? ExpandableLayout.plan(restore, scan, sim ? WARM_SPACE : null) : null;
                    boolean expandable = layout != null && layout.ordinaryReason() == null;
                    boolean placed = false;
                    if (sim && !scan.presegmentRows.isEmpty()) {
                        reopenScripted(expandable ? layout.scriptedAddresses() : presegmentAddresses(scan));
                        restore = allocator.unwrap(TraceStateRestore.class).orElseThrow(() -> new IllegalStateException(
                                "allocator '" + options.allocator() + "' changed kind on a new device"));
                        placed = true;
                    }
                    List<WarmStart.RestoredBlock> restored = WarmStart.seed(restore, scan,
                            expandable ? layout : null, dispatch::stream, dispatch.live());
                    warm = WarmStartKind.RESTORED;
                    restoredSegments = scan.presegmentRows.size();
                    restoredBlocks = restored.size();
                    String how = expandable ? ", the presegments as the mapped ranges of " + layout.segments().size()
                            + " expandable segments" : "";
                    notes.add("warm start: " + restoredSegments + " presegments and " + restoredBlocks
                            + " prealloc blocks restored" + (placed ? " at their recorded addresses" + how
                            : how + "; this device cannot place segments at the recorded addresses, so blocks keep"
                            + " their offsets within their segments and ties between equal free blocks may go"
                            + " elsewhere"));
                    if (expandable) {
                        notes.addAll(layout.notes());
                    } else if (layout != null) {
                        notes.add("warm start: the presegments were restored as ordinary (cudaMalloc'd) segments, not"
                                + " as mapped ranges of expandable segments: " + layout.ordinaryReason());
                    } else if (restoredSegments > 0 && (scan.segmentMaps > 0 || scan.segmentUnmaps > 0)) {
                        notes.add("warm start: the trace maps and unmaps expandable segments, but this replay runs"
                                + " without them: its presegments were restored as ordinary (cudaMalloc'd) segments");
                    }
                } else {
                    warm = WarmStartKind.MALLOC;
                    restoredBlocks = scan.preallocs;
                    notes.add("warm start: allocator '" + options.allocator() + "' cannot restore the recorded state:"
                            + " the " + scan.preallocs + " prealloc blocks were allocated with malloc and the "
                            + scan.presegments + " presegments were not restored");
                }
            } else if (options.warm()) {
                notes.add("--warm: the trace has no presegment or prealloc rows (it starts from an empty allocator)");
            }
            compareSegments = scan.isPyTorch();
            segments = scan.segments;
            device.startObserving();

            // The event count is known with two passes; in one pass it is estimated for the progress bar.
            long total = twoPasses ? scan.events : -1;
            PeakSampler sampler = new PeakSampler(allocator, device, total);
            sampler.start();
            EventDispatch dispatch = this.dispatch;
            dispatch.start(warm == WarmStartKind.RESTORED, options.emptyCacheAtSegmentFree());
            long i = 0;
            long start = System.nanoTime();
            for (ReadAhead.Batch b = events.next(); b != null; b = events.next()) {
                int n = b.count;
                for (int k = 0; k < n; k++) {
                    i++;
                    TraceEvent.Kind kind = dispatch.apply(b, k);
                    if (!twoPasses && kind != TraceEvent.Kind.ALLOC && kind != TraceEvent.Kind.FREE) {
                        // The ground truth, collected as it goes: the rare rows only (allocs and frees just count).
                        scan.accept(new TraceEvent(kind, b.key[k], b.size[k], b.stream[k], 0, 0));
                    }
                    sampler.afterEvent(i);
                    if ((i & (ReplayProgress.INTERVAL - 1)) == 0) {
                        progress.update(i, total >= 0 ? total : events.estimatedEvents(i));
                    }
                }
                b.throwFailure();
            }
            long nanos = Math.max(1, System.nanoTime() - start);
            progress.update(i, i);
            if (twoPasses && i != total) {
                throw new IllegalStateException(trace + " changed while it was replayed: " + total
                        + " events in the first pass, " + i + " in the second");
            }
            if (!twoPasses && scan.startsWarm()) {
                notes.add("the trace starts warm (" + scan.presegments + " presegments, " + scan.preallocs
                        + " prealloc blocks): replayed from an empty allocator, its prealloc rows allocated with"
                        + " malloc; --warm restores the recorded state");
            }

            AllocatorStats end = sampler.finish(i);
            long peak = Math.max(sampler.peakReserved(), end.peakReservedBytes());
            ReplayResult.GroundTruth groundTruth = scan.hasGroundTruth()
                    ? groundTruth(scan, warm, sampler.peakReserved()) : null;

            if (options.emptyCacheAtSegmentFree() && dispatch.emptyCacheCalls() == 0) {
                notes.add("--empty-cache-at-segment-free: the trace has no segment_free or segment_unmap rows");
            }
            if (dispatch.traceOoms() > 0) {
                notes.add("the trace records " + dispatch.traceOoms() + " out-of-memory failures of the recorded"
                        + " allocator (not replayed); this replay had " + dispatch.ooms());
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
            if (bfcRetryOff) {
                notes.add("bfc ran with retry_timeout_ms:0: a single-threaded replay never frees while an allocation"
                        + " waits, so TensorFlow's 10 s wait for frees could only stall; set retry_timeout_ms to keep"
                        + " it");
            }

            ReplayResult result = new ReplayResult(trace, options.allocator(), options.device(), configDescription, i,
                    dispatch.allocs(), dispatch.frees(), device.grows(), device.shrinks(), peak,
                    end.peakAllocatedBytes(), end.peakRequestedBytes(), end.reservedBytes(), dispatch.ooms(),
                    end.allocationRetries(), sampler.fragmentation(), sampler.requestedFragmentation(), i * 1e9 / nanos,
                    groundTruth, sampler.timeline(), sampler.peakSnapshot());
            return new ReplayOutcome(result, scan.format, device.descriptor().toString(), dispatch.unknownFrees(),
                    dispatch.failedFrees(), dispatch.reallocations(), dispatch.streamCount(),
                    dispatch.emptyCacheCalls(), warm, restoredSegments, restoredBlocks, notes);
        }

        // ------------------------------------------------------------------------------------------ device

        private boolean bfcRetryOff;

        /**
         * The configuration given, except that {@code bfc} gets {@code retry_timeout_ms:0} unless the user set its
         * retry: in a single-threaded replay no other thread frees while an allocation waits.
         */
        private String effectiveConf() {
            String conf = options.conf();
            if (options.allocator().equals("bfc") && !conf.contains("retry_timeout_ms")
                    && !conf.contains("allow_retry_on_failure")) {
                bfcRetryOff = true;
                return conf.isBlank() ? "retry_timeout_ms:0" : conf + ",retry_timeout_ms:0";
            }
            return conf;
        }

        private void open(DeviceMemory raw) {
            device = new ObservedDevice(raw, this);
            String conf = effectiveConf();
            try {
                allocator = provider.create(device, conf);
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
            dispatch = new EventDispatch(allocator, device, allocationHook);
        }

        private static List<Long> presegmentAddresses(TraceScan scan) {
            List<Long> addresses = new ArrayList<>();
            for (TraceScan.Pre s : scan.presegmentRows) {
                addresses.add(s.address());
            }
            return addresses;
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
            if (compareSegments) {
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
