package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.examples.LauncherTest.Run;
import io.devalloc.replay.SnapshotScenarios;
import io.devalloc.trace.pytorch.PyTorchSnapshotFile;
import io.devalloc.trace.pytorch.SnapshotDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code devalloc replay} and {@code compare} of PyTorch snapshots written with devalloc's own pickle writer: a job on
 * two GPUs is replayed device by device, with the settings the snapshot recorded unless told otherwise, and
 * {@code --export} writes the replay as a snapshot that reads back with every device.
 */
class ReplaySnapshotCommandTest {

    @TempDir
    static Path dir;
    static Path twoGpus;

    @BeforeAll
    static void record() throws IOException {
        long gib = 1L << 30;
        twoGpus = SnapshotScenarios.write(dir.resolve("two.pickle"), SnapshotScenarios.snapshot(List.of(
                SnapshotScenarios.record(0, 4 * gib, "expandable_segments:True",
                        SnapshotScenarios.nearCapacity(4, 0, 0)),
                SnapshotScenarios.record(2, 4 * gib, "expandable_segments:True",
                        SnapshotScenarios.nearCapacity(5, 2, 0))), true));
    }

    @Test
    void everyDeviceIsReplayedWithTheRecordedSettingsAndSaysSo() {
        Run r = run("replay", twoGpus.toString());
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().startsWith("Devices of " + twoGpus + ": 2 with a history, 1 unused\n"), r::toString);
        assertTrue(r.out().contains("unused: cuda:1 (no trace entry, no segment"), r::toString);
        assertTrue(r.out().replaceAll("\\s+", " ").contains(" needs the most memory in this replay: "), r::toString);
        assertTrue(r.out().contains("Replay of " + twoGpus + " cuda:0 (PyTorch snapshot pickle, "), r::toString);
        assertTrue(r.out().contains("Replay of " + twoGpus + " cuda:2 (PyTorch snapshot pickle, "), r::toString);
        String text = r.out().replaceAll("\\s+", " ");
        assertTrue(text.contains("configuration: the snapshot's recorded allocator_settings"
                + " ('expandable_segments:True'); --config replays another setting"), r::toString);
        assertTrue(text.contains("config expandable_segments:True"), "the table names it too: " + r);

        Run json = run("replay", twoGpus.toString(), "--json");
        assertEquals(0, json.exitCode(), json::toString);
        String out = json.out().strip();
        assertTrue(out.startsWith("{\"trace\":") && out.contains("\"devices\":[{"), "one object per device: " + out);
        assertTrue(out.contains("\"cuda_device\":0,\"history\":true") && out.contains("\"cuda_device\":2,"), out);
        assertTrue(out.endsWith("\"unused_devices\":[1],\"most_memory_device\":2}")
                || out.endsWith("\"unused_devices\":[1],\"most_memory_device\":0}"), out);

        Run one = run("replay", twoGpus.toString(), "--cuda-device", "2", "--json", "--config", "");
        assertEquals(0, one.exitCode(), one::toString);
        assertTrue(one.out().strip().startsWith("{") && one.out().contains("\"cuda_device\":2"), one::toString);
        assertTrue(one.out().contains("\"conf\":\"\""), "--config given: the defaults, not the recorded: " + one);
    }

    @Test
    void aConfigurationFromTheLaunchersDefaultOrNoneRecordedIsNamed() throws IOException {
        Run fromEnvironment = LauncherTest.runWith(Map.of(), Map.of("DEVALLOC_CONFIG", "max_split_size_mb:64"),
                "replay", twoGpus.toString(), "--cuda-device", "0");
        assertEquals(0, fromEnvironment.exitCode(), fromEnvironment::toString);
        assertTrue(fromEnvironment.out().replaceAll("\\s+", " ").contains("configuration: 'max_split_size_mb:64',"
                + " from DEVALLOC_CONFIG=max_split_size_mb:64, not the snapshot's recorded allocator_settings"
                + " ('expandable_segments:True')"), fromEnvironment::toString);
        Map<String, Object> snapshot = SnapshotScenarios.snapshot(List.of(SnapshotScenarios.record(0,
                1L << 32, "", SnapshotScenarios.nearCapacity(3, 0, 0))), true);
        snapshot.remove("allocator_settings");
        Path old = SnapshotScenarios.write(dir.resolve("old.pickle"), snapshot);
        Run r = run("replay", old.toString());
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().replaceAll("\\s+", " ").contains("configuration: PyTorch's defaults: the snapshot records"
                + " no allocator_settings (PyTorch before 2.1 wrote none)"), r::toString);
        assertTrue(r.out().contains("MATCH"), r::toString);
    }

    @Test
    void exportWritesEveryDevicesReplayAsASnapshotThatReadsBack() throws IOException {
        Path export = dir.resolve("out").resolve("what-if.pickle");
        Run r = run("replay", twoGpus.toString(), "--config", "max_split_size_mb:64", "--export", export.toString());
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().contains("PyTorch snapshot: " + export), r::toString);
        PyTorchSnapshotFile read = PyTorchSnapshotFile.read(export);
        assertEquals(List.of(0, 2), read.devices().stream().map(SnapshotDevice::index).toList());
        assertEquals(List.of(1), read.unusedDevices(), "the unused device keeps its empty list, as PyTorch writes it");
        for (SnapshotDevice d : read.devices()) {
            assertTrue(d.hasHistory() && d.segments() > 0, d.toString());
        }
        assertTrue(read.recordedSettings().config().contains("max_split_size_mb:64"),
                read.recordedSettings().config());
        // Replayed again under the settings it holds, each device matches what the replay did.
        Run again = run("replay", export.toString(), "--json");
        assertEquals(0, again.exitCode(), again::toString);
        assertTrue(again.out().contains("\"match\":true") && !again.out().contains("\"match\":false"), again::toString);

        Run bfc = run("replay", twoGpus.toString(), "--allocator", "bfc", "--export",
                dir.resolve("bfc.pickle").toString());
        assertEquals(Launcher.EXIT_USAGE, bfc.exitCode(), bfc::toString);
        assertTrue(bfc.err().contains("keeps no PyTorch memory history"), bfc::toString);
        Run folder = run("replay", twoGpus.toString(), "--export", dir.toString());
        assertEquals(Launcher.EXIT_USAGE, folder.exitCode(), folder::toString);
        assertTrue(folder.err().contains("--export " + dir + ": cannot be written: it is a directory"),
                folder::toString);
        assertTrue(Files.notExists(dir.resolve("bfc.pickle")));
    }

    @Test
    void compareTakesEachDeviceAsATrace() {
        Run r = run("compare", twoGpus.toString(), "--run", "caching", "--run", "caching:expandable_segments:True");
        assertEquals(0, r.exitCode(), r::toString);
        assertTrue(r.out().contains(twoGpus + " cuda:0 (") && r.out().contains(twoGpus + " cuda:2 ("), r::toString);
        Run one = run("compare", twoGpus.toString(), "--run", "caching", "--cuda-device", "2");
        assertEquals(0, one.exitCode(), one::toString);
        assertTrue(!one.out().contains("cuda:0"), one::toString);
    }
}
