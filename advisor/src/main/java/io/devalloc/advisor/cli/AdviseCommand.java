package io.devalloc.advisor.cli;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.AdvisorTrace;
import io.devalloc.advisor.Objective;
import io.devalloc.advisor.report.AdviceHtml;
import io.devalloc.advisor.report.AdviceJson;
import io.devalloc.advisor.report.AdviceText;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.ProgressBar;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.trace.TraceFormatException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code devalloc advise TRACE}: replays a trace under a grid of allocator settings, finds the smallest device each
 * runs on and recommends one (see package {@code io.devalloc.advisor} for the rules). Bad input (a missing or
 * malformed trace, an unknown allocator, grid or objective, a capacity below the trace's first request, a trace
 * without allocations) throws {@link IllegalArgumentException} or a {@link io.devalloc.api.error.DevallocException}
 * before any output: the launcher turns it into one error line and exit code 2.
 */
@Command(name = "advise",
        mixinStandardHelpOptions = true,
        header = "Replay a trace under many allocator settings, find the memory it needs and recommend a setting.",
        description = {"Replays the trace (any format 'devalloc replay' reads; PyTorch snapshot pickles are the main"
                + " case) first under the settings it was recorded with, warm, to show whether the replay reproduces"
                + " what PyTorch's allocator did (MATCH or the first difference), then under every setting of a grid,"
                + " each from an empty allocator. For each setting it finds the smallest device capacity, to 2 MiB,"
                + " on which the whole trace runs without an out-of-memory error, and reports peak reserved,"
                + " allocated and requested bytes, fragmentation, device calls and retries. It recommends the best"
                + " setting for the objective, as a line to paste, with the saving against the recorded settings.",
                "",
                "The grid is 'default' (the allocator's built-in grid) or a file of configuration texts, one per"
                + " line (# comments; 'defaults' for the allocator's defaults)."},
        footer = {"", "Examples:",
                "  devalloc advise memory.pickle",
                "  devalloc advise memory.pickle --capacity 24GiB --html advice.html",
                "  devalloc advise memory.pickle --grid my-settings.txt --objective reserved --json",
                "  devalloc advise trace.valgrind --allocator bfc"})
public final class AdviseCommand implements Callable<Integer> {

    /** A command for picocli to fill in from the command line. */
    public AdviseCommand() {
    }

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TRACE", description = "The trace file.")
    Path trace;

    @Option(names = "--allocator", paramLabel = "NAME", defaultValue = ReplayOptions.DEFAULT_ALLOCATOR,
            description = "Allocator: caching, bfc, caching-host or any plug-in with a grid. Default:"
                    + " ${DEFAULT-VALUE}.")
    String allocator;

    @Option(names = "--grid", paramLabel = "NAME|FILE", defaultValue = "default",
            description = "The settings to try: 'default' (the allocator's built-in grid) or a file of configuration"
                    + " texts, one per line. Default: ${DEFAULT-VALUE}.")
    String grid;

    @Option(names = "--capacity", paramLabel = "SIZE",
            description = "Your device's capacity (e.g. 24GiB): also says, for each setting, whether the trace runs"
                    + " there and how many allocations fail.")
    String capacity;

    @Option(names = "--objective", paramLabel = "NAME", defaultValue = "capacity",
            description = "What to minimise: capacity (the smallest device that runs the trace), reserved (peak"
                    + " reserved bytes) or device-calls (device mallocs and frees). Default: ${DEFAULT-VALUE}.")
    String objective;

    @Option(names = "--threads", paramLabel = "N",
            description = "Replays at once. Default: the machine's processors.")
    Integer threads;

    @Option(names = "--json", description = "Print one JSON object instead of the table (schema: docs/advisor.md).")
    boolean json;

    @Option(names = "--html", paramLabel = "FILE", description = "Also write a self-contained HTML page.")
    Path html;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Objective goal = Objective.of(objective);
        long capacityBytes = capacity == null ? -1 : parseCapacity(capacity);
        int n = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
        if (n < 1) {
            throw new IllegalArgumentException("--threads must be at least 1, got " + n);
        }
        Advisor.Options options = new Advisor.Options(allocator, grid, capacityBytes, goal, n);
        AdvisorTrace read = read(trace);
        Advisor advisor = new Advisor();
        Advice advice = advisor.advise(read, options, ProgressBar.forTerminal(err, "advise " + trace.getFileName()));
        if (html != null) {
            try {
                AdviceHtml.write(html, advice);
            } catch (UncheckedIOException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
        }
        if (json) {
            out.println(AdviceJson.toJson(advice, true));
        } else {
            AdviceText.print(out, advice);
            if (html != null) {
                out.println();
                out.println("HTML report: " + html);
            }
        }
        return 0;
    }

    private static long parseCapacity(String text) {
        try {
            return ByteSize.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--capacity: " + e.getMessage(), e);
        }
    }

    private static AdvisorTrace read(Path path) {
        try {
            return AdvisorTrace.read(path);
        } catch (TraceFormatException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("no such trace file: " + e.getFile(), e);
        } catch (AccessDeniedException e) {
            throw new IllegalArgumentException("trace file is not readable: " + e.getFile(), e);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read trace " + path + ": " + e.getMessage(), e);
        }
    }
}
