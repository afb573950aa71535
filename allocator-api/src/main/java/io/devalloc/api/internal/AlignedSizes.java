package io.devalloc.api.internal;

import io.devalloc.api.units.ByteSize;

/** The size rule of allocators that round every request up to one alignment (direct's device alignment, bfc's 256). */
public final class AlignedSizes {

    private AlignedSizes() {
    }

    /**
     * {@code requested} rounded up to a multiple of {@code alignment} (a power of two), what
     * {@link io.devalloc.api.spi.SizeRounding#roundedSize} answers for such an allocator.
     *
     * @throws IllegalArgumentException if {@code requested} is negative or rounds beyond {@link Long#MAX_VALUE}
     */
    public static long roundedSize(long requested, long alignment) {
        long rounded = requested < 0 ? -1 : ByteSize.roundUp(requested, alignment);
        if (rounded < 0) {
            throw new IllegalArgumentException("size must be in [0, " + (Long.MAX_VALUE - alignment + 1) + "], got "
                    + requested);
        }
        return rounded;
    }
}
