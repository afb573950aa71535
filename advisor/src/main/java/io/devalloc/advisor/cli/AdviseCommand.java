package io.devalloc.advisor.cli;

import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.JobAdvice;
import io.devalloc.advisor.MinSaving;
import io.devalloc.advisor.Objective;
import io.devalloc.advisor.report.AdviceHtml;
import io.devalloc.advisor.report.AdviceJson;
import io.devalloc.advisor.report.AdviceText;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.ProgressBar;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.TraceFile;
import io.devalloc.replay.cli.ExitCodes;
import io.devalloc.replay.cli.OutputFiles;
import io.devalloc.replay.cli.SettingOption;
import io.devalloc.replay.cli.TraceCommand;
import io.devalloc.replay.cli.TraceReplays;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code devalloc advise TRACE}: replays a trace under a grid of allocator settings, finds the smallest device each
 * runs on and recommends one (see package {@code io.devalloc.advisor} for the rules). Bad input (a missing or
 * malformed trace, an unknown allocator, grid or objective, a capacity below the trace's first request, a trace
 * without allocations) throws {@link IllegalArgumentException} or a {@link io.devalloc.api.error.DevallocException}
 * before any output: the launcher turns it into one error line and exit code 2; so does an {@code --html} file that
 * cannot be written ({@link OutputFiles#checkWritable}). One that still cannot be written after the replays is
 * reported on one line, the advice is printed, and the exit code is {@link ExitCodes#OUTPUT}.
 */
@Command(name = "advise",
        mixinStandardHelpOptions = true,
        header = "Replay a trace under many allocator settings, find the memory it needs and recommend a setting.",
        description = {"Replays the trace (any format 'devalloc replay' reads; PyTorch snapshot pickles are the main"
                + " case) first under the settings it was recorded with, warm, to show whether the replay reproduces"
                + " what PyTorch's allocator did (MATCH or the first difference), then under every setting of a grid,"
                + " each from an empty allocator: on an unlimited device (what it needs with no cache flush), on"
                + " your card (--capacity, or the capacity the trace tells: its out-of-memory errors, the"
                + " allocator's own cache flushes) and on the smallest device that runs it. It recommends the best"
                + " setting for the objective, as a line to paste, only when the change is worth it: it avoids an"
                + " out-of-memory error, removes cache flushes, or saves at least --min-saving.",
                "",
                "A snapshot of a job on several GPUs is advised device by device (--cuda-device N for one). The grid"
                + " is 'default' (the allocator's built-in grid) or a file of configuration texts, one per line (#"
                + " comments; 'defaults' for the allocator's defaults)."},
        footer = {"", "Examples:",
                "  devalloc advise memory.pickle",
                "  devalloc advise memory.pickle --capacity 24GiB --html advice.html",
                "  devalloc advise memory.pickle --cuda-device 1 --json",
                "  devalloc advise memory.pickle --grid settings.txt --objective capacity",
                "  devalloc advise trace.valgrind --allocator bfc"})
public final class AdviseCommand extends TraceCommand implements Callable<Integer> {

    /** A command for picocli to fill in from the command line. */
    public AdviseCommand() {
        super("Advise on device N of a PyTorch snapshot only. Default: every device it holds.",
                "Print one JSON object instead of the table (schema: docs/advisor.md).",
                "Also write a self-contained HTML page.");
    }

    @Mixin
    SettingOption allocator = SettingOption.allocator(ReplayOptions.DEFAULT_ALLOCATOR,
            "Allocator: caching, bfc, caching-host or any plug-in with a grid. Default: ${DEFAULT-VALUE}.");

    @Option(names = "--grid", paramLabel = "NAME|FILE", defaultValue = "default",
            description = "The settings to try: 'default' (the allocator's built-in grid) or a file of configuration"
                    + " texts, one per line. Default: ${DEFAULT-VALUE}.")
    String grid;

    @Option(names = "--capacity", paramLabel = "SIZE",
            description = "The memory PyTorch's allocator may hold on your card (e.g. 24GiB or 23.5GiB, rounded down"
                    + " to bytes): every setting is replayed on a device of that size, and ranked by what it costs"
                    + " there. Default: the capacity the trace tells, if it does.")
    String capacity;

    @Option(names = "--objective", paramLabel = "NAME", defaultValue = "reserved",
            description = "What to minimise: reserved (no out-of-memory error, then fewest cache flushes, then lowest"
                    + " peak reserved, on the card), capacity (the smallest device that runs the trace, flushing as"
                    + " often as it must) or device-calls (device mallocs and frees on the card). Default:"
                    + " ${DEFAULT-VALUE}.")
    String objective;

    @Option(names = "--min-saving", paramLabel = "MARGIN", defaultValue = "1%,64MiB",
            description = "The least saving worth a change of setting, when it avoids no out-of-memory error and no"
                    + " flush: a percentage, a size or both (e.g. 2%%,128MiB; 0 for none). Default: ${DEFAULT-VALUE}.")
    String minSaving;

    @Option(names = "--threads", paramLabel = "N",
            description = "Replays at once. Default: the machine's processors.")
    Integer threads;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = out();
        PrintWriter err = err();
        Objective goal = Objective.of(objective);
        long capacityBytes = capacity == null ? -1 : parseCapacity(capacity);
        MinSaving margin = MinSaving.parse(minSaving);
        int n = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
        if (n < 1) {
            throw new IllegalArgumentException("--threads must be at least 1, got " + n);
        }
        int deviceIndex = cudaDevice.index();
        report.checkHtmlWritable();
        Advisor.Options options = new Advisor.Options(allocator.value(), grid, capacityBytes, goal, n, margin);
        TraceFile read = TraceReplays.readFile(trace, deviceIndex);
        Advisor advisor = new Advisor();
        JobAdvice advice = advisor.advise(read, options, ProgressBar.forTerminal(err, "advise "
                + trace.getFileName()));
        boolean reported = report.writeHtml(err, file -> AdviceHtml.write(file, advice));
        if (report.json()) {
            out.println(AdviceJson.toJson(advice, true));
        } else {
            AdviceText.print(out, advice);
            if (reported) {
                out.println();
                out.println("HTML report: " + report.html());
            }
        }
        return report.html() == null || reported ? ExitCodes.OK : ExitCodes.OUTPUT;
    }

    /** {@code --capacity}: a size, decimals allowed and rounded down to a whole byte ({@code 1.7GiB}). */
    static long parseCapacity(String text) {
        try {
            return ByteSize.parseRoundingDown(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--capacity: " + e.getMessage(), e);
        }
    }

}
