package io.devalloc.replay;

import io.devalloc.api.units.ByteSize;
import io.devalloc.trace.TraceEvent;
import java.util.Arrays;

/**
 * A PyTorch trace's runs of {@code segment_free} and {@code segment_unmap} rows, each told apart as the program's
 * {@code torch.cuda.empty_cache()} or the allocator's own cache flush, and the capacity the trace tells; collected by
 * {@link TraceScan} as the events pass, decided at their end ({@link #finish}).
 *
 * <p><b>What upstream leaves in the trace.</b> PyTorch's {@code malloc}, on a miss, runs its garbage collection (with
 * a memory fraction and a threshold set), tries the device malloc, and when that fails frees cached blocks
 * ({@code release_available_cached_blocks}, then {@code release_cached_blocks}, the same release as
 * {@code empty_cache()}) and retries it: all inside one call, under the allocator's lock, so the frees are followed
 * at once by the retried {@code segment_alloc} (or {@code segment_map}), or, when even the retry fails, by the
 * {@code oom} entry. Every entry of that call is recorded with the call's context, and the snapshot gives the entries
 * of one context one list of stack frames (the same object). {@code empty_cache()} gathers a context of its own. So,
 * in order:
 * <ol>
 *   <li>a run followed by an {@code oom} entry is the allocator's (the ladder's last release);</li>
 *   <li>a run whose rows have the very stack frames of the entry after it is the allocator's, one whose rows have
 *       other frames is the program's ({@link TraceEvent#FLUSH_IN_MALLOC}, {@link TraceEvent#FLUSH_ELSEWHERE});</li>
 *   <li>without frames (a CSV, or a history recorded without context): a run not followed by a device malloc is the
 *       program's (the ladder always retries one); one followed by a device malloc of {@code a} bytes with
 *       {@code R} bytes reserved before the run is the allocator's if {@code R + a} is above the capacity an
 *       {@code oom} entry tells (that malloc could not have fitted), the program's if not; without such a capacity
 *       it is taken as the program's, as a trace without frames was always replayed. (The trace's own peak is no
 *       bound here: a program that calls {@code empty_cache()} at the end of a step holds its peak in the cache
 *       then, and its next malloc would go above it, just like a flush at the capacity.)</li>
 * </ol>
 *
 * <p><b>The capacity.</b> An {@code oom} entry records the device's free bytes; the allocator could have held what
 * it had reserved then plus those, and the smallest such sum over the trace's {@code oom} entries is taken. A flush
 * told apart by its frames and followed by a device malloc bounds the capacity from above: the malloc tried before
 * the flush did not fit, so the capacity is at most {@code R + a - 1}. Without an {@code oom} entry, the largest
 * capacity under every such bound is taken (the one on which every recorded flush happens). The capacity is never
 * below the trace's peak reserved (the allocator held that much).
 *
 * <p>Memory: a few longs per run, none per other event. Not thread-safe while it collects; immutable once finished.
 */
final class FlushRuns {

    // The runs, in order: first event (1-based), rows, reserved bytes before the run, context, follower.
    private long[] start = new long[8];
    private long[] rows = new long[8];
    private long[] reservedBefore = new long[8];
    private byte[] context = new byte[8];
    private byte[] follower = new byte[8];
    private long[] followerSize = new long[8];
    private int count;
    private boolean open;

    /** Context of an open run: every row so far other frames, some row the malloc's, or unknown. */
    private static final byte CONTEXT_ELSEWHERE = 1;
    private static final byte CONTEXT_IN_MALLOC = 2;
    private static final byte CONTEXT_UNKNOWN = 0;

    private static final byte FOLLOWER_NONE = 0;
    private static final byte FOLLOWER_DEVICE_MALLOC = 1;
    private static final byte FOLLOWER_OOM = 2;
    private static final byte FOLLOWER_OTHER = 3;

    private long oomCapacity = -1;
    /** The smallest bound an {@code oom} entry without the device's free bytes gives (its failed segment), or max. */
    private long oomBound = Long.MAX_VALUE;
    private long ooms;

    // Decided by finish().
    private boolean finished;
    private long[] allocatorStart = new long[0];
    private long[] allocatorRows = new long[0];
    private CacheFlushes summary = CacheFlushes.NONE;

    /** A {@code segment_free} or {@code segment_unmap} row, event {@code event}, with {@code reserved} bytes before. */
    void flushRow(long event, int flags, long reserved) {
        if (!open) {
            if (count == start.length) {
                grow();
            }
            start[count] = event;
            rows[count] = 0;
            reservedBefore[count] = reserved;
            context[count] = (flags & TraceEvent.FLUSH_IN_MALLOC) != 0 ? CONTEXT_IN_MALLOC
                    : (flags & TraceEvent.FLUSH_ELSEWHERE) != 0 ? CONTEXT_ELSEWHERE : CONTEXT_UNKNOWN;
            follower[count] = FOLLOWER_NONE;
            count++;
            open = true;
        } else {
            int r = count - 1;
            if ((flags & TraceEvent.FLUSH_IN_MALLOC) != 0) {
                context[r] = CONTEXT_IN_MALLOC;
            } else if ((flags & TraceEvent.FLUSH_ELSEWHERE) == 0 && context[r] == CONTEXT_ELSEWHERE) {
                context[r] = CONTEXT_UNKNOWN;
            }
        }
        rows[count - 1]++;
    }

    /** Any other event: it ends an open run, which it follows. */
    void otherEvent(TraceEvent.Kind kind, long size) {
        if (!open) {
            return;
        }
        open = false;
        int r = count - 1;
        switch (kind) {
            case SEGMENT_ALLOC, SEGMENT_MAP -> {
                follower[r] = FOLLOWER_DEVICE_MALLOC;
                followerSize[r] = size;
            }
            case OOM -> follower[r] = FOLLOWER_OOM;
            default -> follower[r] = FOLLOWER_OTHER;
        }
    }

    /**
     * An {@code oom} row with {@code reserved} bytes reserved then, {@code deviceFree} free on the device (or
     * {@link io.devalloc.trace.TraceEvent#FREE_BYTES_UNKNOWN}) and {@code request} the rounded request that failed (0
     * when the format does not record it).
     */
    void oom(long reserved, long deviceFree, long request) {
        ooms++;
        if (deviceFree == TraceEvent.FREE_BYTES_UNKNOWN || deviceFree < 0) {
            if (request > 0) {
                // The device malloc for that request failed after the retry ladder: the capacity is below what was
                // reserved plus that malloc, at most failedSegment(request).
                long bound = reserved + failedSegment(request) - 1;
                if (bound > 0) {
                    oomBound = Math.min(oomBound, bound);
                }
            }
            return;
        }
        long sum = reserved + deviceFree;
        if (sum < 0) {
            sum = Long.MAX_VALUE;
        }
        oomCapacity = oomCapacity < 0 ? sum : Math.min(oomCapacity, sum);
    }

    /**
     * The most PyTorch's caching allocator asks the device for when a request of {@code request} bytes (rounded)
     * finds no cached block: a small-pool segment (2 MiB) for 1 MiB or less; otherwise a large-pool segment (20 MiB
     * below 10 MiB, the request rounded up to 2 MiB above), or with expandable segments whole 20 MiB pages, so never
     * more than the request rounded up to 20 MiB.
     */
    static long failedSegment(long request) {
        long small = ByteSize.MiB;
        long page = 20 * ByteSize.MiB;
        if (request <= small) {
            return 2 * ByteSize.MiB;
        }
        long pages = request / page + (request % page == 0 ? 0 : 1);
        return pages > Long.MAX_VALUE / page ? Long.MAX_VALUE / 2 : pages * page;
    }

    /** The trace has ended, having reserved at most {@code peakReserved} bytes: decides every run. */
    void finish(long peakReserved) {
        if (finished) {
            return;
        }
        finished = true;
        open = false;
        long flushBound = Long.MAX_VALUE;
        for (int r = 0; r < count; r++) {
            if (context[r] == CONTEXT_IN_MALLOC && follower[r] == FOLLOWER_DEVICE_MALLOC) {
                long bound = reservedBefore[r] + followerSize[r] - 1;
                if (bound >= 0) {
                    flushBound = Math.min(flushBound, bound);
                }
            }
        }
        long program = 0;
        long byFrames = 0;
        long byOom = 0;
        long byNoMalloc = 0;
        long byCapacity = 0;
        long assumed = 0;
        long[] starts = new long[count];
        long[] lengths = new long[count];
        int allocator = 0;
        for (int r = 0; r < count; r++) {
            boolean mine;
            if (follower[r] == FOLLOWER_OOM) {
                mine = true;
                byOom++;
            } else if (context[r] != CONTEXT_UNKNOWN) {
                mine = context[r] == CONTEXT_IN_MALLOC;
                byFrames++;
            } else if (follower[r] != FOLLOWER_DEVICE_MALLOC) {
                mine = false;
                byNoMalloc++;
            } else if (oomCapacity >= 0) {
                mine = reservedBefore[r] + followerSize[r] > oomCapacity;
                byCapacity++;
            } else {
                mine = false;
                assumed++;
            }
            if (mine) {
                starts[allocator] = start[r];
                lengths[allocator] = rows[r];
                allocator++;
            } else {
                program++;
            }
        }
        allocatorStart = Arrays.copyOf(starts, allocator);
        allocatorRows = Arrays.copyOf(lengths, allocator);
        summary = new CacheFlushes(program, allocator, byFrames, byOom, byNoMalloc, byCapacity, assumed,
                capacity(peakReserved, flushBound));
    }

    /** What the trace tells of the capacity (see the class documentation), or null. */
    private RecordedCapacity capacity(long peakReserved, long flushBound) {
        boolean bounded = flushBound != Long.MAX_VALUE && flushBound >= peakReserved;
        if (oomCapacity >= 0) {
            long bytes = oomCapacity;
            String how = "the reserved bytes plus the device's free bytes at the trace's " + (ooms == 1 ? "oom entry"
                    : "oom entries (the smallest sum)");
            if (bounded && flushBound < bytes) {
                bytes = flushBound;
                how += ", lowered to " + ByteSize.format(flushBound) + " by the allocator's own cache flushes (a"
                        + " device malloc failed there)";
            }
            if (bytes < peakReserved) {
                how += ", raised to the trace's peak reserved (" + ByteSize.format(peakReserved) + "), which the"
                        + " allocator held";
                bytes = peakReserved;
            }
            return bytes > 0 ? new RecordedCapacity(bytes, RecordedCapacity.Source.OOM, how) : null;
        }
        if (oomBound != Long.MAX_VALUE && oomBound >= peakReserved && (!bounded || oomBound < flushBound)) {
            return new RecordedCapacity(oomBound, RecordedCapacity.Source.OOM_REQUEST, "at most "
                    + ByteSize.format(oomBound) + ": what the allocator had reserved at the trace's oom entry plus"
                    + " the device malloc that failed for its request (PyTorch's segment for it, at most the request"
                    + " rounded up to 20 MiB), less one byte; the entry does not record the device's free bytes, so"
                    + " this bounds the capacity from above");
        }
        if (bounded && flushBound > 0) {
            return new RecordedCapacity(flushBound, RecordedCapacity.Source.RETRY_FLUSHES, "just under "
                    + ByteSize.format(flushBound + 1) + ", the smallest figure the allocator's own cache flushes"
                    + " needed (what it had reserved plus the device malloc that did not fit): the largest capacity on"
                    + " which every one of them happens");
        }
        return null;
    }

    /** The runs decided ({@link #finish} first). */
    CacheFlushes summary() {
        return summary;
    }

    /** The first events of the allocator's own runs, ascending; with {@link #allocatorRows()}, parallel. */
    long[] allocatorStarts() {
        return allocatorStart;
    }

    /** The rows of each of the allocator's own runs. */
    long[] allocatorRows() {
        return allocatorRows;
    }

    private void grow() {
        int n = start.length * 2;
        start = Arrays.copyOf(start, n);
        rows = Arrays.copyOf(rows, n);
        reservedBefore = Arrays.copyOf(reservedBefore, n);
        context = Arrays.copyOf(context, n);
        follower = Arrays.copyOf(follower, n);
        followerSize = Arrays.copyOf(followerSize, n);
    }
}
