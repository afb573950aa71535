package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.advisor.report.AdviceHtml;
import io.devalloc.advisor.report.AdviceJson;
import io.devalloc.advisor.report.AdviceText;
import io.devalloc.replay.ReplayOptions;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.Replayer;
import io.devalloc.replay.TraceSources;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The advisor on the OPT trace shipped with the project: each figure it reports for a setting is what a replay of
 * that setting alone reports, each capacity runs and 2 MiB less fails, the trust line, the ranking.
 */
class AdvisorTest {

    /** The shipped trace, from the module's directory. */
    static final Path OPT_CSV = Path.of("..", "traces", "pt-opt-zeroth-order-fl", "memory.csv");
    static final Path OPT_PICKLE = Path.of("..", "traces", "pt-opt-zeroth-order-fl", "memory.pickle");

    @TempDir
    static Path dir;
    static Advice advice;

    static Path gridFile(Path where, String... lines) throws IOException {
        Path file = where.resolve("grid.txt");
        Files.write(file, List.of(lines));
        return file;
    }

    @BeforeAll
    static void advise() throws IOException {
        Path grid = gridFile(dir, "# four settings and a bad one", "defaults", "expandable_segments:True",
                "max_split_size_mb:2   # too small", "max_split_size_mb:64", "roundup_power2_divisions:4");
        advice = new Advisor().advise(AdvisorTrace.read(OPT_CSV),
                new Advisor.Options("caching", grid.toString(), 1024L << 20, Objective.CAPACITY, 2),
                ReplayProgress.NONE);
    }

    /**
     * What {@code devalloc replay TRACE --config CONFIG --empty-cache-at-segment-free} replays, written out here
     * rather than taken from the advisor: cold, on the replay's default device, with the peak's snapshot.
     */
    private static ReplayOptions whatIf(String config) {
        return new ReplayOptions("caching", "sim:80GiB", config, false, true);
    }

    private static ReplayResult alone(ReplayOptions options) throws IOException {
        return new Replayer(options).replay(OPT_CSV.toString(), TraceSources.of(OPT_CSV)).result();
    }

    @Test
    void everyFigureIsWhatAReplayOfThatSettingAloneReports() throws IOException {
        assertEquals(4, advice.settings().size(), advice.settings().toString());
        for (SettingResult s : advice.settings()) {
            assertTrue(s.ran(), s.toString());
            ReplayResult mine = s.result();
            ReplayResult alone = alone(whatIf(s.config()));
            String what = s.config();
            assertEquals(alone.peakReservedBytes(), mine.peakReservedBytes(), what);
            assertEquals(alone.peakAllocatedBytes(), mine.peakAllocatedBytes(), what);
            assertEquals(alone.peakRequestedBytes(), mine.peakRequestedBytes(), what);
            assertEquals(alone.deviceMallocs(), mine.deviceMallocs(), what);
            assertEquals(alone.deviceFrees(), mine.deviceFrees(), what);
            assertEquals(alone.allocRetries(), mine.allocRetries(), what);
            assertEquals(alone.ooms(), mine.ooms(), what);
            assertEquals(alone.fragmentation(), mine.fragmentation(), what);
            assertEquals(alone.endReservedBytes(), mine.endReservedBytes(), what);
            assertEquals(alone.peak(), mine.peak(), what + ": the peak's moment, figures and waste by cause");
            assertNotNull(mine.peak().waste(), what);
            assertEquals(mine.peak().reservedBytes() - mine.peak().requestedBytes(), mine.peak().waste().total(),
                    what);
            assertEquals(alone.peakSnapshot(), mine.peakSnapshot(), what + ": the segment map at the peak");
            ReplayResult atCapacity = alone(whatIf(s.config())
                    .withDevice(Advisor.device(1024L << 20)));
            assertEquals(atCapacity.ooms(), s.atCapacity().ooms(), what);
            assertEquals(atCapacity.firstOom(), s.atCapacity().firstOom(), what + ": where it first fails");
            assertTrue(s.atCapacity().runs() || s.atCapacity().firstOom().event() > 0, what);
        }
    }

    @Test
    void eachCapacityRunsAndTwoMibLessFails() throws IOException {
        for (SettingResult s : advice.settings()) {
            assertTrue(s.fits(), s.toString());
            long cap = s.minCapacityBytes();
            assertEquals(0, cap % Advisor.GRANULARITY, s.config());
            ReplayOptions o = whatIf(s.config());
            assertEquals(0, alone(o.withDevice(Advisor.device(cap))).ooms(), s.config() + " at " + cap);
            assertTrue(alone(o.withDevice(Advisor.device(cap - Advisor.GRANULARITY))).ooms() > 0,
                    s.config() + " at " + (cap - Advisor.GRANULARITY));
            assertTrue(cap <= Math.ceilDiv(s.result().peakReservedBytes(), Advisor.GRANULARITY)
                    * Advisor.GRANULARITY, "no more than the peak reserved: " + s);
        }
    }

    @Test
    void theTrustLineIsTheWarmReplayOfTheRecordedSettings() throws IOException {
        TrustLine t = advice.trust();
        assertEquals("", t.config());
        assertTrue(t.configSource().contains("does not record"), t.configSource());
        ReplayResult warm = alone(new ReplayOptions("caching", ReplayOptions.DEFAULT_DEVICE, "", true, true));
        assertEquals(warm.groundTruth().match() ? TrustLine.Verdict.MATCH : TrustLine.Verdict.DIFFERS, t.verdict());
        assertEquals(warm.peakReservedBytes(), t.outcome().result().peakReservedBytes());
        assertEquals(warm.deviceMallocs(), t.outcome().result().deviceMallocs());
    }

    @Test
    void theBadLineIsReportedWithItsLineAndUpstreamsMessageAndTheOthersRan() {
        assertEquals(1, advice.grid().problems().size(), advice.grid().problems().toString());
        String problem = advice.grid().problems().getFirst();
        assertTrue(problem.endsWith("grid.txt:4: max_split_size_mb too small, must be >= 20")
                || problem.contains("grid.txt:4: ") && problem.contains("must be >= 20"), problem);
    }

    @Test
    void theRankingFollowsTheObjectiveAndTheRecommendationIsTheFirst() {
        List<SettingResult> ranked = advice.settings();
        for (int i = 1; i < ranked.size(); i++) {
            // Within one search step settings tie (and go by device calls): a later one is never a step smaller.
            assertTrue(ranked.get(i - 1).minCapacityBytes() <= ranked.get(i).minCapacityBytes() + Advisor.GRANULARITY,
                    ranked.toString());
        }
        Recommendation rec = advice.recommendation();
        assertNotNull(rec);
        assertEquals(ranked.getFirst(), rec.setting());
        assertEquals("PYTORCH_CUDA_ALLOC_CONF=" + rec.setting().config(), rec.env());
        SettingResult base = advice.baseline();
        assertTrue(base.recorded());
        assertEquals(base.minCapacityBytes() - rec.setting().minCapacityBytes(), rec.savingBytes());
        assertEquals(rec.setting() == base, rec.alreadyBest());
        if (rec.setting().config().contains("expandable_segments:True")) {
            assertTrue(rec.caveats().getFirst().contains("IPC"), rec.caveats().toString());
        }
    }

    @Test
    void theTraceIsReadOnceWhateverTheNumberOfReplays() throws IOException {
        int[] opens = {0};
        AdvisorTrace trace = AdvisorTrace.read("opt", () -> {
            opens[0]++;
            return TraceSources.of(OPT_CSV).open();
        });
        Advice small = new Advisor().advise(trace, new Advisor.Options("caching", null, -1, Objective.CAPACITY, 2),
                ReplayProgress.NONE);
        assertTrue(small.runs() > 20, "replays: " + small.runs());
        assertEquals(1, opens[0], "the trace was opened once");
        assertEquals(trace.compact().events(), trace.events());
        assertEquals(trace.events(), small.baseline().result().events());
    }

    @Test
    void theDeviceCallsObjectiveSavesDeviceCalls() throws IOException {
        Path grid = gridFile(Files.createTempDirectory(dir, "calls"), "defaults", "max_split_size_mb:20",
                "expandable_segments:True");
        Advice calls = new Advisor().advise(AdvisorTrace.read(OPT_CSV),
                new Advisor.Options("caching", grid.toString(), -1, Objective.DEVICE_CALLS, 2), ReplayProgress.NONE);
        Recommendation rec = calls.recommendation();
        SettingResult base = calls.baseline();
        for (SettingResult s : calls.settings()) {
            assertTrue(rec.setting().deviceCalls() <= s.deviceCalls(), s.toString());
        }
        assertEquals(base.deviceCalls() - rec.setting().deviceCalls(), rec.savingDeviceCalls());
        assertEquals((double) rec.savingDeviceCalls() / base.deviceCalls(), rec.savingDeviceCallsFraction(), 1e-12);
        // Its byte saving is the peak reserved on the card (here the unlimited device), never negative: a setting
        // that reserves more than the recorded one is not recommended for device calls.
        assertEquals(base.peakReservedOnCard() - rec.setting().peakReservedOnCard(), rec.savingBytes());
        assertTrue(rec.savingBytes() >= 0, rec.toString());
        StringWriter text = new StringWriter();
        AdviceText.print(new PrintWriter(text), calls);
        String out = text.toString();
        int saved = out.indexOf("Device calls (mallocs and frees) on the card: " + rec.setting().deviceCalls()
                + ", the baseline (the defaults) " + base.deviceCalls());
        assertTrue(saved > 0 && saved < out.indexOf("Peak reserved (no capacity is known"), out);
        assertTrue(out.contains("objective 'device-calls'"), "the heading names the objective in use: " + out);
        assertTrue(AdviceHtml.render(calls).contains("Device calls (mallocs and frees) on the card: <b>"
                + rec.setting().deviceCalls() + "</b>"), "the page shows the calls saved");
    }

    @Test
    void theFirstOutOfMemoryErrorAtTheGivenCapacityIsReported() {
        SettingResult s = advice.settings().getFirst();
        ReplayResult.OomPoint oom = s.atCapacity().firstOom();
        assertNotNull(oom, "1 GiB is below every setting's smallest capacity");
        String where = "first runs out of memory at event " + String.format(Locale.ROOT, "%,d", oom.event());
        StringWriter text = new StringWriter();
        AdviceText.print(new PrintWriter(text), advice);
        assertTrue(text.toString().contains(where), text.toString());
        assertTrue(AdviceHtml.render(advice).contains(where), "the page names the event");
        Map<?, ?> json = (Map<?, ?>) ((Map<?, ?>) ((List<?>) AdviceJson.device(advice).get("settings")).getFirst())
                .get("at_capacity");
        Map<?, ?> first = (Map<?, ?>) json.get("first_oom");
        assertEquals(oom.event(), first.get("event"));
        assertEquals(oom.requestBytes(), first.get("request_bytes"));
        assertEquals(oom.reservedBytes(), first.get("reserved_bytes"));
        assertEquals(oom.allocatedBytes(), first.get("allocated_bytes"));
    }

    @Test
    void tiesWithinTwoMibGoToFewerDeviceCallsThenToTheRecordedSetting() {
        SettingResult base = advice.baseline();
        ReplayResult r = base.result();
        SettingResult twin = SettingResult.builder().entry(new GridEntry("x:1", "t")).result(r)
                .minCapacityBytes(base.minCapacityBytes()).build();
        List<SettingResult> ranked = Ranking.rank(List.of(twin, base), Objective.CAPACITY);
        assertEquals(base, ranked.getFirst(), "equal figures: the recorded setting wins");
        ReplayResult fewerCalls = ReplayResult.builder().trace(r.trace()).allocator(r.allocator()).device(r.device())
                .conf("y:1").events(r.events()).allocs(r.allocs()).frees(r.frees())
                .peakReservedBytes(r.peakReservedBytes() + Advisor.GRANULARITY / 2)
                .peakAllocatedBytes(r.peakAllocatedBytes()).peakRequestedBytes(r.peakRequestedBytes())
                .endReservedBytes(r.endReservedBytes()).timeline(r.timeline()).build();
        SettingResult cheaper = SettingResult.builder().entry(new GridEntry("y:1", "t")).result(fewerCalls)
                .minCapacityBytes(base.minCapacityBytes()).build();
        assertEquals(cheaper, Ranking.rank(List.of(base, cheaper), Objective.CAPACITY).getFirst());
        // One search step less is within what the search can tell apart (1,870 and 1,872 MiB may be a byte apart):
        // still a tie, which the fewer device calls win; two steps less is smaller.
        SettingResult stepLess = SettingResult.builder().entry(new GridEntry("z:1", "t")).result(r)
                .minCapacityBytes(base.minCapacityBytes() - Advisor.GRANULARITY).build();
        assertEquals(List.of(cheaper, base, stepLess),
                Ranking.rank(List.of(stepLess, base, cheaper), Objective.CAPACITY));
        SettingResult smaller = SettingResult.builder().entry(new GridEntry("z:2", "t")).result(r)
                .minCapacityBytes(base.minCapacityBytes() - 2 * Advisor.GRANULARITY).build();
        assertEquals(smaller, Ranking.rank(List.of(cheaper, base, smaller), Objective.CAPACITY).getFirst());
        // Peak reserved bytes 1 KiB apart tie even across a 2 MiB boundary; the fewer calls win.
        long boundary = Math.ceilDiv(r.peakReservedBytes(), Advisor.GRANULARITY) * Advisor.GRANULARITY;
        SettingResult below = reserved(r, "below:1", boundary - 512, r.deviceMallocs() + 1);
        SettingResult above = reserved(r, "above:1", boundary + 512, r.deviceMallocs());
        assertEquals(List.of(above, below), Ranking.rank(List.of(below, above), Objective.RESERVED));
        SettingResult far = reserved(r, "far:1", boundary + Advisor.GRANULARITY + 1024, 0);
        assertEquals(below, Ranking.rank(List.of(far, below), Objective.RESERVED).getFirst());
    }

    /** A setting like {@code r} but for its peak reserved bytes and device mallocs. */
    private static SettingResult reserved(ReplayResult r, String config, long peakReserved, long mallocs) {
        ReplayResult changed = ReplayResult.builder().trace(r.trace()).allocator(r.allocator()).device(r.device())
                .conf(config).events(r.events()).allocs(r.allocs()).frees(r.frees()).deviceMallocs(mallocs)
                .peakReservedBytes(peakReserved).peakAllocatedBytes(r.peakAllocatedBytes())
                .peakRequestedBytes(r.peakRequestedBytes()).endReservedBytes(r.endReservedBytes())
                .timeline(r.timeline()).build();
        return SettingResult.builder().entry(new GridEntry(config, "t")).result(changed).minCapacityBytes(peakReserved)
                .build();
    }

    @Test
    void aCapacityAboveThePeakReservedIsExplained() {
        SettingResult base = advice.baseline();
        assertEquals(null, Advisor.aboveReserved(advice.settings()), "the OPT trace's capacities are all below");
        long above = Math.ceilDiv(base.result().peakReservedBytes(), Advisor.GRANULARITY) * Advisor.GRANULARITY
                + Advisor.GRANULARITY;
        SettingResult odd = SettingResult.builder().entry(new GridEntry("x:1", "t")).result(base.result())
                .minCapacityBytes(above).build();
        String note = Advisor.aboveReserved(List.of(base, odd));
        assertTrue(note != null && note.contains("for x:1:") && note.contains("512 B granularity"), note);
    }

    @Test
    void badInputIsRefusedBeforeAnyReplay() throws IOException {
        Advisor advisor = new Advisor();
        AdvisorTrace trace = AdvisorTrace.read(OPT_CSV);
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class, () -> advisor.advise(trace,
                new Advisor.Options("caching", null, trace.firstRequest() == 0 ? 1 : (1L << 20), Objective.CAPACITY,
                        1), ReplayProgress.NONE));
        assertTrue(trace.firstRequest() > (1L << 20) ? small.getMessage().contains("smaller than the trace's first"
                + " request") : true, small.getMessage());
        IllegalArgumentException grid = assertThrows(IllegalArgumentException.class, () -> advisor.advise(trace,
                new Advisor.Options("caching", "no-such-grid", -1, Objective.CAPACITY, 1), ReplayProgress.NONE));
        assertTrue(grid.getMessage().startsWith("unknown grid 'no-such-grid'"), grid.getMessage());
        Path empty = Files.writeString(dir.resolve("empty.csv"), "");
        assertThrows(Exception.class, () -> advisor.advise(AdvisorTrace.read(empty),
                new Advisor.Options("caching", null, -1, Objective.CAPACITY, 1), ReplayProgress.NONE));
        assertThrows(IllegalArgumentException.class, () -> Objective.of("speed"));
        assertFalse(advice.settings().isEmpty());
    }
}
