package io.devalloc.replay.bounds;

import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.TraceEventVisitor;
import io.devalloc.trace.TraceEvent;
import java.util.Arrays;
import java.util.Objects;

/**
 * The allocations of a trace as intervals of event indices, in primitive arrays: interval {@code i} is live from
 * event {@link #startEvent(int)} (inclusive) to event {@link #endEvent(int)} (exclusive) and asked for
 * {@link #requestedSize(int)} bytes. Intervals are numbered in the order they start, which is trace order, so their
 * start events strictly increase with the index. The rules that turn rows into intervals (warm-start blocks, OOM
 * instants, unknown frees, keys allocated twice, negative sizes) are in the
 * {@linkplain io.devalloc.replay.bounds package documentation}; {@link #counts()} says how often each applied.
 *
 * <p>Built in one pass over a {@link CompactTrace} ({@link #of}), with a primitive key → interval map: memory is
 * 37 bytes per interval plus the map of the keys live at once, nothing per event.
 *
 * <p>Immutable after construction: any number of threads may read one and compute bounds and plans from it at once.
 */
public final class LiveIntervals {

    /** The most intervals one trace may have: arrays are indexed by {@code int}. */
    public static final int MAX_INTERVALS = Integer.MAX_VALUE - 16;

    private static final byte ALLOC = 0;
    private static final byte PREALLOC = 1;
    private static final byte OOM = 2;

    private final long events;
    private final int count;
    private final long[] start;
    private final long[] end;
    private final long[] size;
    private final byte[] origin;
    /**
     * Per interval, how many intervals start before its end event: interval {@code j > i} overlaps interval {@code i}
     * in time exactly when {@code j < endRank[i]}. The plan and the sweeps work in these ranks (one step per start),
     * not in events.
     */
    private final int[] endRank;
    /** The intervals ending at each rank, grouped: those with {@code endRank == r} are
     * {@code endsAt[endsFrom[r] .. endsFrom[r + 1])}. */
    private final int[] endsFrom;
    private final int[] endsAt;
    private final IntervalCounts counts;

    private LiveIntervals(long events, int count, long[] start, long[] end, long[] size, byte[] origin, int[] endRank,
                          IntervalCounts counts) {
        this.events = events;
        this.count = count;
        this.start = start;
        this.end = end;
        this.size = size;
        this.origin = origin;
        this.endRank = endRank;
        this.counts = counts;
        this.endsFrom = new int[count + 2];
        this.endsAt = new int[count];
        // A counting sort of the intervals by end rank (ranks run from 1 to count).
        for (int i = 0; i < count; i++) {
            endsFrom[endRank[i] + 1]++;
        }
        for (int r = 1; r < endsFrom.length; r++) {
            endsFrom[r] += endsFrom[r - 1];
        }
        int[] fill = Arrays.copyOf(endsFrom, endsFrom.length);
        for (int i = 0; i < count; i++) {
            endsAt[fill[endRank[i]]++] = i;
        }
    }

    /**
     * The intervals of {@code trace}, in one pass over its events.
     *
     * @throws IllegalArgumentException if the trace has more than {@link #MAX_INTERVALS} intervals
     */
    public static LiveIntervals of(CompactTrace trace) {
        Objects.requireNonNull(trace, "trace");
        Builder b = new Builder(trace.allocations());
        trace.forEachEvent(b);
        return b.build(trace.events());
    }

    /** The events of the trace, every kind counted: the end event of an interval never freed. */
    public long events() {
        return events;
    }

    /** The number of intervals. */
    public int count() {
        return count;
    }

    /** The event at which interval {@code i} starts (its {@code ALLOC}, {@code PREALLOC} or {@code OOM} row). */
    public long startEvent(int i) {
        return start[i];
    }

    /**
     * The event at which interval {@code i} has ended (exclusive): its free, the next allocation of its key, the
     * event after an OOM instant, or {@link #events()} when it is never freed.
     */
    public long endEvent(int i) {
        return end[i];
    }

    /** The bytes interval {@code i} asked for, as the trace records them ({@code >= 0}: negative sizes are 0). */
    public long requestedSize(int i) {
        return size[i];
    }

    /** The kind of row interval {@code i} comes from: {@code ALLOC}, {@code PREALLOC} or {@code OOM}. */
    public TraceEvent.Kind kind(int i) {
        return switch (origin[i]) {
            case ALLOC -> TraceEvent.Kind.ALLOC;
            case PREALLOC -> TraceEvent.Kind.PREALLOC;
            default -> TraceEvent.Kind.OOM;
        };
    }

    /** How many rows of each kind became intervals, and how often a rule for an inconsistent trace applied. */
    public IntervalCounts counts() {
        return counts;
    }

    /** The number of intervals that start before interval {@code i} ends. */
    int endRank(int i) {
        return endRank[i];
    }

    /** The first position in {@link #endsAt(int)} of the intervals whose end rank is {@code rank}. */
    int endsFrom(int rank) {
        return endsFrom[rank];
    }

    /** The interval at {@code position} of the intervals grouped by end rank. */
    int endsAt(int position) {
        return endsAt[position];
    }

    @Override
    public String toString() {
        return "LiveIntervals[" + count + " intervals over " + events + " events, " + counts + "]";
    }

    /** The one pass: the visitor over the trace's events. */
    private static final class Builder implements TraceEventVisitor {
        private static final long ABSENT = -1;

        /** Live key → interval; key 0 (valgrind numbers allocations from 0) is kept beside the map. */
        private final LongLongHashMap live = new LongLongHashMap();
        private long zeroKeyInterval = ABSENT;
        private long[] start;
        private long[] end;
        private long[] size;
        private byte[] origin;
        private int[] endRank;
        private int count;
        private long allocations;
        private long warmStartBlocks;
        private long oomInstants;
        private long oomsWithoutRequest;
        private long unknownFrees;
        private long reallocatedLiveKeys;
        private long negativeSizes;

        Builder(long expected) {
            int capacity = (int) Math.min(Math.max(16, expected + 16), MAX_INTERVALS);
            start = new long[capacity];
            end = new long[capacity];
            size = new long[capacity];
            origin = new byte[capacity];
            endRank = new int[capacity];
        }

        @Override
        public void event(long index, TraceEvent.Kind kind, long key, long bytes) {
            switch (kind) {
                case ALLOC -> {
                    allocations++;
                    allocate(index, key, bytes, ALLOC);
                }
                case PREALLOC -> {
                    warmStartBlocks++;
                    allocate(index, key, bytes, PREALLOC);
                }
                case FREE -> free(index, key);
                case OOM -> {
                    if (bytes < 0) {
                        negativeSizes++;
                    }
                    if (bytes <= 0) {
                        oomsWithoutRequest++;
                    } else {
                        oomInstants++;
                        int i = add(index, bytes, OOM);
                        close(i, index + 1);
                    }
                }
                default -> {
                    // Segment rows are what the recorded allocator did with the device, not what the program asked.
                }
            }
        }

        private void allocate(long index, long key, long bytes, byte from) {
            if (bytes < 0) {
                negativeSizes++;
            }
            long older = remove(key);
            if (older != ABSENT) {
                // The trace lost this key's free: the older block ends here, before the new one starts.
                reallocatedLiveKeys++;
                close((int) older, index);
            }
            put(key, add(index, Math.max(0, bytes), from));
        }

        private void free(long index, long key) {
            long i = remove(key);
            if (i == ABSENT) {
                unknownFrees++;
            } else {
                close((int) i, index);
            }
        }

        private int add(long index, long bytes, byte from) {
            if (count == start.length) {
                if (count == MAX_INTERVALS) {
                    throw new IllegalArgumentException("the trace has more than " + MAX_INTERVALS + " intervals");
                }
                int grown = (int) Math.min((long) count * 2, MAX_INTERVALS);
                start = Arrays.copyOf(start, grown);
                end = Arrays.copyOf(end, grown);
                size = Arrays.copyOf(size, grown);
                origin = Arrays.copyOf(origin, grown);
                endRank = Arrays.copyOf(endRank, grown);
            }
            int i = count++;
            start[i] = index;
            end[i] = ABSENT;
            size[i] = bytes;
            origin[i] = from;
            return i;
        }

        /** Ends interval {@code i} at {@code event}; every interval added so far started before it. */
        private void close(int i, long event) {
            end[i] = event;
            endRank[i] = count;
        }

        private void put(long key, int interval) {
            if (key != 0) {
                live.put(key, interval, ABSENT);
            } else {
                zeroKeyInterval = interval;
            }
        }

        private long remove(long key) {
            if (key != 0) {
                return live.remove(key, ABSENT);
            }
            long i = zeroKeyInterval;
            zeroKeyInterval = ABSENT;
            return i;
        }

        LiveIntervals build(long events) {
            long neverFreed = 0;
            for (int i = 0; i < count; i++) {
                if (end[i] == ABSENT) {
                    end[i] = events;
                    endRank[i] = count;
                    neverFreed++;
                }
            }
            IntervalCounts counts = new IntervalCounts(allocations, warmStartBlocks, oomInstants, oomsWithoutRequest,
                    unknownFrees, reallocatedLiveKeys, neverFreed, negativeSizes);
            return new LiveIntervals(events, count, Arrays.copyOf(start, count), Arrays.copyOf(end, count),
                    Arrays.copyOf(size, count), Arrays.copyOf(origin, count), Arrays.copyOf(endRank, count), counts);
        }
    }
}
