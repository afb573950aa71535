package io.devalloc.advisor.report;

import static io.devalloc.replay.report.ReportParts.escape;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.CapacityCheck;
import io.devalloc.advisor.Recommendation;
import io.devalloc.advisor.SettingResult;
import io.devalloc.advisor.TrustLine;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.ReplayJson;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.report.ReportParts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The advisor's HTML page, self-contained (inline style, SVG and one small script, nothing fetched). In order: the
 * recommendation with the line to paste and the trust line; the ranked table of settings; memory over time of the
 * baseline against the recommended setting (a menu shows the baseline against any other setting); the segment maps
 * of both at their peaks, at one scale; the waste at the peak by cause. Every string from the input is escaped; the
 * same advice gives the same page, byte for byte. Charts, maps and style are the replay report's
 * ({@link ReportParts}), so both pages read alike.
 */
public final class AdviceHtml {

    private AdviceHtml() {
    }

    /**
     * Writes the page to {@code file}, creating missing parent directories.
     *
     * @throws UncheckedIOException when it cannot be written
     */
    public static void write(Path file, Advice advice) {
        String html = render(advice);
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.writeString(file, html, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the page to " + file + ": " + e.getMessage(), e);
        }
    }

    /** The whole page. */
    public static String render(Advice advice) {
        String title = "devalloc advise " + advice.trace();
        StringBuilder out = new StringBuilder(1 << 18);
        out.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
                .append("<meta name=\"generator\" content=\"devalloc\"/>\n")
                .append("<title>").append(escape(title)).append("</title>\n<style>\n").append(ReportParts.style())
                .append(STYLE).append("</style>\n</head>\n<body>\n");
        out.append("<header>\n<h1>").append(escape(title)).append("</h1>\n<p class=\"sub\">")
                .append(escape(advice.allocator())).append(" allocator, ").append(advice.settings().size())
                .append(" settings, ").append(AdviceText.count(advice.runs())).append(" replays; objective: ")
                .append(escape(advice.objective().cliName())).append(".</p>\n</header>\n");

        recommendation(out, advice);
        trust(out, advice.trust());
        table(out, advice);
        charts(out, advice);
        maps(out, advice);
        waste(out, advice);

        out.append("<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n");
        for (String note : advice.notes()) {
            out.append("<li>").append(escape(note)).append("</li>\n");
        }
        for (String p : advice.grid().problems()) {
            out.append("<li>grid problem (left out): ").append(escape(p)).append("</li>\n");
        }
        out.append("</ul>\n</section>\n");
        out.append("<script>\n").append(SCRIPT).append("</script>\n</body>\n</html>\n");
        return out.toString();
    }

    private static void recommendation(StringBuilder out, Advice advice) {
        out.append("<section id=\"recommendation\">\n<h2>Recommendation</h2>\n");
        Recommendation rec = advice.recommendation();
        if (rec == null) {
            out.append("<p class=\"verdict bad\">No setting runs the whole trace without an out-of-memory error on ")
                    .append(escape(Advisor.UNLIMITED_DEVICE)).append(".</p>\n</section>\n");
            return;
        }
        out.append("<p class=\"paste\"><code id=\"env\">").append(escape(rec.env())).append("</code></p>\n");
        out.append("<p>").append(escape(capitalised(rec.reason()))).append(".");
        for (AdviceText.Saving saving : AdviceText.savings(advice)) {
            out.append(" ").append(escape(capitalised(saving.measure()))).append(": <b>")
                    .append(escape(saving.recommended())).append("</b> against ").append(escape(saving.recorded()))
                    .append(" for ").append(escape(advice.trust().baselineName())).append(": ")
                    .append(escape(saving.verb())).append(' ')
                    .append(escape(saving.amount())).append(" (").append(escape(saving.percent())).append(").");
        }
        out.append("</p>\n");
        if (!rec.caveats().isEmpty()) {
            out.append("<ul class=\"caveats\">\n");
            for (String c : rec.caveats()) {
                out.append("<li>").append(escape(c)).append("</li>\n");
            }
            out.append("</ul>\n");
        }
        out.append("</section>\n");
    }

    private static void trust(StringBuilder out, TrustLine t) {
        String cls = switch (t.verdict()) {
            case MATCH -> "good";
            case DIFFERS, FAILED -> "bad";
            case NOT_COMPARABLE -> "neutral";
        };
        out.append("<section id=\"trust\">\n<h2>Trust</h2>\n<p class=\"verdict ").append(cls).append("\">")
                .append(escape(t.word())).append("</p>\n<p>").append(escape(capitalised(AdviceText.trustSentence(t))))
                .append(".</p>\n<p class=\"note\">Baseline: <code>").append(escape(t.config().isEmpty() ? "(defaults)"
                        : t.config())).append("</code>, from ").append(escape(t.configSource())).append(".</p>\n");
        for (String n : t.notes()) {
            out.append("<p class=\"note\">").append(escape(n)).append("</p>\n");
        }
        out.append("</section>\n");
    }

    private static void table(StringBuilder out, Advice advice) {
        boolean withCapacity = advice.capacityBytes() != -1;
        out.append("<section id=\"ranking\">\n<h2>Settings, best first</h2>\n<table class=\"compare\">\n<thead><tr>")
                .append("<th class=\"num\">#</th><th>config</th><th class=\"num\">min capacity</th>")
                .append("<th class=\"num\">peak reserved</th><th class=\"num\">peak allocated</th>")
                .append("<th class=\"num\">peak requested</th><th class=\"num\">fragmentation</th>")
                .append("<th class=\"num\">device mallocs / frees</th><th class=\"num\">retries</th>");
        if (withCapacity) {
            out.append("<th class=\"num\">OOMs at ").append(escape(ByteSize.format(advice.capacityBytes())))
                    .append("</th>");
        }
        out.append("</tr></thead>\n<tbody>\n");
        int rank = 0;
        Recommendation rec = advice.recommendation();
        for (SettingResult s : advice.settings()) {
            boolean best = rec != null && same(rec.setting(), s);
            out.append("<tr").append(best ? " class=\"best-row\"" : "").append("><td class=\"num\">")
                    .append(s.fits() ? Integer.toString(++rank) : "-").append("</td><td class=\"conf\"><code>")
                    .append(escape(label(s))).append("</code>").append(s.recorded() ? " <span class=\"dim\">recorded"
                            + "</span>" : "").append("</td>");
            ReplayResult r = s.result();
            if (r == null) {
                out.append("<td colspan=\"").append(withCapacity ? 8 : 7).append("\" class=\"error\">")
                        .append(escape(s.error())).append("</td></tr>\n");
                continue;
            }
            cell(out, s.fits() ? ByteSize.format(s.minCapacityBytes()) : "> " + Advisor.UNLIMITED_DEVICE);
            cell(out, ByteSize.format(r.peakReservedBytes()));
            cell(out, ByteSize.format(r.peakAllocatedBytes()));
            cell(out, ByteSize.format(r.peakRequestedBytes()));
            cell(out, AdviceText.percent(r.fragmentation()));
            cell(out, AdviceText.count(r.deviceMallocs()) + " / " + AdviceText.count(r.deviceFrees()));
            cell(out, AdviceText.count(r.allocRetries()));
            if (withCapacity) {
                CapacityCheck c = s.atCapacity();
                String where = AdviceText.firstOom(c);
                out.append("<td class=\"num\"").append(where == null ? "" : " title=\"" + escape(where) + "\"")
                        .append('>').append(escape(c.runs() ? "0 (runs)" : AdviceText.count(c.ooms())))
                        .append("</td>");
            }
            out.append("</tr>\n");
        }
        out.append("</tbody>\n</table>\n<p class=\"note\">Min capacity: the smallest simulated device, to ")
                .append(escape(ByteSize.format(Advisor.GRANULARITY))).append(", on which the whole trace runs without"
                        + " an out-of-memory error (one step less fails). Other figures: one replay on ")
                .append(escape(Advisor.UNLIMITED_DEVICE)).append("; fragmentation is 1 − allocated/reserved at the"
                        + " reserved peak.</p>\n");
        if (withCapacity) {
            StringBuilder failures = new StringBuilder();
            for (SettingResult s : advice.settings()) {
                String where = s.ran() ? AdviceText.firstOom(s.atCapacity()) : null;
                if (where != null) {
                    failures.append("<li><code>").append(escape(label(s))).append("</code> ").append(escape(where))
                            .append("</li>\n");
                }
            }
            if (!failures.isEmpty()) {
                out.append("<p class=\"note\">On the ").append(escape(ByteSize.format(advice.capacityBytes())))
                        .append(" device:</p>\n<ul class=\"oom\">\n").append(failures).append("</ul>\n");
            }
        }
        out.append("</section>\n");
    }

    private static void cell(StringBuilder out, String text) {
        out.append("<td class=\"num\">").append(escape(text)).append("</td>");
    }

    private static void charts(StringBuilder out, Advice advice) {
        out.append("<section id=\"timeline\">\n<h2>Memory over time</h2>\n");
        SettingResult base = advice.baseline();
        SettingResult best = advice.recommendation() == null ? null : advice.recommendation().setting();
        List<SettingResult> others = new ArrayList<>();
        for (SettingResult s : advice.settings()) {
            if (s.ran() && !same(s, base)) {
                others.add(s);
            }
        }
        if (base == null || !base.ran()) {
            out.append("<p class=\"note\">").append(escape(capitalised(advice.trust().baselineName())))
                    .append(" did not run.</p>\n</section>\n");
            return;
        }
        out.append("<p class=\"note\">").append(escape(capitalised(advice.trust().baselineName())))
                .append(" against <select id=\"chart-choice\">\n");
        if (others.isEmpty()) {
            out.append("<option value=\"0\">nothing else</option>\n");
        }
        int selected = Math.max(0, others.indexOf(best));
        for (int i = 0; i < others.size(); i++) {
            out.append("<option value=\"").append(i).append('"').append(i == selected ? " selected=\"selected\"" : "")
                    .append('>').append(escape(label(others.get(i)))).append(same(others.get(i), best)
                            ? " (recommended)" : "").append("</option>\n");
        }
        out.append("</select>, replayed on ").append(escape(Advisor.UNLIMITED_DEVICE)).append(".</p>\n");
        if (others.isEmpty()) {
            out.append(ReportParts.memoryChart(advice.trace(), List.of(base.result())));
        }
        for (int i = 0; i < others.size(); i++) {
            out.append("<div class=\"chart-option\" data-choice=\"").append(i).append('"')
                    .append(i == selected ? "" : " hidden=\"hidden\"").append(">\n")
                    .append(ReportParts.memoryChart(advice.trace(), List.of(base.result(), others.get(i).result())))
                    .append("</div>\n");
        }
        out.append("</section>\n");
    }

    private static void maps(StringBuilder out, Advice advice) {
        out.append("<section id=\"segments\">\n<h2>Segment maps at the peak</h2>\n");
        SettingResult base = advice.baseline();
        SettingResult best = advice.recommendation() == null ? null : advice.recommendation().setting();
        List<SettingResult> shown = new ArrayList<>();
        if (base != null && base.ran() && base.result().peakSnapshot() != null) {
            shown.add(base);
        }
        if (best != null && !same(best, base) && best.result().peakSnapshot() != null) {
            shown.add(best);
        }
        if (shown.isEmpty()) {
            out.append("<p class=\"note\">No snapshot at the peak.</p>\n</section>\n");
            return;
        }
        List<MemorySnapshot> snapshots = new ArrayList<>();
        List<String> captions = new ArrayList<>();
        for (SettingResult s : shown) {
            snapshots.add(s.result().peakSnapshot());
            captions.add("Segment map of " + label(s) + " at its reserved peak");
        }
        List<String> rendered = ReportParts.segmentMaps(snapshots, captions);
        for (int i = 0; i < shown.size(); i++) {
            SettingResult s = shown.get(i);
            out.append("<div class=\"map\">\n<h3>").append(escape(label(s))).append(s.recorded() ? " (recorded)"
                    : " (recommended)").append("</h3>\n<p class=\"meta\">reserved ")
                    .append(escape(ByteSize.format(snapshots.get(i).totalSegmentBytes()))).append("</p>\n")
                    .append(rendered.get(i)).append("</div>\n");
        }
        out.append("<p class=\"note\">Both maps share one scale, so their lengths compare like the reserved"
                + " bytes.</p>\n</section>\n");
    }

    private static void waste(StringBuilder out, Advice advice) {
        out.append("<section id=\"waste\">\n<h2>Waste at the peak</h2>\n");
        SettingResult base = advice.baseline();
        SettingResult best = advice.recommendation() == null ? null : advice.recommendation().setting();
        List<SettingResult> shown = new ArrayList<>();
        if (base != null && base.ran()) {
            shown.add(base);
        }
        if (best != null && !same(best, base)) {
            shown.add(best);
        }
        List<Map<String, Object>> wastes = new ArrayList<>();
        for (SettingResult s : shown) {
            ReplayResult.Peak peak = s.result().peak();
            wastes.add(peak == null || peak.waste() == null ? null : ReplayJson.wasteMap(peak.waste()));
        }
        if (wastes.isEmpty() || wastes.contains(null)) {
            out.append("<p class=\"note\">The replays did not explain their peaks.</p>\n</section>\n");
            return;
        }
        out.append("<table class=\"compare\">\n<thead><tr><th>cause</th>");
        for (SettingResult s : shown) {
            out.append("<th class=\"num\"><code>").append(escape(label(s))).append("</code></th>");
        }
        out.append("</tr></thead>\n<tbody>\n");
        for (String cause : wastes.getFirst().keySet()) {
            out.append("<tr><td>").append(escape(cause.replace('_', ' '))).append("</td>");
            for (Map<String, Object> w : wastes) {
                cell(out, ByteSize.format((Long) w.get(cause)));
            }
            out.append("</tr>\n");
        }
        out.append("</tbody>\n</table>\n<p class=\"note\">Reserved bytes no request asked for, at each setting's"
                + " reserved peak, by cause; the causes add up to reserved − requested there.</p>\n</section>\n");
    }

    private static String label(SettingResult s) {
        return s.config().isEmpty() ? "(defaults)" : s.config();
    }

    private static String capitalised(String s) {
        return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }

    private static final String STYLE = """
            .paste code { font-size: 15px; padding: 6px 10px; display: inline-block; }
            .verdict { font-weight: 700; font-size: 16px; }
            .verdict.good { color: #12632b; }
            .verdict.bad { color: #b42318; }
            .verdict.neutral { color: #5b6475; }
            .caveats li { color: #7a4b00; }
            tr.best-row td { background: #e3f4e6; }
            td.error { color: #b42318; }
            """;

    /** Shows the chart the menu names; without scripts the recommended one stays shown. */
    private static final String SCRIPT = """
            (function () {
              var menu = document.getElementById('chart-choice');
              if (!menu) { return; }
              menu.addEventListener('change', function () {
                var charts = document.querySelectorAll('.chart-option');
                for (var i = 0; i < charts.length; i++) {
                  charts[i].hidden = charts[i].getAttribute('data-choice') !== menu.value;
                }
              });
            })();
            """;

    /**
     * Whether two entries are the same row of the advice. Identity, not equality: two settings of a grid may have
     * equal figures (a record's equals), and the page must still mark only the one that is the baseline or the best.
     */
    @SuppressWarnings("ReferenceEquality")
    private static boolean same(SettingResult a, SettingResult b) {
        return a == b;
    }
}
