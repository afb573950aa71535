package io.devalloc.replay.report;

import static io.devalloc.replay.report.Markup.esc;
import static io.devalloc.replay.report.Markup.num;

import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.ReplayResult.Timeline;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The memory-over-time chart of one trace, as inline SVG: reserved bytes (solid) and allocated bytes (dashed) of
 * every result on that trace against the event index, one colour per allocator set-up, with the peak reserved
 * marked. The y axis is in the binary unit that suits the largest value shown (B, KiB, MiB, GiB, TiB).
 *
 * <p>One set-up must not hide the others: {@code bfc} without growth, for one, reserves the whole 80 GiB device at
 * its first allocation, and on an axis up to 80 GiB every other set-up's lines would lie flat along the bottom. So a
 * set-up whose largest value (reserved or allocated) is more than {@value #OFF_SCALE_RATIO} times the median
 * set-up's (the lower median of the set-ups that hold any memory) is drawn <em>off the scale</em>: the y axis ends
 * at the largest value of the others, the off-scale lines run along the top of the plot where they are beyond it,
 * an arrow at the top marks each one's peak with its exact value in its hover title, and a caption under the chart
 * names them with their peaks and states the rule. One scale for all (rather than one per set-up) keeps the lines
 * that are shown comparable with each other, and the rule is simple enough to state on the page.
 *
 * <p>Timelines longer than a few points per pixel are thinned by keeping, for each pixel column, the first, the
 * lowest, the highest and the last sample, so peaks survive and the SVG stays small whatever the sample count.
 */
final class MemoryChart {

    static final int WIDTH = 1200;
    static final int HEIGHT = 380;
    private static final int LEFT = 78;
    private static final int RIGHT = 18;
    private static final int TOP = 14;
    private static final int BOTTOM = 48;
    private static final double PLOT_W = WIDTH - LEFT - RIGHT;
    private static final double PLOT_H = HEIGHT - TOP - BOTTOM;

    private static final long[] UNITS = {ByteSize.TiB, ByteSize.GiB, ByteSize.MiB, ByteSize.KiB, 1};
    private static final String[] UNIT_NAMES = {"TiB", "GiB", "MiB", "KiB", "B"};

    /**
     * How many times the median set-up's largest value a set-up's largest value may be before it is drawn off the
     * scale.
     */
    static final int OFF_SCALE_RATIO = 4;

    private MemoryChart() {
    }

    /** The chart of the results of one trace, with its legend, as an HTML {@code <figure>}. */
    static String render(String trace, List<ReplayResult> results, List<Series> series) {
        StringBuilder out = new StringBuilder(16_384);
        out.append("<figure class=\"chart\">\n");
        legend(out, series);

        // Each timeline with its result's peak in it: the sampler thins its samples, and the peak the headline and
        // the JSON give must be a point of the line and the marker, at its own event.
        List<Timeline> drawn = new ArrayList<>(results.size());
        for (ReplayResult r : results) {
            drawn.add(withPeak(r));
        }
        long[] largest = new long[results.size()];
        long maxEvent = 1;
        for (int r = 0; r < results.size(); r++) {
            Timeline t = drawn.get(r);
            for (int i = 0; i < t.size(); i++) {
                largest[r] = Math.max(largest[r], Math.max(t.allocatedAt(i), t.reservedAt(i)));
                maxEvent = Math.max(maxEvent, t.eventAt(i));
            }
            maxEvent = Math.max(maxEvent, results.get(r).events());
        }
        boolean[] offScale = offScale(largest);
        long maxBytes = 0;
        for (int r = 0; r < largest.length; r++) {
            if (!offScale[r]) {
                maxBytes = Math.max(maxBytes, largest[r]);
            }
        }
        Axis y = byteAxis(maxBytes);
        Axis x = countAxis(maxEvent);

        out.append("<svg class=\"chart-svg\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
                .append("\" role=\"img\" aria-label=\"Allocated and reserved bytes over the replay of ")
                .append(esc(trace)).append("\">\n");
        out.append("<title>Allocated and reserved bytes over the replay of ").append(esc(trace)).append("</title>\n");

        // Grid and tick labels.
        out.append("<g class=\"grid\">\n");
        for (int k = 0; k <= y.ticks; k++) {
            double py = TOP + PLOT_H - PLOT_H * k / y.ticks;
            out.append("<line x1=\"").append(LEFT).append("\" y1=\"").append(num(py)).append("\" x2=\"")
                    .append(num(LEFT + PLOT_W)).append("\" y2=\"").append(num(py)).append("\"/>\n");
        }
        for (int k = 0; k <= x.ticks; k++) {
            double px = LEFT + PLOT_W * k / x.ticks;
            out.append("<line x1=\"").append(num(px)).append("\" y1=\"").append(TOP).append("\" x2=\"")
                    .append(num(px)).append("\" y2=\"").append(num(TOP + PLOT_H)).append("\"/>\n");
        }
        out.append("</g>\n<g class=\"ticks\">\n");
        for (int k = 0; k <= y.ticks; k++) {
            double py = TOP + PLOT_H - PLOT_H * k / y.ticks;
            out.append("<text class=\"ytick\" x=\"").append(LEFT - 8).append("\" y=\"").append(num(py + 4))
                    .append("\">").append(esc(y.label(k))).append("</text>\n");
        }
        for (int k = 0; k <= x.ticks; k++) {
            double px = LEFT + PLOT_W * k / x.ticks;
            out.append("<text class=\"xtick\" x=\"").append(num(px)).append("\" y=\"")
                    .append(num(TOP + PLOT_H + 18)).append("\">").append(esc(x.label(k))).append("</text>\n");
        }
        out.append("<text class=\"axis-title\" x=\"").append(num(LEFT + PLOT_W / 2)).append("\" y=\"")
                .append(HEIGHT - 6).append("\">event index</text>\n");
        out.append("</g>\n");
        out.append("<rect class=\"frame\" x=\"").append(LEFT).append("\" y=\"").append(TOP).append("\" width=\"")
                .append(num(PLOT_W)).append("\" height=\"").append(num(PLOT_H)).append("\"/>\n");
        // Reserved lines first, then allocated on top (allocated never exceeds reserved, so both stay visible).
        for (int pass = 0; pass < 2; pass++) {
            boolean reserved = pass == 0;
            for (int i = 0; i < results.size(); i++) {
                Timeline t = drawn.get(i);
                if (t.size() == 0) {
                    continue;
                }
                long[] values = reserved ? t.reserved() : t.allocated();
                Series s = series.get(i);
                out.append("<polyline class=\"").append(reserved ? "reserved" : "allocated")
                        .append(offScale[i] ? " off-scale" : "").append("\" stroke=\"").append(s.colour())
                        .append("\" points=\"");
                appendPoints(out, t.event(), values, x.extent, y.extent);
                out.append("\"><title>").append(esc(s.label())).append(" · ")
                        .append(reserved ? "reserved" : "allocated").append("</title></polyline>\n");
            }
        }
        // The peak reserved of each result, marked at its event (the result's own peak; for a result without one,
        // the first highest sample).
        for (int i = 0; i < results.size(); i++) {
            Timeline t = drawn.get(i);
            if (t.size() == 0) {
                continue;
            }
            int peak = 0;
            for (int j = 1; j < t.size(); j++) {
                if (t.reservedAt(j) > t.reservedAt(peak)) {
                    peak = j;
                }
            }
            ReplayResult.Peak known = results.get(i).peak();
            for (int j = 0; known != null && j < t.size(); j++) {
                if (t.eventAt(j) == known.event() && t.reservedAt(j) == known.reservedBytes()) {
                    peak = j;
                    break;
                }
            }
            Series s = series.get(i);
            if (offScale[i]) {
                // An arrow at the top of the plot, above the peak, pointing up: the value is beyond the axis.
                double px = xPos(t.eventAt(peak), x.extent);
                out.append("<path class=\"peak off-scale\" d=\"M").append(num(px - 6)).append(',')
                        .append(num(TOP + 10)).append(" L").append(num(px)).append(',').append(num(TOP + 1))
                        .append(" L").append(num(px + 6)).append(',').append(num(TOP + 10)).append(" Z\" fill=\"")
                        .append(s.colour()).append("\"><title>").append(esc(s.label()))
                        .append(" · off the scale: peak reserved ").append(esc(Markup.bytesExact(t.reservedAt(peak))))
                        .append(" at event ").append(Markup.grouped(t.eventAt(peak))).append("</title></path>\n");
                continue;
            }
            out.append("<circle class=\"peak\" cx=\"").append(num(xPos(t.eventAt(peak), x.extent))).append("\" cy=\"")
                    .append(num(yPos(t.reservedAt(peak), y.extent))).append("\" r=\"4\" fill=\"")
                    .append(s.colour()).append("\"><title>").append(esc(s.label())).append(" · peak reserved ")
                    .append(esc(Markup.bytesExact(t.reservedAt(peak)))).append(" at event ")
                    .append(Markup.grouped(t.eventAt(peak))).append("</title></circle>\n");
        }
        boolean any = false;
        for (ReplayResult r : results) {
            any |= r.timeline().size() > 0;
        }
        if (!any) {
            out.append("<text class=\"empty\" x=\"").append(num(LEFT + PLOT_W / 2)).append("\" y=\"")
                    .append(num(TOP + PLOT_H / 2)).append("\">no timeline samples</text>\n");
        }
        out.append("</svg>\n");
        caption(out, results, series, offScale, y);
        out.append("</figure>\n");
        return out.toString();
    }

    /**
     * Which set-ups are off the scale: those whose largest value is more than {@value #OFF_SCALE_RATIO} times the
     * lower median of the largest values above zero. None when fewer than two set-ups hold memory.
     */
    static boolean[] offScale(long[] largest) {
        boolean[] off = new boolean[largest.length];
        long[] held = Arrays.stream(largest).filter(v -> v > 0).sorted().toArray();
        if (held.length < 2) {
            return off;
        }
        long median = held[(held.length - 1) / 2];
        for (int i = 0; i < largest.length; i++) {
            off[i] = (double) largest[i] > (double) OFF_SCALE_RATIO * median;
        }
        return off;
    }

    /** Under a chart with set-ups off the scale: which, their peaks, and the rule. Nothing otherwise. */
    private static void caption(StringBuilder out, List<ReplayResult> results, List<Series> series,
            boolean[] offScale, Axis y) {
        List<String> named = new ArrayList<>();
        Set<Series> seen = new LinkedHashSet<>();
        for (int i = 0; i < results.size(); i++) {
            if (offScale[i] && seen.add(series.get(i))) {
                named.add("<span class=\"setup\">" + series.get(i).swatchHtml() + esc(series.get(i).label())
                        + "</span> (peak reserved " + esc(Markup.bytes(results.get(i).peakReservedBytes())) + ")");
            }
        }
        if (named.isEmpty()) {
            return;
        }
        out.append("<figcaption class=\"off-scale\">Off the scale: ").append(String.join(", ", named))
                .append(". The y axis ends at ").append(esc(Markup.tick(y.top(), y.step()) + " " + y.unit()))
                .append(" so that the other set-ups stay readable: a set-up whose largest value is more than ")
                .append(OFF_SCALE_RATIO).append(" times the median set-up's runs along the top of the chart")
                .append(" where it is beyond it, its peak marked ▲ with the exact value in the hover title;")
                .append(" the table has all the figures.")
                .append("</figcaption>\n");
    }

    private static void legend(StringBuilder out, List<Series> series) {
        Set<Series> distinct = new LinkedHashSet<>(series);
        out.append("<div class=\"legend\">\n");
        for (Series s : distinct) {
            out.append("<span class=\"legend-entry\">").append(s.swatchHtml()).append(esc(s.label()))
                    .append("</span>\n");
        }
        out.append("<span class=\"legend-key\"><svg width=\"34\" height=\"10\" viewBox=\"0 0 34 10\">")
                .append("<line class=\"key\" x1=\"2\" y1=\"5\" x2=\"32\" y2=\"5\"/></svg>reserved</span>\n");
        out.append("<span class=\"legend-key\"><svg width=\"34\" height=\"10\" viewBox=\"0 0 34 10\">")
                .append("<line class=\"key dashed\" x1=\"2\" y1=\"5\" x2=\"32\" y2=\"5\"/></svg>allocated</span>\n");
        out.append("<span class=\"legend-key\"><svg width=\"12\" height=\"12\" viewBox=\"0 0 12 12\">")
                .append("<circle class=\"key-dot\" cx=\"6\" cy=\"6\" r=\"4\"/></svg>peak reserved</span>\n");
        out.append("</div>\n");
    }

    private static double xPos(long event, double xTop) {
        return LEFT + PLOT_W * event / xTop;
    }

    private static double yPos(long bytes, double yTop) {
        return TOP + PLOT_H - PLOT_H * bytes / yTop;
    }

    /**
     * {@code r}'s timeline with its peak as a sample: inserted at its event, or replacing the sample taken after the
     * same event; the timeline as it is when the result has no peak or an empty timeline.
     */
    static Timeline withPeak(ReplayResult r) {
        Timeline t = r.timeline();
        ReplayResult.Peak p = r.peak();
        if (p == null || t.size() == 0) {
            return t;
        }
        long[] event = t.event();
        long[] allocated = t.allocated();
        long[] reserved = t.reserved();
        int at = Arrays.binarySearch(event, p.event());
        if (at >= 0) {
            allocated[at] = p.allocatedBytes();
            reserved[at] = p.reservedBytes();
            return new Timeline(event, allocated, reserved);
        }
        int insert = -at - 1;
        int n = event.length;
        long[] e2 = new long[n + 1];
        long[] a2 = new long[n + 1];
        long[] r2 = new long[n + 1];
        System.arraycopy(event, 0, e2, 0, insert);
        System.arraycopy(allocated, 0, a2, 0, insert);
        System.arraycopy(reserved, 0, r2, 0, insert);
        e2[insert] = p.event();
        a2[insert] = p.allocatedBytes();
        r2[insert] = p.reservedBytes();
        System.arraycopy(event, insert, e2, insert + 1, n - insert);
        System.arraycopy(allocated, insert, a2, insert + 1, n - insert);
        System.arraycopy(reserved, insert, r2, insert + 1, n - insert);
        return new Timeline(e2, a2, r2);
    }

    /**
     * Appends the polyline points, thinned to first, min, max and last per pixel column when there are more than
     * four samples per pixel.
     */
    private static void appendPoints(StringBuilder out, long[] events, long[] values, double xTop, double yTop) {
        int n = events.length;
        List<Integer> keep;
        if (n <= 4 * PLOT_W) {
            keep = null;
        } else {
            keep = new ArrayList<>();
            int i = 0;
            while (i < n) {
                int column = (int) Math.floor(PLOT_W * events[i] / xTop);
                int first = i;
                int lo = i;
                int hi = i;
                int j = i + 1;
                while (j < n && (int) Math.floor(PLOT_W * events[j] / xTop) == column) {
                    if (values[j] < values[lo]) {
                        lo = j;
                    }
                    if (values[j] > values[hi]) {
                        hi = j;
                    }
                    j++;
                }
                int[] picks = {first, lo, hi, j - 1};
                Arrays.sort(picks);
                for (int k = 0; k < picks.length; k++) {
                    if (k == 0 || picks[k] != picks[k - 1]) {
                        keep.add(picks[k]);
                    }
                }
                i = j;
            }
        }
        int count = keep == null ? n : keep.size();
        for (int k = 0; k < count; k++) {
            int idx = keep == null ? k : keep.get(k);
            if (k > 0) {
                out.append(' ');
            }
            // Values beyond the axis (a set-up off the scale) run along its top.
            out.append(num(xPos(events[idx], xTop))).append(',')
                    .append(num(yPos(Math.min(values[idx], (long) yTop), yTop)));
        }
    }

    /**
     * A linear axis from 0 with {@code ticks} equal steps.
     *
     * @param top    the last tick, in the axis unit (GiB, MiB, ... or events)
     * @param extent the last tick in the data's own unit (bytes or events): what maps to the end of the axis
     * @param ticks  number of steps
     * @param step   the step, in the axis unit
     * @param unit   the unit's name for labels (empty for counts)
     * @param counts whether the axis counts events (labels 25k, 1.4M) rather than bytes
     */
    record Axis(double top, double extent, int ticks, double step, String unit, boolean counts) {

        String label(int k) {
            double value = step * k;
            if (counts) {
                return countLabel(value, step, top);
            }
            return Markup.tick(value, step) + (k == 0 ? "" : " " + unit);
        }
    }

    static Axis byteAxis(long maxBytes) {
        long max = Math.max(maxBytes, 1);
        int u = 0;
        while (u < UNITS.length - 1 && max < UNITS[u]) {
            u++;
        }
        // 4% headroom, so that a flat line at the peak does not run along the frame.
        double v = max * 1.04 / UNITS[u];
        double step = niceStep(v, 5);
        if (u == UNITS.length - 1) {
            step = Math.max(1, step);
        }
        int ticks = Math.max(1, (int) Math.ceil(v / step - 1e-9));
        double top = ticks * step;
        return new Axis(top, top * UNITS[u], ticks, step, UNIT_NAMES[u], false);
    }

    static Axis countAxis(long maxCount) {
        double step = Math.max(1, niceStep((double) Math.max(maxCount, 1), 8));
        int ticks = Math.max(1, (int) Math.ceil((double) maxCount / step - 1e-9));
        double top = ticks * step;
        return new Axis(top, top, ticks, step, "", true);
    }

    /** 1, 2, 2.5 or 5 times a power of ten, so that {@code range} takes about {@code target} steps. */
    static double niceStep(double range, int target) {
        double raw = range / target;
        double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
        double norm = raw / magnitude;
        double nice = norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10;
        return nice * magnitude;
    }

    /**
     * An event count for an axis: plain below 10,000, in thousands below a million, else in millions
     * ({@code 750}, {@code 25k}, {@code 1.4M}), by the top of the axis so that all labels use one unit.
     */
    static String countLabel(double value, double step, double top) {
        if (value == 0) {
            return "0";
        }
        if (top >= 1e6) {
            return Markup.tick(value / 1e6, step / 1e6) + "M";
        }
        if (top >= 1e4) {
            return Markup.tick(value / 1e3, step / 1e3) + "k";
        }
        return Markup.tick(value, step);
    }
}
