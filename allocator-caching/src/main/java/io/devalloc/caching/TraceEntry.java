package io.devalloc.caching;

/**
 * One entry of the memory history, as in PyTorch's {@code device_traces}.
 *
 * @param action  what happened
 * @param address the block or segment address; for {@link TraceAction#OOM} the device's free bytes
 * @param size    bytes (see PyTorch's table: the request for alloc and frees, the segment or range for segment
 *                actions, the rounded request for oom, active bytes for snapshot)
 * @param stream  the stream handle
 * @param timeUs  wall-clock time in microseconds since the epoch
 * @param call    the allocator call that recorded it, numbered from 1 since recording was turned on: the entries of
 *                one call (a malloc's cache flush, its new segment and its block, say) share it, as PyTorch's share
 *                that call's context; the snapshot gives them one list of stack frames
 */
public record TraceEntry(TraceAction action, long address, long size, long stream, long timeUs, long call) {
}
