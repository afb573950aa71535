package io.devalloc.caching;

/**
 * PyTorch's {@code AllocParams}: what one malloc carries through {@code get_free_block},
 * {@code release_available_cached_blocks} and {@code alloc_block}, the search key (pool, stream, rounded size), the
 * size of a new segment, and {@code alloc_block}'s verdict where upstream keeps its {@code err}: whether
 * {@code throw_on_cudamalloc_oom} refused the request, which skips the rest of the ladder.
 *
 * <p>One instance per arena, reused by every malloc (no allocation on the hot path), read and written under the
 * arena's lock only. A malloc sets it with {@link #reset} before each search, since anything that runs under the
 * lock in between (a free-memory callback) may allocate with it too.
 */
final class AllocParams {

    /** The pool searched and grown: small or large. */
    BlockPool pool;
    /** The stream's handle: blocks are only reused on the stream that allocated them. */
    long stream;
    /** The request rounded by {@code round_size}: the block size searched for. */
    long size;
    /** The bytes of a new segment for it ({@code get_allocation_size}). */
    long allocSize;
    /** Whether {@code throw_on_cudamalloc_oom} refused a new segment (upstream's {@code err}). */
    boolean rejected;
    /** {@code total_allocated_memory} when it refused, for the rejection observers. */
    long totalAtRejection;

    /** Starts a search for a block of {@code size} bytes of {@code stream} in {@code pool}, nothing refused. */
    AllocParams reset(BlockPool pool, long stream, long size, long allocSize) {
        this.pool = pool;
        this.stream = stream;
        this.size = size;
        this.allocSize = allocSize;
        this.rejected = false;
        this.totalAtRejection = 0;
        return this;
    }

    /** Records a refusal by {@code throw_on_cudamalloc_oom} with {@code totalAllocated} bytes held. */
    void reject(long totalAllocated) {
        rejected = true;
        totalAtRejection = totalAllocated;
    }
}
