package io.devalloc.replay.report;

import static io.devalloc.replay.report.HtmlReportTest.all;
import static io.devalloc.replay.report.HtmlReportTest.parse;
import static io.devalloc.replay.report.HtmlReportTest.text;
import static io.devalloc.replay.report.HtmlReportTest.texts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.replay.ReplayResult;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

/** The best marks of the comparison table where a set-up calls the device for every allocation. */
class ComparisonTableTest {

    /**
     * The synthetic OPT results with {@code direct} as it really is: a device malloc for every allocation and a free
     * for every free, so that it holds the least memory at its peak and at its end, with no fragmentation.
     */
    private static List<ReplayResult> withADirectThatCallsTheDeviceEachTime() {
        List<ReplayResult> synthetic = SyntheticResults.threeAllocatorsAndAWarmTrace();
        ReplayResult d = synthetic.get(0);
        ReplayResult direct = ReplayResult.builder().trace(d.trace()).allocator(d.allocator()).device(d.device())
                .conf(d.conf()).events(d.events()).allocs(d.allocs()).frees(d.frees()).deviceMallocs(d.allocs())
                .deviceFrees(d.frees()).peakReservedBytes(1_850_000_000L).peakAllocatedBytes(1_850_000_000L)
                .peakRequestedBytes(d.peakRequestedBytes()).eventsPerSecond(d.eventsPerSecond())
                .groundTruth(d.groundTruth()).timeline(d.timeline()).peakSnapshot(d.peakSnapshot()).build();
        return List.of(direct, synthetic.get(1), synthetic.get(2));
    }

    private static Document render(List<ReplayResult> results) {
        return parse("<div>" + ComparisonTable.render(results, Series.of(results)) + "</div>");
    }

    /** "ROW COLUMN" of every cell marked best. */
    private static Set<String> marked(Document doc) {
        List<String> headers = texts(all(doc, "//table[@class='compare']/thead/tr/th"));
        List<Element> rows = all(doc, "//table[@class='compare']/tbody/tr[@class='result']");
        Set<String> marked = new TreeSet<>();
        for (int r = 0; r < rows.size(); r++) {
            List<Element> cells = all(rows.get(r), "td");
            for (int c = 0; c < cells.size(); c++) {
                if (List.of(cells.get(c).getAttribute("class").split(" ")).contains("best")) {
                    marked.add(r + " " + headers.get(c).replace(" ↓", ""));
                }
            }
        }
        return marked;
    }

    @Test
    void memoryHeldIsRankedOnlyAmongTheSetUpsThatCache() {
        Document doc = render(withADirectThatCallsTheDeviceEachTime());
        // Rows: direct, bfc, caching. direct holds the least memory, but with 617,000 device mallocs: peak reserved,
        // end reserved and fragmentation go to caching. Peak allocated (block sizes, not memory held) stays ranked.
        assertEquals(new TreeSet<>(List.of("1 device mallocs", "1 device frees", "2 peak reserved", "0 peak allocated",
                "2 end reserved", "0 OOMs", "2 OOMs", "2 fragmentation")), marked(doc));
        List<Element> notes = all(doc, "//p[@class='note star-rule']");
        assertEquals(1, notes.size());
        assertEquals("Peak reserved, end reserved and fragmentation are marked only among the set-ups that cache;"
                + " not ranked there: direct: 617,000 device mallocs for 617,000 allocations, at least one device call"
                + " per allocation where another set-up made 9: its low reserved bytes and fragmentation are paid for"
                + " with those calls.",
                text(notes.getFirst()));
        List<Element> directCells = all(doc, "//table[@class='compare']/tbody/tr[@class='result'][1]/td");
        List<String> titled = directCells.stream().filter(td -> td.getAttribute("title").startsWith(
                "not ranked: 617,000 device mallocs for 617,000 allocations")).map(td -> td.getAttribute("class"))
                .toList();
        assertEquals(3, titled.size(), "peak reserved, end reserved and fragmentation say why: " + titled);
    }

    @Test
    void aSetUpThatCachesKeepsItsMarksAndNoNoteIsWritten() {
        // The synthetic direct made 120 device mallocs for 617,000 allocations: it caches, so it is ranked.
        Document doc = render(SyntheticResults.threeAllocatorsAndAWarmTrace());
        assertTrue(marked(doc).containsAll(List.of("0 end reserved", "0 fragmentation")), marked(doc)::toString);
        assertEquals(0, all(doc, "//p[@class='note star-rule']").size());
        assertEquals(0, all(doc, "//td[starts-with(@title, 'not ranked')]").size());
    }

    @Test
    void whereEverySetUpCalledTheDeviceAsOftenTheyPaidAlikeAndAreRanked() {
        ReplayResult direct = withADirectThatCallsTheDeviceEachTime().getFirst();
        ReplayResult c = SyntheticResults.threeAllocatorsAndAWarmTrace().get(2);
        // caching on a trace with nothing to reuse: as many device mallocs as direct, a little more memory.
        ReplayResult caching = ReplayResult.builder().trace(c.trace()).allocator(c.allocator()).device(c.device())
                .conf(c.conf()).events(c.events()).allocs(c.allocs()).frees(c.frees())
                .deviceMallocs(direct.deviceMallocs()).deviceFrees(direct.deviceFrees())
                .peakReservedBytes(1_900_000_000L).peakAllocatedBytes(1_900_000_000L)
                .peakRequestedBytes(c.peakRequestedBytes()).eventsPerSecond(c.eventsPerSecond())
                .groundTruth(c.groundTruth()).timeline(c.timeline()).peakSnapshot(c.peakSnapshot()).build();
        Document doc = render(List.of(direct, caching));
        assertTrue(marked(doc).contains("0 peak reserved"), marked(doc)::toString);
        assertEquals(0, all(doc, "//p[@class='note star-rule']").size());
    }

    @Test
    void aSetUpAloneOnItsTraceIsNeitherRankedNorNamed() {
        ReplayResult direct = withADirectThatCallsTheDeviceEachTime().getFirst();
        Document doc = render(List.of(direct));
        assertEquals(Set.of(), marked(doc));
        assertEquals(0, all(doc, "//p[@class='note star-rule']").size());
    }
}
