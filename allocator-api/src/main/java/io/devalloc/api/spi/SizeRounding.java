package io.devalloc.api.spi;

/**
 * An allocator capability for reports: the size rule by which the allocator rounds a request before it looks for a
 * block (PyTorch's {@code round_size}, TensorFlow's {@code RoundedBytes}, a device's alignment). A block handed out
 * for a request can be larger still, when the allocator did not split the remainder of a larger free block off;
 * with this rule a replay tells the two apart when it explains where memory went at the peak: rounded &minus;
 * requested is rounding, block size &minus; rounded is an unsplit remainder. Reached with
 * {@code allocator.unwrap(SizeRounding.class)}, through any decorator.
 *
 * <p>Pure arithmetic on the allocator's configuration: thread-safe, no allocation.
 */
public interface SizeRounding {

    /**
     * The size a request of {@code requested} bytes is rounded to before a block is chosen for it: at least
     * {@code requested} for every request the allocator accepts.
     *
     * @throws IllegalArgumentException if {@code requested} is negative or larger than the allocator accepts
     */
    long roundedSize(long requested);
}
