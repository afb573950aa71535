package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.row;
import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.examples.LauncherTest.Run;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code --metrics} and {@code --jfr FILE} on {@code demo} and {@code replay}: what they print and record is true. */
@ExtendWith(InjectedTraces.class)
class ObservabilityOptionsTest {

    /**
     * A figure of a meter line, e.g. {@code count} of {@code devalloc.oom{allocator=replay,device=sim:0}  count=0}
     * or {@code total} of {@code devalloc.device.call.bytes{...}  total=2097152 bytes}.
     */
    static long meter(Run r, String name, String tags, String statistic) {
        Matcher m = Pattern.compile("(?m)^  " + Pattern.quote(name + "{" + tags + "}") + "  .*?\\b"
                + statistic + "=(\\d+)").matcher(r.out() + r.err());
        assertTrue(m.find(), () -> name + "{" + tags + "} " + statistic + " not printed:\n" + r);
        return Long.parseLong(m.group(1));
    }

    static List<RecordedEvent> events(Path file, String name) throws IOException {
        return RecordingFile.readAllEvents(file).stream().filter(e -> e.getEventType().getName().equals(name))
                .toList();
    }

    @Test
    void replayMetricsAreTheReplaysFiguresAtItsEnd() {
        // A warm start reopens the simulated device to place the segments and restores them (two device mallocs):
        // the meters watch one allocator, from the first event on, as the table counts.
        Run r = run("replay", "warm.csv", "--warm", "--metrics");
        assertEquals(0, r.exitCode(), r::toString);
        String tags = "allocator=replay,device=sim:0";
        assertAll(
                () -> assertTrue(r.out().contains("Meters (Micrometer, at the end of the run, before the allocator"
                        + " closed):"), r::toString),
                () -> assertEquals("2 / 0", row(r, "device mallocs / frees")),
                () -> assertEquals(2, meter(r, "devalloc.device.calls", tags + ",op=malloc,outcome=success",
                        "count")),
                () -> assertEquals(2, meter(r, "devalloc.device.call.duration", tags + ",op=malloc", "count"),
                        "every call counted is timed"),
                () -> assertEquals(0, meter(r, "devalloc.device.calls", tags + ",op=free,outcome=success",
                        "count")),
                () -> assertEquals(0, meter(r, "devalloc.oom", tags, "count")),
                () -> assertEquals(56_623_104, meter(r, "devalloc.memory.reserved.peak", tags, "value"),
                        "the table's peak reserved"),
                () -> assertEquals("", r.err()));
    }

    @Test
    void withJsonTheMetersGoToStandardErrorAndTheOutputStaysOneObject() {
        Run r = run("replay", "rmm.csv", "--json", "--metrics");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().startsWith("{") && r.out().strip().endsWith("}"), r::toString);
        assertFalse(r.out().contains("devalloc.device.calls"), r::toString);
        assertEquals(1, meter(r, "devalloc.device.calls",
                "allocator=replay,device=sim:0,op=malloc,outcome=success", "count"));
    }

    @Test
    void replayJfrRecordsTheReplaysDeviceCalls(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("replay.jfr");
        Run r = run("replay", "warm.csv", "--warm", "--jfr", file.toString());
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().contains("JFR recording: " + file + " (jfr print --events 'io.devalloc.*' " + file + ")"),
                r::toString);
        List<RecordedEvent> allocs = events(file, "io.devalloc.DeviceAlloc");
        assertEquals(2, allocs.size(), "the replay's two, not the warm start's restore: " + allocs);
        for (RecordedEvent e : allocs) {
            assertEquals("replay", e.getString("allocator"));
            assertEquals("sim:0", e.getString("device"));
            assertTrue(e.getLong("size") > 0 && e.getLong("address") != 0, e::toString);
        }
    }

    @Test
    void demoPrintsItsMetersAndRecordsItsEvents(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("demo.jfr");
        Run r = run("demo", "--device", "sim:80GiB", "--allocator", "caching", "--steps", "2", "--metrics",
                "--jfr", file.toString());
        assertEquals(0, r.exitCode(), r::toString);
        String tags = "allocator=demo,device=sim:0";
        String[] mallocsFrees = row(r, "device mallocs / frees").split(" / ");
        long mallocs = Long.parseLong(mallocsFrees[0]);
        assertAll(
                () -> assertEquals(mallocs, meter(r, "devalloc.device.calls", tags + ",op=malloc,outcome=success",
                        "count")),
                () -> assertEquals(1, meter(r, "devalloc.cache.releases", tags, "count"),
                        "the demo's releaseCachedMemory()"),
                () -> assertEquals(0, meter(r, "devalloc.memory.reserved", tags + ",pool=all", "value"),
                        "read after the cache was released"),
                () -> assertEquals(mallocs, events(file, "io.devalloc.DeviceAlloc").size()),
                () -> assertEquals(mallocs, events(file, "io.devalloc.DeviceFree").size(),
                        "the release gave every segment back"),
                () -> assertEquals(1, events(file, "io.devalloc.CacheRelease").size()));
    }

    @Test
    void aShortDemoRecordsTheGaugesAtItsStartAndItsEnd(@TempDir Path dir) throws IOException {
        // Two steps take far less than the recording's 100 ms period: the gauges come from the start and the end.
        Path file = dir.resolve("demo.jfr");
        Run r = run("demo", "--device", "sim:80GiB", "--allocator", "caching", "--steps", "2", "--jfr",
                file.toString());
        assertEquals(0, r.exitCode(), r::toString);
        List<RecordedEvent> usage = events(file, "io.devalloc.MemoryUsage");
        List<RecordedEvent> calls = new ArrayList<>(events(file, "io.devalloc.DeviceAlloc"));
        calls.addAll(events(file, "io.devalloc.DeviceFree"));
        assertFalse(calls.isEmpty(), r::toString);
        Instant firstCall = calls.stream().map(RecordedEvent::getStartTime).min(Comparator.naturalOrder())
                .orElseThrow();
        Instant lastCall = calls.stream().map(RecordedEvent::getStartTime).max(Comparator.naturalOrder())
                .orElseThrow();
        for (String pool : List.of("all", "small", "large")) {
            List<RecordedEvent> ofPool = usage.stream().filter(e -> e.getString("pool").equals(pool))
                    .sorted(Comparator.comparing(RecordedEvent::getStartTime)).toList();
            assertTrue(ofPool.size() >= 2, () -> pool + ": " + usage);
            RecordedEvent start = ofPool.getFirst();
            RecordedEvent end = ofPool.getLast();
            assertAll(pool,
                    () -> assertEquals("demo", start.getString("allocator")),
                    () -> assertEquals("sim:0", start.getString("device")),
                    () -> assertFalse(start.getStartTime().isAfter(firstCall), "written before the first malloc"),
                    () -> assertEquals(0, start.getLong("reserved"), "nothing reserved when the allocator is built"),
                    () -> assertFalse(end.getStartTime().isBefore(lastCall), "written after the last device call"),
                    () -> assertEquals(0, end.getLong("reserved"), "the demo's releaseCachedMemory() gave all back"));
        }
    }

    @Test
    void eachPrintedFigureSaysWhatItIs() {
        // Micrometer calls a counter's figure COUNT whatever it sums; printed as "count" a sum of bytes read as a
        // number of calls.
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Counter.builder("t.bytes").baseUnit("bytes").register(registry).increment(2048);
        Counter.builder("t.calls").register(registry).increment(3);
        Gauge.builder("t.reserved", () -> 512).baseUnit("bytes").register(registry);
        Timer.builder("t.time").register(registry).record(Duration.ofMillis(2));
        assertEquals(List.of(
                "  t.bytes{}  total=2048 bytes",
                "  t.calls{}  count=3",
                "  t.reserved{}  value=512 bytes",
                "  t.time{}  count=1  total_time=2.000 ms  max=2.000 ms"),
                ObservabilityOptions.render(registry).lines().toList());
    }

    @Test
    void demoMetersShowBytesAsBytesAndCountsAsCounts() {
        Run r = run("demo", "--device", "sim:80GiB", "--allocator", "caching", "--steps", "2", "--metrics");
        assertEquals(0, r.exitCode(), r::toString);
        String tags = "allocator=demo,device=sim:0";
        long mallocs = meter(r, "devalloc.device.calls", tags + ",op=malloc,outcome=success", "count");
        long bytes = meter(r, "devalloc.device.call.bytes", tags + ",op=malloc", "total");
        assertTrue(mallocs > 0 && bytes >= mallocs * 2 * 1024 * 1024, "caching mallocs segments of 2 MiB or more: "
                + mallocs + " mallocs of " + bytes + " bytes\n" + r);
        List<String> meterLines = r.out().lines().filter(l -> l.startsWith("  devalloc.")).toList();
        assertFalse(meterLines.isEmpty(), r::toString);
        for (String line : meterLines) {
            // A meter of bytes (call bytes, bytes released, memory gauges) shows each figure in bytes.
            boolean ofBytes = line.startsWith("  devalloc.device.call.bytes{")
                    || line.startsWith("  devalloc.cache.released{") || line.startsWith("  devalloc.memory.");
            if (ofBytes) {
                assertTrue(line.matches(".*}  (total|value)=-?\\d+ bytes"), line);
            } else {
                assertFalse(line.contains(" bytes"), line);
            }
        }
    }

    @Test
    void aJfrFileThatCannotBeWrittenIsAUsageErrorBeforeTheRun(@TempDir Path dir) throws IOException {
        Path notAFolder = Files.writeString(dir.resolve("file.txt"), "");
        Path file = notAFolder.resolve("run.jfr");
        Run r = run("replay", "rmm.csv", "--jfr", file.toString());
        assertEquals(Launcher.EXIT_USAGE, r.exitCode(), r::toString);
        assertTrue(r.err().contains("--jfr " + file + ": cannot be written: " + notAFolder + " is not a folder"),
                r::toString);
        assertEquals("", r.out(), "nothing was replayed");
        Run demo = run("demo", "--device", "sim:1GiB", "--jfr", dir.toString());
        assertEquals(Launcher.EXIT_USAGE, demo.exitCode(), demo::toString);
        assertTrue(demo.err().contains("is a directory"), demo::toString);
    }
}
