package io.devalloc.api.collect;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The streams recorded on an allocation besides its own ({@code recordStream}), per handle of a chunk or block, in
 * the order they were recorded, each once. Few allocations are used on other streams and those by few streams, so
 * a map to short arrays is all this needs; it is read and written on {@code recordStream} and on the free of an
 * allocation that has such streams, never on a plain allocate or free.
 *
 * <p>Not thread-safe: the owner's lock guards it.
 */
public final class HandleStreams {

    private final Map<Integer, long[]> streams = new HashMap<>();

    /** Records {@code stream} on {@code handle}, unless it is recorded there already. */
    public void add(int handle, long stream) {
        long[] recorded = streams.get(handle);
        if (recorded == null) {
            streams.put(handle, new long[] {stream});
            return;
        }
        for (long s : recorded) {
            if (s == stream) {
                return;
            }
        }
        long[] grown = Arrays.copyOf(recorded, recorded.length + 1);
        grown[recorded.length] = stream;
        streams.put(handle, grown);
    }

    /** The streams recorded on {@code handle}, in the order recorded, or null when there are none; do not change it. */
    public long[] get(int handle) {
        return streams.get(handle);
    }

    /** Forgets the streams recorded on {@code handle}. */
    public void remove(int handle) {
        streams.remove(handle);
    }

    /** The handles with streams recorded on them. */
    public Set<Integer> handles() {
        return streams.keySet();
    }

    /** Forgets every handle's streams. */
    public void clear() {
        streams.clear();
    }
}
