package io.devalloc.replay.report;

import static io.devalloc.replay.report.Markup.esc;

import io.devalloc.replay.GroundTruthComparability;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.ReplayResult.GroundTruth;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * The comparison table: one row per result, grouped by trace (a header row names each trace). In every ranked
 * column the best value among the rows of the same trace is marked (class {@code best}): the lowest for bytes,
 * device calls, out-of-memory errors and fragmentation. Nothing is marked in a column where all rows of a trace
 * agree, since no set-up is better there. Events per second are shown but not ranked: they are the replay's
 * wall-clock speed on this machine, in a short replay mostly the JVM's warm-up, not the allocator's doing.
 *
 * <p>The columns of memory held from the device (peak reserved, end reserved, fragmentation) rank only the set-ups
 * that cache: one that made at least as many device mallocs as allocations it served, while another set-up of the
 * trace made fewer ({@link #notRankedOnMemoryHeld}; {@code direct} makes one for each allocation), holds little
 * beyond what is live because it pays a device call each time, so its low figures there are the price of those
 * calls, not a better choice. Its cells say so in their hover title, and a note under the table names it. Where
 * every set-up made as many calls (a trace with nothing to reuse), they paid alike and all are ranked.
 * {@code devalloc compare}'s text table applies the same rule.
 */
final class ComparisonTable {

    /** Which way a column improves. */
    enum Better { LOWER, NONE }

    /**
     * One column.
     *
     * @param header      the header text
     * @param numeric     whether cells are right-aligned figures
     * @param better      which way is better, for the best mark
     * @param cachingOnly whether only the set-ups that cache are ranked (memory held from the device)
     * @param value       the figure compared for the best mark (NaN for none)
     * @param cell        the cell's HTML content, already escaped
     */
    record Column(String header, boolean numeric, Better better, boolean cachingOnly, ToDoubleFunction<Row> value,
                  Function<Row, String> cell) {

        /** The CSS class of the column's cells: {@code num} for figures, else the header's first word. */
        String cssClass() {
            int space = header.indexOf(' ');
            return numeric ? "num" : space < 0 ? header : header.substring(0, space);
        }
    }

    /** A result and its series. */
    record Row(ReplayResult result, Series series) {
    }

    /** The header of the replay's speed. */
    static final String SPEED_HEADER = "events/s (wall clock)";

    /** What the speed measures, for hover titles. */
    static final String SPEED_TITLE = "how fast this machine replayed the trace, the JVM's warm-up included (most of a"
            + " short replay's time): not a property of the allocator, so not ranked";

    static final List<Column> COLUMNS = List.of(
            new Column("allocator", false, Better.NONE, false, r -> Double.NaN,
                    r -> "<span class=\"setup\">" + r.series().swatchHtml() + esc(r.result().allocator())
                            + "</span><br/><span class=\"dim\">" + esc(r.result().device()) + "</span>"),
            new Column("conf", false, Better.NONE, false, r -> Double.NaN,
                    r -> r.result().conf().isEmpty() ? "<span class=\"dim\">default</span>"
                            : "<code>" + esc(r.result().conf()).replace(",", ",<wbr/>") + "</code>"),
            count("device mallocs", Better.LOWER, ReplayResult::deviceMallocs),
            count("device frees", Better.LOWER, ReplayResult::deviceFrees),
            bytes("peak reserved", true, ReplayResult::peakReservedBytes),
            bytes("peak allocated", false, ReplayResult::peakAllocatedBytes),
            bytes("peak requested", false, ReplayResult::peakRequestedBytes),
            bytes("end reserved", true, ReplayResult::endReservedBytes),
            new Column("OOMs", true, Better.LOWER, false, r -> r.result().ooms(),
                    r -> "<span title=\"" + Markup.grouped(r.result().allocRetries()) + " allocation retries\">"
                            + Markup.grouped(r.result().ooms()) + "</span>"),
            new Column("fragmentation", true, Better.LOWER, true, r -> finite(r.result().fragmentation()),
                    ComparisonTable::fragmentationCell),
            // Wall-clock speed of the replay on this machine, JVM warm-up included: shown, never marked.
            new Column(SPEED_HEADER, true, Better.NONE, false, r -> Double.NaN,
                    r -> Double.isFinite(r.result().eventsPerSecond())
                            ? "<span title=\"" + Markup.grouped(r.result().events()) + " events; " + SPEED_TITLE
                            + "\">" + Markup.rate(r.result().eventsPerSecond()) + "</span>"
                            : "<span class=\"dim\">—</span>"),
            new Column("ground truth", false, Better.NONE, false, r -> Double.NaN,
                    r -> groundTruthCell(r.result())));

    private ComparisonTable() {
    }

    /**
     * Which of {@code rows} (the results of one trace) are not ranked on memory held: those that made at least as
     * many device mallocs (and maps) as allocations they served, as {@code direct} does (one for each), while another
     * made fewer. Their reserved bytes stay close to what is live only because their allocations paid device calls
     * that another set-up saved, so the columns of memory held are not theirs to win. The same rule as
     * {@code devalloc compare}'s text table.
     */
    static boolean[] notRankedOnMemoryHeld(List<Row> rows) {
        long fewest = Long.MAX_VALUE;
        for (Row r : rows) {
            fewest = Math.min(fewest, r.result().deviceMallocs());
        }
        boolean[] out = new boolean[rows.size()];
        for (int i = 0; i < out.length; i++) {
            ReplayResult r = rows.get(i).result();
            long served = r.allocs() - r.ooms();
            out[i] = served > 0 && r.deviceMallocs() >= served && r.deviceMallocs() > fewest;
        }
        return out;
    }

    /** Why a set-up's memory-held cells are not ranked, for their hover title and the note under the table. */
    private static String notRankedWhy(ReplayResult r, List<Row> rows) {
        long fewest = Long.MAX_VALUE;
        for (Row other : rows) {
            fewest = Math.min(fewest, other.result().deviceMallocs());
        }
        return Markup.grouped(r.deviceMallocs()) + " device mallocs for " + Markup.grouped(r.allocs() - r.ooms())
                + " allocations, at least one device call per allocation where another set-up made "
                + Markup.grouped(fewest) + ": its low reserved bytes and fragmentation are paid for with those calls";
    }

    private static Column count(String header, Better better, ToLongFunction<ReplayResult> value) {
        return new Column(header, true, better, false, r -> value.applyAsLong(r.result()),
                r -> Markup.grouped(value.applyAsLong(r.result())));
    }

    private static Column bytes(String header, boolean cachingOnly, ToLongFunction<ReplayResult> value) {
        return new Column(header, true, Better.LOWER, cachingOnly, r -> value.applyAsLong(r.result()),
                r -> "<span title=\"" + Markup.grouped(value.applyAsLong(r.result())) + " B\">"
                        + Markup.bytes(value.applyAsLong(r.result())) + "</span>");
    }

    private static double finite(double v) {
        return Double.isFinite(v) ? v : Double.NaN;
    }

    private static String fragmentationCell(Row r) {
        double f = r.result().fragmentation();
        double rf = r.result().requestedFragmentation();
        if (!Double.isFinite(f)) {
            return "<span class=\"dim\">—</span>";
        }
        String requested = Double.isFinite(rf) ? Markup.percent(rf) : "—";
        return "<span title=\"at the reserved peak: 1 − allocated/reserved = " + Markup.percent(f)
                + ", 1 − requested/reserved = " + requested + "\">" + Markup.percent(f)
                + "</span><br/><span class=\"dim\">req " + requested + "</span>";
    }

    /**
     * MATCH, the first difference, or, for an allocator other than the one that recorded the trace, "not comparable"
     * with the reason in its hover title (a difference would only say that the allocators differ); then the trace's
     * own figures.
     */
    private static String groundTruthCell(ReplayResult r) {
        GroundTruth gt = r.groundTruth();
        if (gt == null) {
            return "<span class=\"dim\">—</span>";
        }
        String figures = "the trace: " + Markup.grouped(gt.deviceMallocs()) + " mallocs · "
                + Markup.grouped(gt.deviceFrees()) + " frees · " + Markup.bytes(gt.peakReservedBytes());
        String exact = "the trace's own allocator: " + Markup.grouped(gt.deviceMallocs()) + " device mallocs, "
                + Markup.grouped(gt.deviceFrees()) + " device frees, peak reserved "
                + Markup.bytesExact(gt.peakReservedBytes());
        String verdict = !GroundTruthComparability.comparable(r.allocator())
                ? "<span class=\"gt-na\" title=\"" + esc(GroundTruthComparability.whyNot(r.allocator()))
                + "\">not comparable</span>"
                : gt.match() ? "<span class=\"gt-match\">MATCH</span>"
                : "<span class=\"gt-diff\">" + esc(gt.firstDifference() == null ? "differs" : gt.firstDifference())
                + "</span>";
        return "<span title=\"" + esc(exact) + "\">" + verdict + "<br/><span class=\"dim\">" + esc(figures)
                + "</span></span>";
    }

    /** The table as HTML. */
    static String render(List<ReplayResult> results, List<Series> series) {
        Map<String, List<Row>> byTrace = new LinkedHashMap<>();
        for (int i = 0; i < results.size(); i++) {
            ReplayResult r = results.get(i);
            byTrace.computeIfAbsent(r.trace(), t -> new ArrayList<>()).add(new Row(r, series.get(i)));
        }
        StringBuilder out = new StringBuilder(8_192);
        out.append("<table class=\"compare\">\n<thead><tr>");
        for (Column c : COLUMNS) {
            out.append("<th").append(c.numeric() ? " class=\"num\"" : "").append('>').append(esc(c.header()))
                    .append(c.better() == Better.LOWER
                            ? " <span class=\"dir\" title=\"lower is better\">↓</span>" : "")
                    .append("</th>");
        }
        out.append("</tr></thead>\n");
        for (Map.Entry<String, List<Row>> group : byTrace.entrySet()) {
            List<Row> rows = group.getValue();
            long events = 0;
            for (Row r : rows) {
                events = Math.max(events, r.result().events());
            }
            out.append("<tbody>\n<tr class=\"trace-row\"><th colspan=\"").append(COLUMNS.size()).append("\">")
                    .append(esc(group.getKey())).append(" <span class=\"dim\">").append(Markup.grouped(events))
                    .append(" events</span></th></tr>\n");
            boolean[][] best = bestMarks(rows);
            boolean[] unranked = notRankedOnMemoryHeld(rows);
            for (int i = 0; i < rows.size(); i++) {
                out.append("<tr class=\"result\">");
                for (int c = 0; c < COLUMNS.size(); c++) {
                    Column column = COLUMNS.get(c);
                    String cls = (column.numeric() ? "num" : column.cssClass()) + (best[i][c] ? " best" : "");
                    out.append("<td").append(cls.isEmpty() ? "" : " class=\"" + cls.strip() + "\"");
                    if (unranked[i] && column.cachingOnly()) {
                        out.append(" title=\"not ranked: ").append(esc(notRankedWhy(rows.get(i).result(), rows)))
                                .append('"');
                    }
                    out.append('>').append(column.cell().apply(rows.get(i))).append("</td>");
                }
                out.append("</tr>\n");
            }
            out.append("</tbody>\n");
        }
        out.append("</table>\n");
        out.append(unrankedNote(byTrace));
        return out.toString();
    }

    /** The note under the table naming the set-ups whose memory-held columns were not ranked, and why; or empty. */
    private static String unrankedNote(Map<String, List<Row>> byTrace) {
        List<String> named = new ArrayList<>();
        for (Map.Entry<String, List<Row>> group : byTrace.entrySet()) {
            List<Row> rows = group.getValue();
            boolean[] unranked = notRankedOnMemoryHeld(rows);
            for (int i = 0; i < rows.size(); i++) {
                if (unranked[i]) {
                    ReplayResult r = rows.get(i).result();
                    String conf = r.conf().isEmpty() ? "" : " " + r.conf();
                    named.add("<span class=\"setup\">" + rows.get(i).series().swatchHtml()
                            + esc(r.allocator() + conf) + "</span>"
                            + (byTrace.size() > 1 ? " on " + esc(group.getKey()) : "") + ": "
                            + esc(notRankedWhy(r, rows)));
                }
            }
        }
        if (named.isEmpty()) {
            return "";
        }
        return "<p class=\"note star-rule\">Peak reserved, end reserved and fragmentation are marked only among the"
                + " set-ups that cache; not ranked there: " + String.join("; ", named) + ".</p>\n";
    }

    /** For each row and column, whether the cell holds the best figure of its column within these rows. */
    static boolean[][] bestMarks(List<Row> rows) {
        boolean[][] marks = new boolean[rows.size()][COLUMNS.size()];
        boolean[] unranked = notRankedOnMemoryHeld(rows);
        for (int c = 0; c < COLUMNS.size(); c++) {
            Column column = COLUMNS.get(c);
            if (column.better() == Better.NONE || rows.size() < 2) {
                continue;
            }
            double best = Double.NaN;
            double worst = Double.NaN;
            for (int i = 0; i < rows.size(); i++) {
                double v = value(column, rows.get(i), unranked[i]);
                if (Double.isNaN(v)) {
                    continue;
                }
                if (Double.isNaN(best) || v < best) {
                    best = v;
                }
                if (Double.isNaN(worst) || v > worst) {
                    worst = v;
                }
            }
            if (Double.isNaN(best) || best == worst) {
                continue;
            }
            for (int i = 0; i < rows.size(); i++) {
                marks[i][c] = value(column, rows.get(i), unranked[i]) == best;
            }
        }
        return marks;
    }

    /** The figure of {@code r} ranked in {@code column}: NaN (not ranked) for memory held by an unranked set-up. */
    private static double value(Column column, Row r, boolean unranked) {
        return column.cachingOnly() && unranked ? Double.NaN : column.value().applyAsDouble(r);
    }
}
