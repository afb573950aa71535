package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.advisor.report.AdviceHtml;
import io.devalloc.advisor.report.AdviceJson;
import io.devalloc.advisor.report.AdviceText;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.replay.SnapshotScenarios;
import io.devalloc.replay.SnapshotScenarios.Recorded;
import io.devalloc.replay.TraceFile;
import io.devalloc.replay.report.ReportParts;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.pytorch.PyTorchSnapshotFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bounds ladder of {@code devalloc advise} on snapshots recorded by running a program through devalloc's copy of
 * PyTorch's caching allocator on a capped simulated GPU ({@link SnapshotScenarios#fragmenting}: 100 MiB of weights,
 * eight 60 MiB blocks freed, 24 blocks of 20 MiB of which one in three is kept, then one large request). The lower
 * bound is checked against a sweep of the snapshot's own rows, and by hand; every report shows the same ladder.
 */
class BoundsLadderTest {

    private static final long MIB = ByteSize.MiB;
    private static final long GIB = ByteSize.GiB;

    @TempDir
    static Path dir;

    private static Advice advise(Path pickle, String... grid) throws IOException {
        Path file = Files.write(dir.resolve("grid-" + grid.length + ".txt"), List.of(grid));
        return new Advisor().advise(TraceFile.read(pickle, TraceFile.ALL_DEVICES),
                new Advisor.Options("caching", file.toString(), -1, Objective.RESERVED, 2),
                ReplayProgress.NONE).devices().getFirst();
    }

    private static Path recorded(String name, long requestMiB) throws IOException {
        Recorded r = SnapshotScenarios.record(0, GIB, "", Integer.MAX_VALUE,
                SnapshotScenarios.fragmenting(100, 8, requestMiB, 0));
        return SnapshotScenarios.write(dir.resolve(name), SnapshotScenarios.snapshot(List.of(r), true));
    }

    /**
     * The most bytes live at once, swept over the snapshot's rows as its reader gives them, independently of the
     * bounds package: an allocation adds its size, a free subtracts its allocation's, and a failed request counts
     * on top of what is live for its one row.
     */
    private static long[] sweep(Path pickle) throws IOException {
        PyTorchSnapshotFile file = PyTorchSnapshotFile.read(pickle);
        Map<Long, Long> live = new HashMap<>();
        long bytes = 0;
        long peak = 0;
        long peakEvent = -1;
        long n = 0;
        try (TraceReader reader = file.reader(file.devices().getFirst().index())) {
            for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                long event = n++;
                switch (e.kind()) {
                    case ALLOC, PREALLOC -> {
                        live.put(e.key(), e.size());
                        bytes += e.size();
                        if (bytes > peak) {
                            peak = bytes;
                            peakEvent = event;
                        }
                    }
                    case FREE -> bytes -= live.getOrDefault(e.key(), 0L);
                    case OOM -> {
                        if (bytes + e.size() > peak) {
                            peak = bytes + e.size();
                            peakEvent = event;
                        }
                    }
                    default -> { }
                }
                if (e.kind() == TraceEvent.Kind.FREE) {
                    live.remove(e.key());
                }
            }
        }
        return new long[] {peak, peakEvent};
    }

    private static String text(Advice a) {
        StringWriter out = new StringWriter();
        AdviceText.print(new PrintWriter(out), JobAdvice.of(a));
        return out.toString();
    }

    @Test
    void aCrashsLadderStandsOnWhatWasLiveWhenTheRequestFailedAndExpandableSegmentsReachIt() throws IOException {
        Path pickle = recorded("crash.pickle", 600);
        Advice a = advise(pickle, "defaults", "expandable_segments:True", "max_split_size_mb:64");
        BoundsLadder ladder = a.ladder();

        // 100 MiB of weights and eight 20 MiB blocks live when 600 MiB were asked for: 860 MiB, above the 580 MiB
        // of weights and 60 MiB blocks before. Every size is a multiple of 512: rounding adds nothing.
        long[] swept = sweep(pickle);
        assertEquals(860 * MIB, swept[0]);
        assertEquals(swept[0], ladder.bound().requestedPeakBytes());
        assertEquals(swept[1], ladder.bound().requestedPeakEvent(), "the oom row");
        assertEquals(a.oom().first().event(), ladder.bound().requestedPeakEvent() + 1,
                "the post-mortem numbers events from 1");
        assertEquals(860 * MIB, ladder.bound().roundedPeakBytes());
        assertTrue(ladder.plan().bytes() >= ladder.floorBytes(), ladder.plan().toString());
        assertEquals(860 * MIB, ladder.plan().bytes(), "the 600 MiB go where the freed 60 MiB blocks were");

        assertEquals("expandable_segments:True", ladder.best().config());
        assertEquals(860 * MIB, ladder.best().minCapacityBytes(), "100 + 160 + 600 MiB");
        assertEquals("", ladder.recorded().config());
        assertEquals(1180 * MIB, ladder.recorded().minCapacityBytes(), "580 + 600 MiB: nothing can be released");
        assertEquals(1.0, ladder.gapClosed());
        assertEquals(0, ladder.leftBytes());
        assertEquals("The setting of the grid that runs the trace in the least memory, expandable_segments:True"
                + " (860.00 MiB), closes 100.0% of the gap between the recorded setting (1.15 GiB) and the lower bound"
                + " (860.00 MiB); it needs no more than the lower bound: no allocator that rounds requests this way"
                + " can need less, and tuning the allocator further will not help.", ladder.reading());

        List<String> keys = new ArrayList<>();
        for (BoundsLadder.Rung r : ladder.rungs()) {
            keys.add(r.key());
        }
        assertEquals(List.of("requested", "rounded", "plan", "best", "recorded"), keys);

        String out = text(a);
        int bounds = out.indexOf("Bounds (what any allocator could do");
        assertTrue(bounds > out.indexOf("Recommendation: ") && bounds < out.indexOf("Settings, best first"), out);
        String section = out.substring(bounds, out.indexOf("Settings, best first"));
        int requested = section.indexOf("lower bound, as requested (event "
                + String.format(Locale.ROOT, "%,d", a.oom().first().event()) + ")");
        int rounded = section.indexOf("lower bound, rounded as caching rounds");
        int plan = section.indexOf("offline plan (");
        int best = section.indexOf("least of the grid: expandable_segments:True");
        int recorded = section.indexOf("the recorded setting: (defaults)");
        assertTrue(requested > 0 && requested < rounded && rounded < plan && plan < best && best < recorded,
                section);
        assertTrue(section.contains("+320.00 MiB (27.1%)"), "1,180 - 860 MiB, of 1,180: " + section);
        assertTrue(section.replaceAll("\\s+", " ").contains(ladder.reading()), section);

        Map<?, ?> json = (Map<?, ?>) ((List<?>) AdviceJson.toMap(JobAdvice.of(a)).get("devices")).getFirst();
        Map<?, ?> b = (Map<?, ?>) json.get("bounds");
        assertEquals(860 * MIB, ((Number) b.get("requested_peak_bytes")).longValue());
        assertEquals(a.oom().first().event(), ((Number) b.get("requested_peak_event")).longValue(),
                "numbered from 1, as the post-mortem numbers it");
        assertEquals(860 * MIB, ((Number) b.get("plan_bytes")).longValue());
        assertEquals("expandable_segments:True", b.get("best"));
        assertEquals(1180 * MIB, ((Number) b.get("recorded_min_capacity_bytes")).longValue());
        assertEquals(1L, ((Number) ((Map<?, ?>) b.get("intervals")).get("oom_instants")).longValue());
        assertEquals(ladder.reading(), b.get("reading"));
        List<Object> rungKeys = new ArrayList<>();
        for (Object r : (List<?>) b.get("rungs")) {
            rungKeys.add(((Map<?, ?>) r).get("rung"));
        }
        assertEquals(List.<Object>copyOf(keys), rungKeys);

        String html = AdviceHtml.render(JobAdvice.of(a));
        int at = html.indexOf("id=\"d0-bounds\"");
        assertTrue(html.indexOf("id=\"d0-recommendation\"") < at && at < html.indexOf("id=\"d0-trust\""), html);
        assertTrue(html.contains(ReportParts.escape(ladder.reading())), "the same sentence");
        AdvisorSnapshotsTest.wellFormed(html);
    }

    @Test
    void whenTheGridLeavesMoreThanTheMarginThePlanSaysWhatPlacementAloneWouldSave() throws IOException {
        // Without expandable segments nothing releases the segments that each keep a 20 MiB block: the 100 MiB
        // request takes a new segment on top of the 580 MiB reserved. The bound is the 580 MiB of the first phase.
        Path pickle = recorded("fits.pickle", 100);
        Advice a = advise(pickle, "defaults", "max_split_size_mb:64");
        BoundsLadder ladder = a.ladder();
        assertEquals(sweep(pickle)[0], ladder.bound().requestedPeakBytes());
        assertEquals(580 * MIB, ladder.floorBytes());
        assertTrue(ladder.best().recorded(), "a tie goes to the recorded setting");
        assertEquals(680 * MIB, ladder.best().minCapacityBytes());
        assertTrue(ladder.plan().bytes() >= 580 * MIB && ladder.plan().bytes() < 680 * MIB,
                ladder.plan().toString());
        String reading = ladder.reading();
        assertTrue(reading.startsWith("The recorded setting runs the trace in the least memory of the grid's"
                + " settings (680.00 MiB); 100.00 MiB (14.7%) is left above the lower bound (580.00 MiB), the most any"
                + " other setting or allocator could save. An allocator that knew every allocation in advance would"
                + " need "), reading);
        assertTrue(reading.endsWith("a better placement is worth looking for."), reading);
        List<String> keys = new ArrayList<>();
        for (BoundsLadder.Rung r : ladder.rungs()) {
            keys.add(r.key());
        }
        assertEquals(List.of("requested", "rounded", "plan", "recorded"), keys, "one rung for the recorded best");
    }
}
