package io.devalloc.sim;

/** Where the simulated device places a new range in its free address space. */
public enum AddressOrder {
    /**
     * At the top of the highest free range that fits. The CUDA driver did this in the recorded PyTorch traces, and
     * best-fit ties (equal sizes, lowest address wins) depend on it. The default.
     */
    TOP_DOWN,
    /** At the bottom of the lowest free range that fits. */
    BOTTOM_UP
}
