package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.advisor.OomPostMortem.Passage;
import io.devalloc.advisor.report.AdviceHtml;
import io.devalloc.advisor.report.AdviceJson;
import io.devalloc.advisor.report.AdviceText;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.RecordedOom;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.SnapshotScenarios;
import io.devalloc.replay.SnapshotScenarios.Recorded;
import io.devalloc.replay.TraceFile;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.pytorch.PyTorchSnapshotFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The out-of-memory post-mortem on snapshots that end in an {@code oom} entry, each recorded by running a program
 * through devalloc's copy of PyTorch's caching allocator on a simulated GPU of a known capacity and written with
 * devalloc's own pickle writer ({@link SnapshotScenarios}), as an out-of-memory observer's {@code _dump_snapshot()}
 * writes one. Every figure checked is worked out by hand from the program (see each test).
 *
 * <p>The program ({@link SnapshotScenarios#fragmenting}): 100 MiB of weights, then eight 60 MiB segments each left
 * with one live 20 MiB block (160 MiB live, 480 MiB reserved), then one large request. On a 1 GiB device under the
 * defaults 580 MiB are reserved and no flush can free a segment, so a request of 600 MiB fails with 444 MiB free;
 * with expandable segments (20 MiB pages in the large pool) the flush unmaps the 320 MiB of free pages beside the
 * live blocks, and 100 + 160 + 600 = 860 MiB fit.
 */
class OomPostMortemTest {

    private static final long MIB = ByteSize.MiB;
    private static final long GIB = ByteSize.GiB;

    @TempDir
    static Path dir;
    static Path grid;

    @BeforeAll
    static void grid() throws IOException {
        grid = Files.write(dir.resolve("grid.txt"), List.of("defaults", "expandable_segments:True",
                "max_split_size_mb:64", "roundup_power2_divisions:4"));
    }

    private static Path snapshot(String name, Recorded r) throws IOException {
        return SnapshotScenarios.write(dir.resolve(name), SnapshotScenarios.snapshot(List.of(r), true));
    }

    private static Advice advise(Path pickle, long capacity) throws IOException {
        return new Advisor().advise(TraceFile.read(pickle, TraceFile.ALL_DEVICES),
                new Advisor.Options("caching", grid.toString(), capacity, Objective.RESERVED, 2),
                ReplayProgress.NONE).devices().getFirst();
    }

    /** The events of the oom rows as the reader numbers them (every row from 1, start-state rows included). */
    private static List<Long> oomEvents(Path pickle) throws IOException {
        List<Long> events = new ArrayList<>();
        PyTorchSnapshotFile file = PyTorchSnapshotFile.read(pickle);
        try (TraceReader reader = file.reader(file.devices().getFirst().index())) {
            long n = 0;
            for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                n++;
                if (e.kind() == TraceEvent.Kind.OOM) {
                    events.add(n);
                }
            }
        }
        return events;
    }

    private static SettingResult setting(Advice a, String config) {
        for (SettingResult s : a.settings()) {
            if (s.config().equals(config)) {
                return s;
            }
        }
        throw new AssertionError("no setting " + config);
    }

    private static String text(Advice a) {
        StringWriter out = new StringWriter();
        AdviceText.print(new PrintWriter(out), JobAdvice.of(a));
        return out.toString();
    }

    @Test
    void aFragmentedCrashIsReadBackReproducedAndTheSettingThatGetsPastItIsNamed() throws IOException {
        Recorded r = SnapshotScenarios.record(0, GIB, "", Integer.MAX_VALUE,
                SnapshotScenarios.fragmenting(100, 8, 600, 0));
        assertEquals(1, r.ooms(), "the recording failed once");
        Path pickle = snapshot("crash.pickle", r);
        Advice a = advise(pickle, -1);

        OomPostMortem post = a.oom();
        assertNotNull(post);
        assertEquals(1, post.entries());
        RecordedOom first = post.first();
        assertEquals(oomEvents(pickle).getFirst(), first.event(), "the oom row's event, as the reader numbers it");
        assertEquals(600 * MIB, first.requestBytes());
        assertEquals(580 * MIB, first.reservedBytes(), "weights and eight 60 MiB segments");
        assertEquals(260 * MIB, first.liveRequestedBytes(), "weights and eight 20 MiB blocks");
        assertEquals(444 * MIB, first.deviceFreeBytes());
        assertEquals(GIB, first.capacityBytes());
        assertEquals(GIB, a.capacity().bytes(), "the card: reserved plus the device's free bytes");
        assertEquals(CardCapacity.Source.OOM, a.capacity().source());

        assertEquals(TrustLine.Verdict.MATCH, a.trust().verdict(), a.trust().firstDifference());
        OomPostMortem.Reproduction rep = post.reproduction();
        assertNotNull(rep);
        assertTrue(rep.reproduced(), rep.sentence());
        assertEquals(first.event(), rep.replayed().event());
        assertEquals(600 * MIB, rep.replayed().requestBytes());
        assertEquals(580 * MIB, rep.replayed().reservedBytes(), "nothing a flush could free");

        SettingResult expandable = setting(a, "expandable_segments:True");
        assertEquals(Passage.RUNS_TO_END, post.passage(expandable));
        assertEquals(860 * MIB, expandable.minCapacityBytes(), "100 + 160 + 600 MiB");
        assertEquals(164 * MIB, post.spareBytes(expandable));
        assertEquals(1, expandable.flushesOnCard(), "the request needs the flush on the card");
        assertEquals(Passage.FAILS_THERE, post.passage(setting(a, "")));
        assertEquals(-1, post.spareBytes(setting(a, "")));
        assertEquals(1180 * MIB, setting(a, "").minCapacityBytes(), "580 + 600 MiB: nothing can be released");
        assertEquals("expandable_segments:True", a.recommendation().setting().config());
        assertEquals(Recommendation.Why.AVOIDS_OOM, a.recommendation().why());
        assertEquals("expandable_segments:True gets past the out-of-memory error at event "
                + String.format(Locale.ROOT, "%,d", first.event())
                + " and runs to the end on this card (1.00 GiB, "
                // 8 device frees: the flush unmaps the free 40 MiB of pages of each of the eight segments.
                + a.capacity().reason() + "), with 1 cache flush and 8 device frees (cudaFree or unmap: each"
                + " synchronises the device) there and 164.00 MiB to spare (it runs on a device"
                + " that much smaller); the recorded setting fails at the same request.", post.verdict());

        String out = text(a);
        int oom = out.indexOf("Out of memory: the trace records an out-of-memory error");
        assertTrue(oom > 0 && oom < out.indexOf("Trust: "), "the post-mortem leads: " + out);
        assertTrue(out.contains("out-of-memory reproduced: the recorded setting, replayed on the card"), out);
        assertTrue(out.contains("Verdict: expandable_segments:True gets past"), out);
        assertTrue(out.contains("AT THE\n") || out.contains("AT THE "), out);

        Map<?, ?> json = (Map<?, ?>) ((List<?>) AdviceJson.toMap(JobAdvice.of(a)).get("devices")).getFirst();
        Map<?, ?> o = (Map<?, ?>) json.get("oom");
        assertEquals(1L, ((Number) o.get("entries")).longValue());
        Map<?, ?> listed = (Map<?, ?>) ((List<?>) o.get("listed")).getFirst();
        assertEquals(444 * MIB, ((Number) listed.get("device_free_bytes")).longValue());
        assertEquals(GIB, ((Number) listed.get("capacity_bytes")).longValue());
        assertEquals(true, ((Map<?, ?>) o.get("reproduction")).get("reproduced"));
        assertEquals(post.verdict(), o.get("verdict"));
        for (Object s : (List<?>) json.get("settings")) {
            Map<?, ?> card = (Map<?, ?>) ((Map<?, ?>) s).get("at_capacity");
            String config = (String) ((Map<?, ?>) s).get("config");
            if (config.isEmpty() || config.equals("expandable_segments:True")) {
                assertEquals(config.isEmpty() ? "fails_there" : "runs_to_end", card.get("at_recorded_oom"), config);
            }
        }
        String html = AdviceHtml.render(JobAdvice.of(a));
        assertTrue(html.indexOf("id=\"d0-oom\"") < html.indexOf("id=\"d0-trust\""), "the page leads with it too");
        AdvisorSnapshotsTest.wellFormed(html);
    }

    @Test
    void aDeviceThatRanOutOfMemoryNeedsWhatGetsItPastNotThePeakItReachedBeforeFailing() throws IOException {
        // cuda:0 ran to the end with a peak of 580 + 100 = 680 MiB; cuda:1 failed at 580 MiB reserved, and the least
        // any setting needs to run it whole is expandable segments' 860 MiB.
        Recorded done = SnapshotScenarios.record(0, 4 * GIB, "", Integer.MAX_VALUE,
                SnapshotScenarios.fragmenting(100, 8, 100, 0));
        Recorded crashed = SnapshotScenarios.record(1, GIB, "", Integer.MAX_VALUE,
                SnapshotScenarios.fragmenting(100, 8, 600, 0));
        Path pickle = SnapshotScenarios.write(dir.resolve("two.pickle"),
                SnapshotScenarios.snapshot(List.of(done, crashed), true));
        JobAdvice job = new Advisor().advise(TraceFile.read(pickle, TraceFile.ALL_DEVICES),
                new Advisor.Options("caching", grid.toString(), -1, Objective.RESERVED, 2), ReplayProgress.NONE);
        assertEquals(680 * MIB, job.devices().get(0).neededBytes());
        assertEquals(580 * MIB, job.devices().get(1).recordedPeakReservedBytes());
        assertEquals(860 * MIB, job.devices().get(1).neededBytes());
        assertEquals(1, job.mostMemory().cudaDevice());
        StringWriter out = new StringWriter();
        AdviceText.print(new PrintWriter(out), job);
        assertTrue(out.toString().replaceAll("\\s+", " ").contains("cuda:1 needs the most memory: it ran out of"
                + " memory on its 1.00 GiB card,"
                + " and the least any setting of the grid needs to run it whole is 860.00 MiB"
                + " (expandable_segments:True)."), out.toString());
        assertEquals(1, AdviceJson.toMap(job).get("most_memory_device"));
        assertTrue(AdviceHtml.render(job).contains("cuda:1 needs the most memory: it ran out of memory"), "html");
    }

    @Test
    void whenNoSettingGetsPastItTheVerdictSaysWhatTheBestNeedsAndHowMuchMoreThanTheCard() throws IOException {
        // 900 MiB: the defaults need 580 + 900 = 1480 MiB; expandable segments 100 + 160 + 900 = 1160 (the 612 MiB
        // of address space left in the first expandable segment is too little: a second one holds the request).
        Recorded r = SnapshotScenarios.record(0, GIB, "", Integer.MAX_VALUE,
                SnapshotScenarios.fragmenting(100, 8, 900, 0));
        Advice a = advise(snapshot("hopeless.pickle", r), -1);
        assertNull(a.recommendation());
        assertEquals(1160 * MIB, setting(a, "expandable_segments:True").minCapacityBytes());
        assertEquals(1480 * MIB, setting(a, "").minCapacityBytes());
        assertTrue(a.oom().verdict().startsWith("No setting of the grid gets past the out-of-memory error at event "),
                a.oom().verdict());
        assertTrue(a.oom().verdict().endsWith(": to run the whole trace the best, expandable_segments:True, needs a"
                + " device of "
                + ByteSize.format(1160 * MIB) + ", 136.00 MiB (13.3%) more than the card had."), a.oom().verdict());
        assertTrue(a.oom().reproduction().reproduced(), a.oom().reproduction().sentence());
    }

    @Test
    void aRunThatGoesOnAfterACaughtFailureHasEveryEntryAndEachSettingIsJudgedAtTheFirst() throws IOException {
        // The program catches the 600 MiB failure, frees the blocks it kept, gets the 600 MiB (the flush frees the
        // empty segments), then asks for 400 MiB more: 100 + 600 + 400 > 1024, a second failure, for every setting.
        Recorded r = SnapshotScenarios.record(0, GIB, "", Integer.MAX_VALUE,
                SnapshotScenarios.fragmenting(100, 8, 600, 400));
        assertEquals(2, r.ooms());
        Path pickle = snapshot("caught.pickle", r);
        Advice a = advise(pickle, -1);
        assertEquals(2, a.oom().entries());
        assertEquals(oomEvents(pickle), List.of(a.oom().ooms().get(0).event(), a.oom().ooms().get(1).event()));
        assertEquals(TrustLine.Verdict.MATCH, a.trust().verdict(), a.trust().firstDifference());
        assertTrue(a.oom().reproduction().reproduced(), a.oom().reproduction().sentence());
        SettingResult expandable = setting(a, "expandable_segments:True");
        assertTrue(a.oom().verdict().contains("the first of its 2 out-of-memory errors (event "), a.oom().verdict());
        assertEquals(Passage.PAST_THEN_FAILS, a.oom().passage(expandable));
        assertEquals(a.oom().ooms().get(1).event(), expandable.atCapacity().firstOom().event());
        assertEquals(1, expandable.atCapacity().servedOomRequests());
        assertEquals(0, setting(a, "").atCapacity().servedOomRequests());
        assertEquals(Passage.FAILS_THERE, a.oom().passage(setting(a, "")));
        // No setting runs to the end of this card; the verdict names the one that gets past the first failure and
        // where it fails next, then what running the whole trace needs: 100 + 600 + 400 MiB with expandable segments.
        String second = String.format(Locale.ROOT, "%,d", a.oom().ooms().get(1).event());
        assertTrue(a.oom().verdict().startsWith("No setting of the grid runs to the end on this card (1.00 GiB, "),
                a.oom().verdict());
        assertTrue(a.oom().verdict().contains("; expandable_segments:True gets past the first of its 2 out-of-memory"
                + " errors (event " + String.format(Locale.ROOT, "%,d", a.oom().first().event())
                + "), then fails at event " + second
                + " (a request of 400.00 MiB): to run the whole trace the best, expandable_segments:True, needs a"
                + " device of 1.07 GiB"), a.oom().verdict());
    }

    @Test
    void aCapacityGivenReplacesTheOneTheEntriesTellAndTheReplaySaysTheFailureDoesNotComeBack() throws IOException {
        Recorded r = SnapshotScenarios.record(0, GIB, "", Integer.MAX_VALUE,
                SnapshotScenarios.fragmenting(100, 8, 600, 0));
        Advice a = advise(snapshot("given.pickle", r), 2 * GIB);
        assertEquals(CardCapacity.Source.GIVEN, a.capacity().source());
        assertTrue(a.notes().stream().anyMatch(n -> n.startsWith("--capacity 2.00 GiB replaces the capacity the"
                + " trace tells, 1.00 GiB")), a.notes().toString());
        OomPostMortem.Reproduction rep = a.oom().reproduction();
        assertFalse(rep.reproduced());
        assertNull(rep.replayed(), "on 2 GiB the recorded setting runs to the end");
        assertTrue(rep.sentence().contains("serves the request that failed at event"), rep.sentence());
        assertTrue(rep.sentence().endsWith("and runs to the end of the trace: the card given with --capacity is not"
                + " the memory the recording had (1.00 GiB, reserved plus the device's free bytes at the failure)"),
                rep.sentence());
        assertEquals(Passage.RUNS_TO_END, a.oom().passage(setting(a, "")));
        String event = String.format(Locale.ROOT, "%,d", a.oom().first().event());
        assertTrue(a.oom().verdict().startsWith("The recorded setting, replayed from an empty allocator, gets past the"
                + " out-of-memory error at event " + event + " and runs to the end on this card (2.00 GiB, "
                + a.capacity().reason() + "): the card given with --capacity is not the memory the recording had"
                + " (1.00 GiB, reserved plus the device's free bytes at the failure)."), a.oom().verdict());
    }

    /** The crash's snapshot with each oom entry's device_free removed, and its size too when {@code noRequest}. */
    private static Path withoutFreeBytes(String name, boolean noRequest) throws IOException {
        return withoutFreeBytes(name, noRequest, 600);
    }

    private static Path withoutFreeBytes(String name, boolean noRequest, long requestMiB) throws IOException {
        Recorded r = SnapshotScenarios.record(0, GIB, "", Integer.MAX_VALUE,
                SnapshotScenarios.fragmenting(100, 8, requestMiB, 0));
        Map<String, Object> snapshot = SnapshotScenarios.snapshot(List.of(r), true);
        for (Object entry : (List<?>) ((List<?>) snapshot.get("device_traces")).getFirst()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> e = (Map<String, Object>) entry;
            if ("oom".equals(e.get("action"))) {
                e.remove("device_free");
                if (noRequest) {
                    e.put("size", 0L);
                }
            }
        }
        return SnapshotScenarios.write(dir.resolve(name), snapshot);
    }

    @Test
    void withoutTheDevicesFreeBytesTheFailedDeviceMallocBoundsTheCard() throws IOException {
        // 580 MiB reserved and a 600 MiB segment that did not fit: the card is below 1180 MiB.
        Advice a = advise(withoutFreeBytes("no-free.pickle", false), -1);
        assertEquals(-1, a.oom().first().deviceFreeBytes());
        assertEquals(CardCapacity.Source.OOM_REQUEST, a.capacity().source());
        assertEquals(1180 * MIB - 1, a.capacity().bytes());
        assertTrue(a.capacity().reason().startsWith("at most "), a.capacity().reason());
        assertTrue(a.oom().reproduction().reproduced(), a.oom().reproduction().sentence());
        assertEquals(Passage.RUNS_TO_END, a.oom().passage(setting(a, "expandable_segments:True")));
        assertEquals(Passage.FAILS_THERE, a.oom().passage(setting(a, "")));
        assertTrue(a.recommendation() != null && !a.recommendation().alreadyBest(), "a crashed job is never kept");
    }

    @Test
    void withoutTheDevicesFreeBytesARequestOffTwentyMibBoundsTheCardByPyTorchsSegmentSize() throws IOException {
        // 590 MiB: PyTorch asks the device for 590 MiB (get_allocation_size rounds a request from 10 MiB up to
        // 2 MiB), not 600: the card is below 580 + 590 = 1170 MiB, and the failure comes back on it.
        Advice a = advise(withoutFreeBytes("no-free-590.pickle", false, 590), -1);
        assertEquals(590 * MIB, a.oom().first().requestBytes());
        assertEquals(CardCapacity.Source.OOM_REQUEST, a.capacity().source());
        assertEquals(1170 * MIB - 1, a.capacity().bytes());
        assertTrue(a.oom().reproduction().reproduced(), a.oom().reproduction().sentence());
        assertEquals(Passage.FAILS_THERE, a.oom().passage(setting(a, "")));
        assertEquals(860 * MIB, setting(a, "expandable_segments:True").minCapacityBytes(),
                "100 + 160 MiB and the 590 MiB in 20 MiB pages");
        assertTrue(a.oom().verdict().contains(" and at most " + ByteSize.format(310 * MIB - 1) + " to spare"),
                "the card is bounded from above only: " + a.oom().verdict());
    }

    @Test
    void aDeviceFreeBeyondAnyDeviceIsACorruptFigureAndLeavesTheCardUnknown() throws IOException {
        Recorded r = SnapshotScenarios.record(0, GIB, "", Integer.MAX_VALUE,
                SnapshotScenarios.fragmenting(100, 8, 600, 0));
        Map<String, Object> snapshot = SnapshotScenarios.snapshot(List.of(r), true);
        for (Object entry : (List<?>) ((List<?>) snapshot.get("device_traces")).getFirst()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> e = (Map<String, Object>) entry;
            if ("oom".equals(e.get("action"))) {
                e.put("device_free", 1L << 62);
            }
        }
        Advice a = advise(SnapshotScenarios.write(dir.resolve("hostile-free.pickle"), snapshot), -1);
        assertNull(a.capacity(), "no card rather than an absurd one");
        assertTrue(a.notes().stream().anyMatch(n -> n.contains("more than any device devalloc simulates")
                && n.contains("give --capacity")), a.notes().toString());
        assertTrue(a.oom().verdict().contains("give --capacity"), a.oom().verdict());
    }

    @Test
    void withNeitherTheFreeBytesNorTheRequestTheCardIsUnknownAndTheVerdictAsksForIt() throws IOException {
        Advice a = advise(withoutFreeBytes("nothing.pickle", true), -1);
        assertNull(a.oom().card());
        assertNull(a.oom().reproduction());
        assertEquals(0, a.oom().first().requestBytes());
        assertTrue(a.oom().verdict().contains("but not the memory the allocator could use then")
                && a.oom().verdict().contains("give --capacity"), a.oom().verdict());
        assertEquals(Passage.UNKNOWN, a.oom().passage(setting(a, "")));
        assertTrue(a.notes().stream().anyMatch(n -> n.contains("the trace's out-of-memory errors record neither the"
                + " device's free bytes nor the request that failed")), a.notes().toString());
    }

    @Test
    void aHistoryCutToItsLastEntriesStartsWarmAndTheFailureStillComesBack() throws IOException {
        // PyTorch's max_entries: only the last 40 entries are kept, so the weights and the 60 MiB segments were
        // made before the history began and come back as the snapshot's start state.
        Recorded r = SnapshotScenarios.record(0, GIB, "", 40, SnapshotScenarios.fragmenting(100, 8, 600, 0));
        Path pickle = snapshot("ring.pickle", r);
        Advice a = advise(pickle, -1);
        assertTrue(TraceFile.read(pickle, TraceFile.ALL_DEVICES).devices().getFirst().trace().startsWarm());
        assertEquals(TrustLine.Verdict.MATCH, a.trust().verdict(), a.trust().firstDifference());
        assertEquals(GIB, a.capacity().bytes());
        assertEquals(oomEvents(pickle).getFirst(), a.oom().first().event());
        assertTrue(a.oom().reproduction().reproduced(), a.oom().reproduction().sentence());
        assertEquals(580 * MIB, a.oom().first().reservedBytes(), "the start state's segments counted");
    }
}
