package io.devalloc.api.internal;

import io.devalloc.api.units.ByteSize;
import java.util.BitSet;

/**
 * The bookkeeping of a virtual-memory reservation that the {@code host} and {@code sim} devices share: which of its
 * granules are mapped, and where each piece mapped as one starts, as two bit sets indexed by granule. The port's
 * rule that an unmap covers whole pieces (CUDA unmaps a {@code cuMemCreate} handle whole) is checked here, so both
 * devices refuse the same unmaps with the same message.
 *
 * <p>Stateless; the caller's lock guards the bit sets.
 */
public final class MappedPieces {

    private MappedPieces() {
    }

    /** Marks granules {@code [from, to)} mapped, in pieces of {@code pieceGranules} granules each. */
    public static void map(BitSet mapped, BitSet pieceStarts, int from, int to, int pieceGranules) {
        mapped.set(from, to);
        for (int i = from; i < to; i += pieceGranules) {
            pieceStarts.set(i);
        }
    }

    /**
     * Throws unless the wholly mapped granules {@code [from, to)}, the range {@code [address, +bytes)} of a
     * reservation at {@code base}, start and end on piece boundaries.
     *
     * @param granularity the bytes of one granule
     * @param device      the device, as the message names it
     * @throws IllegalArgumentException naming the piece the unmap would cut
     */
    public static void requireWholePieces(BitSet mapped, BitSet pieceStarts, int from, int to, long address,
                                          long bytes, long base, long granularity, Object device) {
        int cut = !pieceStarts.get(from) ? from
                : mapped.get(to) && !pieceStarts.get(to) ? to : -1;
        if (cut >= 0) {
            int pieceStart = pieceStarts.previousSetBit(cut);
            int next = pieceStarts.nextSetBit(cut);
            int pieceEnd = Math.min(mapped.nextClearBit(cut), next < 0 ? Integer.MAX_VALUE : next);
            throw new IllegalArgumentException("[" + ByteSize.hex(address) + ", +" + bytes + " bytes) cuts the"
                    + " piece [" + ByteSize.hex(base + pieceStart * granularity) + ", +"
                    + (pieceEnd - pieceStart) * granularity + " bytes) mapped as one on " + device
                    + "; unmap whole pieces");
        }
    }

    /** Marks granules {@code [from, to)}, whole pieces, unmapped. */
    public static void unmap(BitSet mapped, BitSet pieceStarts, int from, int to) {
        mapped.clear(from, to);
        pieceStarts.clear(from, to);
    }
}
