package io.devalloc.api.observe;

/** Why an allocator tried an allocation again, as {@link AllocatorListener#allocationRetried} is told. */
public enum RetryCause {
    /**
     * The allocator returned cached memory to the device and asked the device again: PyTorch's caching allocator
     * after {@code release_cached_blocks} (the attempts its {@code num_alloc_retries} counts).
     */
    CACHE_RELEASED,
    /** The allocator waited for other threads to free memory: TensorFlow's BFC allocator with {@code allow_retry}. */
    FREES_AWAITED,
    /** An {@link OutOfMemoryHandler} asked for another attempt after an out-of-memory error. */
    HANDLER
}
