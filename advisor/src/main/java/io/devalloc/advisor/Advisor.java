package io.devalloc.advisor;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.DevallocException;
import io.devalloc.api.internal.AllocatorRegistry;
import io.devalloc.api.internal.DeviceRegistry;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.spi.EnvironmentConfig;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.Replayer;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.pytorch.RecordedAllocatorSettings;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The advisor's engine: the trust line, the sweep over the grid with a capacity search per setting, the ranking and
 * the recommendation (see the package documentation for the rules). Stateless between calls; one advisor may
 * advise on any number of traces, one call at a time or several at once.
 */
public final class Advisor {

    /** The capacity search's step, and the width within which two byte figures are tied: 2 MiB. */
    public static final long GRANULARITY = 2 * ByteSize.MiB;
    /** The device of the trust replay and of each setting's figures: the replay's default, a simulated 80 GiB GPU. */
    public static final String UNLIMITED_DEVICE = ReplayOptions.DEFAULT_DEVICE;
    /** Its capacity. */
    public static final long UNLIMITED_CAPACITY = 80 * ByteSize.GiB;
    /** The device the grid's settings are checked on (creating the allocator, no replay). */
    static final String CHECK_DEVICE = "sim:1GiB";
    /** Replays a setting's capacity search is estimated at before its range is known (for the progress bar). */
    private static final int SEARCH_ESTIMATE = 12;

    private final AllocatorRegistry allocators;
    /** The providers as given, reading the environment: only asked what they would take from it, to say so. */
    private final AllocatorRegistry asFound;
    private final DeviceRegistry devices;
    /** Every replay's replayer is this one {@linkplain Replayer#withOptions with its options}: one provider look-up. */
    private final Replayer replayer;

    /** An advisor over the allocators and devices on the module or class path. */
    public Advisor() {
        this(AllocatorRegistry.load().providers(), deviceProviders(DeviceRegistry.load()));
    }

    /**
     * An advisor over these allocators and devices. Each allocator provider is used
     * {@linkplain AllocatorProvider#withoutEnvironment() without the environment}: every setting runs exactly as
     * written, whatever {@code PYTORCH_CUDA_ALLOC_CONF} says in the shell that started the advisor.
     */
    public Advisor(List<? extends AllocatorProvider> allocators, List<? extends DeviceMemoryProvider> devices) {
        List<AllocatorProvider> plain = new ArrayList<>();
        for (AllocatorProvider p : allocators) {
            plain.add(p.withoutEnvironment());
        }
        List<AllocatorProvider> allocatorList = List.copyOf(plain);
        List<DeviceMemoryProvider> deviceList = List.copyOf(devices);
        this.allocators = AllocatorRegistry.of(allocatorList);
        this.asFound = AllocatorRegistry.of(List.copyOf(allocators));
        this.devices = DeviceRegistry.of(deviceList);
        this.replayer = new Replayer(ReplayOptions.defaults(), allocatorList, deviceList, ReplayProgress.NONE);
    }

    private static List<DeviceMemoryProvider> deviceProviders(DeviceRegistry registry) {
        List<DeviceMemoryProvider> list = new ArrayList<>();
        for (String name : registry.names()) {
            list.add(registry.provider(name));
        }
        return list;
    }

    /**
     * What to advise on.
     *
     * @param allocator     the allocator's name
     * @param grid          {@value Grids#DEFAULT}, the allocator's name, or a grid file's path; null for the default
     * @param capacityBytes the user's device capacity, or -1 for none
     * @param objective     what the recommendation minimises
     * @param threads       replays at once, at least 1
     */
    public record Options(String allocator, String grid, long capacityBytes, Objective objective, int threads) {

        public Options {
            Objects.requireNonNull(allocator, "allocator");
            Objects.requireNonNull(objective, "objective");
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be at least 1, got " + threads);
            }
            if (capacityBytes != -1 && capacityBytes < ByteSize.MiB) {
                throw new IllegalArgumentException("capacity must be at least 1 MiB (the smallest simulated device),"
                        + " got " + capacityBytes + " B");
            }
        }
    }

    /**
     * The grid {@code options} names for {@code trace}, each setting checked; for reports before the sweep.
     *
     * @throws IllegalArgumentException for an unknown grid or an unreadable grid file
     * @throws DevallocException        for an unknown allocator
     */
    public Grid grid(AdvisorTrace trace, Options options) {
        AllocatorProvider provider = allocators.get(options.allocator());
        return Grids.resolve(options.grid(), provider, trace.largestRequest(), config -> refusal(provider, config));
    }

    /**
     * Advises on {@code trace}.
     *
     * @param progress told of the replays done and expected, from several threads one at a time
     * @throws IllegalArgumentException for bad input: an unknown grid, a capacity below the trace's first request,
     *                                  a trace without allocations
     * @throws DevallocException        for an unknown allocator
     */
    public Advice advise(AdvisorTrace trace, Options options, ReplayProgress progress) {
        Objects.requireNonNull(trace, "trace");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(progress, "progress");
        AllocatorProvider provider = allocators.get(options.allocator());
        if (trace.allocations() == 0) {
            throw new IllegalArgumentException(trace.name() + " has no allocations: there is nothing to advise on");
        }
        if (options.capacityBytes() != -1 && options.capacityBytes() < trace.firstRequest()) {
            throw new IllegalArgumentException("capacity " + ByteSize.format(options.capacityBytes()) + " is smaller"
                    + " than the trace's first request (" + ByteSize.format(trace.firstRequest()) + "): no setting"
                    + " can run it; give a capacity of at least " + ByteSize.format(trace.firstRequest()));
        }
        Grid grid = grid(trace, options);
        Baseline baseline = withEnvironmentNotes(baseline(trace, provider), options.allocator());

        // The settings: the baseline's first when the grid lacks it, so that savings compare like with like.
        List<GridEntry> entries = new ArrayList<>();
        boolean inGrid = false;
        for (GridEntry e : grid.entries()) {
            inGrid |= e.config().equals(baseline.config());
        }
        if (!inGrid) {
            entries.add(new GridEntry(baseline.config(), "recorded"));
        }
        entries.addAll(grid.entries());

        boolean withCapacity = options.capacityBytes() != -1;
        RunProgress runs = new RunProgress(progress,
                1 + (long) entries.size() * (1 + SEARCH_ESTIMATE + (withCapacity ? 1 : 0)));
        List<SettingResult> results = new ArrayList<>();
        TrustLine trust;
        try (ExecutorService pool = Executors.newFixedThreadPool(options.threads(), new Workers())) {
            Future<TrustLine> trustRun = pool.submit(() -> trust(trace, options.allocator(), baseline, runs));
            List<Future<SettingResult>> sweep = new ArrayList<>();
            for (GridEntry e : entries) {
                boolean recorded = e.config().equals(baseline.config());
                sweep.add(pool.submit((Callable<SettingResult>) () ->
                        evaluate(trace, options, e, recorded, runs)));
            }
            trust = get(trustRun);
            for (Future<SettingResult> f : sweep) {
                results.add(get(f));
            }
        } finally {
            runs.finish();
        }

        List<SettingResult> ranked = rank(results, options.objective());
        Recommendation recommendation =
                recommend(options.allocator(), ranked, options.objective(), trust.baselineName());
        List<String> notes = new ArrayList<>(whatIfNotes(trace));
        String above = aboveReserved(ranked);
        if (above != null) {
            notes.add(above);
        }
        return new Advice(trace.name(), options.allocator(), options.objective(), options.capacityBytes(), grid,
                trust, ranked, recommendation, notes, runs.done(), options.threads());
    }

    // ------------------------------------------------------------------------------------------ baseline and trust

    /** The baseline's configuration and where it came from. */
    private record Baseline(String config, String source, List<String> notes) {

        Baseline withNote(String note) {
            List<String> more = new ArrayList<>(notes);
            more.add(note);
            return new Baseline(config, source, List.copyOf(more));
        }
    }

    private Baseline baseline(AdvisorTrace trace, AllocatorProvider provider) {
        String allocator = provider.name();
        RecordedAllocatorSettings recorded = trace.recordedSettings();
        if (!allocator.equals("caching")) {
            return new Baseline("", "the defaults: the trace does not record " + allocator + "'s settings",
                    List.of());
        }
        if (recorded == null) {
            return new Baseline("", "the defaults: a " + formatName(trace.format()) + " trace does not record the"
                    + " allocator's settings", List.of());
        }
        if (recorded.values().isEmpty()) {
            return new Baseline("", "the defaults: the snapshot has no allocator_settings", recorded.notes());
        }
        String refusal = refusal(provider, recorded.config());
        if (refusal != null) {
            List<String> notes = new ArrayList<>(recorded.notes());
            notes.add("the recorded settings '" + recorded.config() + "' are refused here: " + refusal);
            return new Baseline("", "the defaults: the snapshot's allocator_settings cannot be replayed", notes);
        }
        return new Baseline(recorded.config(), TrustLine.FROM_SNAPSHOT, recorded.notes());
    }

    /**
     * The baseline with a note for each environment variable the allocator would have read (e.g.
     * {@code PYTORCH_CUDA_ALLOC_CONF}), which the advisor does not use: named, so that no one takes the figures for
     * that setting's.
     */
    private Baseline withEnvironmentNotes(Baseline baseline, String allocator) {
        List<EnvironmentConfig> fromEnvironment;
        try {
            fromEnvironment = asFound.get(allocator).configFromEnvironment("");
        } catch (DevallocException | IllegalArgumentException e) {
            // A variable the allocator refuses is still one advise does not use; the allocator's message says which.
            return baseline.withNote("the environment sets a configuration that " + allocator + " refuses ("
                    + e.getMessage() + "); advise does not use it");
        }
        Baseline b = baseline;
        for (EnvironmentConfig e : fromEnvironment) {
            b = b.withNote(e.variable() + "=" + e.config() + " is set in this environment; advise does not use it:"
                    + " the baseline and every setting run exactly as named here (to try it, put '" + e.config()
                    + "' in a --grid file; 'devalloc replay' without --config would use it)");
        }
        return b;
    }

    private TrustLine trust(AdvisorTrace trace, String allocator, Baseline baseline, RunProgress runs) {
        boolean pytorch = trace.format() == TraceFormat.PYTORCH_PICKLE || trace.format() == TraceFormat.PYTORCH_CSV;
        if (!pytorch) {
            runs.expect(-1);
            return new TrustLine(baseline.config(), baseline.source(), TrustLine.Verdict.NOT_COMPARABLE,
                    "a " + formatName(trace.format()) + " trace records no allocator decisions to compare with", null,
                    baseline.notes());
        }
        if (!allocator.equals("caching")) {
            runs.expect(-1);
            return new TrustLine(baseline.config(), baseline.source(), TrustLine.Verdict.NOT_COMPARABLE,
                    "the trace was recorded by PyTorch's caching allocator; " + allocator + " is another allocator,"
                            + " so its figures are not comparable with the recording", null, baseline.notes());
        }
        // Exactly what 'devalloc replay --warm --empty-cache-at-segment-free' does, but for the peak's snapshot, which
        // no report of the trust line shows (the figures are the same with or without it).
        ReplayOptions o = new ReplayOptions(allocator, UNLIMITED_DEVICE, baseline.config(), true, true)
                .withPeakSnapshot(false);
        ReplayOutcome outcome;
        try {
            outcome = trace.replay(replayer.withOptions(o));
        } catch (DevallocException | IllegalArgumentException e) {
            runs.ran();
            return new TrustLine(baseline.config(), baseline.source(), TrustLine.Verdict.FAILED, e.getMessage(),
                    null, baseline.notes());
        }
        runs.ran();
        ReplayResult.GroundTruth g = outcome.result().groundTruth();
        if (g == null) {
            return new TrustLine(baseline.config(), baseline.source(), TrustLine.Verdict.NOT_COMPARABLE,
                    "the trace has no segment rows to compare with", outcome, baseline.notes());
        }
        return new TrustLine(baseline.config(), baseline.source(),
                g.match() ? TrustLine.Verdict.MATCH : TrustLine.Verdict.DIFFERS, g.firstDifference(), outcome,
                baseline.notes());
    }

    // ------------------------------------------------------------------------------------------ one setting

    private SettingResult evaluate(AdvisorTrace trace, Options options, GridEntry entry, boolean recorded,
                                   RunProgress runs) {
        boolean withCapacity = options.capacityBytes() != -1;
        ReplayOptions figures = whatIfOptions(options.allocator(), entry.config());
        ReplayResult full;
        try {
            full = replay(trace, figures, runs);
        } catch (DevallocException | IllegalArgumentException e) {
            runs.expect(-(SEARCH_ESTIMATE + (withCapacity ? 1 : 0)));
            return new SettingResult(entry, recorded, null, -1, 0, null, e.getMessage());
        }
        CapacityCheck check = null;
        if (withCapacity) {
            // The whole trace, past every failure, for the count of out-of-memory errors; the first one says where.
            ReplayResult at = replay(trace, figures.withDevice(device(options.capacityBytes()))
                    .withPeakSnapshot(false), runs);
            check = new CapacityCheck(options.capacityBytes(), at.ooms(), at.peakReservedBytes(), at.firstOom());
        }
        if (full.ooms() > 0) {
            runs.expect(-SEARCH_ESTIMATE);
            return new SettingResult(entry, recorded, full, -1, 0, check, null);
        }
        // The search's replays need no snapshot, and stop at the first out-of-memory error: a failing capacity is
        // known there, and the rest of the trace would only count more failures.
        ReplayOptions probe = figures.withPeakSnapshot(false).withStopAtFirstOom(true);
        // Capacities up to 'fails' are known to fail, 'runsAt' is known to run: below the peak requested bytes the
        // live blocks do not fit, and at the unlimited capacity the replay above ran.
        long fails = full.peakRequestedBytes() > 0 ? (full.peakRequestedBytes() - 1) / GRANULARITY * GRANULARITY : 0;
        long candidate = Math.max(GRANULARITY, Math.ceilDiv(full.peakReservedBytes(), GRANULARITY) * GRANULARITY);
        long runsAt = UNLIMITED_CAPACITY;
        int searchRuns = 0;
        runs.expect(searchLength(fails, candidate) + 1 - SEARCH_ESTIMATE);
        if (candidate < UNLIMITED_CAPACITY) {
            // At the peak reserved bytes most settings behave as on the unlimited device; a memory fraction or a
            // threshold relative to the device may not, and then the search continues above.
            searchRuns++;
            if (fitsOn(trace, probe, candidate, runs)) {
                runsAt = candidate;
            } else {
                fails = candidate;
                runs.expect(searchLength(fails, runsAt) - searchLength(0, candidate));
            }
        }
        while (runsAt - fails > GRANULARITY) {
            long mid = fails + (runsAt - fails) / GRANULARITY / 2 * GRANULARITY;
            searchRuns++;
            if (fitsOn(trace, probe, mid, runs)) {
                runsAt = mid;
            } else {
                fails = mid;
            }
        }
        return new SettingResult(entry, recorded, full, runsAt, searchRuns, check, null);
    }

    /** The bisection steps between a failing and a running capacity. */
    private static long searchLength(long fails, long runs) {
        long steps = Math.max(1, (runs - fails) / GRANULARITY);
        return 64L - Long.numberOfLeadingZeros(steps - 1);
    }

    private boolean fitsOn(AdvisorTrace trace, ReplayOptions probe, long capacity, RunProgress runs) {
        return replay(trace, probe.withDevice(device(capacity)), runs).ooms() == 0;
    }

    private ReplayResult replay(AdvisorTrace trace, ReplayOptions o, RunProgress runs) {
        try {
            return trace.replay(replayer.withOptions(o)).result();
        } finally {
            runs.ran();
        }
    }

    /**
     * The what-if options of {@code config} on the unlimited device, what a setting's figures come from: cold, the
     * blocks live at the start allocated first, {@code empty_cache()} where the program called it, the peak's
     * snapshot taken (for the segment map and the waste at the peak).
     */
    public static ReplayOptions whatIfOptions(String allocator, String config) {
        return new ReplayOptions(allocator, UNLIMITED_DEVICE, config, false, true);
    }

    /** The device spec of a simulated GPU of exactly {@code capacity} bytes. */
    public static String device(long capacity) {
        return "sim:" + capacity + "B";
    }

    /** The allocator's message when it refuses {@code config}, or null. */
    private String refusal(AllocatorProvider provider, String config) {
        try (DeviceMemory device = devices.open(CHECK_DEVICE);
             DeviceAllocator allocator = provider.create(device, config)) {
            Objects.requireNonNull(allocator, "allocator");
            if (Caveats.expandableSegments(config) && device.virtualMemory().isEmpty()) {
                // PyTorch's allocator (and devalloc's) warns and carries on without them: the figures would be
                // another setting's under this one's name.
                return "expandable_segments:True cannot run on " + device.descriptor().id() + ": the device has no"
                        + " virtual memory, and the allocator would carry on without expandable segments (as PyTorch"
                        + " does, with a warning), so the figures would be another setting's; advise on a device"
                        + " with virtual memory";
            }
            return null;
        } catch (DevallocException | IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    // ------------------------------------------------------------------------------------------ ranking

    /** The objective's figure: the smallest capacity, the peak reserved bytes, or the device calls. */
    static long figure(SettingResult s, Objective objective) {
        return switch (objective) {
            case CAPACITY -> s.minCapacityBytes();
            case RESERVED -> s.result().peakReservedBytes();
            case DEVICE_CALLS -> s.deviceCalls();
        };
    }

    /**
     * How far apart two settings' figures may be and still tie: one {@link #GRANULARITY} for bytes (a smallest
     * capacity is known to one step of the search only: 1,870 and 1,872 MiB may be a byte apart), none for calls.
     */
    static long tolerance(Objective objective) {
        return objective == Objective.DEVICE_CALLS ? 0 : GRANULARITY;
    }

    /** Whether {@code a} and {@code b} tie on the objective's figure (within {@link #tolerance}). */
    static boolean tied(SettingResult a, SettingResult b, Objective objective) {
        return Math.abs(figure(a, objective) - figure(b, objective)) <= tolerance(objective);
    }

    static long secondary(SettingResult s, Objective objective) {
        return objective == Objective.DEVICE_CALLS ? s.minCapacityBytes() : s.deviceCalls();
    }

    /**
     * Best first. The settings that ran are taken in order of the objective's figure, in groups: a group is the
     * smallest figure left and every figure within {@link #tolerance} of it, so no group spans more than one step
     * and a "best" is never decided by a difference the search cannot see. Within a group: the tie-break, then the
     * recorded setting, then the smaller figure, then the grid's order. Settings that did not run come last.
     */
    static List<SettingResult> rank(List<SettingResult> results, Objective objective) {
        IdentityHashMap<SettingResult, Integer> order = new IdentityHashMap<>();
        List<SettingResult> fit = new ArrayList<>();
        List<SettingResult> rest = new ArrayList<>();
        for (SettingResult s : results) {
            order.put(s, order.size());
            (s.fits() ? fit : rest).add(s);
        }
        fit.sort(Comparator.comparingLong(s -> figure(s, objective)));
        Comparator<SettingResult> inGroup = Comparator.<SettingResult>comparingLong(s -> secondary(s, objective))
                .thenComparing(s -> !s.recorded())
                .thenComparingLong(s -> figure(s, objective))
                .thenComparingInt(order::get);
        List<SettingResult> sorted = new ArrayList<>();
        int start = 0;
        while (start < fit.size()) {
            long lead = figure(fit.get(start), objective);
            int end = start;
            while (end < fit.size() && figure(fit.get(end), objective) - lead <= tolerance(objective)) {
                end++;
            }
            List<SettingResult> group = new ArrayList<>(fit.subList(start, end));
            group.sort(inGroup);
            sorted.addAll(group);
            start = end;
        }
        sorted.addAll(rest);
        return sorted;
    }

    private static Recommendation recommend(String allocator, List<SettingResult> ranked, Objective objective,
            String baselineName) {
        if (ranked.isEmpty() || !ranked.getFirst().fits()) {
            return null;
        }
        SettingResult best = ranked.getFirst();
        SettingResult base = null;
        for (SettingResult s : ranked) {
            if (s.recorded()) {
                base = s;
            }
        }
        Long saving = null;
        Double fraction = null;
        Long callsSaved = null;
        Double callsFraction = null;
        if (base != null && base.fits()) {
            long b = objectiveBytes(base, objective);
            saving = b - objectiveBytes(best, objective);
            fraction = b == 0 ? 0.0 : (double) saving / b;
            long calls = base.deviceCalls();
            callsSaved = calls - best.deviceCalls();
            callsFraction = calls == 0 ? 0.0 : (double) callsSaved / calls;
        }
        String what = switch (objective) {
            case CAPACITY -> "the smallest device to run the whole trace";
            case RESERVED -> "the lowest peak reserved";
            case DEVICE_CALLS -> "the fewest device mallocs and frees";
        };
        String reason;
        if (best.recorded()) {
            reason = baselineName + " is already best: no setting of the grid beats it on " + what
                    + " (figures within " + ByteSize.format(GRANULARITY) + " are ties, broken by "
                    + objective.tieBreak() + ")";
        } else if (base != null && base.fits() && tied(base, best, objective)) {
            reason = "as good as " + baselineName + " for " + what + " (within " + ByteSize.format(GRANULARITY)
                    + "), with " + objective.tieBreak();
        } else {
            reason = "of the " + ranked.size() + " settings, this one has " + what;
        }
        return new Recommendation(best, envLine(allocator, best.config()), saving, fraction, callsSaved,
                callsFraction, best.recorded(), reason, Caveats.of(allocator, best.config()));
    }

    private static long objectiveBytes(SettingResult s, Objective objective) {
        return objective == Objective.RESERVED ? s.result().peakReservedBytes() : s.minCapacityBytes();
    }

    /**
     * The line to paste: PyTorch's variable for its allocators, devalloc's for the others, and for a PyTorch
     * allocator's setting that uses a key of devalloc's own ({@link Caveats#devallocKeys}), which PyTorch refuses.
     */
    static String envLine(String allocator, String config) {
        boolean pytorch = (allocator.equals("caching") || allocator.equals("caching-host"))
                && Caveats.devallocKeys(allocator, config).isEmpty();
        return (pytorch ? "PYTORCH_CUDA_ALLOC_CONF=" : "DEVALLOC_CONFIG=") + config;
    }

    private static List<String> whatIfNotes(AdvisorTrace trace) {
        return List.of("what-if replays start from an empty allocator: the blocks live when recording began are"
                + " allocated first (a warm state recorded under one setting cannot be restored under another), and"
                + " empty_cache() is called where the program called it (the trace's segment_free rows)",
                "a setting's figures are those of one replay on " + UNLIMITED_DEVICE + " (" + trace.events()
                + " events); its smallest capacity was searched to 2 MiB with replays on simulated devices of each"
                + " capacity tried, the allocator's retry ladder freeing cached memory as the device fills");
    }

    /**
     * A note for the settings whose smallest capacity is above their peak reserved bytes (rounded up to 2 MiB), so
     * that the table does not seem to contradict itself; null when there are none.
     */
    static String aboveReserved(List<SettingResult> ranked) {
        List<String> names = new ArrayList<>();
        for (SettingResult s : ranked) {
            if (s.fits() && s.minCapacityBytes() > Math.ceilDiv(s.result().peakReservedBytes(), GRANULARITY)
                    * GRANULARITY) {
                names.add(s.config().isEmpty() ? "(defaults)" : s.config());
            }
        }
        if (names.isEmpty()) {
            return null;
        }
        String listed = names.size() <= 3 ? String.join("; ", names)
                : String.join("; ", names.subList(0, 3)) + " and " + (names.size() - 3) + " more";
        return "the smallest capacity is above the peak reserved for " + listed + ": the device needs more than the"
                + " allocator holds from it (the simulated device rounds each malloc up to its 512 B granularity, and"
                + " its free space fragments between mallocs), or the setting caps memory relative to the device"
                + " (per_process_memory_fraction)";
    }

    static String formatName(TraceFormat format) {
        return switch (format) {
            case PYTORCH_PICKLE -> "PyTorch snapshot pickle";
            case PYTORCH_CSV -> "PyTorch CSV";
            case RMM_CSV -> "RMM replay log";
            case VALGRIND -> "valgrind malloc";
            case ANDROID_MEMORY_REPLAY -> "Android memory_replay";
        };
    }

    private static <T> T get(Future<T> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while advising", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause);
        }
    }

    /** Named daemon threads, so that an interrupted advisor never keeps the JVM alive. */
    private static final class Workers implements java.util.concurrent.ThreadFactory {
        private final AtomicInteger count = new AtomicInteger();

        @Override
        public Thread newThread(Runnable r) {
            Thread t = new Thread(r, "devalloc-advisor-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        }
    }
}
