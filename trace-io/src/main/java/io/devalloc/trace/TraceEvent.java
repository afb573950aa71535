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
 * @param key    the allocation's identity in the trace (address or index); the segment address for segment events;
 *               for {@link Kind#OOM}, the device's free bytes when the allocation failed (PyTorch's
 *               {@code device_free}), or {@link #FREE_BYTES_UNKNOWN} when the format does not record them
 * @param size   bytes requested (allocations), or the segment/range size (segment events); for {@link Kind#OOM}, the
 *               request that failed (PyTorch records it rounded to its block size), 0 when the format does not
 *               record it (the PyTorch CSV); 0 when not applicable
 * @param stream the stream handle (0 = default stream; formats without streams use 0)
 * @param thread the recording thread (0 when the format has none)
 * @param line   the 1-based line (or record) number in the file, for messages
 * @param flags  what the format tells beyond the columns, 0 when nothing: for {@link Kind#SEGMENT_FREE} and
 *               {@link Kind#SEGMENT_UNMAP} rows, {@link #FLUSH_IN_MALLOC} or {@link #FLUSH_ELSEWHERE}
 */
public record TraceEvent(Kind kind, long key, long size, long stream, long thread, long line, int flags) {

    /**
     * A {@code segment_free} or {@code segment_unmap} row recorded with the same call context (the same stack frames,
     * one object in the snapshot) as the device malloc, map or {@code oom} entry that follows its run: made inside
     * that {@code malloc}, by PyTorch's retry ladder (free cached blocks, retry the device malloc) or its garbage
     * collection, not by the program. Only a PyTorch snapshot pickle with stack frames can tell.
     */
    public static final int FLUSH_IN_MALLOC = 1;
    /**
     * A {@code segment_free} or {@code segment_unmap} row recorded with another call context than the entry that
     * follows its run: the program's {@code torch.cuda.empty_cache()} (or another call that releases the cache).
     */
    public static final int FLUSH_ELSEWHERE = 2;

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

    /** The {@code key} of an {@link Kind#OOM} event whose format does not record the device's free bytes. */
    public static final long FREE_BYTES_UNKNOWN = -1;

    /** An event without flags: what every format but a PyTorch snapshot with stack frames gives. */
    public TraceEvent(Kind kind, long key, long size, long stream, long thread, long line) {
        this(kind, key, size, stream, thread, line, 0);
    }
}
