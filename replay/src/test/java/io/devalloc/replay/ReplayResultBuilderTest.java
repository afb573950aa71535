package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.replay.ReplayResult.GroundTruth;
import io.devalloc.replay.ReplayResult.OomPoint;
import io.devalloc.replay.ReplayResult.Peak;
import io.devalloc.replay.ReplayResult.Timeline;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ReplayResultBuilderTest {

    private static final Timeline TIMELINE = new Timeline(new long[] {0, 4}, new long[] {0, 512}, new long[] {0, 1024});

    /** A builder with the required parts only. */
    private static ReplayResult.Builder required() {
        return ReplayResult.builder().trace("t.csv").allocator("caching").device("sim:1GiB").conf("")
                .timeline(TIMELINE);
    }

    @Test
    void eachPartGoesToItsComponent() {
        GroundTruth truth = new GroundTruth(3, 1, 2048, true, null);
        Peak peak = new Peak(4, 1024, 512, 500, true, null);
        OomPoint oom = new OomPoint(3, 4096, 1024, 512);
        ReplayResult built = ReplayResult.builder().trace("t.csv").allocator("bfc").device("sim:1GiB")
                .conf("allow_growth:true").events(4).allocs(2).frees(1).deviceMallocs(3).deviceFrees(1)
                .peakReservedBytes(1024).peakAllocatedBytes(512).peakRequestedBytes(500).endReservedBytes(256)
                .ooms(1).allocRetries(2).fragmentation(0.5).requestedFragmentation(0.25).eventsPerSecond(1e6)
                .groundTruth(truth).timeline(TIMELINE).peak(peak).firstOom(oom).stoppedAtOom(true).build();
        ReplayResult positional = new ReplayResult("t.csv", "bfc", "sim:1GiB", "allow_growth:true", 4, 2, 1, 3, 1,
                1024, 512, 500, 256, 1, 2, 0.5, 0.25, 1e6, truth, TIMELINE, null, peak, oom, true);
        assertEquals(positional, built);
    }

    @Test
    void partsNotSetAreZeroOrNone() {
        ReplayResult r = required().build();
        List<Long> counts = List.of(r.events(), r.allocs(), r.frees(), r.deviceMallocs(), r.deviceFrees(),
                r.peakReservedBytes(), r.peakAllocatedBytes(), r.peakRequestedBytes(), r.endReservedBytes(), r.ooms(),
                r.allocRetries());
        assertTrue(counts.stream().allMatch(c -> c == 0), counts::toString);
        assertEquals(0.0, r.fragmentation() + r.requestedFragmentation() + r.eventsPerSecond());
        assertNull(r.groundTruth());
        assertNull(r.peakSnapshot());
        assertNull(r.peak());
        assertNull(r.firstOom());
        assertFalse(r.stoppedAtOom());
    }

    @ParameterizedTest
    @ValueSource(strings = {"trace", "allocator", "device", "conf", "timeline"})
    void aMissingRequiredPartIsRefusedByName(String part) {
        ReplayResult.Builder b = required();
        switch (part) {
            case "trace" -> b.trace(null);
            case "allocator" -> b.allocator(null);
            case "device" -> b.device(null);
            case "conf" -> b.conf(null);
            default -> b.timeline(null);
        }
        IllegalStateException e = assertThrows(IllegalStateException.class, b::build);
        assertEquals("a replay result needs its " + part + ": call " + part + "(...) before build()", e.getMessage());
    }

    @Test
    void partsThatContradictEachOtherAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> required().stoppedAtOom(true).build());
    }

    @Test
    void toBuilderChangesOnlyWhatIsSetAgain() {
        ReplayResult r = required().events(9).ooms(1).firstOom(new OomPoint(9, 1, 2, 3)).stoppedAtOom(true).build();
        assertEquals(r, r.toBuilder().build());
        ReplayResult other = r.toBuilder().conf("expandable_segments:True").build();
        assertNotEquals(r, other);
        assertEquals(r, other.toBuilder().conf("").build());
    }
}
