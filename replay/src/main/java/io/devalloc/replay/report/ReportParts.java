package io.devalloc.replay.report;

import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.replay.ReplayResult;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The parts of {@link HtmlReport} that other pages are built from (the advisor's): its style sheet, the memory chart
 * and the segment map, each rendered exactly as the replay report renders it. Stateless and thread-safe.
 */
public final class ReportParts {

    private ReportParts() {
    }

    /** The report's style sheet, for a {@code <style>} element. */
    public static String style() {
        return HtmlReport.STYLE;
    }

    /**
     * Writes the page {@code html} to {@code file} in UTF-8, creating missing parent directories, as the replay
     * report is written.
     *
     * @param what what the page is, for the error: {@code cannot write the WHAT to FILE: ...}
     * @throws UncheckedIOException when the file cannot be written
     */
    public static void writePage(Path file, String html, String what) {
        HtmlReport.writePage(file, html, what);
    }

    /** {@code text} escaped for HTML text and attribute values. */
    public static String escape(String text) {
        return Markup.esc(text);
    }

    /**
     * The chart of allocated (dashed) and reserved (solid) bytes of {@code results} (replays of one trace) against
     * the event index, one colour per set-up in the order given, as an HTML {@code <figure>} with its legend.
     */
    public static String memoryChart(String trace, List<ReplayResult> results) {
        List<ReplayResult> list = List.copyOf(results);
        return MemoryChart.render(trace, list, Series.of(list));
    }

    /**
     * The segment maps of {@code snapshots}, all at one scale, each under its caption: a legend and the map, as HTML.
     *
     * @param snapshots snapshots at the peak
     * @param captions  one caption for each, in the same order
     */
    public static List<String> segmentMaps(List<MemorySnapshot> snapshots, List<String> captions) {
        if (snapshots.size() != captions.size()) {
            throw new IllegalArgumentException("one caption for each snapshot");
        }
        double bytesPerPixel = SegmentMap.bytesPerPixel(snapshots);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < snapshots.size(); i++) {
            out.add(SegmentMap.legend(snapshots.get(i))
                    + SegmentMap.render(snapshots.get(i), bytesPerPixel, captions.get(i)));
        }
        return out;
    }
}
