package io.devalloc.api.snapshot;

import java.util.Objects;

/**
 * One block of a segment.
 *
 * @param address       first byte
 * @param size          bytes, as the allocator sized the block
 * @param requestedSize bytes the caller asked for: of an allocated block, and of a pending-free one while its free
 *                      waits (as PyTorch keeps it; 0 from an allocator whose pending blocks are no longer one
 *                      request, such as BFC's timestamped chunks, which split and merge); 0 for free and unmapped
 *                      blocks
 * @param state         allocated, pending free, free or unmapped
 */
public record BlockSnapshot(long address, long size, long requestedSize, BlockState state) {

    public BlockSnapshot {
        if (size <= 0) {
            throw new IllegalArgumentException("block size must be positive, got " + size);
        }
        if (requestedSize < 0 || requestedSize > size) {
            throw new IllegalArgumentException("requested size " + requestedSize + " outside [0, " + size + "]");
        }
        Objects.requireNonNull(state, "state");
    }

    /** One past the last byte. */
    public long end() {
        return address + size;
    }
}
