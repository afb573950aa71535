package io.devalloc.api.device;

/** What kind of memory a {@link DeviceMemory} hands out. */
public enum DeviceKind {
    /** Memory on a GPU, not addressable by the CPU (cudaMalloc). */
    GPU,
    /** Page-locked host memory that a GPU can reach by DMA (cudaHostAlloc, or mlock). */
    PINNED_HOST,
    /** Ordinary native host memory. */
    HOST,
    /** A simulated device: addresses and accounting only, no memory behind them. */
    SIMULATED
}
