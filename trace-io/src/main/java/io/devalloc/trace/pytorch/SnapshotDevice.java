package io.devalloc.trace.pytorch;

/**
 * One CUDA device of a PyTorch memory snapshot, as {@link PyTorchSnapshotFile} lists it: a device is in the
 * snapshot when its {@code device_traces} list has an entry or a segment names it (what PyTorch's memory_viz page
 * offers in its device menu).
 *
 * @param index         the device's index ({@code torch.cuda} numbering): {@code device_traces[index]}, and the
 *                      {@code device} of its segments
 * @param traceEntries  the entries of its trace list, every action counted
 * @param events        the entries that are events of a replay ({@code alloc}, {@code free_completed},
 *                      {@code segment_*}, {@code oom}); {@code free_requested}, {@code snapshot} and annotations are
 *                      not
 * @param segments      its segments in the snapshot's end state
 * @param segmentBytes  their total size: what it had reserved when the snapshot was taken
 */
public record SnapshotDevice(int index, long traceEntries, long events, long segments, long segmentBytes) {

    /**
     * Whether the snapshot recorded a history for this device: at least one event after its start state. A device
     * without one has only its end state (the snapshot was taken with {@code include_traces=False}, or before any
     * allocation was recorded on it): nothing was recorded that a replay could reproduce.
     */
    public boolean hasHistory() {
        return events > 0;
    }
}
