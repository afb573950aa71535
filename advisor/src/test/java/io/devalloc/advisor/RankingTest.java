package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.advisor.report.AdviceText;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.replay.ReplayResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

/**
 * The ranking and the recommendation on settings whose figures are set by hand, so that every rule can be checked
 * against the figure it should give: the card's order (no out-of-memory error, fewest flushes, lowest peak), the
 * guard against holding more of the card than the recorded setting, the margin, and what the capacity objective
 * costs.
 */
class RankingTest {

    private static final AllocatorProvider CACHING = new CachingAllocatorProvider(Map.of());

    private static final long MIB = ByteSize.MiB;
    private static final long GIB = ByteSize.GiB;
    private static final long CARD = 2 * GIB;

    /** A replay's figures: peak reserved, out-of-memory errors, retries (flushes), device mallocs and frees. */
    private static ReplayResult result(long peak, long ooms, long retries, long mallocs, long frees) {
        ReplayResult.OomPoint first = ooms == 0 ? null : new ReplayResult.OomPoint(100, 64 * MIB, peak, peak);
        return ReplayResult.builder().trace("t").allocator("caching").device("sim").conf("").events(1000).allocs(500)
                .frees(500).deviceMallocs(mallocs).deviceFrees(frees).peakReservedBytes(peak).peakAllocatedBytes(peak)
                .peakRequestedBytes(peak).endReservedBytes(peak).ooms(ooms).allocRetries(retries).eventsPerSecond(1)
                .timeline(new ReplayResult.Timeline(new long[0], new long[0], new long[0])).firstOom(first).build();
    }

    /**
     * A setting: on the unlimited device it needs {@code unlimited}; on the card it reserves {@code card} with
     * {@code ooms} failures and {@code flushes} flushes; its smallest capacity is {@code min}, reached with
     * {@code minFlushes} flushes.
     */
    private static SettingResult setting(String config, boolean recorded, long unlimited, long card, long ooms,
                                         long flushes, long min, long minFlushes) {
        return SettingResult.builder().entry(new GridEntry(config, "test")).recorded(recorded)
                .result(result(unlimited, 0, 0, 10, 0)).minCapacityBytes(min)
                .atMinCapacity(result(min, 0, minFlushes, 10, minFlushes)).searchRuns(5)
                .atCapacity(new CapacityCheck(CARD, result(card, ooms, flushes, 10 + flushes, flushes))).build();
    }

    @Test
    void onTheCardNoFailureComesFirstThenFewestFlushesThenTheLowestPeak() {
        SettingResult base = setting("", true, 3 * GIB, 1900 * MIB, 0, 5, 1800 * MIB, 9);
        SettingResult fewer = setting("a:1", false, 4 * GIB, 1950 * MIB, 0, 0, 1900 * MIB, 0);
        SettingResult lower = setting("b:1", false, 3 * GIB, 1800 * MIB, 0, 3, 1700 * MIB, 4);
        SettingResult failing = setting("c:1", false, 2 * GIB, 2000 * MIB, 2, 9, 2100 * MIB, 3);
        List<SettingResult> ranked = Ranking.rank(List.of(base, fewer, lower, failing), Objective.RESERVED);
        assertEquals(List.of(fewer, lower, base, failing), ranked);
        // 'fewer' reserves 1,950 MiB on the card against the recorded setting's 1,900: never recommended for that;
        // 'lower' flushes less and reserves less.
        Recommendation rec = Ranking.recommend(CACHING, ranked, Objective.RESERVED, MinSaving.DEFAULT,
                "the recorded setting");
        assertEquals(lower, rec.setting());
        assertEquals(Recommendation.Why.FEWER_FLUSHES, rec.why());
        assertEquals(100 * MIB, rec.savingBytes(), "1,900 - 1,800 MiB on the card");
        assertTrue(rec.reason().contains("flushes the cache 3 times on the card, where the recorded setting flushes"
                + " it 5 times"), rec.reason());
        assertTrue(rec.costs().isEmpty(), rec.costs()::toString);
    }

    @Test
    void aSettingWithFewerDeviceCallsThatHoldsMoreOfTheCardIsTheRunnerUpAndTheReasonSaysSo() {
        // The device-calls objective ranks 'fewer' first (58 calls against 61), but it reserves 92 MiB more.
        SettingResult base = SettingResult.builder().entry(new GridEntry("", "test")).recorded(true)
                .result(result(1770 * MIB, 0, 0, 61, 0)).minCapacityBytes(1770 * MIB).searchRuns(3)
                .atCapacity(new CapacityCheck(CARD, result(1770 * MIB, 0, 0, 61, 0))).build();
        SettingResult fewer = SettingResult.builder().entry(new GridEntry("a:1", "test"))
                .result(result(1862 * MIB, 0, 0, 58, 0)).minCapacityBytes(1862 * MIB).searchRuns(3)
                .atCapacity(new CapacityCheck(CARD, result(1862 * MIB, 0, 0, 58, 0))).build();
        List<SettingResult> ranked = Ranking.rank(List.of(base, fewer), Objective.DEVICE_CALLS);
        assertEquals(List.of(fewer, base), ranked);
        Recommendation rec = Ranking.recommend(CACHING, ranked, Objective.DEVICE_CALLS, MinSaving.DEFAULT,
                "the recorded setting");
        assertEquals(base, rec.setting());
        assertTrue(rec.alreadyBest());
        assertEquals(Recommendation.Why.HOLDS_LESS, rec.why());
        assertEquals(fewer, rec.runnerUp());
        assertEquals("the recorded setting is kept: a:1 ranks first on the fewest device mallocs and frees on the"
                + " card but reserves 92.00 MiB more of the card at its peak (1.82 GiB against 1.73 GiB), and a"
                + " change never holds more memory than the recorded setting", rec.reason());
        assertFalse(rec.reason().contains("within"), "no byte tolerance for a count of calls");
    }

    @Test
    void whenTheRecordedSettingFailsOnTheCardTheOneThatGetsPastItIsRecommended() {
        SettingResult base = setting("", true, 3 * GIB, 2000 * MIB, 1, 4, 2100 * MIB, 2);
        SettingResult runs = setting("a:1", false, 3 * GIB, 2040 * MIB, 0, 6, 1990 * MIB, 6);
        List<SettingResult> ranked = Ranking.rank(List.of(base, runs), Objective.RESERVED);
        assertEquals(List.of(runs, base), ranked);
        Recommendation rec = Ranking.recommend(CACHING, ranked, Objective.RESERVED, MinSaving.DEFAULT,
                "the recorded setting");
        assertEquals(runs, rec.setting());
        assertEquals(Recommendation.Why.AVOIDS_OOM, rec.why());
        assertTrue(rec.reason().startsWith("the recorded setting runs out of memory on the card"), rec.reason());
        // It holds 40 MiB more of the card than the recorded setting did before it failed: said in words.
        assertTrue(rec.costs().stream().anyMatch(c -> c.startsWith("on the card it reserves 40.00 MiB more")),
                rec.costs()::toString);
        // Nothing runs: no recommendation.
        SettingResult alsoFails = setting("b:1", false, 3 * GIB, 2000 * MIB, 3, 4, 2200 * MIB, 2);
        assertNull(Ranking.recommend(CACHING, Ranking.rank(List.of(base, alsoFails), Objective.RESERVED),
                Objective.RESERVED, MinSaving.DEFAULT, "the recorded setting"));
        assertEquals(List.of(base, alsoFails), Ranking.rank(List.of(alsoFails, base), Objective.RESERVED),
                "unranked: fewer failures first");
    }

    @Test
    void aSavingBelowTheMarginKeepsTheRecordedSettingAndSaysByHowMuch() {
        // No card: the unlimited device is the card. 20 MiB of 51 GiB is 0.04%: below 1% and 64 MiB.
        SettingResult base = noCard("", true, 51 * GIB);
        SettingResult slightly = noCard("a:1", false, 51 * GIB - 20 * MIB);
        List<SettingResult> ranked = Ranking.rank(List.of(base, slightly), Objective.RESERVED);
        assertEquals(slightly, ranked.getFirst());
        Recommendation rec = Ranking.recommend(CACHING, ranked, Objective.RESERVED, MinSaving.DEFAULT,
                "the recorded setting");
        assertTrue(rec.alreadyBest());
        assertEquals(base, rec.setting());
        assertEquals(Recommendation.Why.WITHIN_MARGIN, rec.why());
        assertEquals(slightly, rec.runnerUp());
        assertTrue(rec.reason().contains("saves only 20.00 MiB (0.04%)"), rec.reason());
        assertEquals(0L, rec.savingBytes(), "keeping the recorded setting saves nothing");
        // Without a margin, the 20 MiB are worth it.
        Recommendation loose = Ranking.recommend(CACHING, ranked, Objective.RESERVED, new MinSaving(0, 0),
                "the recorded setting");
        assertEquals(slightly, loose.setting());
        assertEquals(Recommendation.Why.SAVES, loose.why());
        assertEquals(20 * MIB, loose.savingBytes());
        // 64 MiB and 1% of 5 GiB (51.2 MiB): 60 MiB is below the bytes, 70 MiB reaches both.
        assertFalse(MinSaving.DEFAULT.reached(60 * MIB, 5 * GIB));
        assertTrue(MinSaving.DEFAULT.reached(70 * MIB, 5 * GIB));
        assertFalse(MinSaving.DEFAULT.reached(70 * MIB, 8 * GIB), "1% of 8 GiB is 81.9 MiB");
    }

    private static SettingResult noCard(String config, boolean recorded, long peak) {
        return SettingResult.builder().entry(new GridEntry(config, "test")).recorded(recorded)
                .result(result(peak, 0, 0, 10, 0)).minCapacityBytes(peak).atMinCapacity(result(peak, 0, 0, 10, 0))
                .searchRuns(5).build();
    }

    @Test
    void theCapacityObjectiveSaysWhatTheSmallerDeviceCosts() {
        SettingResult base = setting("", true, 3 * GIB, 1900 * MIB, 0, 5, 1800 * MIB, 9);
        SettingResult squeezed = setting("a:1", false, 9 * GIB, 1900 * MIB, 0, 5, 1600 * MIB, 300);
        List<SettingResult> ranked = Ranking.rank(List.of(base, squeezed), Objective.CAPACITY);
        Recommendation rec = Ranking.recommend(CACHING, ranked, Objective.CAPACITY, MinSaving.DEFAULT,
                "the recorded setting");
        assertEquals(squeezed, rec.setting());
        assertEquals(200 * MIB, rec.savingBytes());
        assertTrue(rec.costs().getFirst().startsWith("with no cache flush (an unlimited device) it reserves 6.00 GiB"
                + " more than the recorded setting at its peak"), rec.costs()::toString);
        assertTrue(rec.costs().getFirst().endsWith("it fits its smallest capacity only by flushing its cache 300"
                + " times"), rec.costs()::toString);
    }

    @Test
    void minSavingParsesAPercentageASizeOrBoth() {
        assertEquals(new MinSaving(0.01, 64 * MIB), MinSaving.parse("1%,64MiB"));
        assertEquals(new MinSaving(0.025, 0), MinSaving.parse("2.5%"));
        assertEquals(new MinSaving(0, 128 * MIB), MinSaving.parse(" 128MiB "));
        assertEquals(new MinSaving(0, 0), MinSaving.parse("0"));
        for (String bad : List.of("", "x%", "101%", "1%,2%", "1MiB,2MiB", "-1%", "12 parsecs")) {
            IllegalArgumentException e = Assertions.assertThrows(IllegalArgumentException.class,
                    () -> MinSaving.parse(bad), bad);
            assertTrue(e.getMessage().startsWith("--min-saving"), e.getMessage());
        }
        assertEquals("1% and 64.00 MiB", MinSaving.DEFAULT.describe());
    }

    @Test
    void aFractionIsNeverRoundedToNoneOrAll() {
        assertEquals("4.4%", AdviceText.percent(0.044));
        assertEquals("0.04%", AdviceText.percent(20.0 / (51 * 1024)));
        assertEquals("0.0%", AdviceText.percent(0));
        assertEquals("99.998%", AdviceText.percent(1 - 2.0 / (80 * 1024)));
        assertEquals("100.0%", AdviceText.percent(1));
        assertEquals("99.9%", AdviceText.percent(0.999));
    }
}
