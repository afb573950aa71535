package io.devalloc.advisor;

/**
 * A setting replayed on a device of the capacity the user gave ({@code --capacity}): whether the trace runs there.
 *
 * @param capacityBytes the device's capacity
 * @param ooms          allocations that failed with out of memory (the replay carries on past each)
 * @param peakReserved  the highest bytes held from the device in that replay
 */
public record CapacityCheck(long capacityBytes, long ooms, long peakReserved) {

    /** Whether the whole trace ran without an out-of-memory error. */
    public boolean runs() {
        return ooms == 0;
    }
}
