/**
 * Export of memory snapshots in the structure of PyTorch's {@code torch.cuda.memory._snapshot()}: a dict with
 * {@code segments} (each with its {@code blocks}), {@code device_traces} (one list of trace entries per device),
 * {@code allocator_settings} and {@code external_annotations} (see {@code caching.md} section 7), for every
 * allocator.
 *
 * <p>Two sources build that structure:
 * <ul>
 *   <li>{@link io.devalloc.trace.pytorch.PyTorchSnapshots#toDict} builds it from any allocator's
 *       {@link io.devalloc.api.snapshot.MemorySnapshot} ({@code direct}, {@code bfc}, {@code caching}, or one found
 *       through the SPI): the segments and blocks and the allocator's settings, with empty history and
 *       annotations.</li>
 *   <li>The caching allocator's own {@code snapshotDict()} adds its recorded history as {@code device_traces} and
 *       its settings as {@code allocator_settings}, as PyTorch does.</li>
 * </ul>
 *
 * <p>The snapshot is first built as a tree of plain Java values ({@link java.util.Map} with {@link String} keys in
 * insertion order, {@link java.util.List}, {@link String}, {@link Long}/{@link Integer}, {@link Double},
 * {@link Boolean}, {@code null}, and {@link io.devalloc.api.spi.PythonTuple} where PyTorch has a tuple:
 * {@code segment_pool_id} and a trace entry's {@code pool_id}); two stateless serializers then write that tree:
 * <ul>
 *   <li>{@link io.devalloc.trace.pytorch.PickleWriter}: a Python pickle, protocol 2, memo-free, the format of
 *       {@code torch.cuda.memory._dump_snapshot()}. PyTorch's memory visualiser (https://pytorch.org/memory_viz)
 *       loads it by drag and drop, and {@code pickle.load} in Python (or {@code traces/pickle_to_csv.py}) reads it
 *       into plain dicts, lists and tuples. Only opcodes that the visualiser's JavaScript unpickler understands are
 *       written.</li>
 *   <li>{@link io.devalloc.trace.text.JsonWriter}: the same tree as RFC 8259 JSON, for tools that do not read
 *       pickles. Non-finite floats become {@code null}; tuples become arrays.</li>
 * </ul>
 * Both reject values outside that vocabulary with an {@link IllegalArgumentException} naming the type and the
 * path, so a mistake in building the tree fails in Java rather than in the reader.
 *
 * <p><b>Reading pickles from strangers.</b> {@link io.devalloc.trace.pytorch.PyTorchSnapshotFile} loads a pickle
 * through an unpickler that runs no class and no function, and keeps every file's work bounded by its distinct
 * objects, since a pickle's memo lets 2 bytes refer to any earlier object again (a few hundred bytes can describe
 * 2^40 items, or a list that holds itself). What it refuses, each with a
 * {@link io.devalloc.trace.TraceFormatException} naming the file:
 * <ul>
 *   <li>a segment, {@code blocks} list, block or {@code device_traces} list listed twice (PyTorch builds each once;
 *       N references to one segment whose blocks list holds one block M times would cost N x M steps in every
 *       walk), naming both places;</li>
 *   <li>a text {@code LONG} of more than 4,300 digits, CPython's limit on integer string conversion
 *       (CVE-2020-10735): the conversion is quadratic;</li>
 *   <li>a load whose live objects pass 85% of the maximum heap ({@code HeapGuard}: a 1-byte {@code EMPTY_DICT} is
 *       130 bytes of heap), and any out-of-memory or stack-overflow error while a snapshot is read, as "this file
 *       needs more memory than the Java heap allows" or "nested too deep".</li>
 * </ul>
 * And it bounds what it prints: a value quoted in a message is printed item by item from an explicit stack and cut
 * at 60 characters (a cycle or 10^5 levels of nesting print 60 characters), an integer beyond 256 bits is told by
 * its size, and an {@code allocator_settings} value that nests a container in a container (PyTorch writes scalars
 * and one flat dict) is left out with a note rather than copied. No walk over the loaded values recurses.
 */
package io.devalloc.trace.pytorch;

