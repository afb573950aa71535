/**
 * Reading allocation traces recorded by other programs, in the formats people already have, as one stream of
 * {@link io.devalloc.trace.TraceEvent}s for replay.
 *
 * <table>
 *   <caption>Formats and readers</caption>
 *   <tr><th>{@link io.devalloc.trace.TraceFormat}</th><th>reader</th><th>what it is</th></tr>
 *   <tr><td>{@code PYTORCH_PICKLE}</td><td>{@link io.devalloc.trace.pytorch.PyTorchPickleReader}</td>
 *       <td>{@code torch.cuda.memory._dump_snapshot()}'s pickle, read by Pyrolite restricted to plain data; the
 *       warm-start rows worked out as {@code pickle_to_csv.py} does, so it gives the events of the CSV below, except
 *       for expandable segments, whose mapped ranges it walks back exactly where the script approximates (see the
 *       reader)</td></tr>
 *   <tr><td>{@code PYTORCH_CSV}</td><td>{@link io.devalloc.trace.pytorch.PyTorchCsvReader}</td>
 *       <td>{@code seq,action,addr,size,stream,time_us}, as {@code pickle_to_csv.py --prepend-segments
 *       --prepend-live} writes it</td></tr>
 *   <tr><td>{@code RMM_CSV}</td><td>{@link io.devalloc.trace.rmm.RmmCsvReader} and
 *       {@link io.devalloc.trace.rmm.RmmCsvWriter}</td>
 *       <td>RMM's replay log {@code Thread,Time,Action,Pointer,Size,Stream}, read and written</td></tr>
 *   <tr><td>{@code VALGRIND}</td><td>{@link io.devalloc.trace.valgrind.ValgrindReader}</td>
 *       <td>{@code Alloc(size),} / {@code Free(k),} lines (wee_alloc's traces of real programs)</td></tr>
 *   <tr><td>{@code ANDROID_MEMORY_REPLAY}</td><td>{@link io.devalloc.trace.android.AndroidMemoryReplayReader}</td>
 *       <td>Android {@code memory_replay}'s {@code tid: verb ...} lines, plain or zipped</td></tr>
 * </table>
 *
 * <p>{@link io.devalloc.trace.detect.TraceFormats#detect(java.nio.file.Path)} tells the format from a file's
 * content and {@link io.devalloc.trace.detect.TraceFormats#open(java.nio.file.Path)} opens the reader for it.
 *
 * <p>Every reader streams with constant memory (one line at a time; a zip decompressed as it is read), except the
 * pickle reader: a pickle is one object graph and is loaded whole (see its documentation). A malformed input gives a
 * {@link io.devalloc.trace.TraceFormatException} that names the file, the line (the record for a pickle
 * entry; 0 for what has no line, such as a pickle's bytes or a zip's layout) and what was expected. What is
 * well-formed but inconsistent, such as a free of a key that was never allocated, is not a format error: the
 * replay sees it and decides.
 *
 * <p>Keys are compared as unsigned 64-bit values: addresses are read up to 2^64 − 1, sizes up to 2^63 − 1.
 */
package io.devalloc.trace;
