/**
 * The {@code direct} allocator: no cache, every allocate a device malloc and every free a device free. PyTorch
 * offers the same as {@code PYTORCH_NO_CUDA_MEMORY_CACHING=1}. It is the baseline for tests and benchmarks.
 * One lock guards it; the device call runs under the lock. The argument checks, the null allocation of size 0, the
 * check that it is open and the close (every live address freed past device failures, an owned device closed
 * last, the first failure thrown with the others suppressed) are {@link io.devalloc.api.spi.AbstractDeviceAllocator}'s.
 */
package io.devalloc.api.direct;
