package io.devalloc.caching.host;

import java.util.Arrays;

/**
 * One pinned block (PyTorch's {@code HostBlock}): a whole device allocation, or one piece of the reserve segment.
 * Created only on a cache miss, then reused for the life of the allocator.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class Block {

    /** Handed out to the caller. */
    static final int ALLOCATED = 0;
    /** Freed by the caller, waiting for the events of the streams it was used on. */
    static final int PENDING = 1;
    /** On its free list, ready to be handed out again. */
    static final int FREE = 2;

    private static final long[] NO_STREAMS = new long[0];

    final int handle;
    final long ptr;
    /**
     * The block's size: the rounded request that created it (or the request itself when it was above a
     * {@code pinned_max_*} limit). What PyTorch's stats count, and at least every request it serves.
     */
    final long size;
    /** Device bytes the block occupies: {@code size}, or for a reserve piece its 4 KiB-rounded extent. */
    final long extent;
    final boolean reserve;
    /** {@link #ALLOCATED}, {@link #PENDING} or {@link #FREE}. */
    int state;
    long requested;
    long allocationId;
    int eventCount;
    /** The streams recorded for the block while it is allocated (the first {@link #streamCount}). */
    long[] streams = NO_STREAMS;
    int streamCount;

    Block(int handle, long ptr, long size, long extent, boolean reserve) {
        this.handle = handle;
        this.ptr = ptr;
        this.size = size;
        this.extent = extent;
        this.reserve = reserve;
    }

    /** Records {@code stream}; false when it was recorded already. */
    boolean addStream(long stream) {
        for (int i = 0; i < streamCount; i++) {
            if (streams[i] == stream) {
                return false;
            }
        }
        if (streamCount == streams.length) {
            streams = Arrays.copyOf(streams, Math.max(2, streamCount * 2));
        }
        streams[streamCount++] = stream;
        return true;
    }
}
