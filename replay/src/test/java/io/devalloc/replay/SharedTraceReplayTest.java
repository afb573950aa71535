package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The replayer, through the project's trace readers, on real PyTorch traces: the OPT trace the project ships, and
 * those of {@code ../shared/traces} (skipped when they are absent): the same figures as PyTorch's allocator, cold
 * and warm, from the CSV and the pickle.
 */
class SharedTraceReplayTest {

    static Path require(String relative) {
        String dir = System.getProperty("devalloc.shared.dir");
        assumeTrue(dir != null && !dir.isBlank(), "system property devalloc.shared.dir is not set");
        Path file = Path.of(dir, "traces").resolve(relative).normalize();
        assumeTrue(Files.isRegularFile(file), () -> file + " is absent: the shared traces are not checked out here");
        return file;
    }

    /**
     * The OPT trace the project ships ({@code traces/} at the repository root, the tests' working directory being
     * {@code examples/}), else the shared one.
     */
    static Path opt(String file) {
        Path shipped = Path.of("..", "traces", "pt-opt-zeroth-order-fl", file);
        return Files.isRegularFile(shipped) ? shipped : require("pt-opt-zeroth-order-fl/" + file);
    }

    static long summary(Path file, String field) throws IOException {
        Matcher m = Pattern.compile("\"" + Pattern.quote(field) + "\"\\s*:\\s*(\\d+)").matcher(Files.readString(file));
        assertTrue(m.find(), field + " in " + file);
        return Long.parseLong(m.group(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory.csv", "memory.pickle"})
    void theOptTraceFromAnEmptyAllocatorMatchesPyTorch(String file) throws IOException {
        Path trace = opt(file);
        ReplayOutcome o = new Replayer(ReplayOptions.defaults()).replay(file, TraceSources.of(trace));
        ReplayResult r = o.result();
        assertAll(
                () -> assertTrue(r.groundTruth().match(), r.groundTruth()::firstDifference),
                () -> assertEquals(61, r.deviceMallocs()),
                () -> assertEquals(61, r.groundTruth().deviceMallocs()),
                () -> assertEquals(1_897_922_560L, r.peakReservedBytes()),
                () -> assertEquals(7_946, r.allocs()),
                () -> assertEquals(0, o.unknownFrees()),
                () -> assertEquals(0, r.ooms()));
    }

    /**
     * PyTorch's expandable segments map the whole run of pages a block needs in one call: from an empty allocator
     * the OPT trace makes 52 device maps (not one per 20 MiB page), with the same reserved peak as before that rule.
     */
    @ParameterizedTest
    @ValueSource(strings = {"memory.csv", "memory.pickle"})
    void theOptTraceWithExpandableSegmentsMakesFiftyTwoMaps(String file) throws IOException {
        ReplayOutcome o = new Replayer(ReplayOptions.defaults().withConf("expandable_segments:True"))
                .replay(file, TraceSources.of(opt(file)));
        ReplayResult r = o.result();
        assertAll(
                () -> assertEquals(52, r.deviceMallocs()),
                () -> assertEquals(0, r.deviceFrees()),
                () -> assertEquals(1_809_842_176L, r.peakReservedBytes()),
                () -> assertEquals(7_946, r.allocs()));
    }

    /**
     * TensorFlow's GPU BFC runs over plain device mallocs (its VMM sub-allocator is compiled out), so regions never
     * coalesce: with growth and garbage collection the OPT trace takes 4 regions, a 2 GiB pool, and peaks at
     * 1,916,104,448 B of chunks in use, TensorFlow's arithmetic.
     */
    @Test
    void theOptTraceThroughBfcWithGrowthFollowsTensorFlowsDefaultSubAllocator() throws IOException {
        ReplayOutcome o = new Replayer(ReplayOptions.defaults().withAllocator("bfc")
                .withConf("allow_growth:true,garbage_collection:true")).replay("memory.csv",
                TraceSources.of(opt("memory.csv")));
        ReplayResult r = o.result();
        assertAll(
                () -> assertEquals(4, r.deviceMallocs()),
                () -> assertEquals(2_147_483_648L, r.peakReservedBytes()),
                () -> assertEquals(1_916_104_448L, r.peakAllocatedBytes()),
                () -> assertEquals(1_783_664_516L, r.peakRequestedBytes()));
    }

    @Test
    void theOptTraceReplaysThroughEveryBuiltInAllocator() throws IOException {
        Path csv = opt("memory.csv");
        for (String allocator : new String[] {"direct", "bfc", "caching"}) {
            ReplayOutcome o = new Replayer(ReplayOptions.defaults().withAllocator(allocator))
                    .replay("memory.csv", TraceSources.of(csv));
            assertEquals(7_946, o.result().allocs(), allocator);
            assertEquals(0, o.unknownFrees(), allocator);
            assertTrue(o.result().peakReservedBytes() >= o.result().peakAllocatedBytes(), allocator);
        }
    }

    /**
     * One pass (the default) and two passes (what {@code --warm} needs; the OPT trace starts empty, so nothing is
     * restored) give the same figures and the same ground-truth comparison, whether it matches or not, for every
     * built-in allocator, fragmentation included; only the timeline's sampling and the moment of the peak snapshot
     * may differ.
     */
    @ParameterizedTest
    @ValueSource(strings = {"caching", "caching|expandable_segments:True", "caching|max_split_size_mb:64",
        "bfc", "bfc|allow_growth:false", "direct"})
    void onePassAndTwoPassesAgree(String config) throws IOException {
        String[] parts = config.split("\\|");
        ReplayOptions options = ReplayOptions.defaults().withAllocator(parts[0]).withDevice("sim:80GiB")
                .withConf(parts.length > 1 ? parts[1] : "");
        Path csv = opt("memory.csv");
        ReplayResult one = new Replayer(options).replay("memory.csv", TraceSources.of(csv)).result();
        ReplayResult two = new Replayer(options.withWarm(true)).replay("memory.csv", TraceSources.of(csv)).result();
        assertAll(
                () -> assertEquals(two.groundTruth(), one.groundTruth()),
                () -> assertEquals(two.events(), one.events()),
                () -> assertEquals(two.allocs(), one.allocs()),
                () -> assertEquals(two.frees(), one.frees()),
                () -> assertEquals(two.deviceMallocs(), one.deviceMallocs()),
                () -> assertEquals(two.deviceFrees(), one.deviceFrees()),
                () -> assertEquals(two.peakReservedBytes(), one.peakReservedBytes()),
                () -> assertEquals(two.peakAllocatedBytes(), one.peakAllocatedBytes()),
                () -> assertEquals(two.peakRequestedBytes(), one.peakRequestedBytes()),
                () -> assertEquals(two.endReservedBytes(), one.endReservedBytes()),
                () -> assertEquals(two.ooms(), one.ooms()),
                () -> assertEquals(two.fragmentation(), one.fragmentation()),
                () -> assertEquals(two.requestedFragmentation(), one.requestedFragmentation()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"medium_128_inference", "medium_128_training", "medium_256_inference",
            "medium_256_training", "medium_512_inference", "medium_512_training", "medium_1024_inference",
            "medium_1024_training"})
    void eachWarmTraceSeededWithItsStartingStateMatchesPyTorch(String name) throws IOException {
        Path csv = require("pt-cs336-medium/" + name + "_memory_snapshot.csv");
        Path summary = require("pt-cs336-medium/" + name + "_memory_snapshot.summary.json");
        ReplayOutcome o = new Replayer(ReplayOptions.defaults().withWarm(true))
                .replay(name, TraceSources.of(csv));
        ReplayResult r = o.result();
        assertAll(
                () -> assertEquals(ReplayOutcome.WarmStartKind.RESTORED, o.warmStart()),
                () -> assertTrue(r.groundTruth().match(), r.groundTruth()::firstDifference),
                () -> assertEquals(summary(summary, "prealloc_blocks"), o.restoredBlocks()),
                () -> assertEquals(summary(summary, "segment_allocs_in_trace"), r.deviceMallocs()),
                () -> assertEquals(summary(summary, "peak_reserved_bytes"), r.peakReservedBytes()),
                () -> assertEquals(summary(summary, "start_reserved_bytes"), r.timeline().reserved()[0]),
                () -> assertEquals(summary(summary, "end_reserved_bytes"), r.endReservedBytes()),
                () -> assertEquals(summary(summary, "end_allocated_bytes"),
                        r.timeline().allocated()[r.timeline().size() - 1]),
                () -> assertEquals(0, o.unknownFrees()),
                () -> assertEquals(0, r.ooms()));
    }
}
