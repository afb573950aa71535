package io.devalloc.bfc;

import java.util.List;

/**
 * TensorFlow's {@code MemoryDump} proto as a record: the stats, a summary of each of the 21 bins, and every chunk in
 * region and address order.
 *
 * @param allocatorName the allocator's name
 * @param stats         the stats
 * @param bins          21 entries, one per bin, counting all chunks (used or free) by size class
 * @param chunks        every chunk
 */
public record BfcMemoryDump(String allocatorName, BfcStats stats, List<BinSummary> bins, List<ChunkInfo> chunks) {

    public BfcMemoryDump {
        bins = List.copyOf(bins);
        chunks = List.copyOf(chunks);
    }

    /**
     * One bin, counting every chunk whose size falls in its class.
     *
     * @param bin             bin number, 0–20
     * @param binSize         smallest chunk size of the class (256 B · 2^bin)
     * @param totalBytesInUse bytes in used chunks of this class
     * @param totalBytesInBin bytes in all chunks of this class
     * @param chunksInUse     used chunks of this class
     * @param chunksInBin     all chunks of this class
     * @param requestedInUse  bytes callers asked for in the used chunks
     */
    public record BinSummary(int bin, long binSize, long totalBytesInUse, long totalBytesInBin, long chunksInUse,
                             long chunksInBin, long requestedInUse) {
    }

    /**
     * One chunk.
     *
     * @param address       first byte
     * @param size          bytes
     * @param requestedSize bytes last requested (kept after a free, as upstream)
     * @param bin           the bin it sits in, or -1 when in use
     * @param inUse         whether it is allocated
     * @param freedAtCount  the free counter when freed, in timestamped mode (0 otherwise)
     */
    public record ChunkInfo(long address, long size, long requestedSize, int bin, boolean inUse, long freedAtCount) {
    }
}
