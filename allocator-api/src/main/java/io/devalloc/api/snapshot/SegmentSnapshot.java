package io.devalloc.api.snapshot;

import java.util.List;
import java.util.Objects;

/**
 * A contiguous range the allocator obtained from the device (a cudaMalloc'd segment, a BFC region, or an
 * expandable segment's reservation), tiled exactly by its blocks in address order.
 *
 * @param address first byte
 * @param size    bytes
 * @param stream  the stream handle the segment belongs to (0 when the allocator does not keep memory per stream)
 * @param pool    the pool it belongs to, e.g. {@code "large"}, {@code "small"}, {@code "region"}, {@code "direct"}
 * @param blocks  the blocks, in address order, covering {@code [address, address + size)} with no gap or overlap
 */
public record SegmentSnapshot(long address, long size, long stream, String pool, List<BlockSnapshot> blocks) {

    public SegmentSnapshot {
        Objects.requireNonNull(pool, "pool");
        blocks = List.copyOf(blocks);
        if (size <= 0) {
            throw new IllegalArgumentException("segment size must be positive, got " + size);
        }
    }

    /** One past the last byte. */
    public long end() {
        return address + size;
    }

    /** Bytes in blocks of the given state. */
    public long bytesIn(BlockState state) {
        long sum = 0;
        for (BlockSnapshot b : blocks) {
            if (b.state() == state) {
                sum += b.size();
            }
        }
        return sum;
    }

    /**
     * Checks that the blocks tile the segment exactly.
     *
     * @throws IllegalStateException naming the first gap or overlap
     */
    public void checkTiling() {
        long cursor = address;
        for (BlockSnapshot b : blocks) {
            if (b.address() != cursor) {
                throw new IllegalStateException("segment 0x" + Long.toHexString(address) + ": block at 0x"
                        + Long.toHexString(b.address()) + " but the previous block ended at 0x"
                        + Long.toHexString(cursor));
            }
            cursor = b.end();
        }
        if (cursor != end()) {
            throw new IllegalStateException("segment 0x" + Long.toHexString(address) + ": blocks end at 0x"
                    + Long.toHexString(cursor) + " but the segment ends at 0x" + Long.toHexString(end()));
        }
    }
}
