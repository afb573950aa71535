package io.devalloc.api.snapshot;

/** The state of a block in a {@link SegmentSnapshot}. Wire names follow PyTorch's memory snapshot. */
public enum BlockState {
    /** Handed out to a caller and not yet freed. */
    ALLOCATED("active_allocated"),
    /** Freed by the caller, but not reusable yet because a stream may still use it (events pending). */
    PENDING_FREE("active_pending_free"),
    /** Free and cached, ready for reuse. */
    FREE("inactive"),
    /** Address space with no memory mapped behind it (expandable segments, virtual memory). */
    UNMAPPED("unmapped");

    private final String wireName;

    BlockState(String wireName) {
        this.wireName = wireName;
    }

    /** The name PyTorch's {@code torch.cuda.memory._snapshot()} uses for this state. */
    public String wireName() {
        return wireName;
    }
}
