package io.devalloc.caching;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory history: a ring buffer of the last {@code maxEntries} trace entries, kept in primitive arrays so that
 * recording costs no allocation once the ring has reached its size. Off (0 entries) by default, as in PyTorch.
 *
 * <p>As PyTorch's {@code RingBuffer} (a {@code std::vector} that grows by {@code emplace_back} until it holds
 * {@code max_entries}, then overwrites the oldest entry), the ring starts small and doubles as entries arrive, up to
 * the limit; only then does it wrap. So {@code max_entries=sys.maxsize}, PyTorch's default, means "grow as needed"
 * here too ({@code Integer.MAX_VALUE}), and setting a limit allocates almost nothing. Two limits are Java's own: an
 * array holds at most {@link #MAX_ARRAY_LENGTH} entries, and when the heap cannot hold the doubled ring the ring
 * keeps the size it has and wraps there (logged once), so that recording never makes an allocator call fail.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class TraceRing {

    private static final Logger LOG = LoggerFactory.getLogger(TraceRing.class);
    private static final TraceAction[] ACTIONS = TraceAction.values();

    /** The longest array the JVM reliably allocates (the JDK's own soft limit, {@code ArraysSupport}). */
    static final int MAX_ARRAY_LENGTH = Integer.MAX_VALUE - 8;

    /** The ring's first size; it doubles from there up to the limit. */
    static final int INITIAL_LENGTH = 1024;

    /** The columns of {@link #values}: an entry's address, size, stream, time (microseconds) and call number. */
    private static final int ADDRESS = 0;
    private static final int SIZE = 1;
    private static final int STREAM = 2;
    private static final int TIME = 3;
    private static final int CALL = 4;
    private static final int VALUE_COLUMNS = CALL + 1;

    private byte[] action = new byte[0];
    /** The entries' numbers, a column each, indexed by entry like {@link #action}. */
    private long[][] values = new long[VALUE_COLUMNS][0];
    /** The allocator calls begun since recording was turned on: the number of the one under way. */
    private long calls;
    /** The most entries kept: what {@link #configure} asked, capped at {@link #MAX_ARRAY_LENGTH}. */
    private int limit;
    private long written;

    /**
     * Turns recording on keeping the last {@code entries}, or off with 0; either way clears the buffer. A refused
     * value changes nothing.
     */
    void configure(int entries) {
        if (entries < 0) {
            throw new IllegalArgumentException("history size must be >= 0, got " + entries);
        }
        int newLimit = Math.min(entries, MAX_ARRAY_LENGTH);
        // The old entries copied along are never read: with nothing written, every entry is written before it is read.
        resize(Math.min(newLimit, INITIAL_LENGTH));
        limit = newLimit;
        written = 0;
        calls = 0;
    }

    boolean enabled() {
        return limit > 0;
    }

    /** The entries the ring can hold before it grows again (tests). */
    int length() {
        return action.length;
    }

    /**
     * An allocator call (a malloc, a free, an empty_cache, ...) begins: the entries it records share its number, as
     * PyTorch's entries of one call share that call's context (its stack frames).
     */
    void beginCall() {
        if (limit > 0) {
            calls++;
        }
    }

    void record(TraceAction a, long addr, long bytes, long streamHandle) {
        if (limit == 0) {
            return;
        }
        if (written == action.length && action.length < limit) {
            grow();
        }
        // Until the ring first wraps, written < length and entries sit at 0..written-1 in order; it grows only then,
        // so once it wraps its length is final.
        int i = (int) (written % action.length);
        action[i] = (byte) a.ordinal();
        long[][] columns = values; // read once: this runs on every allocate and free while history is on
        columns[ADDRESS][i] = addr;
        columns[SIZE][i] = bytes;
        columns[STREAM][i] = streamHandle;
        Instant now = Instant.now();
        columns[TIME][i] = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
        columns[CALL][i] = calls;
        written++;
    }

    /** Doubles the ring (up to the limit); if the heap cannot hold it, the ring stays as it is and wraps from now. */
    private void grow() {
        int length = (int) Math.min(limit, 2L * action.length);
        try {
            resize(length);
        } catch (OutOfMemoryError heapFull) {
            // Only the new arrays failed to allocate; the ring is untouched. Keep the entries there is room for
            // rather than fail the malloc or free that is recording (its device memory would be lost).
            LOG.warn("memory history: the Java heap cannot grow the history to {} entries; keeping the last {}"
                    + " (the limit asked was {})", length, action.length, limit);
            limit = action.length;
        }
    }

    /**
     * Copies the entries into arrays of {@code length}, allocating every array before switching to them, so that a
     * failure leaves the ring as it was.
     */
    private void resize(int length) {
        byte[] newAction = Arrays.copyOf(action, length);
        long[][] newValues = new long[VALUE_COLUMNS][];
        for (int c = 0; c < VALUE_COLUMNS; c++) {
            newValues[c] = Arrays.copyOf(values[c], length);
        }
        action = newAction;
        values = newValues;
    }

    /** The entries, oldest first. */
    List<TraceEntry> entries() {
        int n = (int) Math.min(written, action.length);
        List<TraceEntry> out = new ArrayList<>(n);
        long start = written - n;
        for (long k = start; k < written; k++) {
            int i = (int) (k % action.length);
            out.add(new TraceEntry(ACTIONS[action[i]], values[ADDRESS][i], values[SIZE][i], values[STREAM][i],
                    values[TIME][i], values[CALL][i]));
        }
        return out;
    }
}
