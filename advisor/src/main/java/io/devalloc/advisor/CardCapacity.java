package io.devalloc.advisor;

import java.util.Locale;
import java.util.Objects;

/**
 * The capacity of the user's card that the settings are compared on: what PyTorch's caching allocator could hold
 * there (the CUDA context, library workspaces and other processes come on top).
 *
 * @param bytes  the capacity
 * @param source where it comes from
 * @param reason one sentence for the user: how it was found
 */
public record CardCapacity(long bytes, Source source, String reason) {

    /** Where a card capacity comes from. */
    public enum Source {
        /** {@code --capacity}. */
        GIVEN,
        /** The trace's {@code oom} entries: reserved then, plus the device's free bytes they record. */
        OOM,
        /** The allocator's own cache flushes in the trace: the largest capacity on which every one happens. */
        RETRY_FLUSHES,
        /**
         * An {@code oom} entry without the device's free bytes: below what was reserved then plus the device malloc
         * that failed for its request.
         */
        OOM_REQUEST;

        /** The name the JSON gives. */
        public String jsonName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public CardCapacity {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(reason, "reason");
        if (bytes <= 0) {
            throw new IllegalArgumentException("a capacity is positive, got " + bytes);
        }
    }

    /** Whether the trace told it (not {@code --capacity}). */
    public boolean readFromTrace() {
        return source != Source.GIVEN;
    }
}
