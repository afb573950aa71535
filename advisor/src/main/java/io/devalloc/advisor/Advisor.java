package io.devalloc.advisor;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.UntrustedText;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.DevallocException;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.spi.EnvironmentConfig;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.CacheFlushes;
import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.DeviceTrace;
import io.devalloc.replay.RecordedCapacity;
import io.devalloc.replay.RecordedOom;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceFile;
import io.devalloc.replay.TraceSources;
import io.devalloc.replay.bounds.HeapPlacement;
import io.devalloc.replay.bounds.LiveIntervals;
import io.devalloc.replay.bounds.LowerBound;
import io.devalloc.replay.bounds.OfflinePlan;
import io.devalloc.replay.bounds.PlanOrder;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.pytorch.RecordedAllocatorSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The advisor's engine: for each device of a trace, the trust line, the sweep over the grid (each setting on an
 * unlimited device, on the card, and searched for its smallest capacity), the ranking and the recommendation (see the
 * package documentation and {@link Ranking} for the rules). Stateless between calls; one advisor may advise on any
 * number of traces, one call at a time or several at once.
 */
public final class Advisor {

    /** The capacity search's step, and the width within which two byte figures are tied: 2 MiB. */
    public static final long GRANULARITY = 2 * ByteSize.MiB;
    /** The unlimited device of the trust replay and of each setting's no-flush figures: a simulated 80 GiB GPU. */
    public static final String UNLIMITED_DEVICE = ReplayOptions.DEFAULT_DEVICE;
    /** Its capacity. */
    public static final long UNLIMITED_CAPACITY = 80 * ByteSize.GiB;
    /** The device the grid's settings are checked on (creating the allocator, no replay). */
    static final String CHECK_DEVICE = "sim:1GiB";
    /** The allocator that recorded a PyTorch trace, whose settings and end state the trace holds. */
    static final String RECORDING_ALLOCATOR = "caching";
    /** Replays a setting's capacity search is estimated at before its range is known (for the progress bar). */
    private static final int SEARCH_ESTIMATE = 12;
    /** What every capacity figure leaves out, as the reports say it. */
    public static final String MEMORY_ALONE = "capacities and reserved bytes are the caching allocator's memory"
            + " alone: the CUDA context, library workspaces (cuBLAS, cuDNN, NCCL) and other processes come on top";

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
     * @param capacityBytes the user's device capacity ({@code --capacity}), or -1 to read it from the trace when the
     *                      trace tells it
     * @param objective     what the recommendation minimises
     * @param threads       replays at once, at least 1
     * @param minSaving     the least saving worth a change
     */
    public record Options(String allocator, String grid, long capacityBytes, Objective objective, int threads,
                          MinSaving minSaving) {

        public Options {
            Objects.requireNonNull(allocator, "allocator");
            Objects.requireNonNull(objective, "objective");
            Objects.requireNonNull(minSaving, "minSaving");
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be at least 1, got " + threads);
            }
            if (capacityBytes != -1 && capacityBytes < ByteSize.MiB) {
                throw new IllegalArgumentException("capacity must be at least 1 MiB (the smallest simulated device),"
                        + " got " + capacityBytes + " B");
            }
        }

        /** Options with the default margin ({@link MinSaving#DEFAULT}). */
        public Options(String allocator, String grid, long capacityBytes, Objective objective, int threads) {
            this(allocator, grid, capacityBytes, objective, threads, MinSaving.DEFAULT);
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
     * Advises on every device of {@code file}: each device with a history is its own job (its baseline, trust line,
     * grid, card and capacity search); a device with only its end state gets that state and no verdict.
     *
     * @param progress told of the replays done and expected, from several threads one at a time
     * @throws IllegalArgumentException for bad input: an unknown grid, a capacity below a trace's first request, a
     *                                  trace without allocations on any device
     * @throws DevallocException        for an unknown allocator
     */
    public JobAdvice advise(TraceFile file, Options options, ReplayProgress progress) {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(progress, "progress");
        allocators.get(options.allocator());
        boolean anything = false;
        for (DeviceTrace d : file.devices()) {
            // A device with allocations to replay, or an end state to show.
            anything |= d.hasHistory() ? advisable(d.trace()) : d.trace().startsWarm();
        }
        if (!anything) {
            throw new IllegalArgumentException(file.file() + " has no allocations: there is nothing to advise on");
        }
        RunProgress runs = new RunProgress(progress, 0);
        List<Advice> advice = new ArrayList<>();
        try {
            for (DeviceTrace d : file.devices()) {
                AdvisorTrace trace = AdvisorTrace.of(file, d);
                long before = runs.done();
                Advice a = trace.hasHistory() && advisable(trace.compact())
                        ? advise(trace, options, runs) : withoutAdvice(trace, options, runs);
                advice.add(withRuns(a, runs.done() - before));
            }
        } finally {
            runs.finish();
        }
        return new JobAdvice(file.file(), options.allocator(), options.objective(), advice, file.unusedDevices(),
                runs.done(), options.threads());
    }

    /**
     * Advises on one device's trace.
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
        allocators.get(options.allocator());
        if (trace.hasHistory() ? !advisable(trace.compact()) : !trace.compact().startsWarm()) {
            throw new IllegalArgumentException(trace.name() + " has no allocations: there is nothing to advise on");
        }
        RunProgress runs = new RunProgress(progress, 0);
        try {
            Advice a = trace.hasHistory() ? advise(trace, options, runs) : withoutAdvice(trace, options, runs);
            return withRuns(a, runs.done());
        } finally {
            runs.finish();
        }
    }

    /**
     * Whether a trace with a history has something to replay under other settings: an allocation, or a request that
     * failed (a program whose very first request ran out of memory still says what it needed).
     */
    private static boolean advisable(CompactTrace trace) {
        return trace.allocations() > 0 || trace.oomEntries() > 0;
    }

    private static Advice withRuns(Advice a, long runs) {
        return new Advice(a.trace(), a.cudaDevice(), a.history(), a.events(), a.allocator(), a.objective(),
                a.capacity(), a.minSaving(), a.grid(), a.trust(), a.settings(), a.recommendation(), a.flushes(),
                a.oom(), a.ladder(), a.endState(), a.notes(), runs, a.threads());
    }

    private Advice advise(AdvisorTrace trace, Options options, RunProgress runs) {
        AllocatorProvider provider = allocators.get(options.allocator());
        if (options.capacityBytes() != -1 && options.capacityBytes() < trace.firstRequest()) {
            throw new IllegalArgumentException("capacity " + ByteSize.format(options.capacityBytes()) + " is smaller"
                    + " than the trace's first request (" + ByteSize.format(trace.firstRequest()) + "): no setting"
                    + " can run it; give a capacity of at least " + ByteSize.format(trace.firstRequest()));
        }
        Grid grid = grid(trace, options);
        Baseline baseline = withEnvironmentNotes(baseline(trace, provider), options.allocator());
        CacheFlushes flushes = trace.compact().cacheFlushes();
        List<String> capacityNotes = new ArrayList<>();
        CardCapacity card = card(trace, options, flushes, capacityNotes);

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

        List<RecordedOom> ooms = trace.compact().recordedOoms();
        boolean reproduce = !ooms.isEmpty() && card != null && ooms.getFirst().requestBytes() > 0
                && options.allocator().equals(RECORDING_ALLOCATOR) && isPyTorch(trace.format());
        runs.expect(1 + (reproduce ? 1 : 0) + (long) entries.size() * perSettingEstimate(card, options.objective()));
        List<SettingResult> results = new ArrayList<>();
        TrustLine trust;
        OomPostMortem.Reproduction reproduction = null;
        OfflinePlan plan;
        // The bounds: the intervals and the lower bound at once (a sweep), the offline plan's two orders on the pool
        // first, since on a long trace each takes as long as several replays.
        LiveIntervals intervals = LiveIntervals.of(trace.compact());
        Replayer rounded = replayer.withOptions(whatIfOptions(options.allocator(), ""));
        LowerBound bound = rounded.withSizeRounding(r -> LowerBound.of(intervals, r));
        try (ExecutorService pool = Executors.newFixedThreadPool(options.threads(), new Workers())) {
            Future<HeapPlacement> bySize = pool.submit(() ->
                    rounded.withSizeRounding(r -> HeapPlacement.of(intervals, r, PlanOrder.BY_SIZE)));
            Future<HeapPlacement> byLifetime = pool.submit(() ->
                    rounded.withSizeRounding(r -> HeapPlacement.of(intervals, r, PlanOrder.BY_LIFETIME)));
            Future<TrustLine> trustRun = pool.submit(() -> trust(trace, options.allocator(), baseline, runs));
            Future<OomPostMortem.Reproduction> reproduced = !reproduce ? null : pool.submit(() ->
                    reproduction(trace, options.allocator(), baseline.config(), ooms.getFirst(), card, runs));
            List<Future<SettingResult>> sweep = new ArrayList<>();
            for (GridEntry e : entries) {
                boolean recorded = e.config().equals(baseline.config());
                sweep.add(pool.submit((Callable<SettingResult>) () ->
                        evaluate(trace, options, card, e, recorded, bound.roundedPeakBytes(), runs)));
            }
            trust = get(trustRun);
            if (reproduced != null) {
                reproduction = get(reproduced);
            }
            for (Future<SettingResult> f : sweep) {
                results.add(get(f));
            }
            plan = OfflinePlan.of(get(bySize), get(byLifetime));
        }

        List<SettingResult> ranked = Ranking.rank(results, options.objective());
        Recommendation recommendation = Ranking.recommend(allocators.get(options.allocator()), ranked,
                options.objective(), options.minSaving(), trust.baselineName());
        List<String> notes = new ArrayList<>(whatIfNotes(trace, card, flushes));
        notes.addAll(capacityNotes);
        if (recommendation == null && card != null) {
            notes.add(noSettingRuns(ranked, card));
        }
        String above = aboveReserved(ranked);
        if (above != null) {
            notes.add(above);
        }
        OomPostMortem post = null;
        if (!ooms.isEmpty()) {
            OomPostMortem facts = new OomPostMortem(ooms, trace.compact().oomEntries(), card, reproduction, "");
            post = new OomPostMortem(ooms, facts.entries(), card, reproduction, PostMortems.verdict(facts, ranked,
                    recommendation, trace.compact().startsWarm()));
        }
        BoundsLadder ladder = Ladders.of(bound, plan, intervals.counts(), options.allocator(), ranked,
                options.minSaving(), trust.baselineName().equals(Ladders.RECORDED));
        return new Advice(trace.name(), trace.cudaDevice(), true, trace.events(), options.allocator(),
                options.objective(), card, options.minSaving(), grid, trust, ranked, recommendation, flushes, post,
                ladder, null, notes, 0, options.threads());
    }

    private static long perSettingEstimate(CardCapacity card, Objective objective) {
        return 1L + SEARCH_ESTIMATE + (card != null ? 1 : 0) + (objective == Objective.CAPACITY ? 1 : 0);
    }

    /**
     * A device without a history (only its end state), or without an allocation: no what-if, no verdict, no
     * recommendation. Its end state is restored under the recorded settings, for the reports to show it as it was.
     */
    private Advice withoutAdvice(AdvisorTrace trace, Options options, RunProgress runs) {
        RecordedAllocatorSettings recorded = trace.recordedSettings();
        String config = recorded == null || recorded.values().isEmpty() ? "" : recorded.config();
        String source = recorded == null || recorded.values().isEmpty() ? "the defaults: the trace does not record the"
                + " allocator's settings" : TrustLine.FROM_SNAPSHOT;
        List<String> baselineNotes = recorded == null ? List.of() : recorded.notes();
        // No grid is swept on a device without allocations; it is named as a device with a history names it.
        String named = options.grid() == null || options.grid().strip().equals(Grids.DEFAULT)
                || options.grid().strip().equals(options.allocator())
                ? Grids.DEFAULT + " (" + options.allocator() + ")" : options.grid();
        Grid grid = new Grid(named, List.of(), List.of());
        if (trace.hasHistory()) {
            TrustLine trust = new TrustLine(config, source, TrustLine.Verdict.NOT_COMPARABLE, "the trace has no"
                    + " allocation on this device: nothing to replay under another setting", null, baselineNotes);
            return new Advice(trace.name(), trace.cudaDevice(), true, trace.events(), options.allocator(),
                    options.objective(), null, options.minSaving(), grid, trust, List.of(), null,
                    trace.compact().cacheFlushes(), null, null, null, List.of("no allocation was recorded on this"
                    + " device"),
                    0, options.threads());
        }
        ReplayOutcome endState = null;
        String why = "end state only: the trace records no event on this device after its start state (its segments"
                + " and live blocks when the snapshot was taken), so there is no allocator decision to compare with,"
                + " no run to replay under another setting, and no recommendation";
        TrustLine.Verdict verdict = TrustLine.Verdict.NOT_COMPARABLE;
        if (isPyTorch(trace.format())) {
            runs.expect(1);
            ReplayOptions o = new ReplayOptions(RECORDING_ALLOCATOR, UNLIMITED_DEVICE, config, true, false);
            try {
                endState = trace.replay(replayer.withOptions(o));
            } catch (DevallocException | IllegalArgumentException e) {
                verdict = TrustLine.Verdict.FAILED;
                why = "the end state could not be restored: " + e.getMessage();
            } finally {
                runs.ran();
            }
        }
        TrustLine trust = new TrustLine(config, source, verdict, why, null, baselineNotes);
        List<String> notes = new ArrayList<>();
        if (endState != null) {
            notes.add("the end state shown is the snapshot's segments and live blocks, restored under the recorded"
                    + " settings by devalloc's copy of PyTorch's caching allocator (as 'devalloc replay --warm'"
                    + " restores them), with the waste in it by cause");
            if (!options.allocator().equals(RECORDING_ALLOCATOR)) {
                notes.add("the end state is the recording's, PyTorch's caching allocator's: --allocator "
                        + options.allocator() + " changes nothing of it");
            }
        }
        notes.add(MEMORY_ALONE);
        return new Advice(trace.name(), trace.cudaDevice(), false, trace.events(), options.allocator(),
                options.objective(), null, options.minSaving(), grid, trust, List.of(), null, CacheFlushes.NONE,
                null, null, endState, notes, 0, options.threads());
    }

    // ------------------------------------------------------------------------------------------ the card

    /**
     * The card the settings are compared on: {@code --capacity}, or the capacity the trace tells (its {@code oom}
     * entries, its own cache flushes; see {@link io.devalloc.replay.FlushReplay}), or null.
     */
    private static CardCapacity card(AdvisorTrace trace, Options options, CacheFlushes flushes, List<String> notes) {
        RecordedCapacity recorded = flushes.capacity();
        if (options.capacityBytes() != -1) {
            if (recorded != null && recorded.bytes() != options.capacityBytes()) {
                notes.add("--capacity " + ByteSize.format(options.capacityBytes()) + " replaces the capacity the"
                        + " trace tells, " + ByteSize.format(recorded.bytes()) + " (" + recorded.reason() + ")");
            }
            return new CardCapacity(options.capacityBytes(), CardCapacity.Source.GIVEN, "given with --capacity");
        }
        if (recorded == null) {
            return null;
        }
        RecordedAllocatorSettings settings = trace.recordedSettings();
        if (recorded.source() == RecordedCapacity.Source.RETRY_FLUSHES && settings != null
                && settings.values().get("garbage_collection_threshold") instanceof Number gc
                && gc.doubleValue() > 0) {
            notes.add("the trace's own cache flushes do not tell the capacity here: the recorded setting has a"
                    + " garbage_collection_threshold, whose collections free cached blocks inside malloc without a"
                    + " failed device malloc; give --capacity");
            return null;
        }
        if (recorded.bytes() < ByteSize.MiB) {
            return null;
        }
        if (recorded.bytes() > ReplayOptions.MAX_DEVICE_BYTES) {
            notes.add("the trace tells a card of " + ByteSize.format(recorded.bytes()) + " (" + recorded.reason()
                    + "), more than any device devalloc simulates (" + ByteSize.format(ReplayOptions.MAX_DEVICE_BYTES)
                    + "): a corrupt figure, left out; give --capacity");
            return null;
        }
        CardCapacity.Source source = switch (recorded.source()) {
            case OOM -> CardCapacity.Source.OOM;
            case RETRY_FLUSHES -> CardCapacity.Source.RETRY_FLUSHES;
            case OOM_REQUEST -> CardCapacity.Source.OOM_REQUEST;
        };
        if (source == CardCapacity.Source.OOM_REQUEST && !(settings != null
                && Boolean.TRUE.equals(settings.values().get("expandable_segments")))) {
            // Without expandable segments the device malloc that failed was exactly PyTorch's segment size for the
            // request (get_allocation_size), tighter than the replay module's bound, which covers expandable
            // segments' whole 20 MiB pages too.
            long tight = Long.MAX_VALUE;
            for (RecordedOom o : trace.compact().recordedOoms()) {
                if (o.deviceFreeBytes() < 0 && o.requestBytes() > 0) {
                    long failedAt = o.reservedBytes() + segmentSize(o.requestBytes());
                    tight = Math.min(tight, failedAt < 0 ? Long.MAX_VALUE : failedAt - 1);
                }
            }
            if (tight < recorded.bytes() && tight >= ByteSize.MiB) {
                return new CardCapacity(tight, source, "at most that: the trace does not record the device's free"
                        + " bytes, and the device malloc PyTorch made for the request that"
                        + " failed (its segment: 2 MiB up to 1 MiB, 20 MiB below 10 MiB, else the request rounded up"
                        + " to 2 MiB) did not fit on top of what was reserved");
            }
        }
        return new CardCapacity(recorded.bytes(), source, recorded.reason());
    }

    /** PyTorch's {@code get_allocation_size}: the segment the caching allocator asks the device for a request. */
    static long segmentSize(long request) {
        if (request <= ByteSize.MiB) {
            return 2 * ByteSize.MiB;
        }
        if (request < 10 * ByteSize.MiB) {
            return 20 * ByteSize.MiB;
        }
        long step = 2 * ByteSize.MiB;
        return request > Long.MAX_VALUE - step ? Long.MAX_VALUE / 2 : (request + step - 1) / step * step;
    }

    private static String noSettingRuns(List<SettingResult> ranked, CardCapacity card) {
        SettingResult smallest = null;
        for (SettingResult s : ranked) {
            if (s.fits() && (smallest == null || s.minCapacityBytes() < smallest.minCapacityBytes())) {
                smallest = s;
            }
        }
        String on = "no setting of the grid runs the whole trace on the card (" + ByteSize.format(card.bytes()) + ")";
        if (smallest == null) {
            return on + ", nor on " + UNLIMITED_DEVICE;
        }
        return on + "; the smallest capacity any of them needs is " + ByteSize.format(smallest.minCapacityBytes())
                + " (" + Ranking.label(smallest) + "), " + ByteSize.format(smallest.minCapacityBytes() - card.bytes())
                + " more than the card";
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
        if (!allocator.equals(RECORDING_ALLOCATOR)) {
            return new Baseline("", "the defaults: the trace does not record " + allocator + "'s settings",
                    List.of());
        }
        if (recorded == null) {
            return new Baseline("", "the defaults: " + aTraceOf(trace.format()) + " does not record the allocator's"
                    + " settings", List.of());
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
            // The message may quote the variable's text, which can be megabytes: quoted bounded.
            return baseline.withNote("the environment sets a configuration that " + allocator + " refuses ("
                    + UntrustedText.excerpt(String.valueOf(e.getMessage())) + "); advise does not use it");
        }
        Baseline b = baseline;
        for (EnvironmentConfig e : fromEnvironment) {
            String config = UntrustedText.excerpt(e.config());
            b = b.withNote(e.variable() + "=" + config + " is set in this environment; advise does not use it:"
                    + " the baseline and every setting run exactly as named here (to try it, put '" + config
                    + "' in a --grid file; 'devalloc replay' without --config would use it)");
        }
        return b;
    }

    private TrustLine trust(AdvisorTrace trace, String allocator, Baseline baseline, RunProgress runs) {
        boolean pytorch = isPyTorch(trace.format());
        if (!pytorch) {
            runs.expect(-1);
            return new TrustLine(baseline.config(), baseline.source(), TrustLine.Verdict.NOT_COMPARABLE,
                    aTraceOf(trace.format()) + " records no allocator decisions to compare with",
                    null, baseline.notes());
        }
        if (!allocator.equals(RECORDING_ALLOCATOR)) {
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
                    "the trace has no segment rows and no start state to compare with (a decorator recorded it: it"
                            + " cannot see device mallocs)", outcome, baseline.notes());
        }
        return new TrustLine(baseline.config(), baseline.source(),
                g.match() ? TrustLine.Verdict.MATCH : TrustLine.Verdict.DIFFERS, g.firstDifference(), outcome,
                baseline.notes());
    }

    /**
     * The recorded setting replayed warm on the card, the program's {@code empty_cache()} where it called it and the
     * allocator's own flushes and failures left to it, up to its first out-of-memory error: does the recorded one
     * come back by itself?
     */
    private OomPostMortem.Reproduction reproduction(AdvisorTrace trace, String allocator, String config,
                                                    RecordedOom first, CardCapacity card, RunProgress runs) {
        ReplayOptions o = new ReplayOptions(allocator, device(card.bytes()), config, true, true, false, true, false);
        try {
            return PostMortems.reproduction(first, replay(trace, o, runs).firstOom(), card);
        } catch (DevallocException | IllegalArgumentException e) {
            return new OomPostMortem.Reproduction(false, null, "the recorded setting could not be replayed on the"
                    + " card (" + ByteSize.format(card.bytes()) + "): " + e.getMessage());
        }
    }

    /** {@code a PyTorch CSV trace}, {@code an RMM replay log trace}. */
    private static String aTraceOf(TraceFormat format) {
        return article(TraceSources.formatKind(format)) + " trace";
    }

    private static boolean isPyTorch(TraceFormat format) {
        return format == TraceFormat.PYTORCH_PICKLE || format == TraceFormat.PYTORCH_CSV;
    }

    // ------------------------------------------------------------------------------------------ one setting

    /**
     * One setting: its replay on the unlimited device, on the card, and the search for its smallest capacity, which
     * starts above {@code floorBytes} (the rounded lower bound under the allocator's defaults, which round least:
     * no capacity below it can hold the live blocks, so it is known to fail without a replay).
     */
    private SettingResult evaluate(AdvisorTrace trace, Options options, CardCapacity card, GridEntry entry,
                                   boolean recorded, long floorBytes, RunProgress runs) {
        ReplayOptions figures = whatIfOptions(options.allocator(), entry.config());
        boolean capacityObjective = options.objective() == Objective.CAPACITY;
        ReplayResult full;
        try {
            full = replay(trace, figures, runs);
        } catch (DevallocException | IllegalArgumentException e) {
            runs.expect(1 - perSettingEstimate(card, options.objective()));
            return SettingResult.failed(entry, recorded, e.getMessage());
        }
        CapacityCheck check = null;
        if (card != null) {
            // The whole trace on the card, past every failure: its flushes, its peak there, every out-of-memory
            // error and where the first one happened; with the peak's snapshot for the reports.
            ReplayOutcome there = outcome(trace, figures.withDevice(device(card.bytes())), runs);
            check = new CapacityCheck(card.bytes(), there.result(), there.flushes().failedRequestsServed());
        }
        if (full.ooms() > 0) {
            runs.expect(-SEARCH_ESTIMATE - (capacityObjective ? 1 : 0));
            return SettingResult.builder().entry(entry).recorded(recorded).result(full).atCapacity(check).build();
        }
        // The search's replays need no snapshot, and stop at the first out-of-memory error: a failing capacity is
        // known there, and the rest of the trace would only count more failures.
        ReplayOptions probe = figures.withPeakSnapshot(false).withStopAtFirstOom(true);
        // Capacities up to 'fails' are known to fail, 'runsAt' is known to run: below the peak requested bytes, or
        // the rounded lower bound, the live blocks do not fit, and at the unlimited capacity the replay above ran.
        long known = Math.max(full.peakRequestedBytes(), floorBytes);
        long fails = known > 0 ? (known - 1) / GRANULARITY * GRANULARITY : 0;
        long candidate = Math.max(GRANULARITY, Math.ceilDiv(full.peakReservedBytes(), GRANULARITY) * GRANULARITY);
        long runsAt = UNLIMITED_CAPACITY;
        ReplayResult running = full;
        int searchRuns = 0;
        runs.expect(searchLength(fails, candidate) + 1 - SEARCH_ESTIMATE);
        // The first probe is the peak reserved bytes: there most settings behave as on the unlimited device; a
        // memory fraction or a threshold relative to the device may not, and then the search continues above.
        boolean firstProbe = candidate < UNLIMITED_CAPACITY;
        while (firstProbe || runsAt - fails > GRANULARITY) {
            long at = firstProbe ? candidate : fails + (runsAt - fails) / GRANULARITY / 2 * GRANULARITY;
            searchRuns++;
            ReplayResult r = replay(trace, probe.withDevice(device(at)), runs);
            if (r.ooms() == 0) {
                runsAt = at;
                running = r;
            } else {
                fails = at;
                if (firstProbe) {
                    runs.expect(searchLength(fails, runsAt) - searchLength(0, candidate));
                }
            }
            firstProbe = false;
        }
        if (capacityObjective) {
            // The capacity objective shows each setting on its own smallest device: once more, with the snapshot.
            running = runsAt == UNLIMITED_CAPACITY ? full : replay(trace, figures.withDevice(device(runsAt)), runs);
        }
        return SettingResult.builder().entry(entry).recorded(recorded).result(full).minCapacityBytes(runsAt)
                .atMinCapacity(running).searchRuns(searchRuns).atCapacity(check).build();
    }

    /** The bisection steps between a failing and a running capacity. */
    private static long searchLength(long fails, long runs) {
        long steps = Math.max(1, (runs - fails) / GRANULARITY);
        return 64L - Long.numberOfLeadingZeros(steps - 1);
    }

    private ReplayResult replay(AdvisorTrace trace, ReplayOptions o, RunProgress runs) {
        return outcome(trace, o, runs).result();
    }

    private ReplayOutcome outcome(AdvisorTrace trace, ReplayOptions o, RunProgress runs) {
        try {
            return trace.replay(replayer.withOptions(o));
        } finally {
            runs.ran();
        }
    }

    /**
     * The what-if options of {@code config} on the unlimited device, what a setting's figures come from: cold, the
     * blocks live at the start allocated first, {@code empty_cache()} where the program called it (not where the
     * recorded allocator flushed on its own), the peak's snapshot taken (for the segment map and the waste at the
     * peak).
     */
    public static ReplayOptions whatIfOptions(String allocator, String config) {
        return new ReplayOptions(allocator, UNLIMITED_DEVICE, config, false, true);
    }

    /** The device spec of a simulated GPU of exactly {@code capacity} bytes. */
    public static String device(long capacity) {
        return "sim:" + capacity + "B";
    }

    /** Whether {@code config} turns expandable segments on. */
    private static boolean expandableSegments(String config) {
        return config.toLowerCase(Locale.ROOT).replace(" ", "").contains("expandable_segments:true");
    }

    /** The allocator's message when it refuses {@code config}, or null. */
    private String refusal(AllocatorProvider provider, String config) {
        try (DeviceMemory device = devices.open(CHECK_DEVICE);
             DeviceAllocator allocator = provider.create(device, config)) {
            Objects.requireNonNull(allocator, "allocator");
            if (expandableSegments(config) && device.virtualMemory().isEmpty()) {
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

    /**
     * The line to paste: the variable of the framework the allocator ports when it takes the setting as it is
     * ({@link AllocatorProvider#frameworkVariable}), else devalloc's.
     */
    static String envLine(AllocatorProvider allocator, String config) {
        return allocator.frameworkVariable(config).orElse("DEVALLOC_CONFIG") + "=" + config;
    }

    /** How the what-ifs were replayed: their start, the flushes, the devices, and what the figures leave out. */
    private static List<String> whatIfNotes(AdvisorTrace trace, CardCapacity card, CacheFlushes flushes) {
        List<String> notes = new ArrayList<>();
        notes.add("what-if replays start from an empty allocator (a warm state recorded under one setting cannot be"
                + " restored under another)" + (trace.compact().startsWarm()
                ? ": the blocks live when recording began are allocated first" : ""));
        if (flushes.runs() > 0) {
            notes.add(flushNote(flushes));
        }
        String figures = "a setting's figures are those of one replay on " + UNLIMITED_DEVICE + " (" + trace.events()
                + " events), what it needs with no cache flush";
        if (card != null) {
            figures += ", and of one on the card, a simulated device of " + ByteSize.format(card.bytes()) + " ("
                    + cardSource(card) + ")";
        } else {
            figures += "; no capacity is known (no --capacity, and " + (trace.compact().oomEntries() > 0
                    ? "the trace's out-of-memory errors record neither the device's free bytes nor the request that"
                    + " failed" : "the trace records no out-of-memory error and no flush of the allocator's own")
                    + "): the card is that unlimited device";
        }
        notes.add(figures + "; its smallest capacity was searched to 2 MiB with replays on simulated devices of each"
                + " capacity tried, the allocator's retry ladder freeing cached memory as the device fills");
        notes.add(MEMORY_ALONE);
        return notes;
    }

    /** How the card's capacity was found, in words. */
    static String cardSource(CardCapacity card) {
        return switch (card.source()) {
            case GIVEN -> "given with --capacity";
            case OOM -> "read from the trace's out-of-memory error: " + card.reason();
            case RETRY_FLUSHES -> "read from the allocator's own cache flushes in the trace: " + card.reason();
            case OOM_REQUEST -> "bounded by the trace's out-of-memory error: " + card.reason();
        };
    }

    /** The trace's flushes told apart, in words. */
    static String flushNote(CacheFlushes f) {
        List<String> how = new ArrayList<>();
        if (f.byFrames() > 0) {
            how.add(f.byFrames() + " by their stack frames");
        }
        if (f.byOutOfMemory() > 0) {
            how.add(f.byOutOfMemory() + " by the out-of-memory error after them");
        }
        if (f.byNoDeviceMalloc() > 0) {
            how.add(f.byNoDeviceMalloc() + " because no device malloc follows them");
        }
        if (f.byCapacity() > 0) {
            how.add(f.byCapacity() + " by the capacity the out-of-memory error tells (no stack frames)");
        }
        if (f.assumedProgram() > 0) {
            how.add(f.assumedProgram() + " taken as the program's: no stack frames, and no out-of-memory error to tell"
                    + " the capacity");
        }
        return "the trace frees cached segments " + f.runs() + " time" + (f.runs() == 1 ? "" : "s") + ": "
                + f.programCalls() + " the program's empty_cache(), replayed where the program called it, and "
                + f.allocatorFlushes() + " the allocator's own flush inside malloc (a device malloc failed, or its"
                + " garbage collection ran), not replayed: each setting's allocator flushes where its own device runs"
                + " short (told apart: " + String.join(", ", how) + ")";
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


    /** {@code a PyTorch CSV}, {@code an Android memory_replay}: the article English wants. */
    static String article(String noun) {
        char c = Character.toLowerCase(noun.charAt(0));
        boolean vowel = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || noun.startsWith("RMM");
        return (vowel ? "an " : "a ") + noun;
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
    private static final class Workers implements ThreadFactory {
        private final AtomicInteger count = new AtomicInteger();

        @Override
        public Thread newThread(Runnable r) {
            Thread t = new Thread(r, "devalloc-advisor-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        }
    }
}
