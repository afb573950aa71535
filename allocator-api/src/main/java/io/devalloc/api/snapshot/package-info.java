/**
 * The common snapshot model: segments obtained from the device, each tiled exactly by blocks in one of four
 * states (allocated, pending free, free, unmapped; PyTorch's names on the wire), and the settings the allocator
 * runs with. Both algorithms fill it in, so reports, pictures and invariant checks work on either, and the PyTorch
 * export (module {@code trace-io}'s {@code io.devalloc.trace.pytorch.PyTorchSnapshots}) writes every allocator's
 * settings as {@code allocator_settings}.
 */
package io.devalloc.api.snapshot;
