package io.devalloc.bfc;

import static io.devalloc.bfc.ChunkTable.NONE;

import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link BfcArena} shows of its state, written out: TensorFlow's {@code DumpMemoryLog} (the memory log),
 * {@code RecordMemoryMap} (the {@link BfcMemoryDump}), {@code RenderOccupancy} (the occupancy map), the snapshot,
 * the log TensorFlow writes when an allocation fails, and the out-of-memory error with its reason. TensorFlow keeps
 * these in {@code BFCAllocator} itself; here they sit apart from the algorithm, as its own logging and dump helpers
 * do, so that the arena reads as the allocator. The text formats are {@link MemoryLogFormat}'s.
 *
 * <p>Every method reads the arena's fields directly and must be called with the arena's lock held; none changes
 * the arena. Logs go to {@code BfcArena}'s logger, as before the split, so that a logging configuration naming it
 * keeps working. Stateless apart from the process-wide count of out-of-memory logs.
 */
final class BfcArenaDumps {

    private static final Logger LOG = LoggerFactory.getLogger(BfcArena.class);
    /** TensorFlow logs at most 10 out-of-memory dumps per process. */
    private static final AtomicInteger OOM_LOGS = new AtomicInteger();
    private static final int MAX_OOM_LOGS = 10;

    private BfcArenaDumps() {
    }

    /** Visits every chunk, region by region in address order. */
    private interface ChunkVisitor {
        void visit(int region, int handle);
    }

    private static void forEachChunk(BfcArena arena, ChunkVisitor visitor) {
        ChunkTable chunks = arena.chunks;
        for (int r = 0; r < arena.regionCount; r++) {
            for (int h = (int) arena.handles.get(arena.regionBase[r], -1); h != NONE; h = chunks.next[h]) {
                visitor.visit(r, h);
            }
        }
    }

    private static BlockState stateOf(BfcArena arena, int h) {
        ChunkTable chunks = arena.chunks;
        if (chunks.inUse(h)) {
            return BlockState.ALLOCATED;
        }
        long count = chunks.freedAtCount[h];
        return count == 0 || count <= arena.safeFrontier ? BlockState.FREE : BlockState.PENDING_FREE;
    }

    /** {@link BfcArena#snapshot()}: one segment per region (pool {@code "region"}). */
    static MemorySnapshot snapshot(BfcArena arena) {
        ChunkTable chunks = arena.chunks;
        int regionCount = arena.regionCount;
        List<SegmentSnapshot> segments = new ArrayList<>(regionCount);
        List<List<BlockSnapshot>> blocks = new ArrayList<>(regionCount);
        for (int r = 0; r < regionCount; r++) {
            blocks.add(new ArrayList<>());
        }
        forEachChunk(arena, (r, h) -> blocks.get(r).add(new BlockSnapshot(chunks.ptr[h], chunks.size[h],
                chunks.inUse(h) ? chunks.requested[h] : 0, stateOf(arena, h))));
        for (int r = 0; r < regionCount; r++) {
            segments.add(new SegmentSnapshot(arena.regionBase[r], arena.regionSize[r], 0, "region", blocks.get(r)));
        }
        return new MemorySnapshot(arena.name(), arena.device().descriptor(), segments, arena.stats(),
                arena.snapshotSettings);
    }

    /** {@link BfcArena#memoryDump()}: TensorFlow's {@code RecordMemoryMap}. */
    static BfcMemoryDump memoryDump(BfcArena arena) {
        ChunkTable chunks = arena.chunks;
        long[][] bin = binTotals(arena);
        List<BfcMemoryDump.BinSummary> summaries = new ArrayList<>(Bins.NUM_BINS);
        for (int b = 0; b < Bins.NUM_BINS; b++) {
            summaries.add(new BfcMemoryDump.BinSummary(b, Bins.binSize(b), bin[b][0], bin[b][1], bin[b][2],
                    bin[b][3], bin[b][4]));
        }
        List<BfcMemoryDump.ChunkInfo> infos = new ArrayList<>(chunks.liveHandles());
        forEachChunk(arena, (r, h) -> infos.add(new BfcMemoryDump.ChunkInfo(chunks.ptr[h], chunks.size[h],
                chunks.requested[h], chunks.bin[h], chunks.inUse(h), chunks.inUse(h) ? 0 : chunks.freedAtCount[h])));
        return new BfcMemoryDump(arena.name(), arena.bfcStats(), summaries, infos);
    }

    /** Per bin class: {bytes in use, bytes, chunks in use, chunks, requested in use}, counting all chunks. */
    private static long[][] binTotals(BfcArena arena) {
        ChunkTable chunks = arena.chunks;
        long[][] t = new long[Bins.NUM_BINS][5];
        forEachChunk(arena, (r, h) -> {
            long[] row = t[Bins.binFor(chunks.size[h])];
            row[1] += chunks.size[h];
            row[3]++;
            if (chunks.inUse(h)) {
                row[0] += chunks.size[h];
                row[2]++;
                row[4] += chunks.requested[h];
            }
        });
        return t;
    }

    /** {@link BfcArena#memoryLog(long)}: TensorFlow's {@code DumpMemoryLog}, line by line. */
    static List<String> memoryLog(BfcArena arena, long forRequest) {
        ChunkTable chunks = arena.chunks;
        Bins bins = arena.bins;
        List<String> out = new ArrayList<>();
        out.add("BFCAllocator dump for " + arena.name());
        long[][] t = binTotals(arena);
        for (int b = 0; b < Bins.NUM_BINS; b++) {
            out.add("Bin (" + Bins.binSize(b) + "): \tTotal Chunks: " + t[b][3] + ", Chunks in use: " + t[b][2] + ". "
                    + MemoryLogFormat.humanBytes(t[b][1]) + " allocated for chunks. "
                    + MemoryLogFormat.humanBytes(t[b][0]) + " in use in bin. " + MemoryLogFormat.humanBytes(t[b][4])
                    + " client-requested in use in bin.");
        }
        long rounded = Math.max(BfcArena.MIN, BfcArena.roundedBytes(Math.max(forRequest, 1)));
        int bin = Bins.binFor(rounded);
        out.add("Bin for " + MemoryLogFormat.humanBytes(rounded) + " was "
                + MemoryLogFormat.humanBytes(Bins.binSize(bin)) + ", Chunk State: ");
        for (int i = bins.first(bin); i != Bins.NO_NODE; i = bins.next(bin, i)) {
            int h = bins.chunkAt(bin, i);
            out.add("  Size: " + MemoryLogFormat.humanBytes(chunks.size[h]) + " | Requested Size: "
                    + MemoryLogFormat.humanBytes(chunks.requested[h]) + " | in_use: 0 | bin_num: " + bin
                    + (arena.options().timestamped() ? " | freed_at_count: " + chunks.freedAtCount[h] : ""));
        }
        Map<Long, long[]> inUseBySize = new TreeMap<>();
        for (int r = 0; r < arena.regionCount; r++) {
            out.add("Next region of size " + arena.regionSize[r]);
            for (int h = (int) arena.handles.get(arena.regionBase[r], -1); h != NONE; h = chunks.next[h]) {
                boolean used = chunks.inUse(h);
                // TensorFlow prints the invalid handle as SIZE_MAX.
                out.add((used ? "InUse" : "Free ") + " at " + Long.toHexString(chunks.ptr[h]) + " of size "
                        + chunks.size[h] + " next " + (chunks.next[h] == NONE ? "18446744073709551615"
                        : String.valueOf(chunks.next[h])));
                if (used) {
                    long[] c = inUseBySize.computeIfAbsent(chunks.size[h], k -> new long[1]);
                    c[0]++;
                }
            }
        }
        out.add("     Summary of in-use Chunks by size: ");
        long total = 0;
        for (Map.Entry<Long, long[]> e : inUseBySize.entrySet()) {
            long sum = e.getKey() * e.getValue()[0];
            total += sum;
            out.add(e.getValue()[0] + " Chunks of size " + e.getKey() + " totalling "
                    + MemoryLogFormat.humanBytes(sum));
        }
        out.add("Sum Total of in-use chunks: " + MemoryLogFormat.humanBytes(total));
        long memoryLimit = arena.memoryLimit;
        long poolBytes = arena.poolBytes;
        out.add("Total bytes in pool: " + poolBytes + " memory_limit_: " + memoryLimit + " available bytes: "
                + (memoryLimit - poolBytes) + " curr_region_allocation_bytes_: " + arena.currRegionAllocationBytes);
        double frag = arena.fragmentationLocked();
        out.add("Stats: \n" + MemoryLogFormat.statsDebugString(memoryLimit, arena.bytesInUse, arena.peakBytesInUse,
                arena.numAllocs, arena.largestAllocSize, poolBytes, arena.peakPoolBytes, arena.largestFreeLocked())
                + "\nFragmentation metric: " + (Double.isNaN(frag) ? "nan" : String.format(Locale.ROOT, "%.6f", frag)));
        return out;
    }

    /** {@link BfcArena#renderOccupancy()}: TensorFlow's {@code RenderOccupancy}, the regions laid end to end. */
    static String renderOccupancy(BfcArena arena) {
        ChunkTable chunks = arena.chunks;
        long total = 0;
        for (int r = 0; r < arena.regionCount; r++) {
            total += arena.regionSize[r];
        }
        if (total == 0) {
            return "<allocator contains no memory>";
        }
        char[] rendered = new char[MemoryLogFormat.OCCUPANCY_RESOLUTION];
        Arrays.fill(rendered, '_');
        long offset = 0;
        for (int r = 0; r < arena.regionCount; r++) {
            long regionBase = arena.regionBase[r];
            for (int h = (int) arena.handles.get(regionBase, -1); h != NONE; h = chunks.next[h]) {
                if (chunks.inUse(h)) {
                    long at = chunks.ptr[h] - regionBase + offset;
                    long wasted = chunks.size[h] - chunks.requested[h];
                    if (wasted > 0) {
                        MemoryLogFormat.paint(rendered, total, at + chunks.requested[h], wasted, 'x');
                    }
                    MemoryLogFormat.paint(rendered, total, at, chunks.requested[h], '*');
                }
            }
            offset += arena.regionSize[r];
        }
        return new String(rendered);
    }

    /**
     * What TensorFlow logs when an allocation fails for good: a warning, the memory log at info level, and the
     * occupancy map; at most 10 times per process, as upstream.
     */
    static void logOutOfMemory(BfcArena arena, long bytes, long rounded) {
        if (OOM_LOGS.getAndIncrement() >= MAX_OOM_LOGS) {
            return;
        }
        LOG.warn("Allocator ({}) ran out of memory trying to allocate {} ({}). If the cause is memory"
                + " fragmentation maybe the environment variable 'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the"
                + " situation. Current allocation summary follows.", arena.name(), MemoryLogFormat.humanBytes(bytes),
                roundedText(rounded));
        if (LOG.isInfoEnabled()) {
            for (String line : memoryLog(arena, bytes)) {
                LOG.info(line);
            }
        }
        LOG.warn(renderOccupancy(arena));
    }

    /**
     * "rounded to N", or, for a request within 255 bytes of {@code Long.MAX_VALUE} whose rounding to a multiple of
     * 256 overflows ({@link BfcArena#roundedBytes} is then negative), that it is too large to round.
     */
    static String roundedText(long rounded) {
        return rounded < 0 ? "too large to round to a multiple of " + BfcArena.MIN + " bytes" : "rounded to " + rounded;
    }

    /**
     * The out-of-memory error for a request of {@code bytes} at alignment {@code align} (at least 256), saying
     * whether the cause is a request above the limit, fragmentation or exhaustion (of the limit or of the device).
     * Builds the error only; the arena counts it.
     */
    static OutOfMemoryException outOfMemory(BfcArena arena, long bytes, long align) {
        long memoryLimit = arena.memoryLimit;
        long poolBytes = arena.poolBytes;
        long bytesInUse = arena.bytesInUse;
        long rounded = BfcArena.roundedBytes(bytes);
        long needed = BfcArena.neededBytes(rounded, align);
        long poolFree = poolBytes - bytesInUse;
        long largestFree = arena.largestFreeLocked();
        long unreserved = memoryLimit - poolBytes;
        long total = arena.device().descriptor().totalBytes();
        MemoryInfo info = arena.isClosed() ? new MemoryInfo(0, total) : arena.device().memoryInfo();
        OutOfMemoryException.Reason reason;
        String why;
        if (needed > memoryLimit || needed > BfcArena.REGION_TARGET_CAP) {
            reason = OutOfMemoryException.Reason.REQUEST_TOO_LARGE;
            why = "the request" + (align > BfcArena.MIN ? " with its alignment of " + align + " bytes" : "")
                    + " is larger than the memory limit of " + MemoryLogFormat.humanBytes(memoryLimit)
                    + (needed > BfcArena.REGION_TARGET_CAP ? " or the 4 EiB an arena region can hold" : "");
        } else if (poolFree >= rounded || (!arena.deviceRefused && memoryLimit - bytesInUse >= rounded)) {
            reason = OutOfMemoryException.Reason.FRAGMENTATION;
            why = "fragmentation: " + MemoryLogFormat.humanBytes(poolFree) + " is free in the arena ("
                    + MemoryLogFormat.humanBytes(poolFree + unreserved) + " counting memory not yet reserved)"
                    + " but the largest free chunk is " + MemoryLogFormat.humanBytes(largestFree)
                    + (unreserved < rounded ? " and only " + MemoryLogFormat.humanBytes(unreserved)
                    + " can still be reserved" : "")
                    + "; try allow_growth:false, garbage_collection:true, or the caching allocator";
        } else if (arena.deviceRefused) {
            reason = OutOfMemoryException.Reason.DEVICE_EXHAUSTED;
            why = "exhaustion: the device refused more memory (" + MemoryLogFormat.humanBytes(info.freeBytes())
                    + " free on it), and the largest free chunk is " + MemoryLogFormat.humanBytes(largestFree);
        } else {
            reason = memoryLimit < total ? OutOfMemoryException.Reason.LIMIT_REACHED
                    : OutOfMemoryException.Reason.DEVICE_EXHAUSTED;
            why = "exhaustion: only " + MemoryLogFormat.humanBytes(memoryLimit - bytesInUse) + " of the "
                    + MemoryLogFormat.humanBytes(memoryLimit) + " limit is not in use; the largest free chunk is "
                    + MemoryLogFormat.humanBytes(largestFree);
        }
        String id = arena.device().descriptor().id();
        String message = "bfc: out of memory on " + id + " trying to allocate " + bytes
                + " bytes (" + MemoryLogFormat.humanBytes(bytes) + ", " + roundedText(rounded) + "): " + why
                + ". In use " + MemoryLogFormat.humanBytes(bytesInUse) + ", arena "
                + MemoryLogFormat.humanBytes(poolBytes)
                + " in " + arena.regionCount + " region(s), limit " + MemoryLogFormat.humanBytes(memoryLimit)
                + ", total free " + MemoryLogFormat.humanBytes(poolFree) + ", largest free chunk "
                + MemoryLogFormat.humanBytes(largestFree) + ".";
        return new OutOfMemoryException(reason, id, bytes, info.freeBytes(), info.totalBytes(), poolBytes, bytesInUse,
                memoryLimit, message);
    }
}
