package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.detect.TraceFormats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The caching allocator replayed through the real engine on real PyTorch traces, block by block: when the device hands
 * out the trace's own segment addresses (its {@code presegment} rows, then its {@code segment_alloc} rows, in order),
 * every block PyTorch allocated must land at PyTorch's address, and the figures must be the recorded allocator's
 * (its summary file for the warm traces). What block placement proves that counts cannot: the same best-fit choices,
 * ties to the lowest address, and splits, every time.
 */
class RealTraceFidelityTest {

    /** A device provider named {@code scripted} that opens an 80 GiB simulator handing out these addresses first. */
    private static DeviceMemoryProvider scripted(List<Long> addresses) {
        return new DeviceMemoryProvider() {
            @Override
            public String name() {
                return "scripted";
            }

            @Override
            public int priority() {
                return 0;
            }

            @Override
            public Availability probe() {
                return Availability.available("test");
            }

            @Override
            public int deviceCount() {
                return 1;
            }

            @Override
            public DeviceMemory open(String argument) {
                return SimulatedDevice.builder().capacity(80L << 30).topAddress(Replayer.WARM_TOP_ADDRESS)
                        .addressSpace(Replayer.WARM_ADDRESS_SPACE).scriptedAddresses(addresses).build();
            }

            @Override
            public String description() {
                return "simulator with the trace's segment addresses";
            }

            @Override
            public String argumentHelp() {
                return "none";
            }
        };
    }

    /** The trace's presegment addresses, then its segment_alloc addresses, in order. */
    private static List<Long> segmentAddresses(Path trace) throws IOException {
        List<Long> pre = new ArrayList<>();
        List<Long> allocs = new ArrayList<>();
        try (TraceReader r = TraceFormats.open(trace)) {
            for (TraceEvent e = r.next(); e != null; e = r.next()) {
                if (e.kind() == TraceEvent.Kind.PRESEGMENT) {
                    pre.add(e.key());
                } else if (e.kind() == TraceEvent.Kind.SEGMENT_ALLOC) {
                    allocs.add(e.key());
                }
            }
        }
        pre.addAll(allocs);
        return pre;
    }

    private record Placement(long blocks, long misplaced, String first) {
    }

    /** Replays with the device scripted to the trace's segment addresses; counts blocks not at PyTorch's address. */
    private static ReplayOutcome replayScripted(Path trace, boolean warm, long[] placement, String[] first)
            throws IOException {
        Replayer replayer = new Replayer(ReplayOptions.defaults().withDevice("scripted").withWarm(warm),
                AllocatorRegistry.load().providers(), List.of(scripted(segmentAddresses(trace))),
                ReplayProgress.NONE);
        replayer.allocationHook((key, ours) -> {
            placement[0]++;
            if (key != ours) {
                if (placement[1]++ == 0) {
                    first[0] = "block 0x" + Long.toHexString(key) + " landed at 0x" + Long.toHexString(ours);
                }
            }
        });
        return replayer.replay(trace.getFileName().toString(), TraceSources.of(trace));
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory.csv", "memory.pickle"})
    void theOptTraceFromEmptyPutsEveryBlockWherePyTorchDid(String file) throws IOException {
        long[] placement = new long[2];
        String[] first = new String[1];
        ReplayOutcome o = replayScripted(SharedTraceReplayTest.opt(file), false, placement, first);
        ReplayResult r = o.result();
        assertAll(
                () -> assertTrue(r.groundTruth().match(), r.groundTruth()::firstDifference),
                () -> assertEquals(61, r.deviceMallocs()),
                () -> assertEquals(1_897_922_560L, r.peakReservedBytes()),
                () -> assertEquals(1_897_922_560L, r.endReservedBytes()),
                () -> assertEquals(7_946, r.allocs()),
                () -> assertEquals(7_549, r.frees()),
                () -> assertEquals(7_946, placement[0]),
                () -> assertEquals(0, placement[1], () -> first[0]));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "medium_128_inference_memory_snapshot", "medium_128_training_memory_snapshot",
        "medium_256_inference_memory_snapshot", "medium_256_training_memory_snapshot",
        "medium_512_inference_memory_snapshot", "medium_512_training_memory_snapshot",
        "medium_1024_inference_memory_snapshot", "medium_1024_training_memory_snapshot"})
    void aWarmTraceSeededWithItsStartStateMatchesItsSummaryBlockForBlock(String name) throws IOException {
        Path csv = SharedTraceReplayTest.require("pt-cs336-medium/" + name + ".csv");
        Path summary = SharedTraceReplayTest.require("pt-cs336-medium/" + name + ".summary.json");
        long[] placement = new long[2];
        String[] first = new String[1];
        ReplayOutcome o = replayScripted(csv, true, placement, first);
        ReplayResult r = o.result();
        assertAll(
                () -> assertEquals(ReplayOutcome.WarmStartKind.RESTORED, o.warmStart()),
                () -> assertEquals(summary(summary, "start_segments"), o.restoredSegments()),
                () -> assertEquals(summary(summary, "prealloc_blocks"), o.restoredBlocks()),
                () -> assertTrue(r.groundTruth().match(), r.groundTruth()::firstDifference),
                () -> assertEquals(summary(summary, "segment_allocs_in_trace"), r.deviceMallocs()),
                () -> assertEquals(0, r.deviceFrees()),
                () -> assertEquals(summary(summary, "peak_reserved_bytes"), r.peakReservedBytes()),
                () -> assertEquals(summary(summary, "end_reserved_bytes"), r.endReservedBytes()),
                () -> assertEquals(0, placement[1], () -> first[0] + " (of " + placement[0] + " blocks)"));
    }

    private static long summary(Path file, String field) throws IOException {
        Matcher m = Pattern.compile("\"" + Pattern.quote(field) + "\"\\s*:\\s*(\\d+)")
                .matcher(Files.readString(file));
        assertTrue(m.find(), field + " in " + file);
        return Long.parseLong(m.group(1));
    }
}
