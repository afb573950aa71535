package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScenarioFilesTest {
    @Test
    void write() throws Exception {
        String dir = System.getProperty("scen.dir");
        if (dir == null) {
            return;
        }
        long gib = 1L << 30;
        SnapshotScenarios.Recorded d0 = SnapshotScenarios.record(0, 4 * gib, "",
                SnapshotScenarios.nearCapacity(8, 0, 0));
        SnapshotScenarios.Recorded d1 = SnapshotScenarios.record(1, gib, "",
                SnapshotScenarios.nearCapacity(12, 5, 900));
        SnapshotScenarios.Recorded d2 = SnapshotScenarios.record(2, gib, "",
                SnapshotScenarios.nearCapacity(12, 0, 0));
        System.out.println(d0 + "\n" + d1 + "\n" + d2);
        SnapshotScenarios.write(Path.of(dir, "multi.pickle"), SnapshotScenarios.snapshot(List.of(d0, d1, d2), true));
        SnapshotScenarios.write(Path.of(dir, "endstate.pickle"), SnapshotScenarios.snapshot(List.of(d0, d1), false));
        SnapshotScenarios.write(Path.of(dir, "flushes.pickle"), SnapshotScenarios.snapshot(List.of(d2), true));
        assertTrue(true);
    }
}
