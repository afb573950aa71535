package io.devalloc.replay.report;

import static io.devalloc.replay.report.Markup.esc;

import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.replay.ReplayResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The visual report of trace replays: one self-contained HTML page that opens without network access.
 *
 * <p>The page holds, in order:
 * <ol>
 *   <li>for each trace, a chart of allocated (dashed) and reserved (solid) bytes against the event index, one
 *       colour per allocator set-up, with each set-up's peak reserved marked; a set-up far above the others is
 *       drawn off the scale, and a caption says so ({@link MemoryChart});</li>
 *   <li>the comparison table, one row per result grouped by trace, the best figure of each column marked, and the
 *       results' notes when there are any;</li>
 *   <li>for each result with a peak snapshot, the segment map at the peak: segments in address order, blocks
 *       coloured by state (allocated, pending free, free, unmapped), all maps at one scale.</li>
 * </ol>
 * Everything is inline: one style sheet, SVG written here, no script, no fonts, images or links to fetch. Hover
 * titles give the figures behind lines, blocks and table cells. Every string from the results is escaped, and
 * the same input always gives the same page, byte for byte (nothing depends on the time, the locale or hash
 * order). The page is HTML5 that is also well-formed XML (void elements are self-closed), so tools can read it
 * with an XML parser. Stateless and thread-safe.
 */
public final class HtmlReport {

    private HtmlReport() {
    }

    /**
     * Renders the report, without notes.
     *
     * @param title   the page title, e.g. the command that produced it
     * @param results the results, in the order the table lists them
     * @return the whole HTML document
     */
    public static String render(String title, List<ReplayResult> results) {
        return render(title, results, Collections.nCopies(results.size(), List.of()));
    }

    /**
     * Renders the report with each result's notes (what the commands print under their tables: how the replay
     * differs from the recording, why a figure reads as it does), listed under the comparison table.
     *
     * @param title   the page title, e.g. the command that produced it
     * @param results the results, in the order the table lists them
     * @param notes   the notes of each result, index for index (an empty list for none)
     * @return the whole HTML document
     * @throws IllegalArgumentException if there are not as many lists of notes as results
     */
    public static String render(String title, List<ReplayResult> results, List<List<String>> notes) {
        Objects.requireNonNull(title, "title");
        List<ReplayResult> list = List.copyOf(results);
        if (notes.size() != list.size()) {
            throw new IllegalArgumentException(notes.size() + " lists of notes for " + list.size() + " results");
        }
        List<Series> series = Series.of(list);

        Map<String, List<Integer>> byTrace = new LinkedHashMap<>();
        for (int i = 0; i < list.size(); i++) {
            byTrace.computeIfAbsent(list.get(i).trace(), t -> new ArrayList<>()).add(i);
        }

        StringBuilder out = new StringBuilder(65_536);
        out.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
                .append("<meta name=\"generator\" content=\"devalloc\"/>\n")
                .append("<title>").append(esc(title)).append("</title>\n<style>\n").append(STYLE)
                .append("</style>\n</head>\n<body>\n");

        out.append("<header>\n<h1>").append(esc(title)).append("</h1>\n<p class=\"sub\">")
                .append(subtitle(list, byTrace.size()))
                .append(" Hover over lines, blocks and figures for details.</p>\n</header>\n");

        out.append("<section id=\"timeline\">\n<h2>Memory over time</h2>\n");
        if (list.isEmpty()) {
            out.append("<p class=\"note\">No results.</p>\n");
        }
        for (Map.Entry<String, List<Integer>> group : byTrace.entrySet()) {
            List<ReplayResult> rs = new ArrayList<>();
            List<Series> ss = new ArrayList<>();
            for (int i : group.getValue()) {
                rs.add(list.get(i));
                ss.add(series.get(i));
            }
            out.append("<h3>").append(esc(group.getKey())).append("</h3>\n");
            out.append(MemoryChart.render(group.getKey(), rs, ss));
        }
        out.append("</section>\n");

        out.append("<section id=\"comparison\">\n<h2>Comparison</h2>\n");
        out.append(ComparisonTable.render(list, series));
        out.append("<p class=\"note\">Figures in <b class=\"best-key\">bold green</b> are the best of their column"
                + " among the replays of the same trace (↓ lower is better); fragmentation is"
                + " 1 − allocated/reserved at the reserved peak, “req” the same with requested bytes. "
                + esc(ComparisonTable.SPEED_HEADER) + " is " + esc(ComparisonTable.SPEED_TITLE) + ". Ground"
                + " truth compares the device mallocs, frees, peak reserved and segment sizes with what the"
                + " trace's own allocator did: PyTorch's caching allocator, so only caching and caching-host"
                + " replays are compared; other allocators are “not comparable”.</p>\n");
        out.append(notes(byTrace, series, notes));
        out.append("</section>\n");

        out.append("<section id=\"segments\">\n<h2>Segment map at the peak</h2>\n");
        List<MemorySnapshot> snapshots = new ArrayList<>();
        for (ReplayResult r : list) {
            if (r.peakSnapshot() != null) {
                snapshots.add(r.peakSnapshot());
            }
        }
        double bytesPerPixel = SegmentMap.bytesPerPixel(snapshots);
        if (snapshots.isEmpty()) {
            out.append("<p class=\"note\">No result has a snapshot at the peak.</p>\n");
        } else {
            out.append("<p class=\"note\">Segments in address order, laid end to end along rows and outlined;"
                    + " blocks coloured by state. All maps share one scale, 1 px ≈ ")
                    .append(esc(Markup.bytes(Math.round(bytesPerPixel))))
                    .append(", so their lengths compare like the reserved bytes; blocks narrower than a pixel are"
                            + " merged and take the colour of the state holding most of their bytes.</p>\n");
        }
        for (int i = 0; i < list.size(); i++) {
            ReplayResult r = list.get(i);
            Series s = series.get(i);
            out.append("<div class=\"map\">\n<h3>").append(s.swatchHtml()).append(esc(s.label()))
                    .append(" <span class=\"dim\">").append(esc(r.trace())).append("</span></h3>\n");
            MemorySnapshot snapshot = r.peakSnapshot();
            if (snapshot == null) {
                out.append("<p class=\"note\">No snapshot at the peak.</p>\n</div>\n");
                continue;
            }
            out.append("<p class=\"meta\">").append(mapSummary(snapshot)).append("</p>\n");
            out.append(SegmentMap.legend(snapshot));
            out.append(SegmentMap.render(snapshot, bytesPerPixel,
                    "Segment map of " + s.label() + " on " + r.trace() + " at the reserved peak"));
            out.append("</div>\n");
        }
        out.append("</section>\n</body>\n</html>\n");
        return out.toString();
    }

    /**
     * The notes, trace by trace (named when there are several): a note every result of the trace has once, without
     * a label; any other once, labelled with the set-ups that have it. Empty when there is no note.
     */
    private static String notes(Map<String, List<Integer>> byTrace, List<Series> series, List<List<String>> notes) {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, List<Integer>> group : byTrace.entrySet()) {
            Map<String, List<Integer>> holders = new LinkedHashMap<>();
            for (int i : group.getValue()) {
                for (String note : notes.get(i)) {
                    List<Integer> h = holders.computeIfAbsent(note, n -> new ArrayList<>());
                    if (!h.contains(i)) {
                        h.add(i);
                    }
                }
            }
            if (holders.isEmpty()) {
                continue;
            }
            if (out.isEmpty()) {
                out.append("<div class=\"notes\">\n<h3>Notes</h3>\n");
            }
            if (byTrace.size() > 1) {
                out.append("<p class=\"notes-trace\">").append(esc(group.getKey())).append("</p>\n");
            }
            out.append("<ul>\n");
            for (Map.Entry<String, List<Integer>> note : holders.entrySet()) {
                out.append("<li>");
                if (note.getValue().size() < group.getValue().size()) {
                    Set<Series> labelled = new LinkedHashSet<>();
                    for (int i : note.getValue()) {
                        labelled.add(series.get(i));
                    }
                    List<String> labels = new ArrayList<>();
                    for (Series s : labelled) {
                        labels.add("<span class=\"setup\">" + s.swatchHtml() + esc(s.label()) + "</span>");
                    }
                    out.append(String.join(", ", labels)).append(": ");
                }
                out.append(esc(note.getKey())).append("</li>\n");
            }
            out.append("</ul>\n");
        }
        if (!out.isEmpty()) {
            out.append("</div>\n");
        }
        return out.toString();
    }

    /**
     * Renders the report without notes and writes it to {@code file} in UTF-8, creating missing parent directories.
     *
     * @throws UncheckedIOException when the file cannot be written
     */
    public static void write(Path file, String title, List<ReplayResult> results) {
        write(file, title, results, Collections.nCopies(results.size(), List.of()));
    }

    /**
     * Renders the report with each result's notes ({@link #render(String, List, List)}) and writes it to
     * {@code file} in UTF-8, creating missing parent directories.
     *
     * @throws UncheckedIOException when the file cannot be written
     */
    public static void write(Path file, String title, List<ReplayResult> results, List<List<String>> notes) {
        writePage(file, render(title, results, notes), "report");
    }

    /**
     * Writes {@code html} to {@code file} in UTF-8, creating missing parent directories.
     *
     * @param what what the page is, for the error: {@code cannot write the WHAT to FILE: ...}
     * @throws UncheckedIOException when the file cannot be written
     */
    static void writePage(Path file, String html, String what) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.writeString(file, html, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the " + what + " to " + file + ": " + e.getMessage(), e);
        }
    }

    private static String subtitle(List<ReplayResult> results, int traces) {
        Set<String> setups = new LinkedHashSet<>();
        for (ReplayResult r : results) {
            setups.add(r.allocator() + '\u0000' + r.conf() + '\u0000' + r.device());
        }
        return Markup.grouped(results.size()) + (results.size() == 1 ? " replay" : " replays") + " of "
                + Markup.grouped(traces) + (traces == 1 ? " trace" : " traces") + " through "
                + Markup.grouped(setups.size()) + (setups.size() == 1 ? " allocator set-up." : " allocator set-ups.");
    }

    private static String mapSummary(MemorySnapshot snapshot) {
        long blocks = 0;
        for (SegmentSnapshot seg : snapshot.segments()) {
            blocks += seg.blocks().size();
        }
        long allocated = snapshot.bytesIn(BlockState.ALLOCATED);
        long requested = 0;
        for (SegmentSnapshot seg : snapshot.segments()) {
            for (BlockSnapshot b : seg.blocks()) {
                requested += b.requestedSize();
            }
        }
        int segments = snapshot.segments().size();
        return Markup.grouped(segments) + (segments == 1 ? " segment, " : " segments, ") + Markup.grouped(blocks)
                + (blocks == 1 ? " block" : " blocks") + " · reserved "
                + esc(Markup.bytesExact(snapshot.totalSegmentBytes())) + " · allocated " + esc(Markup.bytes(allocated))
                + " (requested " + esc(Markup.bytes(requested)) + ") · " + esc(snapshot.device().toString());
    }

    static final String STYLE = """
            :root { color-scheme: light; }
            body { margin: 20px 32px 40px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto,
                   "DejaVu Sans", "Liberation Sans", sans-serif; color: #1d2330; background: #fff; }
            h1 { font-size: 22px; margin: 0 0 2px; }
            h2 { font-size: 17px; margin: 22px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d8dce4; }
            h3 { font-size: 14px; margin: 12px 0 4px; }
            p { margin: 4px 0 8px; }
            .sub, .note, .meta, .dim { color: #5b6475; }
            .dim { font-size: 12px; font-weight: normal; }
            .note, .meta { font-size: 12.5px; max-width: 1200px; }
            .legend { display: flex; flex-wrap: wrap; gap: 4px 18px; align-items: center; margin: 4px 0 6px;
                      font-size: 13px; }
            .legend-entry, .legend-key { display: inline-flex; align-items: center; gap: 4px; }
            .swatch { display: inline-block; width: 14px; height: 14px; margin-right: 6px; vertical-align: -2px;
                      flex: none; }
            figure { margin: 0; }
            svg.chart-svg, svg.map-svg { display: block; width: 100%; max-width: 1200px; height: auto; }
            .grid line { stroke: #e7eaf0; stroke-width: 1; }
            rect.frame { fill: none; stroke: #a3abb9; stroke-width: 1; }
            .ticks text { font-size: 12px; fill: #5b6475; }
            text.ytick { text-anchor: end; }
            text.xtick, text.axis-title, text.empty { text-anchor: middle; }
            text.empty { font-size: 13px; fill: #5b6475; }
            polyline { fill: none; stroke-linejoin: round; stroke-linecap: round; }
            polyline.reserved { stroke-width: 2.5; }
            polyline.allocated { stroke-width: 1.6; stroke-dasharray: 6 4; }
            circle.peak { stroke: #fff; stroke-width: 1.5; }
            line.key { stroke: #1d2330; stroke-width: 2.5; }
            line.key.dashed { stroke-width: 1.6; stroke-dasharray: 6 4; }
            circle.key-dot { fill: #1d2330; }
            .st-allocated { fill: ALLOCATED_COLOUR; }
            .st-pending { fill: PENDING_COLOUR; }
            .st-free { fill: FREE_COLOUR; }
            .st-unmapped { fill: UNMAPPED_COLOUR; }
            rect.seg { fill: none; stroke: #2b2f38; stroke-width: 1; }
            table.compare { border-collapse: collapse; font-size: 13px; margin: 4px 0 6px; }
            .compare th, .compare td { padding: 5px 8px; border-bottom: 1px solid #e3e6ec; text-align: left;
                                       vertical-align: top; }
            .compare thead th { background: #f1f3f7; font-weight: 600; vertical-align: bottom; }
            .compare thead th.num { min-width: 64px; }
            .compare .setup { white-space: nowrap; }
            .compare td.conf { min-width: 190px; max-width: 280px; }
            .compare td.ground { min-width: 210px; }
            .compare .num { text-align: right; font-variant-numeric: tabular-nums; }
            .compare td.num { white-space: nowrap; }
            .compare td.best, .best-key { font-weight: 700; color: #12632b; background: #e3f4e6; }
            .best-key { padding: 0 3px; }
            .compare tr.trace-row th { background: #fafbfc; font-weight: 600; }
            .dir { color: #8a93a3; font-weight: normal; }
            code { font: 12px ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; background: #f1f3f7;
                   padding: 1px 4px; border-radius: 3px; overflow-wrap: anywhere; }
            .gt-match { color: #12632b; font-weight: 700; }
            .gt-diff { color: #b42318; font-weight: 600; }
            .gt-na { color: #5b6475; font-weight: 600; }
            .notes { font-size: 12.5px; max-width: 1200px; color: #5b6475; }
            .notes h3 { color: #1d2330; }
            .notes ul { margin: 2px 0 8px; padding-left: 20px; }
            .notes li { margin: 2px 0; }
            .notes .setup { color: #1d2330; white-space: nowrap; }
            .notes-trace { margin: 6px 0 0; color: #1d2330; }
            figcaption.off-scale { font-size: 12.5px; max-width: 1200px; color: #5b6475; margin: 4px 0 0; }
            figcaption.off-scale .setup { color: #1d2330; white-space: nowrap; }
            .map { margin: 8px 0 18px; }
            .map h3 { display: flex; align-items: center; gap: 2px; }
            .map .dim { margin-left: 8px; }
            """
            .replace("ALLOCATED_COLOUR", SegmentMap.stateColour(BlockState.ALLOCATED))
            .replace("PENDING_COLOUR", SegmentMap.stateColour(BlockState.PENDING_FREE))
            .replace("FREE_COLOUR", SegmentMap.stateColour(BlockState.FREE))
            .replace("UNMAPPED_COLOUR", SegmentMap.stateColour(BlockState.UNMAPPED));
}
