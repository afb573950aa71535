package io.devalloc.advisor.report;

import static io.devalloc.replay.report.ReportParts.escape;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.BoundsLadder;
import io.devalloc.advisor.CapacityCheck;
import io.devalloc.advisor.JobAdvice;
import io.devalloc.advisor.Objective;
import io.devalloc.advisor.OomPostMortem;
import io.devalloc.advisor.Recommendation;
import io.devalloc.advisor.SettingResult;
import io.devalloc.advisor.TrustLine;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.RecordedOom;
import io.devalloc.replay.ReplayJson;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.cli.TextWrap;
import io.devalloc.replay.report.ReportParts;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The advisor's HTML page, self-contained (inline style, SVG and one small script, nothing fetched). For a trace of
 * several devices, a summary of the devices first; then for each device, in order: the recommendation with the line
 * to paste and the trust line; the ranked table of settings; memory over time of the baseline against the
 * recommended setting (a menu shows the baseline against any other setting); the segment maps of both at their
 * peaks, at one scale; the waste at the peak by cause. Chart, maps and waste show the replays the objective compares
 * (on the card, or each setting on its smallest device for {@code capacity}), so that they agree with the headline
 * and the table; a device with only its end state shows that state instead. Every string from the input is escaped;
 * the same advice gives the same page, byte for byte. Charts, maps and style are the replay report's
 * ({@link ReportParts}), so both pages read alike.
 */
public final class AdviceHtml {

    /** The out-of-memory entries the page lists; the JSON lists more. */
    static final int OOMS_LISTED = 10;

    private AdviceHtml() {
    }

    /**
     * Writes the page to {@code file}, creating missing parent directories.
     *
     * @throws UncheckedIOException when it cannot be written
     */
    public static void write(Path file, JobAdvice job) {
        ReportParts.writePage(file, render(job), "page");
    }

    /** The page of the advice on a trace of one device. */
    public static String render(Advice advice) {
        return render(JobAdvice.of(advice));
    }

    /** The whole page. */
    public static String render(JobAdvice job) {
        String title = "devalloc advise " + job.trace();
        StringBuilder out = new StringBuilder(1 << 18);
        out.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
                .append("<meta name=\"generator\" content=\"devalloc\"/>\n")
                .append("<title>").append(escape(title)).append("</title>\n<style>\n").append(ReportParts.style())
                .append(STYLE).append("</style>\n</head>\n<body>\n");
        Advice first = job.devices().getFirst();
        out.append("<header>\n<h1>").append(escape(title)).append("</h1>\n<p class=\"sub\">")
                .append(escape(job.allocator())).append(" allocator, ")
                .append(AdviceText.counted(first.settings().size(), "setting")).append(", ")
                .append(AdviceText.counted(job.runs(), "replay")).append("; objective: ")
                .append(escape(job.objective().cliName())).append(".</p>\n</header>\n");
        boolean several = job.devices().size() > 1;
        if (several || !job.unusedDevices().isEmpty()) {
            summary(out, job);
        }
        for (int d = 0; d < job.devices().size(); d++) {
            Advice advice = job.devices().get(d);
            String id = "d" + d;
            if (several) {
                out.append("<h2 class=\"device\" id=\"").append(id).append("\">Device ")
                        .append(escape(advice.deviceLabel())).append("</h2>\n");
            }
            if (!advice.hasHistory()) {
                endState(out, advice);
                notes(out, advice, id);
                continue;
            }
            if (advice.oom() != null) {
                oom(out, advice.oom(), id);
            }
            recommendation(out, advice, id);
            if (advice.ladder() != null) {
                bounds(out, advice.ladder(), id);
            }
            trust(out, advice.trust(), id);
            table(out, advice, id);
            charts(out, advice, id);
            maps(out, advice, id);
            waste(out, advice, id);
            notes(out, advice, id);
        }
        // CDATA, commented out for HTML: the script compares with "<", and the page stays well-formed XML too.
        out.append("<script>\n//<![CDATA[\n").append(SCRIPT).append("//]]>\n</script>\n</body>\n</html>\n");
        return out.toString();
    }

    private static void summary(StringBuilder out, JobAdvice job) {
        out.append("<section id=\"devices\">\n<h2>Devices</h2>\n<table class=\"compare\">\n<thead><tr>")
                .append("<th>device</th><th class=\"num\">events</th><th>trust</th>")
                .append("<th class=\"num\">recorded peak reserved</th><th>card</th>")
                .append("<th class=\"num\">out-of-memory errors</th><th>recommendation</th>")
                .append("</tr></thead>\n<tbody>\n");
        Advice most = job.mostMemory();
        for (int d = 0; d < job.devices().size(); d++) {
            Advice a = job.devices().get(d);
            out.append("<tr").append(a.cudaDevice() == most.cudaDevice() ? " class=\"best-row\"" : "")
                    .append("><td><a href=\"#d").append(d)
                    .append("\">").append(escape(a.deviceLabel())).append("</a></td>");
            cell(out, AdviceText.count(a.events()));
            if (!a.hasHistory()) {
                out.append("<td>end state only</td>");
                cell(out, ByteSize.format(a.recordedPeakReservedBytes()) + " at its end");
                out.append("<td>-</td><td class=\"num\">-</td><td>none: no history to replay</td></tr>\n");
                continue;
            }
            out.append("<td>").append(escape(a.trust().word())).append("</td>");
            cell(out, ByteSize.format(a.recordedPeakReservedBytes()));
            out.append("<td>").append(a.capacity() == null ? "-" : escape(ByteSize.format(a.capacity().bytes())
                    + " (" + a.capacity().source().jsonName().replace('_', ' ') + ")")).append("</td>");
            cell(out, a.oom() == null ? "0" : AdviceText.count(a.oom().entries()));
            Recommendation rec = a.recommendation();
            out.append("<td><code>").append(escape(rec == null ? "none runs" : (rec.alreadyBest() ? "keep " : "")
                    + AdviceText.label(rec.setting().config()))).append("</code></td></tr>\n");
        }
        out.append("</tbody>\n</table>\n<p>").append(escape(AdviceText.mostMemorySentence(job))).append(".</p>\n");
        if (!job.unusedDevices().isEmpty()) {
            List<String> names = new ArrayList<>();
            for (int i : job.unusedDevices()) {
                names.add("cuda:" + i);
            }
            out.append("<p class=\"note\">Unused: ").append(escape(String.join(", ", names)))
                    .append(" (no trace entry, no segment: GPUs the process could see and never used).</p>\n");
        }
        out.append("</section>\n");
    }

    private static void recommendation(StringBuilder out, Advice advice, String id) {
        out.append("<section id=\"").append(id).append("-recommendation\">\n<h2>Recommendation</h2>\n");
        Recommendation rec = advice.recommendation();
        if (rec == null) {
            out.append("<p class=\"verdict bad\">").append(escape(AdviceText.capitalised(AdviceText.noneRuns(advice))))
                    .append(".</p>\n</section>\n");
            return;
        }
        out.append("<p class=\"paste\"><code>").append(escape(rec.env())).append("</code></p>\n");
        out.append("<p>").append(escape(AdviceText.capitalised(rec.reason()))).append(".");
        for (AdviceText.Saving saving : AdviceText.savings(advice)) {
            out.append(" ").append(escape(AdviceText.capitalised(saving.measure()))).append(": <b>")
                    .append(escape(saving.recommended())).append("</b> against ").append(escape(saving.recorded()))
                    .append(" for ").append(escape(advice.trust().baselineName())).append(": ")
                    .append(escape(saving.tail())).append('.');
        }
        out.append("</p>\n");
        if (!rec.costs().isEmpty()) {
            out.append("<ul class=\"costs\">\n");
            for (String c : rec.costs()) {
                out.append("<li>").append(escape(AdviceText.capitalised(c))).append(".</li>\n");
            }
            out.append("</ul>\n");
        }
        if (!rec.caveats().isEmpty()) {
            out.append("<ul class=\"caveats\">\n");
            for (String c : rec.caveats()) {
                out.append("<li>").append(escape(c)).append("</li>\n");
            }
            out.append("</ul>\n");
        }
        out.append("</section>\n");
    }

    /** The bounds ladder, bottom up, as the text report shows it, and the sentence that reads it. */
    private static void bounds(StringBuilder out, BoundsLadder ladder, String id) {
        out.append("<section id=\"").append(id).append("-bounds\">\n<h2>Bounds</h2>\n<p>")
                .append(escape(ladder.reading())).append("</p>\n<table class=\"compare\">\n<thead><tr><th></th>"
                        + "<th>memory</th><th>above the lower bound</th></tr></thead>\n<tbody>\n");
        for (BoundsLadder.Rung r : ladder.rungs()) {
            out.append("<tr><td>").append(escape(r.label())).append("</td>");
            cell(out, r.bytes() < 0 ? "-" : ByteSize.format(r.bytes()));
            cell(out, AdviceText.aboveFloor(ladder, r));
            out.append("</tr>\n");
        }
        out.append("</tbody>\n</table>\n<p class=\"note\">Bottom up: what any allocator could do. The lower bound"
                + " is the most bytes live at once, as the program requested them and after the allocator's rounding;"
                + " the offline plan is what an allocator that knew every allocation in advance would need in one"
                + " address space; a setting's memory is its smallest capacity; a percentage is of the rung's own"
                + " memory.</p>\n</section>\n");
    }

    /** The out-of-memory post-mortem: the failures as recorded, whether the first comes back, the verdict. */
    private static void oom(StringBuilder out, OomPostMortem post, String id) {
        out.append("<section id=\"").append(id).append("-oom\">\n<h2>Out of memory</h2>\n<p class=\"verdict bad\">")
                .append(escape(post.verdict())).append("</p>\n<p>The trace records ")
                .append(post.entries() == 1 ? "an out-of-memory error" : AdviceText.count(post.entries())
                        + " out-of-memory errors")
                .append(" (<code>torch.OutOfMemoryError</code>), ").append(post.entries() == 1 ? "" : "each ")
                .append("after the allocator's retry ladder had freed its cache:</p>\n<table class=\"compare\">\n"
                        + "<thead><tr><th class=\"num\">event</th><th class=\"num\">request</th>"
                        + "<th class=\"num\">reserved</th><th class=\"num\">live (as requested)</th>"
                        + "<th class=\"num\">device free</th>"
                        + "<th class=\"num\">reserved + device free</th></tr></thead>\n<tbody>\n");
        int listed = 0;
        for (RecordedOom o : post.ooms()) {
            if (++listed > OOMS_LISTED) {
                break;
            }
            out.append("<tr>");
            cell(out, AdviceText.count(o.event()));
            cell(out, o.requestBytes() > 0 ? ByteSize.format(o.requestBytes()) : "-");
            cell(out, ByteSize.format(o.reservedBytes()));
            cell(out, ByteSize.format(o.liveRequestedBytes()));
            cell(out, o.deviceFreeBytes() < 0 ? "-" : ByteSize.format(o.deviceFreeBytes()));
            cell(out, o.capacityBytes() < 0 ? "-" : ByteSize.format(o.capacityBytes()));
            out.append("</tr>\n");
        }
        out.append("</tbody>\n</table>\n");
        if (post.entries() > OOMS_LISTED) {
            out.append("<p class=\"note\">And ").append(AdviceText.count(post.entries() - OOMS_LISTED))
                    .append(" more (the JSON lists up to ").append(AdviceText.count(post.ooms().size()))
                    .append(").</p>\n");
        }
        if (post.card() != null) {
            out.append("<p>The card: ").append(escape(ByteSize.format(post.card().bytes()))).append(", ")
                    .append(escape(post.card().reason())).append(".</p>\n");
        }
        OomPostMortem.Reproduction r = post.reproduction();
        if (r != null) {
            out.append("<p><span class=\"verdict ").append(r.reproduced() ? "good" : "neutral").append("\">")
                    .append(escape(AdviceText.capitalised(r.word()))).append("</span>: ")
                    .append(escape(r.sentence())).append(".</p>\n");
        }
        out.append("</section>\n");
    }

    private static void trust(StringBuilder out, TrustLine t, String id) {
        String cls = switch (t.verdict()) {
            case MATCH -> "good";
            case DIFFERS, FAILED -> "bad";
            case NOT_COMPARABLE -> "neutral";
        };
        out.append("<section id=\"").append(id).append("-trust\">\n<h2>Trust</h2>\n<p class=\"verdict ").append(cls)
                .append("\">").append(escape(t.word())).append("</p>\n<p>")
                .append(escape(AdviceText.capitalised(AdviceText.trustSentence(t))))
                .append(".</p>\n<p class=\"note\">Baseline: <code>").append(escape(AdviceText.label(t.config())))
                .append("</code>, from ").append(escape(t.configSource())).append(".</p>\n");
        for (String n : t.notes()) {
            out.append("<p class=\"note\">").append(escape(n)).append("</p>\n");
        }
        out.append("</section>\n");
    }

    private static void table(StringBuilder out, Advice advice, String id) {
        boolean card = advice.capacity() != null;
        out.append("<section id=\"").append(id).append("-ranking\">\n<h2>Settings, best first</h2>\n<p class=\"note\">")
                .append(escape(AdviceText.capitalised(AdviceText.objectiveSentence(advice)))).append(".</p>\n")
                .append("<table class=\"compare\">\n<thead><tr><th class=\"num\">#</th><th>config</th>");
        OomPostMortem post = card ? advice.oom() : null;
        if (post != null) {
            out.append("<th>at the recorded out-of-memory error</th>");
        }
        if (card) {
            out.append("<th class=\"num\">OOMs on the card</th><th class=\"num\">flushes on the card</th>")
                    .append("<th class=\"num\">peak reserved on the card</th>");
        }
        out.append("<th class=\"num\">peak reserved, no flush</th><th class=\"num\">min capacity</th>")
                .append("<th class=\"num\">flushes there</th><th class=\"num\">peak allocated</th>")
                .append("<th class=\"num\">fragmentation</th><th class=\"num\">device mallocs / frees</th>")
                .append("</tr></thead>\n<tbody>\n");
        int rank = 0;
        Recommendation rec = advice.recommendation();
        int columns = (card ? 9 : 6) + (post != null ? 1 : 0);
        for (SettingResult s : advice.settings()) {
            boolean best = rec != null && same(rec.setting(), s);
            boolean ranked = AdviceText.ranked(s, advice);
            out.append("<tr").append(best ? " class=\"best-row\"" : "").append("><td class=\"num\">")
                    .append(ranked ? Integer.toString(++rank) : "-").append("</td><td class=\"conf\"><code>")
                    .append(configHtml(s.config())).append("</code>").append(s.recorded()
                            ? " <span class=\"dim\">" + escape(baselineWord(advice)) + "</span>" : "").append("</td>");
            ReplayResult r = s.result();
            if (r == null) {
                out.append("<td colspan=\"").append(columns).append("\" class=\"error\">")
                        .append(escape(s.error())).append("</td></tr>\n");
                continue;
            }
            if (post != null) {
                out.append("<td>").append(escape(post.passage(s).words())).append("</td>");
            }
            if (card) {
                CapacityCheck c = s.atCapacity();
                String where = AdviceText.firstOom(c);
                out.append("<td class=\"num\"").append(where == null ? "" : " title=\"" + escape(where) + "\"")
                        .append('>').append(escape(c.runs() ? "0" : AdviceText.count(c.ooms()))).append("</td>");
                cell(out, AdviceText.count(c.flushes()));
                cell(out, ByteSize.format(c.peakReserved()));
            }
            cell(out, r.ooms() > 0 ? "OOM" : ByteSize.format(r.peakReservedBytes()));
            cell(out, s.fits() ? ByteSize.format(s.minCapacityBytes()) : "> " + Advisor.UNLIMITED_DEVICE);
            cell(out, s.fits() ? AdviceText.count(s.retriesAtMinCapacity()) : "-");
            ReplayResult shown = s.onCard();
            cell(out, ByteSize.format(shown.peakAllocatedBytes()));
            cell(out, AdviceText.percent(shown.fragmentation()));
            cell(out, AdviceText.count(shown.deviceMallocs()) + " / " + AdviceText.count(shown.deviceFrees()));
            out.append("</tr>\n");
        }
        out.append("</tbody>\n</table>\n<p class=\"note\">Peak reserved, no flush: one replay on ")
                .append(escape(Advisor.UNLIMITED_DEVICE)).append(", what the setting needs to run without ever"
                        + " flushing its cache. Min capacity: the smallest simulated device, to ")
                .append(escape(ByteSize.format(Advisor.GRANULARITY))).append(", on which the whole trace runs without"
                        + " an out-of-memory error, flushing the cache as often as it must (one step less fails);"
                        + " flushes there: how often it must. ")
                .append(card ? "On the card: the same trace on a device of " + escape(ByteSize.format(
                        advice.capacity().bytes())) + "; peak allocated, fragmentation (1 − allocated/reserved at"
                        + " the reserved peak) and device calls are the card's."
                        : "Peak allocated, fragmentation (1 − allocated/reserved at the reserved peak) and device"
                        + " calls: the replay on " + escape(Advisor.UNLIMITED_DEVICE) + ".")
                .append(' ').append(escape(AdviceText.capitalised(Advisor.MEMORY_ALONE))).append(".</p>\n");
        if (card) {
            StringBuilder failures = new StringBuilder();
            for (SettingResult s : advice.settings()) {
                String where = s.ran() ? AdviceText.firstOom(s.atCapacity()) : null;
                if (where != null) {
                    failures.append("<li><code>").append(escape(AdviceText.label(s.config()))).append("</code> ")
                            .append(escape(where)).append("</li>\n");
                }
            }
            if (!failures.isEmpty()) {
                out.append("<p class=\"note\">On the card (").append(escape(ByteSize.format(
                        advice.capacity().bytes()))).append("):</p>\n<ul class=\"oom\">\n").append(failures)
                        .append("</ul>\n");
            }
        }
        out.append("</section>\n");
    }

    /**
     * A configuration text for a table cell: escaped, with a break allowed after each comma between two settings and
     * nowhere else, so that a setting such as {@code expandable_segments:True} or
     * {@code roundup_power2_divisions:[256:1,512:2]} is never cut in two.
     */
    static String configHtml(String config) {
        String label = AdviceText.label(config);
        StringBuilder out = new StringBuilder(label.length() + 16);
        List<String> settings = TextWrap.afterCommas(label, true);
        for (int i = 0; i < settings.size(); i++) {
            out.append(i == 0 ? "" : "<wbr/>").append(escape(settings.get(i)));
        }
        return out.toString();
    }

    /** "recorded", or "baseline" when the trace did not record the setting. */
    private static String baselineWord(Advice advice) {
        return advice.trust().baselineName().equals("the recorded setting") ? "recorded" : "baseline (defaults)";
    }

    private static void cell(StringBuilder out, String text) {
        out.append("<td class=\"num\">").append(escape(text)).append("</td>");
    }

    /** The replay the objective shows for a setting: on the card, or on its smallest device for capacity. */
    private static ReplayResult shown(Advice advice, SettingResult s) {
        if (advice.objective() == Objective.CAPACITY) {
            return s.atMinCapacity();
        }
        return s.onCard();
    }

    /** Where the shown replays ran, in words. */
    private static String shownWhere(Advice advice) {
        if (advice.objective() == Objective.CAPACITY) {
            return "its own smallest device (the capacity objective)";
        }
        return advice.capacity() == null ? Advisor.UNLIMITED_DEVICE + " (no capacity is known)"
                : "the card, a simulated device of " + ByteSize.format(advice.capacity().bytes());
    }

    private static void charts(StringBuilder out, Advice advice, String id) {
        out.append("<section id=\"").append(id).append("-timeline\">\n<h2>Memory over time</h2>\n");
        SettingResult base = advice.baseline();
        SettingResult best = advice.recommendation() == null ? null : advice.recommendation().setting();
        List<SettingResult> others = new ArrayList<>();
        for (SettingResult s : advice.settings()) {
            if (s.ran() && !same(s, base) && shown(advice, s) != null) {
                others.add(s);
            }
        }
        if (base == null || !base.ran() || shown(advice, base) == null) {
            out.append("<p class=\"note\">").append(escape(AdviceText.capitalised(advice.trust().baselineName())))
                    .append(" did not run there.</p>\n</section>\n");
            return;
        }
        out.append("<p class=\"note\">").append(escape(AdviceText.capitalised(advice.trust().baselineName())))
                .append(" against <select class=\"chart-choice\" data-device=\"").append(id).append("\">\n");
        if (others.isEmpty()) {
            out.append("<option value=\"0\">nothing else</option>\n");
        }
        int selected = Math.max(0, others.indexOf(best));
        for (int i = 0; i < others.size(); i++) {
            out.append("<option value=\"").append(i).append('"').append(i == selected ? " selected=\"selected\"" : "")
                    .append('>').append(escape(AdviceText.label(others.get(i).config())))
                    .append(same(others.get(i), best) ? " (recommended)" : "").append("</option>\n");
        }
        out.append("</select>, replayed on ").append(escape(shownWhere(advice))).append(".</p>\n");
        String trace = advice.trace() + (advice.deviceLabel().isEmpty() ? "" : " " + advice.deviceLabel());
        if (others.isEmpty()) {
            out.append(ReportParts.memoryChart(trace, List.of(shown(advice, base))));
        }
        for (int i = 0; i < others.size(); i++) {
            out.append("<div class=\"chart-option\" data-device=\"").append(id).append("\" data-choice=\"")
                    .append(i).append('"').append(i == selected ? "" : " hidden=\"hidden\"").append(">\n")
                    .append(ReportParts.memoryChart(trace, List.of(shown(advice, base), shown(advice, others.get(i)))))
                    .append("</div>\n");
        }
        out.append("</section>\n");
    }

    private static void maps(StringBuilder out, Advice advice, String id) {
        out.append("<section id=\"").append(id).append("-segments\">\n<h2>Segment maps at the peak</h2>\n");
        SettingResult base = advice.baseline();
        SettingResult best = advice.recommendation() == null ? null : advice.recommendation().setting();
        List<SettingResult> shown = new ArrayList<>();
        if (base != null && base.ran() && shown(advice, base) != null && shown(advice, base).peakSnapshot() != null) {
            shown.add(base);
        }
        if (best != null && !same(best, base) && shown(advice, best) != null
                && shown(advice, best).peakSnapshot() != null) {
            shown.add(best);
        }
        if (shown.isEmpty()) {
            out.append("<p class=\"note\">No snapshot at the peak.</p>\n</section>\n");
            return;
        }
        List<MemorySnapshot> snapshots = new ArrayList<>();
        List<String> captions = new ArrayList<>();
        for (SettingResult s : shown) {
            snapshots.add(shown(advice, s).peakSnapshot());
            captions.add("Segment map of " + AdviceText.label(s.config()) + " at its reserved peak");
        }
        List<String> rendered = ReportParts.segmentMaps(snapshots, captions);
        for (int i = 0; i < shown.size(); i++) {
            SettingResult s = shown.get(i);
            out.append("<div class=\"map\">\n<h3>").append(escape(AdviceText.label(s.config())))
                    .append(s.recorded() ? " (" + escape(baselineWord(advice)) + ")" : " (recommended)")
                    .append("</h3>\n<p class=\"meta\">reserved ")
                    .append(escape(ByteSize.format(snapshots.get(i).totalSegmentBytes()))).append("</p>\n")
                    .append(rendered.get(i)).append("</div>\n");
        }
        out.append("<p class=\"note\">Replayed on ").append(escape(shownWhere(advice))).append("; both maps share one"
                + " scale, so their lengths compare like the reserved bytes.</p>\n</section>\n");
    }

    private static void waste(StringBuilder out, Advice advice, String id) {
        out.append("<section id=\"").append(id).append("-waste\">\n<h2>Waste at the peak</h2>\n");
        SettingResult base = advice.baseline();
        SettingResult best = advice.recommendation() == null ? null : advice.recommendation().setting();
        List<SettingResult> shown = new ArrayList<>();
        if (base != null && base.ran() && shown(advice, base) != null) {
            shown.add(base);
        }
        if (best != null && !same(best, base) && shown(advice, best) != null) {
            shown.add(best);
        }
        List<Map<String, Object>> wastes = new ArrayList<>();
        for (SettingResult s : shown) {
            ReplayResult.Peak peak = shown(advice, s).peak();
            wastes.add(ReplayJson.wasteMap(peak));
        }
        if (wastes.isEmpty() || wastes.contains(null)) {
            out.append("<p class=\"note\">The replays did not explain their peaks.</p>\n</section>\n");
            return;
        }
        out.append("<table class=\"compare\">\n<thead><tr><th>cause</th>");
        for (SettingResult s : shown) {
            out.append("<th class=\"num\"><code>").append(escape(AdviceText.label(s.config()))).append("</code></th>");
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
                + " reserved peak on ").append(escape(shownWhere(advice))).append(", by cause; the causes add up to"
                + " reserved − requested there.</p>\n</section>\n");
    }

    /** A device with only its end state: the state, its segment map and its waste by cause. */
    private static void endState(StringBuilder out, Advice advice) {
        trust(out, advice.trust(), "e" + advice.cudaDevice());
        ReplayResult r = advice.endState() == null ? null : advice.endState().result();
        out.append("<section>\n<h2>End state</h2>\n");
        if (r == null || r.peakSnapshot() == null) {
            out.append("<p class=\"note\">The end state could not be restored.</p>\n</section>\n");
            return;
        }
        out.append("<p>What the snapshot holds for this device when it was taken: ")
                .append(escape(ByteSize.format(r.peakReservedBytes()))).append(" reserved in ")
                .append(r.peakSnapshot().segments().size()).append(" segments, ")
                .append(escape(ByteSize.format(r.peakAllocatedBytes()))).append(" allocated, ")
                .append(escape(ByteSize.format(r.peakRequestedBytes()))).append(" requested. No history: no run to"
                        + " chart, replay or advise on.</p>\n");
        out.append(ReportParts.segmentMaps(List.of(r.peakSnapshot()), List.of("Segment map of the end state"))
                .getFirst());
        if (r.peak() != null && r.peak().waste() != null) {
            out.append("<table class=\"compare\">\n<thead><tr><th>cause</th><th class=\"num\">bytes</th></tr>")
                    .append("</thead>\n<tbody>\n");
            for (Map.Entry<String, Object> e : ReplayJson.wasteMap(r.peak().waste()).entrySet()) {
                out.append("<tr><td>").append(escape(e.getKey().replace('_', ' '))).append("</td>");
                cell(out, ByteSize.format((Long) e.getValue()));
                out.append("</tr>\n");
            }
            out.append("</tbody>\n</table>\n<p class=\"note\">Reserved bytes no request asked for, by cause.</p>\n");
        }
        out.append("</section>\n");
    }

    private static void notes(StringBuilder out, Advice advice, String id) {
        out.append("<section id=\"").append(id).append("-notes\">\n<h2>Notes</h2>\n<ul>\n");
        for (String note : advice.notes()) {
            out.append("<li>").append(escape(note)).append("</li>\n");
        }
        for (String p : advice.grid().problems()) {
            out.append("<li>grid problem (left out): ").append(escape(p)).append("</li>\n");
        }
        out.append("</ul>\n</section>\n");
    }

    private static final String STYLE = """
            .paste code { font-size: 15px; padding: 6px 10px; display: inline-block; }
            .verdict { font-weight: 700; font-size: 16px; }
            .verdict.good { color: #12632b; }
            .verdict.bad { color: #b42318; }
            .verdict.neutral { color: #5b6475; }
            .caveats li { color: #7a4b00; }
            .costs li { color: #b42318; }
            h2.device { border-top: 2px solid #d0d5dd; padding-top: 12px; margin-top: 28px; }
            tr.best-row td { background: #e3f4e6; }
            td.error { color: #b42318; }
            td.conf code { overflow-wrap: normal; word-break: normal; }
            """;

    /** Shows the chart each device's menu names; without scripts the recommended one stays shown. */
    private static final String SCRIPT = """
            (function () {
              var menus = document.querySelectorAll('select.chart-choice');
              for (var m = 0; m < menus.length; m++) {
                (function (menu) {
                  menu.addEventListener('change', function () {
                    var charts = document.querySelectorAll('.chart-option');
                    for (var i = 0; i < charts.length; i++) {
                      if (charts[i].getAttribute('data-device') === menu.getAttribute('data-device')) {
                        charts[i].hidden = charts[i].getAttribute('data-choice') !== menu.value;
                      }
                    }
                  });
                })(menus[m]);
              }
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
