package io.devalloc.api.spi;

import io.devalloc.api.device.DeviceStream;

/**
 * An allocator capability for trace replay, named for whom it is: an allocator that ports PyTorch's caching
 * allocator rebuilding the state a recorded PyTorch trace started from (its
 * {@code presegment} and {@code prealloc} rows), so that a window of a real program's history replays as the real
 * allocator ran it. The caching allocator offers it; a replay reaches it with
 * {@code allocator.unwrap(PyTorchStateRestore.class)}, through any decorator, without knowing the allocator's own
 * interface.
 *
 * <p>Besides the restore operations it answers the sizing questions the replay needs to infer each live block's
 * size from the recorded addresses (PyTorch rounds requests and splits blocks by rules of its own).
 *
 * <p>Implementations are as thread-safe as the allocator; a replay restores before its first event, from one
 * thread.
 */
public interface PyTorchStateRestore {

    /** The block size the allocator makes for a request of {@code requested} bytes (PyTorch's {@code round_size}). */
    long roundSize(long requested);

    /** Whether rounded requests of this size go to the small pool (PyTorch: at most 1 MiB). */
    boolean isSmallRequest(long rounded);

    /** The size of every small-pool segment (PyTorch: 2 MiB); also the small pool's expandable page. */
    long smallSegmentSize();

    /** The large pool's expandable page ({@code large_segment_size}, 20 MiB by default). */
    long largeSegmentSize();

    /** Whether the allocator runs with expandable segments. */
    boolean expandableSegments();

    /**
     * PyTorch's {@code should_split}: whether a free block holding a request of {@code rounded} bytes with
     * {@code remainder} bytes to spare is split, in the small or large pool, in an expandable segment or not.
     */
    boolean shouldSplit(long rounded, long remainder, boolean smallPool, boolean expandable);

    /**
     * Whether a large-pool block of {@code rounded} bytes may keep a tail of {@code tail} bytes unsplit (PyTorch
     * splits a large block only when more than 1 MiB is left, and never blocks of at least
     * {@code max_split_size}): what lets a replay attribute a small gap after a live block to that block.
     */
    boolean mayKeepTail(long rounded, long tail);

    /**
     * Restores a segment that existed before recording began (a trace's {@code presegment} row): a device malloc
     * of exactly {@code bytes}, kept as one free block. Point the device at the segment's address first (the
     * simulator's scripted addresses) to rebuild the recorded layout. A trace recorded with expandable segments is
     * restored with {@link #restoreExpandableSegment} and {@link #restoreExpandableRange} instead.
     *
     * @return the segment's address
     */
    long restoreSegment(long bytes, DeviceStream stream);

    /**
     * The address space a new expandable segment of {@code stream} in the small or large pool reserves: whole pages
     * (2 MiB in the small pool, {@code large_segment_size} in the large one) covering 9/8 of the device's memory, or
     * the stream's configured reserve ({@code expandable_segments_reserve[_by_class]}) clamped to that, as
     * PyTorch's {@code ExpandableSegment} sizes itself. 0 when this allocator runs without expandable segments.
     */
    long expandableSegmentSize(DeviceStream stream, boolean smallPool);

    /**
     * Restores an expandable segment that existed before recording began, with nothing mapped yet: reserves its
     * address space as a new segment of {@code stream}'s small or large pool would ({@link #expandableSegmentSize}),
     * but at most {@code maxReserveBytes} (whole pages, rounded to the device's granularity) when that is positive,
     * so that segments recorded closer together than a full reserve fit where they were. Point the device at the
     * segment's recorded base first (the simulator's scripted addresses apply to reservations too), then restore
     * its mapped ranges with {@link #restoreExpandableRange} at their recorded offsets from the base. Reserving
     * makes no device allocation, as PyTorch's {@code cuMemAddressReserve} counts none.
     *
     * @return the segment's base address
     * @throws IllegalStateException    if this allocator runs without expandable segments (restore with
     *                                  {@link #restoreSegment}), or the device refuses the reservation
     * @throws IllegalArgumentException if {@code maxReserveBytes} is positive but holds no whole page
     */
    long restoreExpandableSegment(DeviceStream stream, boolean smallPool, long maxReserveBytes);

    /**
     * Restores a range that was mapped before recording began (a trace's {@code presegment} row of an expandable
     * segment): maps {@code [address, address + bytes)}, whole pages of a segment restored with
     * {@link #restoreExpandableSegment}, in one device call, as one free block merged with free mapped neighbours
     * (as PyTorch keeps free mapped memory). Counted as PyTorch's {@code map_block} counts a map: one device
     * allocation, the reserved bytes, and a {@code segment_map} history entry (a replay counts the device calls
     * made after its restore). Live blocks inside it are then restored with {@link #restoreAllocation}.
     *
     * @throws IllegalArgumentException if the range is not whole pages inside one unmapped range of an expandable
     *                                  segment of this allocator
     * @throws IllegalStateException    if the device refuses the map (nothing changes)
     */
    void restoreExpandableRange(long address, long bytes);

    /**
     * Restores a block that was live before recording began (a trace's {@code prealloc} row): marks
     * {@code [address, address + blockSize)} inside a free block of a restored segment as allocated, with
     * {@code requested} bytes asked for, splitting the free block around it. Inside an expandable segment the
     * pieces cut off stay mapped free blocks of that segment (and, as upstream, expandable segments count no
     * inactive splits).
     *
     * @throws IllegalArgumentException if the range is not inside one free block of this allocator
     */
    void restoreAllocation(long address, long blockSize, long requested, DeviceStream stream);

}
