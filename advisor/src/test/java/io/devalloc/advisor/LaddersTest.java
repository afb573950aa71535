package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.devalloc.advisor.report.AdviceText;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.bounds.IntervalCounts;
import io.devalloc.replay.bounds.LowerBound;
import io.devalloc.replay.bounds.OfflinePlan;
import org.junit.jupiter.api.Test;

/**
 * The sentence that reads a bounds ladder, one case each: the best setting closes the gap and what is left is under
 * the margin; a gap worth more, with the offline plan below the best setting or not; a setting at the bound; the
 * recorded setting at the bound; no setting that runs; the recorded one that does not; a saturated trace.
 */
class LaddersTest {

    private static final long MIB = ByteSize.MiB;
    private static final MinSaving MARGIN = MinSaving.DEFAULT;

    private static LowerBound bound(long requestedMiB, long roundedMiB) {
        return new LowerBound(requestedMiB * MIB, 7, roundedMiB * MIB, 7, 0, false);
    }

    private static OfflinePlan plan(long bySizeMiB, long byLifetimeMiB) {
        return new OfflinePlan(bySizeMiB * MIB, byLifetimeMiB * MIB, 0, 0, false);
    }

    @Test
    void whatTheBestSettingLeavesUnderTheMarginIsNotWorthTuningFor() {
        // The gap: 1,080 - 1,000 = 80 MiB; the best closes 78 of it (97.5%); 2 MiB (0.2% of 1,002) are left.
        assertEquals("The setting of the grid that runs the trace in the least memory, expandable_segments:True"
                + " (1002.00 MiB), closes 97.5% of the gap between the recorded setting (1.05 GiB) and the lower bound"
                + " (1000.00 MiB); the 2.00 MiB (0.2%) above the lower bound is under the margin worth a change (1%"
                + " and 64.00 MiB): tuning the allocator further will not help.",
                Ladders.reading(bound(999, 1000), plan(1000, 1010), "expandable_segments:True", 1002 * MIB,
                        1080 * MIB, false, Ladders.RECORDED, MARGIN));
    }

    @Test
    void aGapWorthMoreNamesWhatIsLeftAndWhatThePlanWouldNeed() {
        // The recorded setting is the grid's least (680 MiB); 320 MiB above the bound (47.1% of 680); the plan
        // reaches the bound, so placement alone would save those 320 MiB.
        assertEquals("The recorded setting runs the trace in the least memory of the grid's settings (680.00 MiB);"
                + " 320.00 MiB (47.1%) is left above the lower bound (360.00 MiB), the most any other setting or"
                + " allocator could save. An allocator that knew every allocation in advance would need 360.00 MiB"
                + " (the offline plan): 320.00 MiB (47.1%) less than (defaults): a better placement is worth looking"
                + " for.", Ladders.reading(bound(360, 360), plan(360, 400), "(defaults)", 680 * MIB, 680 * MIB,
                true, Ladders.RECORDED, MARGIN));
    }

    @Test
    void aPlanAboveTheBestSettingSaysWhyItIsNoFloor() {
        // The plan (1,500 MiB by lifetime: the lower order) is above the best setting (1,200 MiB).
        String reading = Ladders.reading(bound(1000, 1000), plan(1600, 1500), "garbage_collection_threshold:0.8",
                1200 * MIB, 1400 * MIB, false, Ladders.RECORDED, MARGIN);
        assertEquals("The setting of the grid that runs the trace in the least memory, garbage_collection_threshold:0.8"
                + " (1.17 GiB), closes 50.0% of the gap between the recorded setting (1.37 GiB) and the lower bound"
                + " (1000.00 MiB); 200.00 MiB (16.7%) is left above the lower bound, the most any other setting or"
                + " allocator could save. The offline plan, an allocator that knew every allocation in advance and"
                + " kept each block at one place in one address space, needs 1.46 GiB, no less than"
                + " garbage_collection_threshold:0.8: the plan is a greedy heuristic, and the allocator is not held"
                + " to one address space (the memory of a freed segment is mapped again elsewhere), so only the"
                + " lower bound bounds it.", reading);
    }

    @Test
    void aPlanBelowTheBestByLessThanTheMarginIsSaidToBeSo() {
        String reading = Ladders.reading(bound(1000, 1000), plan(1190, 1195), "x:1", 1200 * MIB, 1400 * MIB,
                false, Ladders.RECORDED, MARGIN);
        assertEquals("... An allocator that knew every allocation in advance would need 1.16 GiB (the offline plan):"
                + " 10.00 MiB (0.8%) less than x:1: under the margin worth a change.",
                "... " + reading.substring(reading.indexOf("An allocator")));
    }

    @Test
    void aSettingAtTheBoundLeavesNothingToTuneFor() {
        assertEquals("The setting of the grid that runs the trace in the least memory, expandable_segments:True"
                + " (860.00 MiB), closes 100.0% of the gap between the recorded setting (1.15 GiB) and the lower bound"
                + " (860.00 MiB); it needs no more than the lower bound: no allocator that rounds requests this way"
                + " can need less, and tuning the allocator further will not help.",
                Ladders.reading(bound(860, 860), plan(860, 860), "expandable_segments:True", 860 * MIB,
                        1180 * MIB, false, Ladders.RECORDED, MARGIN));
    }

    @Test
    void theRecordedSettingAtTheBoundIsSaidToBeThere() {
        assertEquals("The recorded setting runs the trace in its lower bound (100.00 MiB): no allocator that rounds"
                + " requests this way can need less; tuning the allocator will not help.",
                Ladders.reading(bound(99, 100), plan(100, 100), "(defaults)", 100 * MIB, 100 * MIB, true,
                        Ladders.RECORDED, MARGIN));
    }

    @Test
    void noSettingThatRunsLeavesTheBoundAlone() {
        assertEquals("No setting of the grid runs the whole trace; no allocator that rounds requests this way can run"
                + " it in less than 100.00 MiB, the lower bound.",
                Ladders.reading(bound(99, 100), plan(100, 100), null, -1, -1, false, Ladders.RECORDED, MARGIN));
    }

    @Test
    void aRecordedSettingThatDoesNotRunIsLeftOutOfTheGap() {
        assertEquals("The setting of the grid that runs the trace in the least memory is max_split_size_mb:64"
                + " (200.00 MiB; the recorded setting does not run it whole); 100.00 MiB (50.0%) is left above the"
                + " lower bound (100.00 MiB), the most any other setting or allocator could save. An allocator that"
                + " knew every allocation in advance would need 120.00 MiB (the offline plan): 80.00 MiB (40.0%)"
                + " less than max_split_size_mb:64: a better placement is worth looking for.",
                Ladders.reading(bound(99, 100), plan(120, 130), "max_split_size_mb:64", 200 * MIB, -1, false,
                        Ladders.RECORDED, MARGIN));
    }

    @Test
    void aTraceWithoutItsSettingsIsReadAgainstTheDefaults() {
        assertEquals("The defaults run the trace in the least memory of the grid's settings (680.00 MiB); 100.00 MiB"
                + " (14.7%) is left above the lower bound (580.00 MiB), the most any other setting or allocator could"
                + " save. An allocator that knew every allocation in advance would need 580.00 MiB (the offline plan):"
                + " 100.00 MiB (14.7%) less than (defaults): a better placement is worth looking for.",
                Ladders.reading(bound(580, 580), plan(580, 600), "(defaults)", 680 * MIB, 680 * MIB, true,
                        Ladders.DEFAULTS, MARGIN));
    }

    @Test
    void aSaturatedLaddersRungsShowNoFigureOfTheBounds() {
        LowerBound saturated = new LowerBound(Long.MAX_VALUE, 3, Long.MAX_VALUE, 3, 0, true);
        OfflinePlan none = new OfflinePlan(Long.MAX_VALUE, Long.MAX_VALUE, 0, 0, true);
        BoundsLadder ladder = new BoundsLadder(saturated, none, new IntervalCounts(2, 0, 0,
                0, 0, 0, 0, 0), "caching", null, null, true, Ladders.reading(saturated, none, null, -1, -1, false,
                Ladders.RECORDED, MARGIN));
        assertEquals(true, ladder.saturated());
        assertEquals(-1, ladder.floorBytes());
        for (BoundsLadder.Rung r : ladder.rungs()) {
            assertEquals(-1, r.bytes(), r.toString());
            assertEquals("-", AdviceText.aboveFloor(ladder, r), r.toString());
        }
        assertEquals(true, Double.isNaN(ladder.gapClosed()));
    }

    @Test
    void aSaturatedTraceHasNoBound() {
        LowerBound saturated = new LowerBound(Long.MAX_VALUE, 3, Long.MAX_VALUE, 3, 0, true);
        assertEquals("The trace's sizes add up to more than 2^63 bytes (a corrupt or hostile trace): no bound can be"
                + " told from it.", Ladders.reading(saturated, new OfflinePlan(Long.MAX_VALUE, Long.MAX_VALUE, 0,
                0, true), "(defaults)", 100 * MIB, 100 * MIB, true, Ladders.RECORDED, MARGIN));
    }
}
