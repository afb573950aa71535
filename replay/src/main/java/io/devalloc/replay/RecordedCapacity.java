package io.devalloc.replay;

import java.util.Objects;

/**
 * The memory PyTorch's caching allocator could hold on the device a trace was recorded on, as the trace tells it:
 * the caching allocator's own share of the GPU (the CUDA context, library workspaces and other processes took the
 * rest), not the card's size.
 *
 * @param bytes  the capacity
 * @param source how the trace tells it
 * @param reason one sentence for the user: what the figure is made of
 */
public record RecordedCapacity(long bytes, Source source, String reason) {

    /** How a trace tells the capacity. */
    public enum Source {
        /**
         * An {@code oom} entry: what the allocator had reserved when it failed plus the device's free bytes it
         * recorded ({@code device_free}); the smallest such sum over the trace's {@code oom} entries.
         */
        OOM,
        /**
         * The allocator's own cache flushes (told apart by their stack frames): each was made because a device malloc
         * failed, so the capacity is below what was reserved before the flush plus that malloc; the largest capacity
         * under every such bound.
         */
        RETRY_FLUSHES,
        /**
         * An {@code oom} entry that does not record the device's free bytes: the device malloc for its request
         * failed, so the capacity is below what was reserved then plus that malloc (an upper bound).
         */
        OOM_REQUEST
    }

    public RecordedCapacity {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(reason, "reason");
        if (bytes <= 0) {
            throw new IllegalArgumentException("a capacity is positive, got " + bytes);
        }
    }
}
