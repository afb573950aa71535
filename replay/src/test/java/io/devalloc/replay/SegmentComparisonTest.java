package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class SegmentComparisonTest {

    @Test
    void theSameSizesMatchWhicheverSideComesFirst() {
        SegmentComparison c = new SegmentComparison();
        c.trace(100);
        c.ours(100, false);
        c.ours(200, false);
        c.ours(300, true);
        c.trace(200);
        c.trace(300);
        assertNull(c.firstDifference());
        assertEquals(3, c.oursCount());
        assertEquals(3, c.traceCount());
    }

    @Test
    void theFirstDifferentSizeIsReportedWhenTheTraceCatchesUp() {
        SegmentComparison c = new SegmentComparison();
        c.ours(100, false);
        c.ours(250, true);
        c.ours(999, false);
        c.trace(100);
        c.trace(200);
        c.trace(999);
        c.trace(5);
        assertEquals("device map #2: 250 B here, 200 B in the trace", c.firstDifference());
    }

    @Test
    void theFirstDifferentSizeIsReportedWhenOursComesLater() {
        SegmentComparison c = new SegmentComparison();
        c.trace(100);
        c.trace(200);
        c.ours(100, false);
        c.ours(201, false);
        assertEquals("device malloc #2: 201 B here, 200 B in the trace", c.firstDifference());
    }

    @Test
    void moreDeviceMallocsOnEitherSideIsADifference() {
        SegmentComparison more = new SegmentComparison();
        more.trace(100);
        more.ours(100, false);
        more.ours(700, true);
        assertEquals("device map #2: 700 B here, none in the trace (it made 1)", more.firstDifference());

        SegmentComparison fewer = new SegmentComparison();
        fewer.ours(100, false);
        fewer.trace(100);
        fewer.trace(300);
        assertEquals("device malloc #2: none here (this replay made 1), 300 B in the trace", fewer.firstDifference());
    }

    @Test
    void farAheadOfTheTraceOnlyTheFirstSizesAreKept() {
        SegmentComparison c = new SegmentComparison();
        for (int i = 0; i <= SegmentComparison.MAX_WAITING; i++) {
            c.ours(512, false);
        }
        for (int i = 0; i < SegmentComparison.MAX_WAITING; i++) {
            c.trace(512);
        }
        assertEquals("device malloc #" + (SegmentComparison.MAX_WAITING + 1) + ": not compared (this replay made"
                + " more than " + SegmentComparison.MAX_WAITING + " device mallocs beyond the trace's)",
                c.firstDifference());
        c.trace(512);
        assertEquals("device malloc #" + (SegmentComparison.MAX_WAITING + 1) + ": not compared (this replay was"
                + " more than " + SegmentComparison.MAX_WAITING + " device mallocs ahead of the trace)",
                c.firstDifference());
    }
}
