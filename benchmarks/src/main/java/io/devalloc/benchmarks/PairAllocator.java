package io.devalloc.benchmarks;

import java.util.List;

/**
 * An allocator that the cached allocate+free benchmarks measure: one of devalloc's over the simulated device, or a
 * peer (Netty's pooled and adaptive allocators, a confined FFM arena). One instance is shared by every thread of a
 * trial; each thread asks it for its own {@link Pairs} (its own size and, for devalloc's allocators, its own stream),
 * so that the measured body is one monomorphic call with no boxing.
 */
sealed interface PairAllocator permits DevallocPairAllocator, NettyPairAllocator, FfmConfinedPairAllocator {

    /** Every allocator name that {@link #open} accepts, devalloc's first. */
    List<String> NAMES = List.of("bfc", "caching", "direct", "netty-pooled", "netty-adaptive", "ffm-confined");

    /**
     * The allocator called {@code name}; throws {@link IllegalArgumentException} naming the known ones otherwise.
     */
    static PairAllocator open(String name) {
        return switch (name) {
            case "bfc", "caching", "direct" -> new DevallocPairAllocator(name);
            case "netty-pooled", "netty-adaptive" -> new NettyPairAllocator(name);
            case "ffm-confined" -> new FfmConfinedPairAllocator();
            default -> throw new IllegalArgumentException("unknown allocator '" + name + "' " + NAMES);
        };
    }

    /**
     * Allocate+free pairs of {@code size} bytes for the calling thread. {@code ownStream}: for devalloc's
     * allocators, on a stream created for this thread instead of the default stream (peers have no streams and
     * ignore it). Makes one pair before returning, so that the allocator has cached the size.
     */
    Pairs forThread(long size, boolean ownStream);

    /**
     * Checks that no allocation is left live, where the allocator can tell, and releases everything, the threads'
     * streams included. Call it once, after every thread has stopped.
     */
    void close();

    /** One thread's allocate+free pairs of one size. */
    interface Pairs {

        /**
         * Allocates the size and frees it at once. Returns the allocation's address (or another value that depends
         * on the allocation) so that the JIT cannot drop it.
         */
        long allocateFree();
    }
}
