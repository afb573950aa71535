package io.devalloc.benchmarks;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A peer: the JDK's foreign-memory API with no pooling at all. A pair opens a confined {@link Arena}
 * ({@link Arena#ofConfined()}), allocates one segment of the size in it ({@link Arena#allocate(long)}: the native
 * allocator's {@code malloc} through {@code Unsafe.allocateMemory}, then zeroing the whole segment, as
 * {@code Arena.allocate} always does) and closes the arena (the native {@code free}). So it measures a Java arena
 * object and its session (which escape analysis may remove), {@code malloc}, a memset of the whole size and
 * {@code free}: the cost of native memory with no pool in front of it. For large sizes the memset dominates, and
 * whether glibc serves the block from fresh pages ({@code mmap}) or its heap depends on its mmap threshold (128 KiB
 * at first, raised when such a block is freed). Nothing is shared between threads but the native allocator: each
 * thread opens its own arena for each pair.
 */
final class FfmConfinedPairAllocator implements PairAllocator {

    @Override
    public Pairs forThread(long size, boolean ownStream) {
        if (size < 1) {
            throw new IllegalArgumentException("size must be >= 1, got " + size);
        }
        Pairs pairs = new ArenaPerPair(size);
        pairs.allocateFree();
        return pairs;
    }

    @Override
    public void close() {
        // Every pair closed its arena: nothing can be left.
    }

    /** A thread's pairs: a confined arena per pair, with one segment of {@code size} bytes. */
    private record ArenaPerPair(long size) implements Pairs {

        @Override
        public long allocateFree() {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment segment = arena.allocate(size);
                return segment.address();
            }
        }
    }
}
