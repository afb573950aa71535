package io.devalloc.replay;

import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.MappedPages;
import io.devalloc.api.spi.SizeRounding;

/**
 * Where the reserved bytes that no request asked for went at the peak, by cause, from the allocator's snapshot at
 * that moment. Every mapped byte of every segment is either requested (by a live allocation) or counted in exactly
 * one cause, so the causes add up to reserved &minus; requested bytes there ({@link #total()}).
 *
 * <p>A segment is <em>used</em> when it holds at least one allocated or pending-free block (freed by the program,
 * waiting for a stream's work); with expandable segments, each mapped range is a segment, as the snapshot shows it.
 * Unmapped blocks are not reserved and count nowhere.
 *
 * @param rounding           over allocated blocks: rounded request &minus; request, where the rounded request is
 *                           the allocator's rule ({@link SizeRounding}: PyTorch's {@code round_size}, BFC's 256 B,
 *                           the device's alignment for {@code direct}); for an allocator without that rule, the whole
 *                           block size &minus; request
 * @param unsplitRemainder   over allocated blocks: block size &minus; rounded request, the remainder of a larger
 *                           free block that was not split off (PyTorch keeps the remainder of a large block of at
 *                           most 1 MiB, and of an oversize one; BFC keeps one under its split rule)
 * @param freeInUsedSegments free blocks, and pending-free blocks whole, in used segments: cached memory the
 *                           segment cannot give back while something in it is live, less the page tails below
 * @param freeSegments       segments with no allocated or pending-free block: whole cached segments (or whole
 *                           mapped ranges of expandable segments) that an {@code empty_cache()} would give back
 * @param unmappedPageTails  in a used mapped range of a segment mapped in pages ({@link MappedPages}: PyTorch's
 *                           expandable segments): the free bytes from the end of the range's last allocated or
 *                           pending-free block up to the next page boundary (pages counted from the range's start)
 *                           or the range's end, whichever comes first; what mapping whole pages costs. Free pages
 *                           beyond that boundary are {@code freeInUsedSegments}
 */
public record WasteAtPeak(long rounding, long unsplitRemainder, long freeInUsedSegments, long freeSegments,
                          long unmappedPageTails) {

    /** The sum of the causes: reserved &minus; requested bytes at the peak. */
    public long total() {
        return rounding + unsplitRemainder + freeInUsedSegments + freeSegments + unmappedPageTails;
    }

    /**
     * The waste in {@code snapshot}.
     *
     * @param rounding the allocator's rounding rule, or null (then all of a block beyond its request is rounding)
     * @param pages    the allocator's mapped pages, or null (then there are no page tails)
     */
    static WasteAtPeak of(MemorySnapshot snapshot, SizeRounding rounding, MappedPages pages) {
        long roundingBytes = 0;
        long unsplit = 0;
        long freeInUsed = 0;
        long freeSegments = 0;
        long pageTails = 0;
        for (SegmentSnapshot segment : snapshot.segments()) {
            long usedEnd = -1;
            long free = 0;
            for (BlockSnapshot b : segment.blocks()) {
                switch (b.state()) {
                    case ALLOCATED -> {
                        long requested = b.requestedSize();
                        long rounded = rounding == null ? b.size()
                                : Math.clamp(rounding.roundedSize(requested), requested, b.size());
                        roundingBytes += rounded - requested;
                        unsplit += b.size() - rounded;
                        usedEnd = b.end();
                    }
                    case PENDING_FREE -> {
                        free += b.size();
                        usedEnd = b.end();
                    }
                    case FREE -> free += b.size();
                    case UNMAPPED -> {
                        // Not reserved.
                    }
                }
            }
            if (usedEnd < 0) {
                freeSegments += free;
                continue;
            }
            long page = pages == null ? 0 : pages.mappedPageBytes(segment.address());
            if (page > 0) {
                long boundary = segment.address() + ceilDiv(usedEnd - segment.address(), page) * page;
                long tail = freeBytesIn(segment, usedEnd, Math.min(boundary, segment.end()));
                pageTails += tail;
                free -= tail;
            }
            freeInUsed += free;
        }
        return new WasteAtPeak(roundingBytes, unsplit, freeInUsed, freeSegments, pageTails);
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    /** The bytes of free blocks inside [from, to) (blocks after the last used one: all free or unmapped). */
    private static long freeBytesIn(SegmentSnapshot segment, long from, long to) {
        long sum = 0;
        for (BlockSnapshot b : segment.blocks()) {
            if (b.state() == BlockState.FREE) {
                sum += Math.max(0, Math.min(b.end(), to) - Math.max(b.address(), from));
            }
        }
        return sum;
    }
}
