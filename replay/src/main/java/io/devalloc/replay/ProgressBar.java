package io.devalloc.replay;

import java.io.Console;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * A one-line progress bar for long replays, redrawn in place with a carriage return:
 * {@code replaying memory.csv [##########..........]  50%  1,234,567/2,469,134 events}. It appears only after the
 * replay has run for {@value #DELAY_MILLIS} ms (short replays print nothing), is redrawn at most every
 * {@value #REDRAW_MILLIS} ms, and is erased at the end. It is at most {@value #MAX_LENGTH} characters long (the
 * launcher's 120 columns, less one for the cursor): a longer label loses its beginning to {@code ...}.
 * {@link #forTerminal} gives one only when the launcher runs on a terminal, so that redirected output and tests never
 * see it. Not thread-safe.
 */
public final class ProgressBar implements ReplayProgress {

    static final long DELAY_MILLIS = 1000;
    static final long REDRAW_MILLIS = 100;
    private static final int WIDTH = 30;
    /** The longest line drawn: one less than the launcher's 120 columns, so the cursor never wraps. */
    static final int MAX_LENGTH = 119;
    private static final String ELLIPSIS = "...";

    private final PrintWriter out;
    private final String label;
    private final LongSupplier nanoClock;
    private final long start;
    private long lastDraw = Long.MIN_VALUE;
    private int drawnLength;

    ProgressBar(PrintWriter out, String label, LongSupplier nanoClock) {
        this.out = Objects.requireNonNull(out, "out");
        this.label = Objects.requireNonNull(label, "label");
        this.nanoClock = nanoClock;
        this.start = nanoClock.getAsLong();
    }

    /**
     * A bar on {@code err} when the JVM runs on a terminal ({@link System#console()} is one), else
     * {@link ReplayProgress#NONE}.
     */
    @SuppressWarnings("SystemConsoleNull") // isTerminal() decides; null remains possible (-Djdk.console)
    public static ReplayProgress forTerminal(PrintWriter err, String label) {
        Console console = System.console();
        if (console == null || !console.isTerminal()) {
            return NONE;
        }
        return new ProgressBar(err, label, System::nanoTime);
    }

    @Override
    public void update(long done, long total) {
        long now = nanoClock.getAsLong();
        if (now - start < DELAY_MILLIS * 1_000_000L) {
            return;
        }
        if (lastDraw != Long.MIN_VALUE && now - lastDraw < REDRAW_MILLIS * 1_000_000L) {
            return;
        }
        lastDraw = now;
        String line = line(label, done, total);
        StringBuilder sb = new StringBuilder().append('\r').append(line);
        if (line.length() < drawnLength) {
            sb.repeat(' ', drawnLength - line.length());
        }
        drawnLength = line.length();
        out.print(sb);
        out.flush();
    }

    @Override
    public void finish() {
        if (drawnLength > 0) {
            out.print("\r" + " ".repeat(drawnLength) + "\r");
            out.flush();
            drawnLength = 0;
        }
    }

    /** The bar's text for {@code done} of {@code total} events ({@code total} &lt; 0: not known, no bar). */
    static String line(String label, long done, long total) {
        String line = format(label, done, total);
        if (line.length() <= MAX_LENGTH) {
            return line;
        }
        int keep = Math.max(0, label.length() - (line.length() - MAX_LENGTH) - ELLIPSIS.length());
        return format(ELLIPSIS + label.substring(label.length() - keep), done, total);
    }

    private static String format(String label, long done, long total) {
        if (total < 0) {
            return String.format(Locale.ROOT, "replaying %s  %,d events", label, done);
        }
        double fraction = total <= 0 ? 1.0 : Math.min(1.0, (double) done / total);
        int filled = (int) Math.round(fraction * WIDTH);
        return String.format(Locale.ROOT, "replaying %s [%s%s] %3d%%  %,d/%,d events", label, "#".repeat(filled),
                ".".repeat(WIDTH - filled), Math.round(fraction * 100), done, total);
    }
}
