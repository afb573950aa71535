package io.devalloc.caching;

import java.util.ArrayList;
import java.util.List;

/**
 * The memory history: a ring buffer of the last {@code capacity} trace entries, kept in primitive arrays so that
 * recording costs no allocation. Off (capacity 0) by default, as in PyTorch.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class TraceRing {

    private static final TraceAction[] ACTIONS = TraceAction.values();

    private byte[] action = new byte[0];
    private long[] address = new long[0];
    private long[] size = new long[0];
    private long[] stream = new long[0];
    private long[] time = new long[0];
    private int capacity;
    private long written;

    /** Turns recording on with room for {@code entries}, or off with 0; either way clears the buffer. */
    void configure(int entries) {
        if (entries < 0) {
            throw new IllegalArgumentException("history size must be >= 0, got " + entries);
        }
        capacity = entries;
        action = new byte[entries];
        address = new long[entries];
        size = new long[entries];
        stream = new long[entries];
        time = new long[entries];
        written = 0;
    }

    boolean enabled() {
        return capacity > 0;
    }

    void record(TraceAction a, long addr, long bytes, long streamHandle) {
        if (capacity == 0) {
            return;
        }
        int i = (int) (written % capacity);
        action[i] = (byte) a.ordinal();
        address[i] = addr;
        size[i] = bytes;
        stream[i] = streamHandle;
        java.time.Instant now = java.time.Instant.now();
        time[i] = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
        written++;
    }

    /** The entries, oldest first. */
    List<TraceEntry> entries() {
        int n = (int) Math.min(written, capacity);
        List<TraceEntry> out = new ArrayList<>(n);
        long start = written - n;
        for (long k = start; k < written; k++) {
            int i = (int) (k % capacity);
            out.add(new TraceEntry(ACTIONS[action[i]], address[i], size[i], stream[i], time[i]));
        }
        return out;
    }
}
