package io.devalloc.caching;

/** The actions of PyTorch's memory history, with their wire names. */
public enum TraceAction {
    ALLOC("alloc"),
    FREE_REQUESTED("free_requested"),
    FREE_COMPLETED("free_completed"),
    SEGMENT_ALLOC("segment_alloc"),
    SEGMENT_FREE("segment_free"),
    SEGMENT_MAP("segment_map"),
    SEGMENT_UNMAP("segment_unmap"),
    SNAPSHOT("snapshot"),
    OOM("oom");

    private final String wireName;

    TraceAction(String wireName) {
        this.wireName = wireName;
    }

    /** The name in PyTorch's snapshot ({@code device_traces[..][..]["action"]}). */
    public String wireName() {
        return wireName;
    }
}
