package io.devalloc.examples.trace;

import java.util.Map;
import java.util.TreeMap;

/**
 * The mapped ranges of expandable segments, as a set of disjoint intervals of unsigned addresses, each with its
 * stream: the state {@link PyTorchPickleReader} walks back through a trace's {@code segment_map} and
 * {@code segment_unmap} entries. PyTorch's snapshot shows an expandable segment as one segment per contiguous mapped
 * range, so an interval is one such segment; adjacent intervals of the same stream are kept merged, as one range.
 * A range ends below 2^64.
 *
 * <p>Not thread-safe.
 */
final class MappedRanges {

    /** Start → {end (exclusive), stream}, by unsigned start; disjoint. */
    private final TreeMap<Long, long[]> ranges = new TreeMap<>(Long::compareUnsigned);

    /**
     * Adds {@code [start, start + size)} mapped on {@code stream}, merged with adjacent ranges of the same stream.
     *
     * @return false, changing nothing, when it is empty, ends at or beyond 2^64, or overlaps a range already there
     */
    boolean add(long start, long size, long stream) {
        long end = start + size;
        if (!isRange(start, size)) {
            return false;
        }
        Map.Entry<Long, long[]> before = ranges.floorEntry(start);
        if (before != null && Long.compareUnsigned(before.getValue()[0], start) > 0) {
            return false;
        }
        Map.Entry<Long, long[]> after = ranges.ceilingEntry(start);
        if (after != null && Long.compareUnsigned(after.getKey(), end) < 0) {
            return false;
        }
        long newStart = start;
        long newEnd = end;
        if (before != null && before.getValue()[0] == start && before.getValue()[1] == stream) {
            newStart = before.getKey();
            ranges.remove(before.getKey());
        }
        if (after != null && after.getKey() == end && after.getValue()[1] == stream) {
            newEnd = after.getValue()[0];
            ranges.remove(after.getKey());
        }
        ranges.put(newStart, new long[] {newEnd, stream});
        return true;
    }

    /**
     * Removes {@code [start, start + size)}, which must lie inside one range: that range shrinks, splits in two or
     * goes.
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
        ranges.remove(holder.getKey());
        if (holder.getKey() != start) {
            ranges.put(holder.getKey(), new long[] {start, stream});
        }
        if (holderEnd != end) {
            ranges.put(end, new long[] {holderEnd, stream});
        }
        return true;
    }

    /** The ranges in address order: start → {end (exclusive), stream}. Read only. */
    Map<Long, long[]> ranges() {
        return java.util.Collections.unmodifiableMap(ranges);
    }

    /** Whether {@code [start, start + size)} is a non-empty range of unsigned addresses that ends below 2^64. */
    private static boolean isRange(long start, long size) {
        return size > 0 && Long.compareUnsigned(start + size, start) > 0;
    }
}
