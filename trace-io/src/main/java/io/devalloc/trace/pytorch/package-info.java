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
 */
package io.devalloc.trace.pytorch;

