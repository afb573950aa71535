package io.devalloc.replay.report;

import io.devalloc.replay.ReplayResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One allocator set-up (allocator, configuration and device) and the colour it has everywhere in the report: its
 * lines in the chart, its swatch in the table and above its segment map. The same set-up replayed on several
 * traces keeps its colour.
 *
 * @param label  what the legend says: the allocator, its configuration when there is one, and the device when
 *               the results use more than one device
 * @param colour a CSS hex colour
 */
record Series(String label, String colour) {

    /**
     * Colours picked to be told apart on white and from each other (the Tableau 10 palette, reordered so the
     * first three are blue, red and green). Set-ups beyond the tenth reuse colours in order.
     */
    static final List<String> PALETTE = List.of("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
            "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f");

    /** The series of each result, index for index; results with the same set-up share one series. */
    static List<Series> of(List<ReplayResult> results) {
        Set<String> devices = new LinkedHashSet<>();
        for (ReplayResult r : results) {
            devices.add(r.device());
        }
        boolean showDevice = devices.size() > 1;
        Map<String, Series> byKey = new LinkedHashMap<>();
        List<Series> out = new ArrayList<>(results.size());
        for (ReplayResult r : results) {
            String key = r.allocator() + '\u0000' + r.conf() + '\u0000' + r.device();
            Series s = byKey.get(key);
            if (s == null) {
                String label = r.allocator() + (r.conf().isEmpty() ? "" : " " + r.conf())
                        + (showDevice ? " on " + r.device() : "");
                s = new Series(label, PALETTE.get(byKey.size() % PALETTE.size()));
                byKey.put(key, s);
            }
            out.add(s);
        }
        return out;
    }

    /** A small square of the series colour, as inline HTML. */
    String swatchHtml() {
        return "<span class=\"swatch\" style=\"background:" + colour + "\"></span>";
    }
}
