package io.devalloc.api.device;

/**
 * The optional virtual-memory capability of a device: CUDA's VMM API ({@code cuMemAddressReserve},
 * {@code cuMemCreate} + {@code cuMemMap} + {@code cuMemSetAccess}, {@code cuMemUnmap} + {@code cuMemRelease},
 * {@code cuMemAddressFree}). Reserving address space costs no memory; mapping granules into it does.
 *
 * <p>PyTorch's expandable segments and TensorFlow's region coalescing need it. Obtain it with
 * {@link DeviceMemory#virtualMemory()}; devices without it return an empty optional.
 *
 * <p><b>Pieces.</b> A map backs its range with physical memory in <i>pieces</i> of a size the caller chooses
 * ({@link #map(long, long, long)}): on CUDA one piece is one {@code cuMemCreate} handle, and CUDA can only unmap and
 * free a handle whole. So an {@link #unmap} may take any range made of whole pieces, of one map call or of several
 * adjacent ones, and is refused if it would cut a piece. Small pieces let the caller give memory back in small
 * parts; large pieces cost fewer driver calls (PyTorch's expandable segments map in pages of 2 MiB or 20 MiB, one
 * handle per page; TensorFlow's {@code GpuVirtualMemAllocator} maps each region as one handle). Every adapter
 * enforces the piece boundaries, also those without handles of their own (the simulator, host memory), so that code
 * tested on one behaves the same on another.
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
     * device, in pieces of one granule each: {@code map(address, bytes, granularity())}. Any whole-granule part of
     * the range can later be unmapped.
     *
     * @return true on success; false when the device has not enough physical memory (nothing changes then)
     * @throws IllegalArgumentException if the range is not granule-aligned, lies outside a reservation, or
     *                                  overlaps a mapped range (nothing changes then)
     */
    default boolean map(long address, long bytes) {
        return map(address, bytes, granularity());
    }

    /**
     * Creates physical memory and maps it at {@code [address, address + bytes)}, readable and writable by the
     * device, as {@code bytes / pieceBytes} pieces of {@code pieceBytes} each: the piece at
     * {@code address + i * pieceBytes} is one unit of physical memory (on CUDA one {@code cuMemCreate} handle and
     * one {@code cuMemMap}) that a later {@link #unmap} takes whole or not at all. The pieces stay what they are
     * until unmapped: mapping the neighbouring range in another call does not merge them.
     *
     * @param address    the first byte, a multiple of the granule, inside a reservation
     * @param bytes      a positive multiple of the granule; the range must lie in one reservation and overlap
     *                   nothing mapped
     * @param pieceBytes a positive multiple of the granule that divides {@code bytes}; {@code bytes} is one piece
     *                   (the fewest driver calls, unmapped only as a whole), {@link #granularity()} is the most
     *                   pieces (any whole-granule part can be unmapped)
     * @return true on success; false when the device has not enough physical memory for all the pieces (nothing
     *         changes then: pieces created before the shortage are given back)
     * @throws IllegalArgumentException if the range is not granule-aligned, lies outside a reservation or overlaps a
     *                                  mapped range, or if {@code pieceBytes} is not a positive multiple of the
     *                                  granule that divides {@code bytes} (nothing changes then)
     */
    boolean map(long address, long bytes, long pieceBytes);

    /**
     * Unmaps {@code [address, address + bytes)} and returns its physical memory to the device. The range must be
     * made of whole pieces (see {@link #map(long, long, long)}): it may be some of the pieces of one map call's
     * range, or span the pieces of several calls, but it must start where a piece starts and end where a piece
     * ends. Pieces of one granule (the two-argument {@link #map(long, long)}) therefore allow any granule-aligned
     * range that is wholly mapped.
     *
     * @throws IllegalArgumentException if the range is not granule-aligned, not wholly mapped, or cuts a piece
     *                                  (starts or ends inside one) (nothing changes then)
     * <p><b>A failed unmap leaves the range unmapped.</b> This is a duty of every adapter, not a hope: when the
     * device fails an unmap whose arguments were accepted, the adapter still counts the whole range as unmapped
     * ({@link #mappedBytes()} drops by {@code bytes}; unmapping it again is refused; mapping it again succeeds, memory
     * permitting) and then throws. Callers rely on it: the caching allocator's expandable segments forget a page
     * whose unmap failed and map it again when they grow, and a range an adapter kept mapped would be refused then
     * or leak. The device contract suite checks it ({@code DeviceMemoryContract#armUnmapFailure}).
     *
     * @throws io.devalloc.api.error.DeviceException if the device failed; the range counts as unmapped afterwards
     *                                  (its memory may be lost), so that no caller uses it again or unmaps it twice
     */
    void unmap(long address, long bytes);

    /** Bytes currently mapped, over all reservations. */
    long mappedBytes();
}
