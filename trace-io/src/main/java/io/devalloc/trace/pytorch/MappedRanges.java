package io.devalloc.trace.pytorch;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The mapped ranges of expandable segments, as a set of disjoint intervals of unsigned addresses, each with its
 * stream and pool: the state {@link PyTorchPickleReader} walks back through a trace's {@code segment_map} and
 * {@code segment_unmap} entries. PyTorch's snapshot shows an expandable segment as one segment per contiguous mapped
 * range, so an interval is one such segment; adjacent intervals of the same segment are kept merged, as one range.
 * A range ends below 2^64.
 *
 * <p><b>Segment boundaries.</b> Two expandable segments' reservations can lie side by side (the small and the large
 * pool's of one stream, or a second segment made when a small reserve filled up), so two ranges that touch are not
 * necessarily one range. The snapshot's own segments ({@link #addSegment}) are never merged with each other: two of
 * them that touch belong to different segments (PyTorch would have shown one segment otherwise), and the address
 * where they touch is kept as a boundary that no range merges across later. A range of a known pool
 * ({@code segment_type}) never merges with a range of the other pool. A range mapped again ({@link #add}, undoing an
 * unmap, of no known pool) merges with the ranges it touches on its stream, except across a boundary or where the
 * two would join ranges of different pools: then it merges with the lower one only (as {@code pickle_to_csv.py}
 * grows the segment below) and the upper touching point becomes a boundary. A boundary the snapshot does not show
 * (two segments whose ranges never touched at its end) cannot be known: a range mapped again between ranges of two
 * such segments of one stream and pool joins them.
 *
 * <p>Not thread-safe.
 */
final class MappedRanges {

    /** A range's pool when the snapshot did not say it. */
    static final int UNKNOWN_POOL = 0;
    /** {@code segment_type} small. */
    static final int SMALL_POOL = 1;
    /** {@code segment_type} large. */
    static final int LARGE_POOL = 2;

    /** Start → {end (exclusive), stream, pool}, by unsigned start; disjoint. */
    private final TreeMap<Long, long[]> ranges = new TreeMap<>(Long::compareUnsigned);
    /** Addresses where two segments' reservations meet: no range spans one. */
    private final TreeSet<Long> boundaries = new TreeSet<>(Long::compareUnsigned);

    /**
     * Adds a segment of the snapshot's end: {@code [start, start + size)} mapped on {@code stream} in {@code pool},
     * never merged with the ranges it touches (the touching points become boundaries).
     *
     * @return false, changing nothing, when it is empty, ends at or beyond 2^64, or overlaps a range already there
     */
    boolean addSegment(long start, long size, long stream, int pool) {
        if (!isRange(start, size) || overlaps(start, start + size)) {
            return false;
        }
        long end = start + size;
        Map.Entry<Long, long[]> before = ranges.floorEntry(start);
        if (before != null && before.getValue()[0] == start) {
            boundaries.add(start);
        }
        if (ranges.containsKey(end)) {
            boundaries.add(end);
        }
        ranges.put(start, new long[] {end, stream, pool});
        return true;
    }

    /**
     * Adds {@code [start, start + size)} mapped on {@code stream}, of no known pool, merged with the ranges it
     * touches on the same stream (see the class documentation for where it does not merge).
     *
     * @return false, changing nothing, when it is empty, ends at or beyond 2^64, overlaps a range already there, or
     *         spans a boundary between two segments
     */
    boolean add(long start, long size, long stream) {
        if (!isRange(start, size) || overlaps(start, start + size)) {
            return false;
        }
        long end = start + size;
        Long inside = boundaries.higher(start);
        if (inside != null && Long.compareUnsigned(inside, end) < 0) {
            return false;
        }
        Map.Entry<Long, long[]> before = ranges.floorEntry(start);
        Map.Entry<Long, long[]> after = ranges.ceilingEntry(start);
        boolean mergeBefore = before != null && before.getValue()[0] == start && before.getValue()[1] == stream
                && !boundaries.contains(start);
        boolean mergeAfter = after != null && after.getKey() == end && after.getValue()[1] == stream
                && !boundaries.contains(end);
        int pool = UNKNOWN_POOL;
        if (mergeBefore) {
            pool = (int) before.getValue()[2];
        }
        if (mergeAfter) {
            int afterPool = (int) after.getValue()[2];
            if (pool != UNKNOWN_POOL && afterPool != UNKNOWN_POOL && afterPool != pool) {
                // Two pools' ranges cannot be one range: the lower one keeps it, and a segment ends here.
                mergeAfter = false;
                boundaries.add(end);
            } else if (afterPool != UNKNOWN_POOL) {
                pool = afterPool;
            }
        }
        long newStart = start;
        long newEnd = end;
        if (mergeBefore) {
            newStart = before.getKey();
            ranges.remove(before.getKey());
        }
        if (mergeAfter) {
            newEnd = after.getValue()[0];
            ranges.remove(after.getKey());
        }
        ranges.put(newStart, new long[] {newEnd, stream, pool});
        return true;
    }

    /**
     * Removes {@code [start, start + size)}, which must lie inside one range: that range shrinks, splits in two or
     * goes; what is left keeps its stream and pool.
     *
     * @return false, changing nothing, when it is empty, ends at or beyond 2^64, or is not mapped as a whole
     */
    boolean remove(long start, long size) {
        long end = start + size;
        if (!isRange(start, size)) {
            return false;
        }
        Map.Entry<Long, long[]> holder = ranges.floorEntry(start);
        if (holder == null || Long.compareUnsigned(end, holder.getValue()[0]) > 0) {
            return false;
        }
        long holderEnd = holder.getValue()[0];
        long stream = holder.getValue()[1];
        long pool = holder.getValue()[2];
        ranges.remove(holder.getKey());
        if (holder.getKey() != start) {
            ranges.put(holder.getKey(), new long[] {start, stream, pool});
        }
        if (holderEnd != end) {
            ranges.put(end, new long[] {holderEnd, stream, pool});
        }
        return true;
    }

    /** The ranges in address order: start → {end (exclusive), stream, pool}. Read only. */
    Map<Long, long[]> ranges() {
        return Collections.unmodifiableMap(ranges);
    }

    /** Whether {@code [start, end)} overlaps a range already there. */
    private boolean overlaps(long start, long end) {
        Map.Entry<Long, long[]> before = ranges.floorEntry(start);
        if (before != null && Long.compareUnsigned(before.getValue()[0], start) > 0) {
            return true;
        }
        Map.Entry<Long, long[]> after = ranges.ceilingEntry(start);
        return after != null && Long.compareUnsigned(after.getKey(), end) < 0;
    }

    /** Whether {@code [start, start + size)} is a non-empty range of unsigned addresses that ends below 2^64. */
    private static boolean isRange(long start, long size) {
        return size > 0 && Long.compareUnsigned(start + size, start) > 0;
    }
}
