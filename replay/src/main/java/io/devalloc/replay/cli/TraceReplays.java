package io.devalloc.replay.cli;

import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.ProgressBar;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayOutcome;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceSource;
import io.devalloc.replay.TraceSources;
import io.devalloc.replay.report.HtmlReport;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
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

    private TraceReplays() {
    }

    /**
     * Replays the trace at {@code path} with {@code options}; a progress bar goes to {@code err} on a terminal.
     *
     * @throws IllegalArgumentException for a missing, unreadable or malformed trace (a usage error, exit 2)
     */
    static ReplayOutcome replay(Path path, ReplayOptions options, PrintWriter err, String progressLabel) {
        String name = path.toString();
        TraceSource source = sources.apply(path);
        Replayer replayer = new Replayer(options, ProgressBar.forTerminal(err, progressLabel));
        try {
            return replayer.replay(name, source);
        } catch (TraceFormatException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("no such trace file: " + e.getFile(), e);
        } catch (AccessDeniedException e) {
            throw new IllegalArgumentException("trace file is not readable: " + e.getFile(), e);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read trace " + name + ": " + e.getMessage(), e);
        }
    }

    /**
     * Writes the HTML report of {@code outcomes} to {@code file}.
     *
     * @throws IllegalArgumentException when the file cannot be written (a usage error, exit 2)
     */
    static void writeReport(Path file, String title, List<ReplayOutcome> outcomes) {
        List<ReplayResult> results = new ArrayList<>(outcomes.size());
        for (ReplayOutcome o : outcomes) {
            results.add(o.result());
        }
        try {
            HtmlReport.write(file, title, results);
        } catch (UncheckedIOException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** {@code PyTorch CSV} for {@link TraceFormat#PYTORCH_CSV}. */
    static String formatName(TraceFormat format) {
        return switch (format) {
            case PYTORCH_PICKLE -> "PyTorch snapshot pickle";
            case PYTORCH_CSV -> "PyTorch CSV";
            case RMM_CSV -> "RMM replay log";
            case VALGRIND -> "valgrind malloc trace";
            case ANDROID_MEMORY_REPLAY -> "Android memory_replay";
        };
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

    /** {@code 12.3%}. */
    static String percent(double fraction) {
        return String.format(Locale.ROOT, "%.1f%%", fraction * 100);
    }

    /** {@code MATCH}, {@code differs}, or {@code -} when the trace has no ground truth. */
    static String groundTruthWord(ReplayResult r) {
        ReplayResult.GroundTruth g = r.groundTruth();
        return g == null ? "-" : g.match() ? "MATCH" : "differs";
    }
}
