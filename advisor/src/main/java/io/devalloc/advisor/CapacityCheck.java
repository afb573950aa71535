package io.devalloc.advisor;

import io.devalloc.replay.ReplayResult;
import java.util.Objects;

/**
 * A setting replayed, whole, on a device of the card's capacity ({@link CardCapacity}): whether the trace runs there,
 * how often the cache was flushed, what was reserved, and where it first fails when it does not run.
 *
 * @param capacityBytes      the device's capacity
 * @param result             the replay there (past every failure), with the snapshot at its reserved peak
 * @param servedOomRequests  the requests of the trace's {@code oom} entries that this setting served there (each
 *                           asked for again where the recorded allocator failed it, and freed at once: the program
 *                           never had it)
 */
public record CapacityCheck(long capacityBytes, ReplayResult result, long servedOomRequests) {

    public CapacityCheck {
        Objects.requireNonNull(result, "result");
    }

    /** A check of a trace without {@code oom} entries. */
    public CapacityCheck(long capacityBytes, ReplayResult result) {
        this(capacityBytes, result, 0);
    }

    /** Allocations that failed with out of memory (the replay carries on past each). */
    public long ooms() {
        return result.ooms();
    }

    /** Whether the whole trace ran without an out-of-memory error. */
    public boolean runs() {
        return result.ooms() == 0;
    }

    /** The cache flushes there: allocations that needed the allocator's retry ladder. */
    public long flushes() {
        return result.allocRetries();
    }

    /** The highest bytes held from the device there. */
    public long peakReserved() {
        return result.peakReservedBytes();
    }

    /**
     * The first allocation that failed: its event, its request, and the reserved and allocated bytes right after the
     * allocator's retry ladder gave up; null when none failed.
     */
    public ReplayResult.OomPoint firstOom() {
        return result.firstOom();
    }
}
