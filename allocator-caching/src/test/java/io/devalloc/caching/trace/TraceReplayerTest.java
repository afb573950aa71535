package io.devalloc.caching.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.devalloc.caching.trace.CsvTrace.Action;
import io.devalloc.caching.trace.TraceReplayer.RestoredBlock;
import io.devalloc.caching.trace.TraceReplayer.SizeRule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/** The reader, the seeding rules and the replayer on a small hand-written trace (needs no shared traces). */
class TraceReplayerTest {

    private static final long MiB = 1L << 20;
    private static final long A = 0x10_0000_0000L;
    private static final long B = A + 0x4000_0000L;
    private static final long C = A + 0x8000_0000L;
    private static final long D = A + 0xC000_0000L;

    @TempDir
    Path dir;

    private CsvTrace write(String... rows) throws IOException {
        Path file = dir.resolve("t.csv");
        StringBuilder text = new StringBuilder(CsvTrace.HEADER).append('\n');
        for (int i = 0; i < rows.length; i++) {
            text.append(i).append(',').append(rows[i]).append('\n');
        }
        Files.writeString(file, text);
        return CsvTrace.read(file);
    }

    private CsvTrace sample() throws IOException {
        return write(
                "presegment," + A + ",20971520,0,",
                "presegment," + B + ",2097152,0,",
                // Rounds to 5,000,192; the next live block starts 766,976 B later (<= 1 MiB): an unsplit tail.
                "prealloc," + A + ",5000000,0,",
                // Ends at A + 7.5 MiB, then 12.5 MiB free; the first traced alloc in it lands at A + 8 MiB.
                "prealloc," + (A + 5_767_168) + ",2097152,0,",
                "prealloc," + B + ",1000,0,",
                "alloc," + (A + 8 * MiB) + ",4194304,0,1",
                "free_requested," + (A + 8 * MiB) + ",4194304,0,2",
                "free_completed," + (A + 8 * MiB) + ",4194304,0,2",
                "alloc," + (B + 1024) + ",100,0,3",
                "segment_alloc," + C + ",31457280,0,4",
                "alloc," + C + ",31000000,0,4",
                "segment_alloc," + D + ",2097152,7,5",
                "alloc," + D + ",1000,7,5",
                "free_requested," + A + ",5000000,0,6",
                "free_completed," + A + ",5000000,0,6",
                "free_requested," + D + ",1000,7,7",
                "free_completed," + D + ",1000,7,7",
                "snapshot,0,0,0,8");
    }

    @Test
    void readsEveryRow() throws IOException {
        CsvTrace t = sample();
        assertEquals(18, t.rows().size());
        assertEquals(2, t.count(Action.PRESEGMENT));
        assertEquals(3, t.count(Action.PREALLOC));
        assertEquals(new CsvTrace.Row(5, Action.ALLOC, A + 8 * MiB, 4194304, 0, 1), t.rows().get(5));
        assertEquals(-1, t.rows().getFirst().timeUs());
    }

    @Test
    void rejectsAnotherFormat() throws IOException {
        Path file = dir.resolve("bad.csv");
        Files.writeString(file, "a,b,c\n");
        assertThrows(IllegalArgumentException.class, () -> CsvTrace.read(file));
        Files.writeString(file, CsvTrace.HEADER + "\n0,realloc,1,2,0,\n");
        assertThrows(IllegalArgumentException.class, () -> CsvTrace.read(file));
    }

    @Test
    void infersBlockSizesWithPyTorchsSplitRule() throws IOException {
        TraceReplayer replayer = TraceReplayer.of(sample());
        List<RestoredBlock> blocks = replayer.restoredBlocks();
        assertEquals(List.of(SizeRule.TAIL_TO_BOUNDARY, SizeRule.TAIL_TO_FIRST_ALLOC, SizeRule.ROUNDED),
                blocks.stream().map(RestoredBlock::rule).toList());
        assertEquals(List.of(5_767_168L, 2_621_440L, 1024L), blocks.stream().map(RestoredBlock::blockSize).toList());
        assertEquals(22 * MiB, replayer.allocator().memoryStats().get("reserved_bytes.all.current"));
        assertEquals(5_767_168L + 2_621_440L + 1024L,
                replayer.allocator().memoryStats().get("allocated_bytes.all.current"));

        // The rule itself: large pool splits above 1 MiB of remainder, the small pool from 512 B.
        assertEquals(12 * MiB, replayer.inferBlockSize(12 * MiB, 13 * MiB + 512, false));
        assertEquals(13 * MiB, replayer.inferBlockSize(12 * MiB, 13 * MiB, false));
        assertEquals(12 * MiB + MiB / 2, replayer.inferBlockSize(12 * MiB, 12 * MiB + MiB / 2, false));
        assertEquals(1024, replayer.inferBlockSize(1024, 1536, true));
    }

    @Test
    void replaysAndComparesWithTheTrace() throws IOException {
        TraceReplayer replayer = TraceReplayer.of(sample());
        TraceReplayer.Result r = replayer.replay();
        assertEquals(4, r.allocs());
        assertEquals(3, r.frees());
        assertEquals(List.of(30 * MiB, 2 * MiB), r.mallocSizes());
        assertEquals(List.of(10L, 12L), r.mallocSeqs());
        assertEquals(r.traceMallocSeqs(), r.mallocSeqs());
        assertEquals(0, r.placementMismatches(), r.firstMismatch());
        assertEquals(22 * MiB, r.startReserved());
        assertEquals(54 * MiB, r.peakReserved());
        // Live at the end: the 2.5 MiB block, the two small blocks, and 31,000,000 B in a whole 30 MiB block
        // (remainder 457,216 B <= 1 MiB: not split).
        assertEquals(2_621_440L + 1024 + 512 + 30 * MiB, r.endAllocated());
        // New segments come top-down, above the restored ones.
        assertEquals(TraceReplayer.TOP_ADDRESS - 30 * MiB, r.mallocAddresses().getFirst());
    }

    @Test
    void atTheTracesSegmentAddressesTheSegmentsSitWherePyTorchsDid() throws IOException {
        TraceReplayer.Result r = TraceReplayer.of(sample(), io.devalloc.caching.CachingOptions.defaults(), true)
                .replay();
        assertEquals(List.of(C, D), r.mallocAddresses());
        assertEquals(0, r.placementMismatches(), r.firstMismatch());
    }

    @Test
    void missingSharedTracesSkipRatherThanFail() {
        assertThrows(TestAbortedException.class, () -> SharedTraces.require("no/such/trace.csv"));
    }
}
