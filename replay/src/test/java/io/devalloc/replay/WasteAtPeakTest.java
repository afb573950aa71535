package io.devalloc.replay;

import static io.devalloc.replay.TestTraces.MiB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.TraceFormat;
import java.io.IOException;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The waste at the peak by cause: each cause where it arises, and the causes adding up to reserved &minus; requested
 * bytes at the peak under every allocator and several configurations.
 */
class WasteAtPeakTest {

    private static ReplayResult replay(String allocator, String conf, TestTraces.Builder trace) throws IOException {
        return new Replayer(ReplayOptions.defaults().withAllocator(allocator).withConf(conf).withDevice("sim:1GiB"))
                .replay("t", trace.source()).result();
    }

    static Stream<Arguments> configurations() {
        return Stream.of(
                Arguments.of("direct", "", false),
                Arguments.of("bfc", "", false),
                Arguments.of("bfc", "allow_growth:true,garbage_collection:true", false),
                Arguments.of("caching", "", false),
                Arguments.of("caching", "", true),
                Arguments.of("caching", "expandable_segments:True", false),
                Arguments.of("caching", "expandable_segments:True", true),
                Arguments.of("caching", "max_split_size_mb:128,roundup_power2_divisions:4", false),
                Arguments.of("caching", "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]", false),
                Arguments.of("caching", "expandable_segments:True,roundup_power2_divisions:8", false),
                Arguments.of("caching", "garbage_collection_threshold:0.6,per_process_memory_fraction:0.05", false),
                Arguments.of("caching", "max_split_size_mb:20", false),
                Arguments.of("caching-host", "", false),
                Arguments.of("caching-host", "pinned_use_background_threads:False", false));
    }

    @ParameterizedTest(name = "{0}:{1} warm={2}")
    @MethodSource("configurations")
    void theCausesAddUpToReservedMinusRequestedAtThePeakOfTheOptTrace(String allocator, String conf, boolean warm)
            throws IOException {
        Path file = SharedTraceReplayTest.opt("memory.csv");
        ReplayResult r = new Replayer(ReplayOptions.defaults().withAllocator(allocator).withConf(conf).withWarm(warm)
                .withEmptyCacheAtSegmentFree(warm)).replay("memory.csv", TraceSources.of(file)).result();
        ReplayResult.Peak peak = r.peak();
        WasteAtPeak w = peak.waste();
        assertNotNull(w);
        assertEquals(peak.reservedBytes() - peak.requestedBytes(), w.total(), w.toString());
        assertEquals(r.peakSnapshot().stats().reservedBytes() - r.peakSnapshot().stats().requestedBytes(), w.total());
        assertTrue(w.rounding() >= 0 && w.unsplitRemainder() >= 0 && w.freeInUsedSegments() >= 0
                && w.freeSegments() >= 0 && w.unmappedPageTails() >= 0, w.toString());
        // Allocated − requested is rounding and unsplit remainders.
        assertEquals(peak.allocatedBytes() - peak.requestedBytes(), w.rounding() + w.unsplitRemainder(), w.toString());
        if (!conf.contains("expandable")) {
            assertEquals(0, w.unmappedPageTails());
        }
    }

    @Test
    void roundingAndTheFreeRestOfAUsedSegment() throws IOException {
        // 5 MiB + 1 B rounds to 5 MiB + 512 B and is split off a new 20 MiB segment.
        WasteAtPeak w = replay("caching", "", TestTraces.pytorch().alloc(1, 5 * MiB + 1).free(1)).peak().waste();
        assertEquals(new WasteAtPeak(511, 0, 15 * MiB - 512, 0, 0), w);
    }

    @Test
    void theUnsplitRemainderOfALargeBlock() throws IOException {
        // 19.5 MiB gets a 20 MiB segment; the 512 KiB left is at most 1 MiB, so PyTorch does not split it off.
        WasteAtPeak w = replay("caching", "", TestTraces.pytorch().alloc(1, 19 * MiB + MiB / 2).free(1)).peak()
                .waste();
        assertEquals(new WasteAtPeak(0, MiB / 2, 0, 0, 0), w);
    }

    @Test
    void aWholeCachedSegmentAtThePeak() throws IOException {
        // The 30 MiB segment stays cached while a 40 MiB one is made: 70 MiB reserved, 40 MiB requested.
        ReplayResult r = replay("caching", "", TestTraces.pytorch().alloc(1, 30 * MiB).free(1).alloc(2, 40 * MiB)
                .free(2));
        assertEquals(70 * MiB, r.peak().reservedBytes());
        assertEquals(new WasteAtPeak(0, 0, 0, 30 * MiB, 0), r.peak().waste());
    }

    @Test
    void theUnmappedPageTailOfAnExpandableSegment() throws IOException {
        // Large pool: one 20 MiB page mapped for 5 MiB + 512 B; small pool: one 2 MiB page for 1,024 B.
        WasteAtPeak large = replay("caching", "expandable_segments:True",
                TestTraces.pytorch().alloc(1, 5 * MiB + 1).free(1)).peak().waste();
        assertEquals(new WasteAtPeak(511, 0, 0, 0, 15 * MiB - 512), large);
        WasteAtPeak small = replay("caching", "expandable_segments:True",
                TestTraces.pytorch().alloc(1, 1000).free(1)).peak().waste();
        assertEquals(new WasteAtPeak(24, 0, 0, 0, 2 * MiB - 1024), small);
        // 21.5 MiB maps two pages (40 MiB) of one range: the tail is what the second page holds past the last block.
        WasteAtPeak two = replay("caching", "expandable_segments:True", TestTraces.pytorch()
                .alloc(1, 20 * MiB).alloc(2, MiB + MiB / 2).free(1).free(2)).peak().waste();
        assertEquals(20 * MiB - MiB - MiB / 2, two.unmappedPageTails(), two.toString());
    }

    @Test
    void directAndBfcRoundToTheirOwnRule() throws IOException {
        // direct: the device's 512 B alignment; bfc: 256 B.
        WasteAtPeak direct = replay("direct", "", TestTraces.of(TraceFormat.RMM_CSV).alloc(1, 1000).free(1)).peak()
                .waste();
        assertEquals(new WasteAtPeak(24, 0, 0, 0, 0), direct);
        ReplayResult bfc = replay("bfc", "allow_growth:true", TestTraces.pytorch().alloc(1, 1000).free(1));
        WasteAtPeak w = bfc.peak().waste();
        assertEquals(24, w.rounding());
        assertEquals(0, w.unsplitRemainder());
        assertEquals(bfc.peak().reservedBytes() - 1024, w.freeInUsedSegments());
    }
}
