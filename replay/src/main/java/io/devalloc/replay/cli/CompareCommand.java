package io.devalloc.replay.cli;

import static io.devalloc.replay.cli.TraceReplays.bytes;
import static io.devalloc.replay.cli.TraceReplays.count;
import static io.devalloc.replay.cli.TraceReplays.percent;

import io.devalloc.replay.DeviceTrace;
import io.devalloc.replay.GroundTruthComparability;
import io.devalloc.replay.ReplayJson;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.ReplayResult;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code devalloc compare TRACE...}: replays each trace through several allocators and configurations ("runs") on
 * the same device and prints one table per trace with the runs side by side, the best figure of each row marked
 * {@value #BEST}; with several traces, a last table over all of them. The rows of memory held from the device rank
 * only the runs that cache ({@link #notRankedOnMemoryHeld}), as the HTML report's table does. {@code --json}
 * prints an array of the replays' JSON objects instead ({@link ReplayJson}), trace by trace, run by run;
 * {@code --html FILE} also writes the HTML report ({@link io.devalloc.replay.report.HtmlReport}), checked before the
 * replays ({@link OutputFiles}); when it still cannot be written at the end, the rest is printed and the exit code is
 * {@link ExitCodes#OUTPUT}.
 */
@Command(name = "compare",
        mixinStandardHelpOptions = true,
        header = "Replay traces through several allocators and configurations and compare them side by side.",
        description = {"Replay each trace through several allocators and configurations on the same device and print "
                + "their figures side by side, the best of each row marked with " + CompareCommand.BEST + " (peak "
                + "reserved, end reserved and fragmentation only among the runs that cache). "
                + "Default runs: direct, bfc with allow_growth:true (TensorFlow's GPU default, no growth, "
                + "reserves the whole device at the first allocation; --run bfc replays it), caching, and caching "
                + "with expandable_segments:True.",
                "",
                "The runs name their allocators and configurations (--run), so DEVALLOC_ALLOCATOR and "
                + "DEVALLOC_CONFIG do not apply here; DEVALLOC_DEVICE does, as for 'devalloc replay'."},
        footer = {"", "Examples:",
                "  devalloc compare memory.csv",
                "  devalloc compare a.csv b.csv --run caching --run caching:max_split_size_mb:64",
                "  devalloc compare memory.csv --run bfc:allow_growth:true --run caching --json",
                "  devalloc compare memory.csv --html report.html"})
public final class CompareCommand implements Callable<Integer> {

    /** A command for picocli to fill in from the command line. */
    public CompareCommand() {
    }

    /** Marks the best figure of a row. */
    public static final String BEST = "*";

    /**
     * The row of the replay's speed. Wall-clock events per second of the replaying pass: they measure this machine
     * and, in a short replay, mostly the JVM's warm-up, so the row is shown but never marked.
     */
    static final String SPEED_ROW = "events/s (wall clock)";

    /**
     * The {@code bfc} run among the defaults: with growth. TensorFlow's GPU default ({@code allow_growth:false})
     * reserves the whole memory limit, by default the whole device, at the first allocation: its reserved bytes and
     * fragmentation would describe that reservation rather than the workload, and its line would flatten every other
     * in the chart. {@code --run bfc} still replays that default, with a note.
     */
    static final String DEFAULT_BFC_RUN = "bfc:allow_growth:true";

    /** The rows ranked only among the runs that cache, as the legend names them. */
    static final String CACHING_ONLY_ROWS = "peak reserved, end reserved and fragmentation at peak";

    /** The rule of those rows, for the legend under the tables. */
    static final String CACHING_ONLY_RULE = "Peak reserved, end reserved and fragmentation at peak rank only the runs"
            + " that cache: a run that made at least one device malloc per allocation (as direct does) while another"
            + " run made fewer holds little beyond what is live because it calls the device each time, so it is not"
            + " marked there (a note names it).";

    /** The runs when none is given. */
    static final List<String> DEFAULT_RUNS = List.of("direct", DEFAULT_BFC_RUN, "caching",
            "caching:expandable_segments:True");

    /** The note on the default {@code bfc} run, saying why it grows. */
    static final String DEFAULT_BFC_NOTE = "a default run of compare: bfc grows its regions as needed here"
            + " (allow_growth:true); TensorFlow's GPU default (allow_growth:false) reserves its whole memory limit, by"
            + " default the whole device, at the first allocation, so its reserved bytes and fragmentation would"
            + " describe that reservation, not the workload (--run bfc replays that default)";

    @Spec
    CommandSpec spec;

    @Parameters(index = "0..*", arity = "1..*", paramLabel = "TRACE", description = "The trace files.")
    List<Path> traces;

    @Option(names = "--run", paramLabel = "NAME[:CONF]",
            description = "An allocator and its configuration (after the first colon, passed unchanged), e.g. "
                    + "caching:expandable_segments:True. Repeat for each run. Default: direct, "
                    + "bfc:allow_growth:true, caching, caching:expandable_segments:True.")
    List<String> runs;

    @Mixin
    SettingOption device = SettingOption.device(ReplayOptions.DEFAULT_DEVICE, "Device spec for every run.");

    @Mixin
    CudaDeviceOption cudaDevice = new CudaDeviceOption("Compare device N of a PyTorch snapshot only. Default: every"
            + " device with a history, each as a trace of its own.");

    @Option(names = "--warm", description = "PyTorch traces: restore the recorded starting state (see 'replay').")
    boolean warm;

    @Option(names = "--empty-cache-at-segment-free",
            description = "Release cached memory where the trace shows a run of segment_free or segment_unmap rows.")
    boolean emptyCacheAtSegmentFree;

    @Mixin
    ReportOptions report = new ReportOptions("Print a JSON array of the replays instead of the tables.",
            "Also write a self-contained HTML report: memory over time, the comparison table, the segment maps at"
                    + " the peak.");

    /** One run: an allocator and its configuration. */
    record Run(String allocator, String conf) {

        /** Parses {@code NAME[:CONF]}: the configuration is everything after the first colon. */
        static Run parse(String text) {
            String s = text.strip();
            int colon = s.indexOf(':');
            String name = (colon < 0 ? s : s.substring(0, colon)).strip();
            String conf = colon < 0 ? "" : s.substring(colon + 1).strip();
            if (name.isEmpty()) {
                throw new IllegalArgumentException("--run '" + text + "' names no allocator; expected NAME[:CONF],"
                        + " e.g. caching or caching:expandable_segments:True");
            }
            return new Run(name, conf);
        }

        String label() {
            return ReplayOutcome.label(allocator, conf);
        }
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        List<Run> parsed = new ArrayList<>();
        boolean defaults = runs == null || runs.isEmpty();
        for (String r : defaults ? DEFAULT_RUNS : runs) {
            parsed.add(Run.parse(r));
        }
        report.checkHtmlWritable();
        // Checked before the first trace runs, and whether or not any trace is a pickle.
        int deviceIndex = cudaDevice.index();
        Run defaultBfc = Run.parse(DEFAULT_BFC_RUN);
        List<List<ReplayOutcome>> byTrace = new ArrayList<>();
        for (Path trace : traces) {
            // A snapshot of several GPUs is one trace per device with a history: each compared on its own.
            List<DeviceTrace> devices = TraceReplays.isPickle(trace)
                    ? TraceReplays.readFile(trace, deviceIndex).withHistory() : null;
            for (int d = 0; d < (devices == null ? 1 : Math.max(1, devices.size())); d++) {
                DeviceTrace one = devices == null || devices.isEmpty() ? null : devices.get(d);
                List<ReplayOutcome> outcomes = new ArrayList<>();
                for (Run run : parsed) {
                    ReplayOptions options = new ReplayOptions(run.allocator(), device.value(), run.conf(), warm,
                            emptyCacheAtSegmentFree);
                    String label = trace + (one == null || one.label().isEmpty() ? "" : " " + one.label()) + " ("
                            + run.label() + ")";
                    ReplayOutcome outcome = one == null
                            ? TraceReplays.replay(trace, options, spec.commandLine().getErr(), label)
                            : TraceReplays.replay(one, options, spec.commandLine().getErr(), label);
                    // Unless TF_FORCE_GPU_ALLOW_GROWTH=false took the growth away again (then its own note explains).
                    if (defaults && run.equals(defaultBfc) && !TraceReplays.bfcWithoutGrowth(outcome.result())) {
                        outcome = TraceReplays.withNotes(outcome, List.of(DEFAULT_BFC_NOTE));
                    }
                    outcomes.add(outcome);
                }
                byTrace.add(outcomes);
            }
        }
        List<ReplayOutcome> all = new ArrayList<>();
        byTrace.forEach(all::addAll);
        List<String> names = new ArrayList<>();
        for (Path trace : traces) {
            names.add(trace.toString());
        }
        boolean reported = report.writeHtml(spec.commandLine().getErr(),
                page -> TraceReplays.writeReport(page, "devalloc compare " + String.join(" ", names), all));
        int exitCode = report.html() == null || reported ? ExitCodes.OK : ExitCodes.OUTPUT;
        if (report.json()) {
            out.println(ReplayJson.toJson(all, false));
            return exitCode;
        }
        for (List<ReplayOutcome> outcomes : byTrace) {
            printTrace(out, outcomes);
            out.println();
        }
        if (byTrace.size() > 1) {
            printAll(out, byTrace);
            out.println();
        }
        TextWrap.print(out, "", "", "Lower is better; " + BEST + " marks the best of each row (ties share it). "
                + CACHING_ONLY_RULE + " " + SPEED_ROW + " is how fast this machine replayed the trace, the JVM's"
                + " warm-up included (most of a short replay's time), not a property of the allocator: it is not"
                + " ranked. 'devalloc replay TRACE --allocator NAME' shows one run in detail.");
        if (reported) {
            out.println("HTML report: " + report.html());
        }
        return exitCode;
    }

    /** Which way a row improves. */
    private enum Better { LOWER, HIGHER, NONE }

    /**
     * A row of the comparison: how to show each run's figure, and how to rank it; {@code cachingOnly} rows rank only
     * the runs that cache.
     */
    private record Row(String name, Better better, boolean cachingOnly, Function<ReplayOutcome, String> text,
                       ToDoubleFunction<ReplayOutcome> value) {
    }

    private static final List<Row> ROWS = List.of(
            bytesRow("peak reserved", true, ReplayResult::peakReservedBytes),
            bytesRow("peak allocated", false, ReplayResult::peakAllocatedBytes),
            new Row("peak requested", Better.NONE, false, o -> bytes(o.result().peakRequestedBytes()),
                    o -> o.result().peakRequestedBytes()),
            bytesRow("end reserved", true, ReplayResult::endReservedBytes),
            new Row("fragmentation at peak", Better.LOWER, true, o -> percent(o.result().fragmentation()),
                    o -> Math.round(o.result().fragmentation() * 1000)),
            countRow("device mallocs", ReplayResult::deviceMallocs),
            countRow("device frees", ReplayResult::deviceFrees),
            countRow("out-of-memory errors", ReplayResult::ooms),
            countRow("allocation retries", ReplayResult::allocRetries),
            // How fast this machine replayed, JIT warm-up included: in a short replay mostly warm-up, so not ranked.
            new Row(SPEED_ROW, Better.NONE, false, o -> count(Math.round(o.result().eventsPerSecond())),
                    o -> o.result().eventsPerSecond()));

    /** A row of bytes, lower better, shown and ranked on the same figure. */
    private static Row bytesRow(String name, boolean cachingOnly, ToLongFunction<ReplayResult> figure) {
        return new Row(name, Better.LOWER, cachingOnly, o -> bytes(figure.applyAsLong(o.result())),
                o -> figure.applyAsLong(o.result()));
    }

    /** A row of a count that every run is ranked on, lower better. */
    private static Row countRow(String name, ToLongFunction<ReplayResult> figure) {
        return new Row(name, Better.LOWER, false, o -> count(figure.applyAsLong(o.result())),
                o -> figure.applyAsLong(o.result()));
    }

    /**
     * Which runs are not ranked on memory held, given each run's device mallocs (and maps) and the allocations it
     * served: those that made at least one device malloc per allocation, as {@code direct} does (one for each), while
     * another run made fewer. Their reserved bytes stay close to what is live only because their allocations paid
     * device calls (tens of microseconds each; each free synchronises the device) that another run saved, so the rows
     * of memory held are not theirs to win. Where every run made as many (a trace with nothing to reuse), they paid
     * alike and all are ranked. The HTML report's table ({@code ComparisonTable}) applies the same rule.
     */
    static boolean[] notRankedOnMemoryHeld(long[] deviceMallocs, long[] allocationsServed) {
        long fewest = Long.MAX_VALUE;
        for (long m : deviceMallocs) {
            fewest = Math.min(fewest, m);
        }
        boolean[] out = new boolean[deviceMallocs.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = allocationsServed[i] > 0 && deviceMallocs[i] >= allocationsServed[i] && deviceMallocs[i] > fewest;
        }
        return out;
    }

    /** {@link #notRankedOnMemoryHeld(long[], long[])} of one trace's runs. */
    private static boolean[] notRankedOnMemoryHeld(List<ReplayOutcome> outcomes) {
        long[] mallocs = new long[outcomes.size()];
        long[] served = new long[outcomes.size()];
        for (int i = 0; i < mallocs.length; i++) {
            ReplayResult r = outcomes.get(i).result();
            mallocs[i] = r.deviceMallocs();
            served[i] = r.allocs() - r.ooms();
        }
        return notRankedOnMemoryHeld(mallocs, served);
    }

    /** The note under a table for a run whose rows of memory held were not ranked. */
    private static String notRankedNote(long deviceMallocs, long allocations, long fewest) {
        return "not ranked on " + CACHING_ONLY_ROWS + ": " + count(deviceMallocs) + " device mallocs for "
                + count(allocations) + " allocations, at least one device call per allocation where another run made "
                + count(fewest) + ", so its low figures there are paid for with those calls";
    }

    /** One trace's table, with what PyTorch did and the notes. */
    static void printTrace(PrintWriter out, List<ReplayOutcome> outcomes) {
        ReplayOutcome first = outcomes.getFirst();
        ReplayResult r0 = first.result();
        out.println(r0.trace() + " (" + TraceReplays.formatName(first.format()) + ", " + count(r0.events())
                + " events) on " + r0.device());
        out.println();
        List<String> labels = new ArrayList<>();
        for (ReplayOutcome o : outcomes) {
            labels.add(o.label());
        }
        TextTable table = table(labels);
        boolean[] unranked = notRankedOnMemoryHeld(outcomes);
        for (Row row : ROWS) {
            table.row(cells(row, outcomes, unranked));
        }
        boolean groundTruth = r0.groundTruth() != null;
        if (groundTruth) {
            List<Object> cells = new ArrayList<>();
            cells.add("same as PyTorch");
            for (ReplayOutcome o : outcomes) {
                cells.add(TraceReplays.groundTruthWord(o.result()));
                cells.add("");
            }
            table.row(cells.toArray());
        }
        table.print(out, "  ");
        if (groundTruth) {
            ReplayResult.GroundTruth g = r0.groundTruth();
            out.println();
            out.println("  PyTorch (the trace's segment rows): " + count(g.deviceMallocs()) + " device mallocs, "
                    + count(g.deviceFrees()) + " device frees, peak reserved " + bytes(g.peakReservedBytes()));
            // Only runs through the recording allocator can differ meaningfully; the others say why in a note.
            for (ReplayOutcome o : outcomes) {
                ReplayResult.GroundTruth og = o.result().groundTruth();
                if (og != null && !og.match() && GroundTruthComparability.comparable(o.result().allocator())) {
                    TextWrap.print(out, "  " + o.label() + ": ", "    ", og.firstDifference());
                }
            }
        }
        // A note every run has is printed once; so is a note several runs have, labelled with all of them.
        List<String> shared = new ArrayList<>(first.notes());
        for (ReplayOutcome o : outcomes) {
            shared.retainAll(o.notes());
        }
        for (String note : shared) {
            TextWrap.print(out, "  note: ", "    ", note);
        }
        Set<String> printed = new HashSet<>(shared);
        for (ReplayOutcome o : outcomes) {
            for (String note : o.notes()) {
                if (printed.add(note)) {
                    List<String> holders = new ArrayList<>();
                    for (ReplayOutcome other : outcomes) {
                        if (other.notes().contains(note)) {
                            holders.add(other.label());
                        }
                    }
                    TextWrap.print(out, "  note (" + String.join(", ", holders) + "): ", "    ", note);
                }
            }
        }
        // Not a replay note (the JSON has no marks): why a run's figures are left unmarked in this table.
        long fewest = Long.MAX_VALUE;
        for (ReplayOutcome o : outcomes) {
            fewest = Math.min(fewest, o.result().deviceMallocs());
        }
        for (int i = 0; i < outcomes.size(); i++) {
            ReplayResult r = outcomes.get(i).result();
            if (unranked[i]) {
                TextWrap.print(out, "  note (" + outcomes.get(i).label() + "): ", "    ",
                        notRankedNote(r.deviceMallocs(), r.allocs() - r.ooms(), fewest));
            }
        }
    }

    /**
     * One table over all traces: sums, except fragmentation (the mean) and speed (over all events). The runs are
     * labelled as the first trace's replays were (with what their allocators took from the environment).
     */
    private static void printAll(PrintWriter out, List<List<ReplayOutcome>> byTrace) {
        out.println("All " + byTrace.size() + " traces");
        out.println();
        List<String> labels = new ArrayList<>();
        for (ReplayOutcome o : byTrace.getFirst()) {
            labels.add(o.label());
        }
        int n = labels.size();
        long[] peak = new long[n];
        long[] mallocs = new long[n];
        long[] frees = new long[n];
        long[] ooms = new long[n];
        long[] served = new long[n];
        double[] fragmentation = new double[n];
        double[] seconds = new double[n];
        long[] events = new long[n];
        int[] matches = new int[n];
        int withGroundTruth = 0;
        for (List<ReplayOutcome> outcomes : byTrace) {
            if (outcomes.getFirst().result().groundTruth() != null) {
                withGroundTruth++;
            }
            for (int i = 0; i < n; i++) {
                ReplayResult r = outcomes.get(i).result();
                peak[i] += r.peakReservedBytes();
                mallocs[i] += r.deviceMallocs();
                frees[i] += r.deviceFrees();
                ooms[i] += r.ooms();
                served[i] += r.allocs() - r.ooms();
                fragmentation[i] += r.fragmentation() / byTrace.size();
                events[i] += r.events();
                seconds[i] += r.eventsPerSecond() > 0 ? r.events() / r.eventsPerSecond() : 0;
                if (r.groundTruth() != null && r.groundTruth().match()) {
                    matches[i]++;
                }
            }
        }
        // Over all traces, the same rule as each trace's table, on the sums.
        boolean[] unranked = notRankedOnMemoryHeld(mallocs, served);
        double[] peakRanked = new double[n];
        double[] fragmentationRanked = new double[n];
        long[] permille = roundedPermille(fragmentation);
        for (int i = 0; i < n; i++) {
            peakRanked[i] = unranked[i] ? Double.NaN : peak[i];
            fragmentationRanked[i] = unranked[i] ? Double.NaN : permille[i];
        }
        TextTable table = table(labels);
        table.row(marked("sum of peak reserved", Better.LOWER, peakRanked, i -> bytes(peak[i])));
        table.row(marked("mean fragmentation at peak", Better.LOWER, fragmentationRanked,
                i -> percent(fragmentation[i])));
        table.row(marked("device mallocs", Better.LOWER, mallocs, i -> count(mallocs[i])));
        table.row(marked("device frees", Better.LOWER, frees, i -> count(frees[i])));
        table.row(marked("out-of-memory errors", Better.LOWER, ooms, i -> count(ooms[i])));
        long[] speed = new long[n];
        for (int i = 0; i < n; i++) {
            speed[i] = seconds[i] > 0 ? Math.round(events[i] / seconds[i]) : 0;
        }
        table.row(marked(SPEED_ROW, Better.NONE, speed, i -> count(speed[i])));
        if (withGroundTruth > 0) {
            // Runs through another allocator than the recording one are not ranked: they cannot match.
            final int total = withGroundTruth;
            double[] ranked = new double[n];
            boolean[] comparable = new boolean[n];
            for (int i = 0; i < n; i++) {
                comparable[i] = GroundTruthComparability.comparable(byTrace.getFirst().get(i).result().allocator());
                ranked[i] = comparable[i] ? matches[i] : Double.NaN;
            }
            table.row(marked("same as PyTorch", Better.HIGHER, ranked,
                    i -> comparable[i] ? matches[i] + "/" + total : TraceReplays.NOT_COMPARABLE));
        }
        table.print(out, "  ");
    }

    /**
     * A table with a name column, then for each run a right-aligned figure column headed by the run's label and a
     * narrow column for the {@value #BEST} mark, so that figures line up whether or not they are marked. The figure
     * columns wrap, so that long labels (a long configuration, one from the environment) go onto more lines of the
     * header rather than past the width.
     */
    private static TextTable table(List<String> labels) {
        String[] headers = new String[1 + 2 * labels.size()];
        headers[0] = "";
        for (int i = 0; i < labels.size(); i++) {
            headers[1 + 2 * i] = labels.get(i);
            headers[2 + 2 * i] = "";
        }
        TextTable table = TextTable.withHeaders(headers);
        for (int i = 0; i < labels.size(); i++) {
            table.align(1 + 2 * i, TextTable.Align.RIGHT).wrap(1 + 2 * i);
        }
        return table;
    }

    /** A row's cells with the best marked; the {@code unranked} runs are not ranked in a caching-only row. */
    private static Object[] cells(Row row, List<ReplayOutcome> outcomes, boolean[] unranked) {
        double[] values = new double[outcomes.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = row.cachingOnly() && unranked[i] ? Double.NaN : row.value().applyAsDouble(outcomes.get(i));
        }
        boolean[] best = best(row.better(), values);
        Object[] cells = new Object[1 + 2 * values.length];
        cells[0] = row.name();
        for (int i = 0; i < values.length; i++) {
            cells[1 + 2 * i] = row.text().apply(outcomes.get(i));
            cells[2 + 2 * i] = best[i] ? BEST : "";
        }
        return cells;
    }

    private static Object[] marked(String name, Better better, long[] values,
                                   IntFunction<String> text) {
        double[] v = new double[values.length];
        for (int i = 0; i < v.length; i++) {
            v[i] = values[i];
        }
        return marked(name, better, v, text);
    }

    /** A row of {@code values} with the best marked; NaN values are not ranked. */
    private static Object[] marked(String name, Better better, double[] values, IntFunction<String> text) {
        boolean[] best = best(better, values);
        Object[] cells = new Object[1 + 2 * values.length];
        cells[0] = name;
        for (int i = 0; i < values.length; i++) {
            cells[1 + 2 * i] = text.apply(i);
            cells[2 + 2 * i] = best[i] ? BEST : "";
        }
        return cells;
    }

    /**
     * Which values are the best: the lowest (or highest), ties included; none when every value is the same (nothing
     * to choose), when fewer than two are ranked (NaN is not ranked) or when the row has no better direction.
     */
    private static boolean[] best(Better better, double[] values) {
        boolean[] best = new boolean[values.length];
        if (better == Better.NONE) {
            return best;
        }
        double target = Double.NaN;
        double first = Double.NaN;
        int ranked = 0;
        boolean allSame = true;
        for (double v : values) {
            if (Double.isNaN(v)) {
                continue;
            }
            if (ranked++ == 0) {
                first = v;
                target = v;
            }
            allSame &= v == first;
            target = better == Better.LOWER ? Math.min(target, v) : Math.max(target, v);
        }
        if (ranked < 2 || allSame) {
            return best;
        }
        for (int i = 0; i < values.length; i++) {
            best[i] = values[i] == target;
        }
        return best;
    }

    private static long[] roundedPermille(double[] fractions) {
        long[] out = new long[fractions.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.round(fractions[i] * 1000);
        }
        return out;
    }
}
