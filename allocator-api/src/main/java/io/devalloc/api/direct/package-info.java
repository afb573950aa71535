/**
 * The {@code direct} allocator: no cache, every allocate a device malloc and every free a device free. PyTorch
 * offers the same as {@code PYTORCH_NO_CUDA_MEMORY_CACHING=1}. It is the baseline for tests and benchmarks.
 * One lock guards it; the device call runs under the lock.
 */
package io.devalloc.api.direct;
