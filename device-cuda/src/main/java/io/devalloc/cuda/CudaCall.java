package io.devalloc.cuda;

/**
 * One CUDA runtime call, made by {@link CudaDeviceMemory}'s guard once the device is open and current, given the
 * handles of the event and the stream the call acts on (0 where it acts on none).
 *
 * <p>Write it as a lambda that uses only its parameters, so that it captures nothing: the JVM then makes one
 * instance for the call site, and making the call allocates nothing. Allocators record and query events on their
 * allocate and free paths, so this matters there. Only copies and fills, which no allocator makes, capture their
 * addresses and sizes.
 */
@FunctionalInterface
interface CudaCall {

    /** Makes the call; returns CUDA's code. */
    int invoke(CudaApi api, long event, long stream);
}
