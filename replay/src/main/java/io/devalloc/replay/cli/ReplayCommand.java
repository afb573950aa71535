package io.devalloc.replay.cli;

import static io.devalloc.replay.cli.TraceReplays.bytesExact;
import static io.devalloc.replay.cli.TraceReplays.count;
import static io.devalloc.replay.cli.TraceReplays.percent;

import io.devalloc.replay.DeviceTrace;
import io.devalloc.replay.GroundTruthComparability;
import io.devalloc.replay.ReplayJson;
import io.devalloc.replay.ReplayObserver;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.ReplayResult;
import io.devalloc.trace.text.JsonWriter;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * {@code devalloc replay TRACE}: replays one allocation trace through one allocator and configuration on one device
 * and prints the figures, with PyTorch's own where the trace has them (see package {@code io.devalloc.replay} for the
 * rules). {@code --json} prints one JSON object instead ({@link ReplayJson}); {@code --html FILE} also writes the
 * HTML report ({@link io.devalloc.replay.report.HtmlReport}). Every file it will write is checked before the replay
 * ({@link OutputFiles}); one that still cannot be written at the end is reported, the rest is printed, and the exit
 * code is {@link ExitCodes#OUTPUT}.
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
                "  devalloc replay s.pickle --cuda-device 1 --config expandable_segments:True",
                "  devalloc replay s.pickle --config expandable_segments:True --export w.pickle",
                "  devalloc replay memory.csv --html report.html",
                "  devalloc replay trace.valgrind --allocator bfc --config allow_growth:true",
                "  devalloc replay trace.valgrind --device sim:16GiB"})
public final class ReplayCommand extends TraceCommand implements Callable<Integer> {

    /** A command for picocli to fill in from the command line. */
    public ReplayCommand() {
        super("Replay device N of a PyTorch snapshot only. Default: every device it holds, one after the other.",
                "Print one JSON object instead of the table.",
                "Also write a self-contained HTML report (memory over time, segment map at the peak).");
    }

    @Mixin
    SettingOption allocator = SettingOption.allocator(ReplayOptions.DEFAULT_ALLOCATOR);

    @Mixin
    SettingOption device = SettingOption.device(ReplayOptions.DEFAULT_DEVICE,
            "Device spec: sim:SIZE, host, cuda:N, ...");

    @Mixin
    SettingOption config = SettingOption.config(null, "expandable_segments:True or allow_growth:true",
            "for a PyTorch snapshot replayed through caching, the settings it recorded (allocator_settings);"
                    + " otherwise none");

    @Option(names = "--export", paramLabel = "FILE.pickle",
            description = "Also write the replay as a PyTorch memory snapshot (every device replayed; the allocator's"
                    + " memory history and its segments at the end), which PyTorch's memory viewer"
                    + " (https://pytorch.org/memory_viz) and torch.cuda.memory tools open. Needs the caching"
                    + " allocator.")
    Path export;

    @Option(names = "--warm",
            description = "PyTorch traces: restore the allocator's state from when recording began (the trace's "
                    + "presegment and prealloc rows) before replaying.")
    boolean warm;

    @Option(names = "--empty-cache-at-segment-free",
            description = "Release cached memory where the trace shows a run of segment_free or segment_unmap rows "
                    + "(where the program called torch.cuda.empty_cache()).")
    boolean emptyCacheAtSegmentFree;

    @Override
    public Integer call() {
        PrintWriter out = out();
        PrintWriter err = err();
        List<RunInstrumentation> instruments = instruments(spec);
        if (instruments.size() > 1) {
            throw new IllegalStateException("replay takes one RunInstrumentation mixin, got " + instruments);
        }
        int deviceIndex = cudaDevice.index();
        RunInstrumentation instrument = instruments.isEmpty() ? null : instruments.get(0);
        report.checkHtmlWritable();
        Exports exports = export == null ? null : Exports.to(export);
        List<String> configNotes = new ArrayList<>();
        String givenFrom = config.defaultSource();
        TraceReplays.DeviceReplays file;
        if (instrument == null) {
            file = TraceReplays.replayDevices(trace, deviceIndex, allocator.value(), device.value(), config.value(),
                    givenFrom, warm, emptyCacheAtSegmentFree, err, ReplayObserver.NONE,
                    exports == null ? null : exports::add, configNotes, false);
        } else {
            instrument.start();
            try {
                ReplayObserver observer = instrument.replayObserver();
                file = TraceReplays.replayDevices(trace, deviceIndex, allocator.value(), device.value(),
                        config.value(), givenFrom, warm, emptyCacheAtSegmentFree, err, observer,
                        exports == null ? null : exports::add, configNotes, !ReplayObserver.NONE.equals(observer));
            } catch (RuntimeException | Error e) {
                instrument.finish(out, err, report.json(), true);
                throw e;
            }
        }
        List<TraceReplays.DeviceReplay> replays = file.devices();
        List<ReplayOutcome> outcomes = new ArrayList<>();
        for (TraceReplays.DeviceReplay r : replays) {
            List<String> notes = new ArrayList<>(configNotes);
            notes.addAll(r.outcome().notes());
            outcomes.add(r.outcome().withNotes(notes));
        }
        // A file that cannot be written at the end is reported, and the figures, the meters and the recording are
        // still given: the run is what took the time.
        boolean exported = false;
        if (exports != null) {
            try {
                exports.write(file);
                exported = true;
            } catch (UncheckedIOException e) {
                OutputFiles.reportFailure(err, "--export", export, e);
            }
        }
        boolean reported = report.writeHtml(err, page -> TraceReplays.writeReport(page, "devalloc replay " + trace
                + " (" + outcomes.getFirst().label() + " on " + device.value() + ")", outcomes));
        boolean json = report.json();
        if (json) {
            if (!file.several()) {
                out.println(JsonWriter.toString(deviceJson(replays.getFirst(), outcomes.getFirst()), false));
            } else {
                List<Object> all = new ArrayList<>();
                for (int i = 0; i < outcomes.size(); i++) {
                    all.add(deviceJson(replays.get(i), outcomes.get(i)));
                }
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("trace", trace.toString());
                m.put("devices", all);
                m.put("unused_devices", file.unusedDevices());
                TraceReplays.DeviceReplay most = DeviceSummary.mostReserved(file);
                m.put("most_memory_device", most.cudaDevice() == DeviceTrace.NO_DEVICE ? null
                        : most.cudaDevice());
                out.println(JsonWriter.toString(m, false));
            }
        } else {
            if (file.several()) {
                DeviceSummary.print(out, trace.toString(), file);
                out.println();
            }
            for (int i = 0; i < outcomes.size(); i++) {
                if (i > 0) {
                    out.println();
                }
                print(out, outcomes.get(i), replays.get(i).label());
            }
            if (reported) {
                out.println();
                out.println("HTML report: " + report.html());
            }
            if (exported) {
                out.println((reported ? "" : "\n") + "PyTorch snapshot: " + export + " (open it in"
                        + " https://pytorch.org/memory_viz)");
            }
        }
        boolean recorded = instrument == null || instrument.finish(out, err, json, false);
        boolean written = (exports == null || exported) && (report.html() == null || reported) && recorded;
        return written ? ExitCodes.OK : ExitCodes.OUTPUT;
    }

    /** A device's replay as JSON: {@link ReplayJson}'s object, then the CUDA device and whether it has a history. */
    private static Map<String, Object> deviceJson(TraceReplays.DeviceReplay replay, ReplayOutcome outcome) {
        Map<String, Object> m = new LinkedHashMap<>(ReplayJson.toMap(outcome));
        m.put("cuda_device", replay.cudaDevice() == DeviceTrace.NO_DEVICE ? null : replay.cudaDevice());
        m.put("history", replay.history());
        return m;
    }

    /** The mixins a launcher added that watch the run. */
    static List<RunInstrumentation> instruments(CommandSpec spec) {
        List<RunInstrumentation> found = new ArrayList<>();
        for (CommandSpec mixin : spec.mixins().values()) {
            if (mixin.userObject() instanceof RunInstrumentation instrument) {
                found.add(instrument);
            }
        }
        return found;
    }

    static void print(PrintWriter out, ReplayOutcome outcome) {
        print(out, outcome, "");
    }

    static void print(PrintWriter out, ReplayOutcome outcome, String deviceLabel) {
        ReplayResult r = outcome.result();
        out.println("Replay of " + r.trace() + " (" + TraceReplays.formatName(outcome.format())
                + (deviceLabel.isEmpty() || r.trace().endsWith(deviceLabel) ? "" : ", " + deviceLabel) + ", "
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
                    : "DIFFERS"));
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
