package io.devalloc.advisor;

import io.devalloc.replay.ReplayResult;

/**
 * A setting replayed on a device of the capacity the user gave ({@code --capacity}): whether the trace runs there,
 * and where it first fails when it does not.
 *
 * @param capacityBytes the device's capacity
 * @param ooms          allocations that failed with out of memory (the replay carries on past each)
 * @param peakReserved  the highest bytes held from the device in that replay
 * @param firstOom      the first allocation that failed: its event, its request, and the reserved and allocated
 *                      bytes right after the allocator's retry ladder gave up; null when none failed
 */
public record CapacityCheck(long capacityBytes, long ooms, long peakReserved, ReplayResult.OomPoint firstOom) {

    /** Whether the whole trace ran without an out-of-memory error. */
    public boolean runs() {
        return ooms == 0;
    }
}
