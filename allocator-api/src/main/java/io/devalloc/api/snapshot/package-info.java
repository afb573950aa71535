/**
 * The common snapshot model: segments obtained from the device, each tiled exactly by blocks in one of four
 * states (allocated, pending free, free, unmapped; PyTorch's names on the wire). Both algorithms fill it in, so
 * reports, pictures and invariant checks work on either.
 */
package io.devalloc.api.snapshot;
