package io.devalloc.trace;

import io.devalloc.trace.pytorch.PyTorchCsvRecorder;
import io.devalloc.trace.record.RecordingAllocator;
import io.devalloc.trace.rmm.RmmCsvRecorder;
import java.io.Closeable;
import java.io.IOException;

/**
 * Where a {@link RecordingAllocator} writes the calls it sees: one method per kind of event, all in primitives.
 * Implementations turn them into a trace format: {@link RmmCsvRecorder} (RMM's replay log) and
 * {@link PyTorchCsvRecorder} (the project's CSV form of a PyTorch snapshot); write your own for anything else.
 *
 * <p><b>Threads.</b> A recorder need not be thread-safe: {@link RecordingAllocator} calls it from one thread at a
 * time (under its recording lock), in the order the events happened on the allocator, with non-decreasing
 * timestamps. A recorder used on its own must be guarded by its caller.
 *
 * <p><b>Values.</b> {@code threadId} is {@link Thread#threadId()} of the calling thread; {@code epochMicros} is the
 * wall-clock time in microseconds since 1970-01-01T00:00:00Z; {@code stream} is a
 * {@link io.devalloc.api.device.DeviceStream#handle() stream handle} (0 = the default stream); sizes are the bytes
 * the caller asked for, not the allocator's rounded block size.
 *
 * <p><b>Errors.</b> An {@link IOException} stops the recording (the allocator keeps working, unrecorded) and is
 * rethrown by {@link RecordingAllocator#close()}.
 */
public interface TraceRecorder extends Closeable {

    /** {@code malloc(size, stream)} returned {@code address} (never 0: zero-byte requests are not recorded). */
    void allocate(long threadId, long epochMicros, long address, long size, long stream) throws IOException;

    /**
     * {@code malloc(size, stream)} failed with {@code cause}: an {@link io.devalloc.api.error.OutOfMemoryException}
     * (which carries the device's free bytes) or another {@link io.devalloc.api.error.DevallocException} such as a
     * device error. Invalid arguments and calls on a closed allocator are not recorded.
     */
    void allocateFailure(long threadId, long epochMicros, long size, long stream, RuntimeException cause)
            throws IOException;

    /**
     * The allocation at {@code address} was freed. {@code size} and {@code stream} are those of its
     * {@link #allocate}; both are 0 for an allocation made before recording began.
     */
    void free(long threadId, long epochMicros, long address, long size, long stream) throws IOException;

    /**
     * {@code recordStream(address, usedOn)}: the allocation at {@code address} (of {@code size} bytes, allocated on
     * {@code stream}) is also used on stream {@code usedOn}. Neither RMM's log nor the PyTorch CSV has a row for it,
     * so the built-in recorders ignore it; this default does too.
     */
    default void recordStream(long threadId, long epochMicros, long address, long size, long stream, long usedOn)
            throws IOException {
    }

    /** Writes buffered rows to the underlying file or stream. */
    void flush() throws IOException;

    /** Flushes and closes the underlying file or stream. Idempotent. */
    @Override
    void close() throws IOException;
}
