package io.devalloc.replay.report;

import static io.devalloc.api.units.ByteSize.GiB;
import static io.devalloc.api.units.ByteSize.KiB;
import static io.devalloc.api.units.ByteSize.MiB;
import static io.devalloc.replay.report.SyntheticResults.OPT;
import static io.devalloc.replay.report.SyntheticResults.WARM;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.replay.GroundTruthComparability;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.ReplayResult.GroundTruth;
import io.devalloc.replay.ReplayResult.Timeline;
import io.devalloc.replay.TrainingLoopWorkload;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPath;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathExpressionException;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NamedNodeMap;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * The report's structure, read back with an XML parser (the page is well-formed XML as well as HTML): the table,
 * the best marks, the legends, the chart and the segment maps; that it needs nothing from the network; that
 * hostile names stay text; that it is the same for the same input; and that maps of tens of thousands of blocks
 * stay small.
 */
class HtmlReportTest {

    private static final String TITLE = "devalloc compare " + OPT + " " + WARM;

    // ---- parsing helpers ----

    static Document parse(String html) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setNamespaceAware(false);
            factory.setExpandEntityReferences(false);
            factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
            return factory.newDocumentBuilder().parse(new InputSource(new StringReader(html)));
        } catch (Exception e) {
            throw new AssertionError("the report is not well-formed: " + e.getMessage(), e);
        }
    }

    static List<Element> all(Node context, String xpath) {
        try {
            XPath x = XPathFactory.newInstance().newXPath();
            NodeList nodes = (NodeList) x.evaluate(xpath, context, XPathConstants.NODESET);
            List<Element> out = new ArrayList<>();
            for (int i = 0; i < nodes.getLength(); i++) {
                out.add((Element) nodes.item(i));
            }
            return out;
        } catch (XPathExpressionException e) {
            throw new AssertionError(xpath, e);
        }
    }

    /** The text of a node as a reader sees it: a line break counts as a space, runs of white space as one. */
    static String text(Node node) {
        StringBuilder out = new StringBuilder();
        appendText(node, out);
        return out.toString().replaceAll("\\s+", " ").strip();
    }

    private static void appendText(Node node, StringBuilder out) {
        if (node.getNodeType() == Node.TEXT_NODE || node.getNodeType() == Node.CDATA_SECTION_NODE) {
            out.append(node.getNodeValue());
        } else if (node.getNodeType() == Node.ELEMENT_NODE && ((Element) node).getTagName().equals("br")) {
            out.append(' ');
        }
        for (Node child = node.getFirstChild(); child != null; child = child.getNextSibling()) {
            appendText(child, out);
        }
    }

    static List<String> texts(List<Element> elements) {
        List<String> out = new ArrayList<>();
        for (Element e : elements) {
            out.add(text(e));
        }
        return out;
    }

    private static boolean hasClass(Element e, String cls) {
        return List.of(e.getAttribute("class").split(" ")).contains(cls);
    }

    private static Document sampleDocument() {
        return parse(HtmlReport.render(TITLE, SyntheticResults.threeAllocatorsAndAWarmTrace()));
    }

    // ---- the table ----

    @Test
    void theTableHasOneRowPerResultUnderItsTrace() {
        Document doc = sampleDocument();
        List<String> headers = new ArrayList<>();
        for (String h : texts(all(doc, "//table[@class='compare']/thead/tr/th"))) {
            headers.add(h.replace("↓", "").replace("↑", "").strip());
        }
        assertEquals(List.of("allocator", "conf", "device mallocs", "device frees", "peak reserved", "peak allocated",
                "peak requested", "end reserved", "OOMs", "fragmentation", "events/s (wall clock)", "ground truth"),
                headers);

        List<String> traces = texts(all(doc, "//table[@class='compare']/tbody/tr[@class='trace-row']/th"));
        assertEquals(List.of(OPT + " 1,234,567 events", WARM + " 40,000 events"), traces);

        List<Element> rows = all(doc, "//table[@class='compare']/tbody/tr[@class='result']");
        assertEquals(5, rows.size());
        assertEquals(3, all(doc, "//table[@class='compare']/tbody[1]/tr[@class='result']").size());
        assertEquals(2, all(doc, "//table[@class='compare']/tbody[2]/tr[@class='result']").size());

        List<List<String>> cells = new ArrayList<>();
        for (Element row : rows) {
            cells.add(texts(all(row, "td")));
        }
        assertAll(
                // direct did not record the trace: its ground truth is not comparable, whatever the difference.
                () -> assertEquals(List.of("direct sim:80GiB", "default", "120", "118", "1.90 GiB", "1.77 GiB",
                        "1.72 GiB", "0 B", "0", "0.0% req 2.0%", "2.10 M/s",
                        "not comparable the trace: 61 mallocs · 59 frees · 1.77 GiB"),
                        cells.get(0)),
                // caching under other settings is comparable: the difference is what the setting changed.
                () -> assertEquals(
                        "device mallocs: 44, the trace has 30 the trace: 30 mallocs · 2 frees · 900.00 MiB",
                        cells.get(4).get(11)),
                () -> assertEquals(List.of("bfc sim:80GiB", "allow_growth:true", "9", "0", "2.50 GiB", "1.82 GiB",
                        "1.72 GiB", "2.50 GiB", "2", "21.0% req 25.0%", "6.20 M/s", "—"), cells.get(1)),
                () -> assertEquals("MATCH the trace: 61 mallocs · 59 frees · 1.77 GiB", cells.get(2).get(11)),
                () -> assertEquals("expandable_segments:True,max_split_size_mb:128", cells.get(4).get(1)));

        // Exact figures are in the hover titles.
        Element peakReserved = all(rows.get(2), "td[5]/span").get(0);
        assertEquals("1,897,922,560 B", peakReserved.getAttribute("title"));
        Element truth = all(rows.get(2), "td[12]/span").get(0);
        assertEquals("the trace's own allocator: 61 device mallocs, 59 device frees, peak reserved 1.77 GiB"
                + " (1,897,922,560 B)", truth.getAttribute("title"));
        // Why not comparable is in the verdict's hover title, and it is not styled as a difference.
        Element notComparable = all(rows.get(0), "td[12]/span/span").get(0);
        assertEquals("gt-na", notComparable.getAttribute("class"));
        assertEquals(GroundTruthComparability.whyNot("direct"),
                notComparable.getAttribute("title"));
        assertEquals(0, all(rows.get(0), ".//*[@class='gt-diff']").size());
    }

    @Test
    void notesAreListedUnderTheTableOncePerTraceAndLabelledWithTheSetUpsThatHaveThem() {
        List<ReplayResult> results = SyntheticResults.threeAllocatorsAndAWarmTrace();
        List<List<String>> notes = List.of(
                List.of("everyone on OPT", "direct and bfc"),
                List.of("everyone on OPT", "direct and bfc", "bfc alone"),
                List.of("everyone on OPT"),
                List.of(),
                List.of("expandable on warm"));
        Document doc = parse(HtmlReport.render(TITLE, results, notes));
        Element div = all(doc, "//section[@id='comparison']/div[@class='notes']").get(0);
        assertEquals("Notes", text(all(div, "h3").get(0)));
        assertEquals(List.of(OPT, WARM), texts(all(div, "p[@class='notes-trace']")));
        List<Element> lists = all(div, "ul");
        assertEquals(2, lists.size());
        assertEquals(List.of("everyone on OPT", "direct, bfc allow_growth:true: direct and bfc",
                "bfc allow_growth:true: bfc alone"), texts(all(lists.get(0), "li")));
        assertEquals(List.of("caching expandable_segments:True,max_split_size_mb:128: expandable on warm"),
                texts(all(lists.get(1), "li")));
        // The labels carry their set-up's colour.
        assertEquals(List.of("background:#1f77b4", "background:#d62728"),
                all(lists.get(0), "li[2]/span/span[@class='swatch']").stream().map(e -> e.getAttribute("style"))
                        .toList());

        // One trace: no trace name above the notes; no notes: no section for them.
        Document one = parse(HtmlReport.render("one", results.subList(0, 3), notes.subList(0, 3)));
        assertEquals(0, all(one, "//p[@class='notes-trace']").size());
        assertEquals(3, all(one, "//div[@class='notes']/ul/li").size());
        assertEquals(0, all(sampleDocument(), "//div[@class='notes']").size());

        IllegalArgumentException e = Assertions.assertThrows(IllegalArgumentException.class,
                () -> HtmlReport.render("bad", results, List.of(List.of())));
        assertEquals("1 lists of notes for 5 results", e.getMessage());
    }

    @Test
    void theBestFigureOfEachColumnIsMarkedAmongTheRowsOfTheSameTrace() {
        Document doc = sampleDocument();
        List<String> headers = texts(all(doc, "//table[@class='compare']/thead/tr/th"));
        List<Element> rows = all(doc, "//table[@class='compare']/tbody/tr[@class='result']");
        Set<String> marked = new TreeSet<>();
        for (int r = 0; r < rows.size(); r++) {
            List<Element> cells = all(rows.get(r), "td");
            for (int c = 0; c < cells.size(); c++) {
                if (hasClass(cells.get(c), "best")) {
                    marked.add(r + " " + headers.get(c).replace(" ↓", "").replace(" ↑", ""));
                }
            }
        }
        // Rows 0-2 are the OPT trace (direct, bfc, caching), rows 3-4 the warm trace. Peak requested is the same
        // everywhere, peak allocated and OOMs the same on the warm trace: nothing is marked there. Events per
        // second differ on both traces but are never marked: they measure the machine and the JVM's warm-up.
        Set<String> expected = new TreeSet<>(List.of(
                "1 device mallocs", "1 device frees", "2 peak reserved", "2 peak allocated", "0 end reserved",
                "0 OOMs", "2 OOMs", "0 fragmentation",
                "3 device mallocs", "3 device frees", "4 peak reserved", "4 end reserved", "4 fragmentation"));
        assertEquals(expected, marked);
        // Marked cells are bold green in the style sheet.
        String html = HtmlReport.render(TITLE, SyntheticResults.threeAllocatorsAndAWarmTrace());
        assertTrue(html.contains(".compare td.best, .best-key { font-weight: 700; color: #12632b;"), "best style");
        // No column is "higher is better" any more: the speed was the only one.
        assertFalse(html.contains("higher is better"), "an upward arrow");
        assertTrue(text(all(doc, "//section[@id='comparison']/p[@class='note']").get(0)).contains(
                "events/s (wall clock) is how fast this machine replayed the trace, the JVM's warm-up included"),
                "the speed is explained");
    }

    @Test
    void aSingleResultHasNothingToBeBestAgainst() {
        List<ReplayResult> one = List.of(SyntheticResults.threeAllocatorsAndAWarmTrace().get(0));
        Document doc = parse(HtmlReport.render("one", one));
        assertEquals(1, all(doc, "//tr[@class='result']").size());
        assertEquals(0, all(doc, "//td[contains(concat(' ', @class, ' '), ' best ')]").size());
    }

    // ---- the chart ----

    @Test
    void eachTraceHasAChartWithALegendEntryAndTwoLinesPerResult() {
        Document doc = sampleDocument();
        List<Element> charts = all(doc, "//section[@id='timeline']/figure[@class='chart']");
        assertEquals(2, charts.size());
        assertEquals(List.of(OPT, WARM), texts(all(doc, "//section[@id='timeline']/h3")));

        List<Element> optEntries = all(charts.get(0), "div[@class='legend']/span[@class='legend-entry']");
        assertEquals(List.of("direct", "bfc allow_growth:true", "caching"), texts(optEntries));
        List<Element> warmEntries = all(charts.get(1), "div[@class='legend']/span[@class='legend-entry']");
        assertEquals(List.of("caching", "caching expandable_segments:True,max_split_size_mb:128"), texts(warmEntries));
        assertEquals(List.of("reserved", "allocated", "peak reserved"),
                texts(all(charts.get(0), "div[@class='legend']/span[@class='legend-key']")));

        // Colours: one per set-up, the same set-up keeps its colour on another trace.
        assertEquals(List.of("background:#1f77b4", "background:#d62728", "background:#2ca02c"),
                all(charts.get(0), "div/span/span[@class='swatch']").stream()
                        .map(e -> e.getAttribute("style")).toList());
        assertEquals(List.of("background:#2ca02c", "background:#ff7f0e"),
                all(charts.get(1), "div/span/span[@class='swatch']").stream()
                        .map(e -> e.getAttribute("style")).toList());

        List<Element> lines = all(charts.get(0), "svg/polyline");
        assertEquals(6, lines.size());
        assertEquals(List.of("reserved", "reserved", "reserved", "allocated", "allocated", "allocated"),
                lines.stream().map(e -> e.getAttribute("class")).toList());
        assertEquals(List.of("#1f77b4", "#d62728", "#2ca02c", "#1f77b4", "#d62728", "#2ca02c"),
                lines.stream().map(e -> e.getAttribute("stroke")).toList());
        assertEquals("bfc allow_growth:true · reserved", text(all(lines.get(1), "title").get(0)));
        assertEquals(2_000, lines.get(0).getAttribute("points").split(" ").length);
        assertEquals(3, all(charts.get(0), "svg/circle[@class='peak']").size());

        // Axes in human units: bytes in GiB, events in millions.
        assertEquals(List.of("0", "0.5 GiB", "1 GiB", "1.5 GiB", "2 GiB", "2.5 GiB"),
                texts(all(charts.get(0), "svg/g/text[@class='ytick']")));
        assertEquals(List.of("0", "0.2M", "0.4M", "0.6M", "0.8M", "1M", "1.2M", "1.4M"),
                texts(all(charts.get(0), "svg/g/text[@class='xtick']")));
        assertEquals(List.of("0", "200 MiB", "400 MiB", "600 MiB", "800 MiB", "1000 MiB"),
                texts(all(charts.get(1), "svg/g/text[@class='ytick']")));
        assertEquals(List.of("0", "5k", "10k", "15k", "20k", "25k", "30k", "35k", "40k"),
                texts(all(charts.get(1), "svg/g/text[@class='xtick']")));
    }

    /** bfc without growth (the whole 80 GiB device from its first allocation) beside caching on the same trace. */
    static List<ReplayResult> noGrowthBfcAndCaching() {
        ReplayResult caching = SyntheticResults.threeAllocatorsAndAWarmTrace().get(2);
        Timeline t = SyntheticResults.timeline(1_234_567, 2_000, 1_850_000_000L, 1.0, 12);
        long[] reserved = new long[t.size()];
        Arrays.fill(reserved, 80 * GiB);
        ReplayResult bfc = ReplayResult.builder().trace(OPT).allocator("bfc").device("sim:80GiB").conf("")
                .events(1_234_567).allocs(617_000).frees(616_990).deviceMallocs(1).peakReservedBytes(80 * GiB)
                .peakAllocatedBytes(1_850_000_000L).peakRequestedBytes(1_850_000_000L).endReservedBytes(80 * GiB)
                .fragmentation(0.98).requestedFragmentation(0.98).eventsPerSecond(6_200_000)
                .timeline(new Timeline(t.event(), t.allocated(), reserved)).build();
        return List.of(bfc, caching);
    }

    @Test
    void aRunFarAboveTheOthersIsDrawnOffTheScaleAndTheCaptionSaysSo() {
        Document doc = parse(HtmlReport.render(TITLE, noGrowthBfcAndCaching()));
        Element chart = all(doc, "//figure[@class='chart']").get(0);
        // The axis is caching's (peak reserved 1.77 GiB), not bfc's 80 GiB.
        assertEquals(List.of("0", "0.5 GiB", "1 GiB", "1.5 GiB", "2 GiB"),
                texts(all(chart, "svg/g/text[@class='ytick']")));
        assertEquals("Off the scale: bfc (peak reserved 80.00 GiB). The y axis ends at 2 GiB so that the other"
                + " set-ups stay readable: a set-up whose largest value is more than 4 times the median set-up's"
                + " runs along the top of the chart where it is beyond it, its peak marked ▲ with the exact value in"
                + " the hover title; the table has all the figures.",
                text(all(chart, "figcaption[@class='off-scale']").get(0)));
        // bfc's reserved line runs along the top of the plot; its allocated line, on the scale, stays below it.
        List<Element> lines = all(chart, "svg/polyline");
        assertEquals(List.of("reserved off-scale", "reserved", "allocated off-scale", "allocated"),
                lines.stream().map(e -> e.getAttribute("class")).toList());
        for (String point : lines.get(0).getAttribute("points").split(" ")) {
            assertEquals(14.0, Double.parseDouble(point.split(",")[1]), 1e-9, point);
        }
        // Its peak is an arrow at the top with the exact value; caching keeps its circle, high in the plot.
        Element arrow = all(chart, "svg/path[@class='peak off-scale']").get(0);
        assertEquals("bfc · off the scale: peak reserved 80.00 GiB (85,899,345,920 B) at event 0",
                text(all(arrow, "title").get(0)));
        List<Element> circles = all(chart, "svg/circle[@class='peak']");
        assertEquals(1, circles.size());
        assertTrue(Double.parseDouble(circles.get(0).getAttribute("cy")) < 14 + 318 / 4.0,
                () -> "caching's peak is not flattened: " + circles.get(0).getAttribute("cy"));

        // No run far above the others: one axis up to the largest, no caption.
        assertEquals(0, all(sampleDocument(), "//figcaption").size());
    }

    @Test
    void offTheScaleIsMoreThanFourTimesTheLowerMedianOfTheRunsThatHoldMemory() {
        assertArrayEquals(new boolean[] {false, true}, MemoryChart.offScale(new long[] {1 * GiB, 80 * GiB}));
        assertArrayEquals(new boolean[] {false, false}, MemoryChart.offScale(new long[] {1 * GiB, 4 * GiB}));
        assertArrayEquals(new boolean[] {false, true, false, false},
                MemoryChart.offScale(new long[] {2 * GiB, 80 * GiB, 1 * GiB, 3 * GiB}));
        // Two at 80 GiB and one small: the median is 80 GiB, nothing is off the scale.
        assertArrayEquals(new boolean[] {false, false, false},
                MemoryChart.offScale(new long[] {80 * GiB, 80 * GiB, 1 * GiB}));
        // A run that holds nothing does not count; one run alone is never off the scale.
        assertArrayEquals(new boolean[] {false, false}, MemoryChart.offScale(new long[] {0, 80 * GiB}));
        assertArrayEquals(new boolean[] {false}, MemoryChart.offScale(new long[] {80 * GiB}));
    }

    @Test
    void longTimelinesAreThinnedButKeepTheirPeak() {
        int n = 200_000;
        long[] event = new long[n];
        long[] allocated = new long[n];
        long[] reserved = new long[n];
        for (int i = 0; i < n; i++) {
            event[i] = i * 5L;
            allocated[i] = (i % 1_000) * 1_000_000L;
            reserved[i] = 1_000_000_000L;
        }
        allocated[123_457] = 3_000_000_000L; // one spike, one sample wide
        reserved[123_457] = 3_000_000_000L;
        ReplayResult r = ReplayResult.builder().trace("long").allocator("caching").device("sim:80GiB").conf("")
                .events(n * 5L).allocs(1).frees(1).deviceMallocs(1).peakReservedBytes(3_000_000_000L)
                .peakAllocatedBytes(3_000_000_000L).peakRequestedBytes(3_000_000_000L).eventsPerSecond(1)
                .timeline(new Timeline(event, allocated, reserved)).build();
        Document doc = parse(HtmlReport.render("long", List.of(r)));
        List<Element> lines = all(doc, "//figure[@class='chart']/svg/polyline");
        for (Element line : lines) {
            String[] points = line.getAttribute("points").split(" ");
            assertTrue(points.length <= 4 * 1104, line.getAttribute("class") + ": " + points.length + " points");
            double top = Double.MAX_VALUE;
            for (String p : points) {
                top = Math.min(top, Double.parseDouble(p.split(",")[1]));
            }
            // The one-sample spike is still the highest point of both lines, where the peak marker sits.
            double highestY = Double.parseDouble(all(doc, "//circle[@class='peak']").get(0).getAttribute("cy"));
            assertEquals(highestY, top, 0.01, line.getAttribute("class") + " lost its peak");
        }
    }

    // ---- the segment maps ----

    @Test
    void eachResultWithASnapshotHasASegmentMapWithAStateLegendAndHoverTitles() {
        Document doc = sampleDocument();
        List<Element> maps = all(doc, "//section[@id='segments']/div[@class='map']");
        assertEquals(5, maps.size());
        assertEquals(4, all(doc, "//section[@id='segments']/div[@class='map']/svg").size());
        assertEquals("No snapshot at the peak.", text(all(maps.get(3), "p").get(0)));
        for (int m : new int[] {0, 1, 2, 4}) {
            List<String> legend = texts(all(maps.get(m), "div[contains(@class, 'map-legend')]/span"));
            assertEquals(4, legend.size());
            assertTrue(legend.get(0).startsWith("allocated "), legend.get(0));
            assertTrue(legend.get(1).startsWith("pending free "), legend.get(1));
            assertTrue(legend.get(2).startsWith("free "), legend.get(2));
            assertTrue(legend.get(3).startsWith("unmapped "), legend.get(3));
        }
        assertEquals("allocated 788.00 MiB in 2 blocks", texts(all(maps.get(4), "div/span")).get(0));
        assertEquals("unmapped 200.00 MiB in 1 block", texts(all(maps.get(4), "div/span")).get(3));

        // direct: the first block of the first segment, with its address, size and requested size.
        MemorySnapshot direct = SyntheticResults.direct(40);
        BlockSnapshot first = direct.segments().get(0).blocks().get(0);
        Element rect = all(maps.get(0), "svg/rect[@class='st-allocated']").get(0);
        assertEquals("allocated block at 0x7f0000000000 · size " + Markup.bytesExact(first.size())
                + " · requested " + Markup.bytesExact(first.requestedSize()), text(all(rect, "title").get(0)));
        // Segments two pixels wide or more are outlined (one outline per row they touch).
        List<MemorySnapshot> snapshots = new ArrayList<>();
        for (ReplayResult r : SyntheticResults.threeAllocatorsAndAWarmTrace()) {
            if (r.peakSnapshot() != null) {
                snapshots.add(r.peakSnapshot());
            }
        }
        double bytesPerPixel = SegmentMap.bytesPerPixel(snapshots);
        long wide = direct.segments().stream().filter(s -> s.size() / bytesPerPixel >= 2).count();
        int outlines = all(maps.get(0), "svg/rect[@class='seg']").size();
        assertTrue(wide > 10 && outlines >= wide && outlines <= wide + SegmentMap.MAX_ROWS,
                outlines + " outlines for " + wide + " segments of 2 px or more");
        String segTitle = text(all(maps.get(0), "svg/rect[@class='seg']/title").get(0));
        assertTrue(segTitle.startsWith("segment 0x7f0000000000 · ")
                && segTitle.endsWith(" · direct pool · stream 0 · 1 block"), segTitle);

        // Every state shows up where the snapshot has it.
        assertFalse(all(maps.get(2), "svg/rect[contains(@class, 'st-pending')]").isEmpty(), "pending free blocks");
        assertFalse(all(maps.get(2), "svg/rect[contains(@class, 'st-free')]").isEmpty(), "free blocks");
        assertFalse(all(maps.get(4), "svg/rect[@class='st-unmapped']").isEmpty(), "unmapped range");
        assertEquals(List.of("#3b5b92", "#f0a030", "#a9dba0", "#e3e3e3"),
                all(maps.get(0), "div/span/span[@class='swatch']").stream()
                        .map(e -> e.getAttribute("style").replace("background:", "")).toList());
    }

    @Test
    void tensOfThousandsOfBlocksRenderAsAtMostAFewRectanglesPerPixel() {
        MemorySnapshot big = SyntheticResults.manyBlocks(40, 2_000, 7);
        ReplayResult r = SyntheticResults.withSnapshot("stress", "bfc", "", big);
        String html = HtmlReport.render("stress", List.of(r));
        Document doc = parse(html);
        Element svg = all(doc, "//div[@class='map']/svg").get(0);
        List<Element> rects = all(svg, "rect");
        int bound = 3 * SegmentMap.MAX_ROWS * SegmentMap.WIDTH + 2 * 40 + 2 * SegmentMap.MAX_ROWS;
        assertTrue(rects.size() < bound, rects.size() + " rectangles for 80,000 blocks");
        assertTrue(html.length() < 4_000_000, html.length() + " characters");

        double widths = 0;
        int merged = 0;
        for (Element e : rects) {
            if (e.getAttribute("class").equals("seg")) {
                continue;
            }
            double x = Double.parseDouble(e.getAttribute("x"));
            double w = Double.parseDouble(e.getAttribute("width"));
            assertTrue(x >= 0 && x + w <= SegmentMap.WIDTH + 0.01, "inside the row: x=" + x + " w=" + w);
            widths += w;
            if (hasClass(e, "merged")) {
                merged++;
                assertTrue(text(all(e, "title").get(0)).matches("[0-9,]+ blocks merged, 0x[0-9a-f]+ to 0x[0-9a-f]+:.*"),
                        text(all(e, "title").get(0)));
            }
        }
        assertTrue(merged > 100, merged + " merged runs");
        double expected = big.totalSegmentBytes() / SegmentMap.bytesPerPixel(List.of(big));
        assertTrue(widths <= expected + 0.5 && widths >= 0.85 * expected,
                "blocks cover " + widths + " px of " + expected);
    }

    @Test
    void thousandsOfTinySegmentsAreMergedToo() {
        List<SegmentSnapshot> segments = new ArrayList<>();
        long address = SyntheticResults.BASE;
        for (int i = 0; i < 20_000; i++) {
            segments.add(new SegmentSnapshot(address, 4 * KiB, 0, "small",
                    List.of(new BlockSnapshot(address, 4 * KiB, 4_000, BlockState.ALLOCATED))));
            address += 8 * KiB;
        }
        segments.add(new SegmentSnapshot(address, 4 * GiB, 0, "large",
                List.of(new BlockSnapshot(address, 4 * GiB, 0, BlockState.FREE))));
        MemorySnapshot snapshot = SyntheticResults.snapshot("direct", segments);
        Document doc = parse(HtmlReport.render("tiny",
                List.of(SyntheticResults.withSnapshot("tiny", "direct", "", snapshot))));
        List<Element> rects = all(doc, "//div[@class='map']/svg/rect");
        assertTrue(rects.size() < 3 * SegmentMap.MAX_ROWS * SegmentMap.WIDTH, rects.size() + " rectangles");
        String title = text(all(doc, "//div[@class='map']/svg/rect[contains(@class, 'merged')]/title").get(0));
        assertTrue(title.matches(
                "[0-9,]+ blocks in [0-9,]+ segments merged, 0x7f0000000000 to 0x[0-9a-f]+: allocated .*"), title);
    }

    // ---- self-contained, escaped, deterministic ----

    @Test
    void thePageNeedsNothingFromTheNetwork() {
        List<ReplayResult> results = new ArrayList<>(SyntheticResults.threeAllocatorsAndAWarmTrace());
        results.add(hostile());
        String plain = HtmlReport.render(TITLE, SyntheticResults.threeAllocatorsAndAWarmTrace());
        // In the plain page not even the text mentions a resource attribute; in the hostile one, names that do
        // are escaped text, so the check below reads the parsed attributes instead.
        assertFalse(Pattern.compile("\\s(src|href|srcset|xlink:href|action|poster)\\s*=", Pattern.CASE_INSENSITIVE)
                .matcher(plain).find(), "a resource attribute");
        for (String html : List.of(plain, HtmlReport.render(TITLE, results))) {
            assertFalse(html.contains("http://"), "http:// in the page");
            assertFalse(html.contains("https://"), "https:// in the page");
            assertFalse(html.contains("url("), "url( in the page");
            assertFalse(html.contains("@import"), "@import in the page");
            Document doc = parse(html);
            for (Element e : all(doc, "//*")) {
                assertFalse(Set.of("script", "link", "img", "image", "iframe", "object", "embed", "use", "audio",
                        "video", "source", "foreignObject", "base").contains(e.getTagName()),
                        "element " + e.getTagName());
                NamedNodeMap attributes = e.getAttributes();
                for (int i = 0; i < attributes.getLength(); i++) {
                    String name = attributes.item(i).getNodeName().toLowerCase(Locale.ROOT);
                    assertFalse(name.equals("src") || name.endsWith("href") || name.startsWith("on"),
                            "attribute " + name + " on " + e.getTagName());
                }
            }
        }
    }

    static ReplayResult hostile() {
        MemorySnapshot snapshot = SyntheticResults.snapshot("x<y", List.of(SyntheticResults.segment(
                SyntheticResults.BASE, "pool\"><script>alert(5)</script>", new long[] {4096},
                new BlockState[] {BlockState.ALLOCATED}, 0)));
        return ReplayResult.builder().trace("evil\"trace'<img src=x onerror=alert(1)>&amp;.pickle")
                .allocator("bfc<b>bold</b>").device("sim:1GiB\"><svg onload=alert(3)>")
                .conf("<script>alert(1)</script>").events(10).allocs(5).frees(5).deviceMallocs(1).deviceFrees(1)
                .peakReservedBytes(4096).peakAllocatedBytes(4096).peakRequestedBytes(4096).eventsPerSecond(1_000)
                .groundTruth(new GroundTruth(1, 1, 4096, false, "</td><script>alert(2)</script>\u0007"))
                .timeline(new Timeline(new long[] {0, 10}, new long[] {0, 4096}, new long[] {4096, 4096}))
                .peakSnapshot(snapshot).build();
    }

    /** Like {@link #hostile()}, through the recording allocator, so that its hostile difference is shown. */
    static ReplayResult hostileCaching() {
        ReplayResult h = hostile();
        return ReplayResult.builder().trace(h.trace()).allocator("caching").device(h.device()).conf(h.conf()).events(10)
                .allocs(5).frees(5).deviceMallocs(1).deviceFrees(1).peakReservedBytes(4096).peakAllocatedBytes(4096)
                .peakRequestedBytes(4096).eventsPerSecond(1_000).groundTruth(h.groundTruth()).timeline(h.timeline())
                .peakSnapshot(h.peakSnapshot()).build();
    }

    @Test
    void hostileNamesStayText() {
        ReplayResult r = hostile();
        String title = "report </title><script>alert(4)</script>";
        String html = HtmlReport.render(title, List.of(r, hostileCaching()),
                List.of(List.of("<script>alert(6)</script>"), List.of()));
        assertFalse(html.contains("<script"), "a script tag");
        assertFalse(html.contains("<img"), "an img tag");
        assertFalse(html.contains("<b>"), "a b tag from a name");
        assertFalse(html.contains("<svg onload"), "an svg tag from a name");
        assertTrue(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the conf, escaped");
        assertTrue(html.contains("evil&quot;trace&#39;&lt;img src=x onerror=alert(1)&gt;&amp;amp;.pickle"),
                "the trace");

        // Read back, every string is exactly what was given (the bell character, which a page cannot hold, aside).
        Document doc = parse(html);
        assertEquals(title, text(all(doc, "/html/head/title").get(0)));
        assertEquals(title, text(all(doc, "/html/body/header/h1").get(0)));
        Element row = all(doc, "//tr[@class='result']").get(0);
        List<Element> cells = all(row, "td");
        assertEquals("bfc<b>bold</b> sim:1GiB\"><svg onload=alert(3)>", text(cells.get(0)));
        assertEquals("<script>alert(1)</script>", text(cells.get(1)));
        assertTrue(text(cells.get(11)).startsWith("not comparable the trace:"), text(cells.get(11)));
        List<Element> caching = all(all(doc, "//tr[@class='result']").get(1), "td");
        assertTrue(text(caching.get(11)).startsWith("</td><script>alert(2)</script>\uFFFD the trace:"),
                text(caching.get(11)));
        assertTrue(text(all(doc, "//div[@class='notes']/ul/li").get(0)).endsWith(": <script>alert(6)</script>"),
                "the note, escaped");
        assertEquals(r.trace() + " 10 events", text(all(doc, "//tr[@class='trace-row']/th").get(0)));
        assertTrue(text(all(doc, "//div[@class='map']/svg/rect[@class='seg']/title").get(0))
                .contains("pool\"><script>alert(5)</script> pool"));
        assertEquals(0, all(doc, "//script | //img | //b[not(@class)]").size());
    }

    @Test
    void theSameInputGivesTheSamePage(@TempDir Path dir) throws Exception {
        String first = HtmlReport.render(TITLE, SyntheticResults.threeAllocatorsAndAWarmTrace());
        Locale saved = Locale.getDefault();
        String second;
        try {
            Locale.setDefault(Locale.GERMANY); // decimal commas, if anything used the default locale
            second = HtmlReport.render(TITLE, SyntheticResults.threeAllocatorsAndAWarmTrace());
        } finally {
            Locale.setDefault(saved);
        }
        assertEquals(first, second);
        assertFalse(first.matches("(?s).*\\b20[0-9]{2}-[01][0-9]-[0-3][0-9].*"), "a date in the page");

        Path file = dir.resolve("nested/report.html");
        HtmlReport.write(file, TITLE, SyntheticResults.threeAllocatorsAndAWarmTrace());
        assertEquals(first, Files.readString(file, StandardCharsets.UTF_8));
    }

    @Test
    void noResultsGiveAPageThatSaysSo() {
        String html = HtmlReport.render("nothing", List.of());
        Document doc = parse(html);
        assertEquals(0, all(doc, "//tr[@class='result']").size());
        assertTrue(html.contains("No results."));
        assertTrue(html.contains("No result has a snapshot at the peak."));
    }

    @Test
    void theSampleFromRealAllocatorsRenders() {
        List<ReplayResult> sample =
                SampleResults.trainingLoop(new TrainingLoopWorkload.Spec(4, 3, 1));
        Document doc = parse(HtmlReport.render("sample", sample));
        assertEquals(SampleResults.SETUPS.size(), all(doc, "//tr[@class='result']").size());
        assertEquals(SampleResults.SETUPS.size(), all(doc, "//div[@class='map']/svg").size());
        for (ReplayResult r : sample) {
            r.peakSnapshot().checkInvariants();
            assertEquals(r.peakReservedBytes(), r.peakSnapshot().totalSegmentBytes(), r.allocator() + " " + r.conf());
        }
    }

    // ---- formatting ----

    @Test
    void markupEscapesAndFormats() {
        assertAll(
                () -> assertEquals("&lt;a href=&quot;x&quot;&gt;&amp;&#39;", Markup.esc("<a href=\"x\">&'")),
                () -> assertEquals("a\uFFFDb\tc\n", Markup.esc("a\u0000b\tc\n")),
                () -> assertEquals("\uFFFDx\uD83D\uDE00", Markup.esc("\uD83Dx\uD83D\uDE00")),
                () -> assertEquals("plain", Markup.esc("plain")),
                () -> assertEquals("12", Markup.num(12.001)),
                () -> assertEquals("12.5", Markup.num(12.5)),
                () -> assertEquals("-0.25", Markup.num(-0.25)),
                () -> assertEquals("1,897,922,560", Markup.grouped(1_897_922_560L)),
                () -> assertEquals("1.77 GiB (1,897,922,560 B)", Markup.bytesExact(1_897_922_560L)),
                () -> assertEquals("512 B", Markup.bytesExact(512)),
                () -> assertEquals("7.50 M/s", Markup.rate(7_500_000)),
                () -> assertEquals("912.5 k/s", Markup.rate(912_500)),
                () -> assertEquals("40 /s", Markup.rate(40)),
                () -> assertEquals("2.5", Markup.tick(2.5, 0.5)),
                () -> assertEquals("0.25", Markup.tick(0.25, 0.25)),
                () -> assertEquals("1000", Markup.tick(1000, 200)));
    }

    @Test
    void theChartsPeakIsTheResultsPeakEvenBetweenTwoSamples() {
        // Samples after events 0, 8 and 16; the peak, 30 MiB after event 5, fell between two of them.
        ReplayResult.Timeline sampled = new ReplayResult.Timeline(new long[] {0, 8, 16},
                new long[] {5 * MiB, 10 * MiB, 5 * MiB}, new long[] {10 * MiB, 20 * MiB, 15 * MiB});
        ReplayResult r = ReplayResult.builder().trace("t").allocator("caching").device("sim:80GiB").conf("").events(16)
                .allocs(8).frees(8).deviceMallocs(3).deviceFrees(1).peakReservedBytes(30 * MiB)
                .peakAllocatedBytes(25 * MiB).peakRequestedBytes(25 * MiB).endReservedBytes(15 * MiB).fragmentation(0.1)
                .requestedFragmentation(0.1).eventsPerSecond(1e6).timeline(sampled)
                .peak(new ReplayResult.Peak(5, 30 * MiB, 25 * MiB, 25 * MiB, true, null)).build();
        ReplayResult.Timeline drawn = MemoryChart.withPeak(r);
        assertArrayEquals(new long[] {0, 5, 8, 16}, drawn.event());
        assertArrayEquals(new long[] {10 * MiB, 30 * MiB, 20 * MiB, 15 * MiB}, drawn.reserved());
        String svg = MemoryChart.render("t", List.of(r), List.of(new Series("caching", "#123456")));
        assertTrue(svg.contains("peak reserved 30.00 MiB (31,457,280 B) at event 5<"), svg);
    }

    @Test
    void axisStepsAreOneTwoTwoAndAHalfOrFiveTimesAPowerOfTen() {
        assertEquals(0.5, MemoryChart.niceStep(2.3, 5), 1e-12);
        assertEquals(200_000, MemoryChart.niceStep(1_234_567, 8), 1e-6);
        assertEquals(2.5, MemoryChart.niceStep(11, 5), 1e-12);
        assertEquals(1, MemoryChart.niceStep(5, 5), 1e-12);
        assertEquals("750", MemoryChart.countLabel(750, 250, 1_000));
        assertEquals("25k", MemoryChart.countLabel(25_000, 5_000, 40_000));
        assertEquals("1.4M", MemoryChart.countLabel(1_400_000, 200_000, 1_400_000));
    }
}
