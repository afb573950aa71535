package io.devalloc.api.device;

/**
 * The optional virtual-memory capability of a device: CUDA's VMM API ({@code cuMemAddressReserve},
 * {@code cuMemCreate} + {@code cuMemMap} + {@code cuMemSetAccess}, {@code cuMemUnmap} + {@code cuMemRelease},
 * {@code cuMemAddressFree}). Reserving address space costs no memory; mapping granules into it does.
 *
 * <p>PyTorch's expandable segments and TensorFlow's region coalescing need it. Obtain it with
 * {@link DeviceMemory#virtualMemory()}; devices without it return an empty optional.
 *
 * <p>Implementations are thread-safe.
 */
public interface VirtualMemory {

    /** The mapping granule in bytes (2 MiB on current GPUs). Every size and offset must be a multiple. */
    long granularity();

    /**
     * Reserves a range of address space with no memory behind it.
     *
     * @param bytes a positive multiple of {@link #granularity()}
     * @return the base address of the range, or 0 when no address space of that size is left
     * @throws IllegalArgumentException if {@code bytes} is not a positive multiple of the granule
     */
    long reserve(long bytes);

    /**
     * Returns a reserved range. Every granule in it must have been unmapped first.
     *
     * @throws IllegalArgumentException if {@code base} is not the base of a reservation, or parts are still mapped
     */
    void release(long base);

    /**
     * Creates physical memory and maps it at {@code [address, address + bytes)}, readable and writable by the
     * device.
     *
     * @return true on success; false when the device has not enough physical memory (nothing changes then)
     * @throws IllegalArgumentException if the range is not granule-aligned, lies outside a reservation, or
     *                                  overlaps a mapped range
     */
    boolean map(long address, long bytes);

    /**
     * Unmaps {@code [address, address + bytes)} and returns its physical memory to the device. The range may be
     * any granule-aligned range that is wholly mapped, whatever {@link #map} calls mapped it: part of one call's
     * range, or a range spanning several.
     *
     * @throws IllegalArgumentException if the range is not granule-aligned or not wholly mapped (nothing changes
     *                                  then)
     * @throws io.devalloc.api.error.DeviceException if the device failed; the range counts as unmapped afterwards
     *                                  (its memory may be lost), so that no caller uses it again or unmaps it twice
     */
    void unmap(long address, long bytes);

    /** Bytes currently mapped, over all reservations. */
    long mappedBytes();
}
