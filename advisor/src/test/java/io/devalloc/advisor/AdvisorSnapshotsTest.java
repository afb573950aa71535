package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.advisor.report.AdviceHtml;
import io.devalloc.advisor.report.AdviceJson;
import io.devalloc.advisor.report.AdviceText;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.CacheFlushes;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.SnapshotScenarios;
import io.devalloc.replay.SnapshotScenarios.Recorded;
import io.devalloc.replay.TraceFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * {@code advise} on snapshots of every shape, recorded by running workloads through devalloc's copy of PyTorch's
 * caching allocator on simulated GPUs and written with devalloc's own pickle writer ({@link SnapshotScenarios}):
 * a job on three GPUs (one roomy, one that flushes its cache near its capacity, one that calls {@code empty_cache()}
 * and ends in an out-of-memory error), a snapshot of the end state only. Every figure checked is one the recording
 * itself gives: its capacity, its flushes of each kind, its device mallocs and frees, its peak.
 */
class AdvisorSnapshotsTest {

    private static final long GIB = ByteSize.GiB;
    private static final long MIB = ByteSize.MiB;

    @TempDir
    static Path dir;
    static Recorded roomy;
    static Recorded crashed;
    static Recorded flushing;
    static Path grid;
    static JobAdvice job;

    @BeforeAll
    static void record() throws IOException {
        roomy = SnapshotScenarios.record(0, 4 * GIB, "", SnapshotScenarios.nearCapacity(8, 0, 0));
        crashed = SnapshotScenarios.record(1, GIB, "", SnapshotScenarios.nearCapacity(12, 5, 900));
        flushing = SnapshotScenarios.record(2, GIB, "", SnapshotScenarios.nearCapacity(12, 0, 0));
        grid = Files.write(dir.resolve("grid.txt"), List.of("defaults", "expandable_segments:True",
                "max_split_size_mb:64", "roundup_power2_divisions:4"));
        Path multi = SnapshotScenarios.write(dir.resolve("multi.pickle"),
                SnapshotScenarios.snapshot(List.of(roomy, crashed, flushing), true));
        job = new Advisor().advise(TraceFile.read(multi, TraceFile.ALL_DEVICES), options(-1, Objective.RESERVED),
                ReplayProgress.NONE);
    }

    static Advisor.Options options(long capacity, Objective objective) {
        return new Advisor.Options("caching", grid.toString(), capacity, objective, 2);
    }

    private static Advice device(JobAdvice advice, int index) {
        for (Advice a : advice.devices()) {
            if (a.cudaDevice() == index) {
                return a;
            }
        }
        throw new AssertionError("no device " + index + " in " + advice.devices());
    }

    @Test
    void everyDeviceIsItsOwnJobAndTheSummaryNamesTheOneThatNeedsTheMost() {
        assertEquals(List.of(0, 1, 2), job.devices().stream().map(Advice::cudaDevice).toList());
        for (Recorded r : List.of(roomy, crashed, flushing)) {
            Advice a = device(job, r.device());
            assertTrue(a.hasHistory());
            assertEquals(TrustLine.Verdict.MATCH, a.trust().verdict(), a.deviceLabel() + ": "
                    + a.trust().firstDifference());
            assertEquals(r.peakReserved(), a.recordedPeakReservedBytes(), a.deviceLabel());
            assertEquals(r.mallocs(), a.trust().outcome().result().groundTruth().deviceMallocs());
            assertEquals(r.frees(), a.trust().outcome().result().groundTruth().deviceFrees());
        }
        assertEquals(0, job.mostMemory().cudaDevice(), "device 0 reserved 3.2 GiB, the others 1 GiB at most");
        StringWriter text = new StringWriter();
        AdviceText.print(new PrintWriter(text), job);
        String out = text.toString();
        assertTrue(out.startsWith("Devices of "), out);
        assertTrue(out.contains("cuda:0 needs the most memory: " + ByteSize.format(roomy.peakReserved())), out);
        for (int d = 0; d < 3; d++) {
            assertTrue(out.contains("== cuda:" + d + " "), "a section per device: " + out);
        }
        Map<String, Object> json = AdviceJson.toMap(job);
        List<?> devices = (List<?>) json.get("devices");
        assertEquals(3, devices.size());
        for (int d = 0; d < 3; d++) {
            Map<?, ?> m = (Map<?, ?>) devices.get(d);
            assertEquals(d, m.get("device"));
            assertEquals(List.of(roomy, crashed, flushing).get(d).peakReserved(),
                    m.get("recorded_peak_reserved_bytes"));
        }
        assertEquals(0, json.get("most_memory_device"));
        String html = AdviceHtml.render(job);
        assertTrue(html.contains("<section id=\"devices\">") && html.contains("id=\"d2-recommendation\""), "html");
        wellFormed(html);
        // A setting is broken only after a comma: <wbr/> there, and the code not broken anywhere else.
        assertTrue(html.contains("roundup_power2_divisions:4") || !html.contains(",<wbr/>"), "html");
    }

    @Test
    void oneDeviceCanBeAskedFor() throws IOException {
        Path multi = dir.resolve("multi.pickle");
        TraceFile one = TraceFile.read(multi, 2);
        assertEquals(1, one.devices().size());
        assertEquals(2, one.devices().getFirst().cudaDevice());
        Exception absent = assertThrows(Exception.class, () -> TraceFile.read(multi, 5));
        assertTrue(absent.getMessage().contains("device 5 is not in the snapshot: it holds devices 0, 1 and 2"),
                absent.getMessage());
    }

    @Test
    void theCapacityIsReadFromTheOutOfMemoryErrorAndNoSettingGetsPastIt() {
        Advice a = device(job, 1);
        assertNotNull(a.capacity());
        assertEquals(CardCapacity.Source.OOM, a.capacity().source());
        // The simulated device's free bytes plus what was reserved then: exactly the device the run was recorded on.
        assertEquals(crashed.capacity(), a.capacity().bytes());
        // 900 MiB on top of 200 MiB of weights cannot fit 1 GiB whatever the setting: none is recommended, and the
        // notes say what capacity the best would need.
        assertNull(a.recommendation());
        for (SettingResult s : a.settings()) {
            assertFalse(s.runsOnCard(), s.config());
            assertTrue(s.atCapacity().ooms() >= 1);
        }
        assertTrue(a.notes().stream().anyMatch(n -> n.contains("the smallest capacity any of them needs is")),
                a.notes()::toString);
        // The trust replay reproduced the run's end: its flushes by the allocator's own ladder, and the failure.
        assertEquals(1, a.trust().outcome().flushes().reproducedOoms());
        assertEquals(crashed.allocatorFlushes(), a.trust().outcome().flushes().reproducedFlushes());
        assertEquals(crashed.programFlushes(), a.trust().outcome().emptyCacheCalls());
    }

    @Test
    void theAllocatorsOwnFlushesAreToldFromTheProgramsEmptyCacheByTheirFrames() {
        CacheFlushes crashedFlushes = device(job, 1).flushes();
        assertEquals(crashed.programFlushes(), crashedFlushes.programCalls());
        assertEquals(crashed.allocatorFlushes(), crashedFlushes.allocatorFlushes());
        assertEquals(1, crashedFlushes.byOutOfMemory(), "the ladder's last release before the failure");
        assertEquals(crashedFlushes.runs() - 1, crashedFlushes.byFrames());
        assertTrue(crashed.programFlushes() > 0 && crashed.allocatorFlushes() > 0, crashed.toString());

        CacheFlushes flushed = device(job, 2).flushes();
        assertEquals(0, flushed.programCalls());
        assertEquals(flushing.allocatorFlushes(), flushed.allocatorFlushes());
        assertEquals(0, device(job, 0).flushes().runs(), "the roomy device never flushed");
    }

    @Test
    void onTheCapacityTheFlushesTellTheBaselineFlushesWhereTheRecordingDid() {
        Advice a = device(job, 2);
        assertEquals(CardCapacity.Source.RETRY_FLUSHES, a.capacity().source());
        assertTrue(a.capacity().bytes() >= flushing.capacity(), "the largest capacity on which every flush happens");
        SettingResult base = a.baseline();
        // Replayed from empty on that card, as it was recorded from empty: every flush again, and every device call.
        assertEquals(flushing.allocatorFlushes(), base.flushesOnCard());
        assertEquals(flushing.mallocs(), base.onCard().deviceMallocs());
        assertEquals(flushing.frees(), base.onCard().deviceFrees());
        assertEquals(flushing.peakReserved(), base.peakReservedOnCard());
        // The recommendation flushes less there, and reserves no more.
        Recommendation rec = a.recommendation();
        assertNotNull(rec);
        assertEquals(Recommendation.Why.FEWER_FLUSHES, rec.why(), rec.reason());
        assertTrue(rec.setting().flushesOnCard() < base.flushesOnCard());
        assertTrue(rec.setting().peakReservedOnCard() <= base.peakReservedOnCard());
    }

    @Test
    void aRecommendationNeverReservesMoreOnTheCardThanTheRecordedSetting() {
        for (Advice a : job.devices()) {
            Recommendation rec = a.recommendation();
            SettingResult base = a.baseline();
            if (rec != null && base != null && base.runsOnCard()) {
                assertTrue(rec.setting().peakReservedOnCard() <= base.peakReservedOnCard(), a.deviceLabel());
                assertTrue(rec.alreadyBest() || rec.setting().flushesOnCard() < base.flushesOnCard()
                        || MinSaving.DEFAULT.reached(base.peakReservedOnCard() - rec.setting().peakReservedOnCard(),
                        base.peakReservedOnCard()), "a change only when it is worth it: " + rec);
            }
        }
    }

    @Test
    void theCapacityObjectiveSaysItReliesOnFlushes() {
        Path multi = dir.resolve("multi.pickle");
        JobAdvice capacity;
        try {
            capacity = new Advisor().advise(TraceFile.read(multi, 0), options(-1, Objective.CAPACITY),
                    ReplayProgress.NONE);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        Advice a = capacity.only();
        Recommendation rec = a.recommendation();
        assertNotNull(rec);
        SettingResult base = a.baseline();
        // The cost of holding more without flushes is said exactly when there is one (never for a kept setting).
        boolean more = !rec.alreadyBest()
                && rec.setting().result().peakReservedBytes() > base.result().peakReservedBytes();
        assertEquals(more, rec.costs().stream().anyMatch(c -> c.startsWith("with no cache flush (an unlimited"
                + " device) it reserves ")), rec.costs()::toString);
        String text = render(capacity).replaceAll("\\s+", " ");
        assertTrue(text.contains("objective 'capacity': the smallest device that runs the whole trace, flushing the"
                + " cache as often as it must"), text);
        // Each setting's smallest device is shown on the page, as the objective compares them.
        for (SettingResult s : a.settings()) {
            if (s.fits()) {
                assertNotNull(s.atMinCapacity().peakSnapshot(), s.config());
            }
        }
    }

    @Test
    void aGivenCapacityReplacesTheOneTheTraceTellsAndSaysSo() throws IOException {
        Path multi = dir.resolve("multi.pickle");
        JobAdvice given = new Advisor().advise(TraceFile.read(multi, 1), options(2 * GIB, Objective.RESERVED),
                ReplayProgress.NONE);
        Advice a = given.only();
        assertEquals(CardCapacity.Source.GIVEN, a.capacity().source());
        assertEquals(2 * GIB, a.capacity().bytes());
        assertTrue(a.notes().stream().anyMatch(n -> n.contains("replaces the capacity the trace tells")),
                a.notes()::toString);
        assertNotNull(a.recommendation(), "on 2 GiB the job runs");
    }

    @Test
    void aSnapshotOfTheEndStateOnlyGetsNoVerdictAndShowsThatState() throws IOException {
        Map<String, Object> snapshot = SnapshotScenarios.snapshot(List.of(roomy, crashed), false);
        Path file = SnapshotScenarios.write(dir.resolve("end.pickle"), snapshot);
        JobAdvice end = new Advisor().advise(TraceFile.read(file, TraceFile.ALL_DEVICES),
                options(-1, Objective.RESERVED), ReplayProgress.NONE);
        assertEquals(2, end.devices().size());
        for (Advice a : end.devices()) {
            assertFalse(a.hasHistory());
            assertEquals(TrustLine.Verdict.NOT_COMPARABLE, a.trust().verdict());
            assertTrue(a.trust().firstDifference().startsWith("end state only"), a.trust().firstDifference());
            assertNull(a.recommendation());
            assertTrue(a.settings().isEmpty(), "no what-if of a run that was not recorded");
            long segments = 0;
            for (Object s : (List<?>) snapshot.get("segments")) {
                Map<?, ?> seg = (Map<?, ?>) s;
                if (((Number) seg.get("device")).intValue() == a.cudaDevice()) {
                    segments += ((Number) seg.get("total_size")).longValue();
                }
            }
            assertEquals(segments, a.endState().result().peakReservedBytes(), "the end state as the snapshot has it");
            assertNotNull(a.endState().result().peak().waste());
        }
        Map<?, ?> json = (Map<?, ?>) ((List<?>) AdviceJson.toMap(end).get("devices")).getFirst();
        assertEquals(false, json.get("history"));
        assertNull(json.get("recommendation"));
        assertNotNull(json.get("end_state"));
        String html = AdviceHtml.render(end);
        assertTrue(html.contains("<h2>End state</h2>") && !html.contains("Memory over time"), "the page shows the"
                + " end state, not a made-up run");
        assertTrue(render(end).contains("END STATE ONLY"));
    }

    @Test
    void aChangeThatSavesLessThanTheMarginKeepsTheRecordedSetting() throws IOException {
        // With no margin, the best of the roomy device is recommended; with a margin above its saving, it is not.
        Path multi = dir.resolve("multi.pickle");
        Advice loose = new Advisor().advise(TraceFile.read(multi, 0), new Advisor.Options("caching",
                grid.toString(), -1, Objective.RESERVED, 2, new MinSaving(0, 0)), ReplayProgress.NONE).only();
        Recommendation best = loose.recommendation();
        assertFalse(best.alreadyBest(), best.toString());
        long saved = best.savingBytes();
        Advice strict = new Advisor().advise(TraceFile.read(multi, 0), new Advisor.Options("caching",
                grid.toString(), -1, Objective.RESERVED, 2, new MinSaving(0, saved + MIB)), ReplayProgress.NONE)
                .only();
        Recommendation kept = strict.recommendation();
        assertTrue(kept.alreadyBest());
        assertEquals(Recommendation.Why.WITHIN_MARGIN, kept.why());
        assertTrue(kept.setting().recorded());
        assertEquals(best.setting().config(), kept.runnerUp().config());
        assertTrue(kept.reason().contains("already best within the margin"), kept.reason());
    }

    /** The page is well-formed XML as well as HTML, as the replay's report is: every element closed, ids unique. */
    static void wellFormed(String html) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
            Document doc = factory.newDocumentBuilder().parse(new InputSource(new StringReader(html)));
            NodeList ids = (NodeList) XPathFactory.newInstance().newXPath().evaluate("//*[@id]", doc,
                    XPathConstants.NODESET);
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < ids.getLength(); i++) {
                String id = ((Element) ids.item(i)).getAttribute("id");
                assertTrue(seen.add(id), "an id twice: " + id);
            }
        } catch (Exception e) {
            throw new AssertionError("the page is not well-formed: " + e.getMessage(), e);
        }
    }

    private static String render(JobAdvice advice) {
        StringWriter text = new StringWriter();
        AdviceText.print(new PrintWriter(text), advice);
        return text.toString();
    }
}
