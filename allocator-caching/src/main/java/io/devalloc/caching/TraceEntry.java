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
 */
public record TraceEntry(TraceAction action, long address, long size, long stream, long timeUs) {
}
