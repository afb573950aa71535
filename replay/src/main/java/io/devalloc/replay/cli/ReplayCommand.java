package io.devalloc.replay.cli;

import static io.devalloc.replay.cli.TraceReplays.bytesExact;
import static io.devalloc.replay.cli.TraceReplays.count;
import static io.devalloc.replay.cli.TraceReplays.percent;

import io.devalloc.replay.GroundTruthComparability;
import io.devalloc.replay.ReplayJson;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.ReplayResult;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code devalloc replay TRACE}: replays one allocation trace through one allocator and configuration on one device
 * and prints the figures, with PyTorch's own where the trace has them (see package {@code io.devalloc.replay} for the
 * rules). {@code --json} prints one JSON object instead ({@link ReplayJson}); {@code --html FILE} also writes the
 * HTML report ({@link io.devalloc.replay.report.HtmlReport}).
 */
@Command(name = "replay",
        mixinStandardHelpOptions = true,
        header = "Replay an allocation trace through an allocator and print its figures.",
        description = {"Replay an allocation trace (PyTorch snapshot pickle or CSV, RMM replay log, valgrind or "
                + "Android memory_replay malloc trace; the format is detected from the content) through an allocator "
                + "on a device, and print what the allocator did: allocations, device mallocs and frees, peak "
                + "reserved, allocated and requested bytes, fragmentation at the peak, out-of-memory errors, speed. "
                + "For PyTorch traces, also what PyTorch's allocator did (the trace's segment rows): MATCH or the "
                + "first difference.",
                "",
                "Unless told otherwise it replays through PyTorch's caching allocator on a simulated 80 GiB GPU, "
                + "where 'devalloc demo' uses the direct allocator on the device 'auto' picks: PyTorch's traces are "
                + "compared with what that allocator did, and a replay measures allocator decisions, which need no "
                + "memory behind the addresses and give the same figures on every machine. --device, --allocator "
                + "and --config, or DEVALLOC_DEVICE, DEVALLOC_ALLOCATOR and DEVALLOC_CONFIG, choose others; the "
                + "options win."},
        footer = {"", "Examples:",
                "  devalloc replay memory.csv",
                "  devalloc replay memory.csv --config expandable_segments:True",
                "  devalloc replay snapshot.pickle --warm --json",
                "  devalloc replay memory.csv --html report.html",
                "  devalloc replay trace.valgrind --allocator bfc --config allow_growth:true",
                "  devalloc replay trace.valgrind --device sim:16GiB"})
public final class ReplayCommand implements Callable<Integer> {

    /** A command for picocli to fill in from the command line. */
    public ReplayCommand() {
    }

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TRACE", description = "The trace file.")
    Path trace;

    @Option(names = "--allocator", paramLabel = "NAME", defaultValue = ReplayOptions.DEFAULT_ALLOCATOR,
            description = "Allocator: direct, bfc, caching, caching-host or any plug-in ('devalloc devices' lists "
                    + "them). Default: ${DEFAULT-VALUE} (DEVALLOC_ALLOCATOR sets it).")
    String allocator;

    @Option(names = "--device", paramLabel = "SPEC", defaultValue = ReplayOptions.DEFAULT_DEVICE,
            description = "Device spec: sim:SIZE, host, cuda:N, ... Default: ${DEFAULT-VALUE} (DEVALLOC_DEVICE "
                    + "sets it).")
    String device;

    @Option(names = "--config", paramLabel = "K:V,...", defaultValue = "",
            description = "The allocator's configuration, key:value pairs separated by commas, passed to it "
                    + "unchanged, e.g. expandable_segments:True or allow_growth:true. Default: none (DEVALLOC_CONFIG "
                    + "sets one; without one, caching reads PYTORCH_CUDA_ALLOC_CONF). --conf is the same option.")
    String config;

    /**
     * {@code --conf}, the older name of {@code --config}, still accepted (the help shows {@code --config} only); null
     * unless given. A separate option because picocli gives an unmatched option its default after parsing, which
     * would overwrite a value the alias set; the launcher refuses both names at once.
     */
    @Option(names = "--conf", paramLabel = "K:V,...", hidden = true)
    String conf;

    /** The configuration given with {@code --config} or {@code --conf}, else the default. */
    private String config() {
        return conf != null ? conf : config;
    }

    @Option(names = "--warm",
            description = "PyTorch traces: restore the allocator's state from when recording began (the trace's "
                    + "presegment and prealloc rows) before replaying.")
    boolean warm;

    @Option(names = "--empty-cache-at-segment-free",
            description = "Release cached memory where the trace shows a run of segment_free or segment_unmap rows "
                    + "(where the program called torch.cuda.empty_cache()).")
    boolean emptyCacheAtSegmentFree;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    @Option(names = "--html", paramLabel = "FILE",
            description = "Also write a self-contained HTML report (memory over time, segment map at the peak).")
    Path html;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ReplayOptions options = new ReplayOptions(allocator, device, config(), warm, emptyCacheAtSegmentFree);
        List<RunInstrumentation> instruments = instruments(spec);
        if (instruments.size() > 1) {
            throw new IllegalStateException("replay takes one RunInstrumentation mixin, got " + instruments);
        }
        RunInstrumentation instrument = instruments.isEmpty() ? null : instruments.get(0);
        ReplayOutcome outcome;
        if (instrument == null) {
            outcome = TraceReplays.replay(trace, options, err, trace.toString());
        } else {
            instrument.start();
            try {
                outcome = TraceReplays.replay(trace, options, err, trace.toString(), instrument.replayObserver());
            } catch (RuntimeException | Error e) {
                instrument.finish(out, err, json, true);
                throw e;
            }
        }
        if (html != null) {
            TraceReplays.writeReport(html, "devalloc replay " + trace + " (" + outcome.label() + " on " + device + ")",
                    List.of(outcome));
        }
        if (json) {
            out.println(ReplayJson.toJson(outcome, false));
        } else {
            print(out, outcome);
            if (html != null) {
                out.println();
                out.println("HTML report: " + html);
            }
        }
        if (instrument != null) {
            instrument.finish(out, err, json, false);
        }
        return ExitCodes.OK;
    }

    /** The mixins a launcher added that watch the run. */
    static List<RunInstrumentation> instruments(CommandSpec spec) {
        List<RunInstrumentation> found = new java.util.ArrayList<>();
        for (CommandSpec mixin : spec.mixins().values()) {
            if (mixin.userObject() instanceof RunInstrumentation instrument) {
                found.add(instrument);
            }
        }
        return found;
    }

    static void print(PrintWriter out, ReplayOutcome outcome) {
        ReplayResult r = outcome.result();
        out.println("Replay of " + r.trace() + " (" + TraceReplays.formatName(outcome.format()) + ", "
                + count(r.events()) + " events)");
        out.println();
        TextTable table = TextTable.withoutHeaders(2).wrap(1);
        table.row("allocator", r.allocator());
        table.row("config", r.conf().isBlank() ? "(defaults)" : r.conf());
        table.row("device", r.device() + ": " + outcome.deviceName());
        table.row("warm start", switch (outcome.warmStart()) {
            case NONE -> "no";
            case RESTORED -> "restored " + outcome.restoredSegments() + " segments, " + outcome.restoredBlocks()
                    + " blocks";
            case MALLOC -> outcome.restoredBlocks() + " blocks allocated with malloc";
        });
        table.row("events", count(r.events()));
        table.row("allocations", count(r.allocs()));
        table.row("frees", count(r.frees()));
        table.row("unknown frees (skipped)", count(outcome.unknownFrees()));
        table.row("out-of-memory errors", count(r.ooms()));
        table.row("allocation retries", count(r.allocRetries()));
        table.row("device mallocs / frees", count(r.deviceMallocs()) + " / " + count(r.deviceFrees()));
        table.row("peak reserved", bytesExact(r.peakReservedBytes()));
        table.row("peak allocated", bytesExact(r.peakAllocatedBytes()));
        table.row("peak requested", bytesExact(r.peakRequestedBytes()));
        table.row("end reserved", bytesExact(r.endReservedBytes()));
        table.row("fragmentation at peak", percent(r.fragmentation()) + " (1 - allocated/reserved), "
                + percent(r.requestedFragmentation()) + " (1 - requested/reserved)");
        if (outcome.emptyCacheCalls() > 0) {
            table.row("empty-cache calls", count(outcome.emptyCacheCalls()));
        }
        table.row("events per second", count(Math.round(r.eventsPerSecond())));
        table.print(out, "  ");

        ReplayResult.GroundTruth g = r.groundTruth();
        if (g != null) {
            boolean comparable = GroundTruthComparability.comparable(r.allocator());
            out.println();
            out.println("Compared with the trace's own segment rows (what PyTorch's allocator did): "
                    + (!comparable ? TraceReplays.NOT_COMPARABLE + " (see the notes)" : g.match() ? "MATCH"
                    : "DIFFERENT"));
            out.println();
            TextTable gt = TextTable.withHeaders("", "THIS REPLAY", "THE TRACE")
                    .align(1, TextTable.Align.RIGHT)
                    .align(2, TextTable.Align.RIGHT);
            gt.row("device mallocs", count(r.deviceMallocs()), count(g.deviceMallocs()));
            gt.row("device frees", count(r.deviceFrees()), count(g.deviceFrees()));
            gt.row("peak reserved", count(r.peakReservedBytes()) + " B", count(g.peakReservedBytes()) + " B");
            gt.print(out, "  ");
            if (comparable && !g.match()) {
                out.println();
                TextWrap.print(out, "  first difference: ", "    ", g.firstDifference());
            }
        }
        if (!outcome.notes().isEmpty()) {
            out.println();
            out.println("Notes:");
            for (String note : outcome.notes()) {
                TextWrap.print(out, "  - ", "    ", note);
            }
        }
    }
}
