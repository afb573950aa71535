package io.devalloc.trace.pytorch;

import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.trace.TextTraceRecorder;
import io.devalloc.trace.TraceRecorder;
import io.devalloc.trace.text.CsvLine;
import io.devalloc.trace.text.CsvRecorderOutput;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.file.Path;

/**
 * Writes the project's CSV form of a PyTorch memory trace ({@code seq,action,addr,size,stream,time_us}, see
 * {@code docs/replay.md}), the format that
 * {@code pickle_to_csv.py} makes from {@code torch.cuda.memory._dump_snapshot()} and that devalloc's
 * {@code replay} reads:
 * <pre>
 * seq,action,addr,size,stream,time_us
 * 0,alloc,139637976727552,1048576,0,1763324225770010
 * 1,oom,,81920,0,1763324225770011
 * 2,free_requested,139637976727552,1048576,0,1763324225770012
 * 3,free_completed,139637976727552,1048576,0,1763324225770012
 * </pre>
 * <ul>
 *   <li>{@code seq}: 0, 1, 2, … in row order.</li>
 *   <li>{@code action}: {@code alloc} for an allocation; a free writes two rows, {@code free_requested} and
 *       {@code free_completed}, with the same time (a decorator sees the free the caller asked for, not when the
 *       allocator could reuse the block, so both happen at once); {@code oom} for an allocation that failed with
 *       an {@link OutOfMemoryException}: {@code addr} empty and {@code size} = the device's free bytes, as
 *       PyTorch's {@code device_free} (the requested size is not in this format; RMM's log has it). Other failures
 *       (device errors) have no PyTorch action and write nothing.</li>
 *   <li>{@code addr}: the address in decimal (unsigned).</li>
 *   <li>{@code size}: the bytes asked for, in decimal, also on free rows.</li>
 *   <li>{@code stream}: the stream handle in decimal (0 = default stream), on free rows the allocation's
 *       stream.</li>
 *   <li>{@code time_us}: wall-clock microseconds since the Unix epoch.</li>
 * </ul>
 * The {@code presegment}, {@code prealloc}, {@code segment_*} and {@code snapshot} rows are never written: they
 * describe what the allocator did inside (device mallocs), which a decorator cannot see. A recording therefore
 * replays like a PyTorch trace recorded from an empty allocator, without ground truth to compare with.
 * {@code recordStream} has no row and is not written.
 *
 * <p>Lines end with {@code \n}; the file is ASCII. Output is buffered: a crash loses the rows since the last
 * {@link #flush()}. Not thread-safe on its own (see {@link TraceRecorder}).
 */
public final class PyTorchCsvRecorder extends TextTraceRecorder {

    /** The header line. */
    public static final String HEADER = "seq,action,addr,size,stream,time_us";

    private final CsvRecorderOutput output;
    private long seq;

    /** Creates (or truncates) {@code file} and writes the header. */
    public PyTorchCsvRecorder(Path file) throws IOException {
        this(CsvRecorderOutput.create(file));
    }

    /** Writes ASCII to {@code out} (which this recorder then owns and closes; buffer it) and writes the header now. */
    public PyTorchCsvRecorder(OutputStream out) throws IOException {
        this(new CsvRecorderOutput(out));
    }

    /** Writes to {@code out} (which this recorder then owns and closes) and writes the header now. */
    public PyTorchCsvRecorder(Writer out) throws IOException {
        this(new CsvRecorderOutput(out));
    }

    private PyTorchCsvRecorder(CsvRecorderOutput output) throws IOException {
        super(output, "PyTorch CSV recorder");
        this.output = output;
        output.row().text(HEADER).end();
    }

    @Override
    public void allocate(long threadId, long epochMicros, long address, long size, long stream) throws IOException {
        row("alloc", address, size, stream, epochMicros);
    }

    @Override
    public void allocateFailure(long threadId, long epochMicros, long size, long stream, RuntimeException cause)
            throws IOException {
        CsvLine line = output.row();
        if (cause instanceof OutOfMemoryException oom) {
            line.decimal(seq++).comma().text("oom").comma().comma().decimal(oom.deviceFreeBytes()).comma()
                    .unsignedDecimal(stream).comma().decimal(epochMicros).end();
        }
    }

    @Override
    public void free(long threadId, long epochMicros, long address, long size, long stream) throws IOException {
        row("free_requested", address, size, stream, epochMicros);
        row("free_completed", address, size, stream, epochMicros);
    }

    private void row(String action, long address, long size, long stream, long epochMicros) throws IOException {
        output.row().decimal(seq++).comma().text(action).comma().unsignedDecimal(address).comma().decimal(size)
                .comma().unsignedDecimal(stream).comma().decimal(epochMicros).end();
    }
}
