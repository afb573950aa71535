package io.devalloc.trace;

import java.util.Objects;

/**
 * One event of an allocation trace, whatever format it came from.
 *
 * <p>Allocations are identified by {@code key}: the address the recorded program saw (PyTorch, RMM, Android) or the
 * allocation's index (valgrind's {@code Free(k)}); a later {@link Kind#FREE} with the same key frees it. Ground-truth
 * events ({@code SEGMENT_*}, {@code OOM}) record what the original allocator did and are compared, never replayed.
 *
 * @param kind   what happened
 * @param key    the allocation's identity in the trace (address or index); the segment address for segment events
 * @param size   bytes requested (allocations), or the segment/range size (segment events); 0 when not applicable
 * @param stream the stream handle (0 = default stream; formats without streams use 0)
 * @param thread the recording thread (0 when the format has none)
 * @param line   the 1-based line (or record) number in the file, for messages
 */
public record TraceEvent(Kind kind, long key, long size, long stream, long thread, long line) {

    /** Kinds of trace event. */
    public enum Kind {
        /** An allocation request (PyTorch {@code alloc}, RMM {@code allocate}, malloc/calloc/memalign). */
        ALLOC,
        /** A free that the allocator completed (PyTorch {@code free_completed}, RMM {@code free}, free). */
        FREE,
        /** PyTorch warm start: a segment that existed when recording began. */
        PRESEGMENT,
        /** PyTorch warm start: a block that was live when recording began. */
        PREALLOC,
        /** Ground truth: the original allocator obtained a segment from the device. */
        SEGMENT_ALLOC,
        /** Ground truth: the original allocator returned a segment to the device. */
        SEGMENT_FREE,
        /** Ground truth: an expandable segment mapped memory. */
        SEGMENT_MAP,
        /** Ground truth: an expandable segment unmapped memory. */
        SEGMENT_UNMAP,
        /** Ground truth: the original allocator ran out of memory. */
        OOM
    }

    public TraceEvent {
        Objects.requireNonNull(kind, "kind");
    }
}
