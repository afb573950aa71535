package io.devalloc.sim;

/**
 * One call that changed the simulated device's memory, recorded when history is on. A {@code MAP} is one map call's
 * whole range; the pieces it was mapped in are not recorded here (the device enforces them on unmap).
 *
 * @param kind    what happened
 * @param address the range's first byte
 * @param bytes   the range's size (as rounded by the device)
 */
public record DeviceOperation(Kind kind, long address, long bytes) {

    /** Kinds of device operation. */
    public enum Kind { MALLOC, FREE, RESERVE, RELEASE, MAP, UNMAP }
}
