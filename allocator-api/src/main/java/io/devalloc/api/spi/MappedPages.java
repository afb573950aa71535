package io.devalloc.api.spi;

/**
 * An allocator capability for reports: whether memory at an address belongs to a segment the allocator maps in
 * pages of its own (PyTorch's expandable segments, which map whole pages of 2 MiB in the small pool and
 * {@code large_segment_size} in the large one), and the page size there. A mapped range then ends on a page
 * boundary, and the free bytes between its last used byte and that boundary are what page granularity costs; a
 * replay reports them apart from other free memory. Reached with {@code allocator.unwrap(MappedPages.class)},
 * through any decorator.
 *
 * <p>As thread-safe as the allocator.
 */
public interface MappedPages {

    /**
     * The page size in which the memory at {@code address} is mapped, when it lies in a mapped range of a segment the
     * allocator maps in pages; 0 when it lies in a segment made by one device malloc, or in no segment of this
     * allocator.
     */
    long mappedPageBytes(long address);
}
