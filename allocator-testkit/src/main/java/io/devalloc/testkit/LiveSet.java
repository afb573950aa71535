package io.devalloc.testkit;

import io.devalloc.api.units.ByteSize;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * The live allocations a test made, by address, with an overlap check on every insert. Not thread-safe.
 */
public final class LiveSet {

    /** An empty set. */
    public LiveSet() {
    }

    /** address → requested bytes */
    private final TreeMap<Long, Long> ranges = new TreeMap<>();
    private long requestedBytes;

    /**
     * Adds {@code [address, address + bytes)}.
     *
     * @throws AssertionError if it overlaps a live allocation or the address is reused while live
     */
    public void add(long address, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes must be positive");
        }
        if (address == 0) {
            throw new AssertionError("a non-zero allocation of " + bytes + " bytes got address 0");
        }
        Map.Entry<Long, Long> below = ranges.floorEntry(address);
        if (below != null && below.getKey() + below.getValue() > address) {
            throw new AssertionError("allocation " + ByteSize.hex(address) + " +" + bytes + " overlaps live "
                    + ByteSize.hex(below.getKey()) + " +" + below.getValue());
        }
        Map.Entry<Long, Long> above = ranges.ceilingEntry(address);
        if (above != null && address + bytes > above.getKey()) {
            throw new AssertionError("allocation " + ByteSize.hex(address) + " +" + bytes + " overlaps live "
                    + ByteSize.hex(above.getKey()) + " +" + above.getValue());
        }
        ranges.put(address, bytes);
        requestedBytes += bytes;
    }

    /** Removes and returns the requested size of the allocation at {@code address}. */
    public long remove(long address) {
        Long bytes = ranges.remove(address);
        if (bytes == null) {
            throw new IllegalArgumentException("not live: " + ByteSize.hex(address));
        }
        requestedBytes -= bytes;
        return bytes;
    }

    public boolean contains(long address) {
        return ranges.containsKey(address);
    }

    public int size() {
        return ranges.size();
    }

    public long requestedBytes() {
        return requestedBytes;
    }

    /** The live allocations, address → requested bytes (a view). */
    public Map<Long, Long> asMap() {
        return Collections.unmodifiableMap(ranges);
    }

    /** The address of the {@code i}-th live allocation in address order (O(n)). */
    public long addressAt(int i) {
        int n = 0;
        for (long a : ranges.keySet()) {
            if (n++ == i) {
                return a;
            }
        }
        throw new IndexOutOfBoundsException(i);
    }
}
