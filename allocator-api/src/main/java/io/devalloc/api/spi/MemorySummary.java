package io.devalloc.api.spi;

/**
 * An allocator capability: a text table of its memory, in the allocator's own terms. {@code caching} has one:
 * PyTorch's {@code torch.cuda.memory_summary()}. Reached with {@code allocator.unwrap(MemorySummary.class)},
 * through any decorator; the JMX bean's {@code memorySummary} operation shows it, and for an allocator without
 * one shows a table of {@link io.devalloc.api.DeviceAllocator#stats()} and
 * {@link io.devalloc.api.DeviceAllocator#memoryUsage()} instead.
 */
public interface MemorySummary {

    /**
     * The summary, as the allocator's upstream prints it.
     *
     * @param abbreviated true for the short form (PyTorch's {@code abbreviated=True}: totals only, no per-pool rows)
     */
    String memorySummary(boolean abbreviated);
}
