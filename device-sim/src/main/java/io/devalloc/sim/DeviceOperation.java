package io.devalloc.sim;

/**
 * One call that changed the simulated device's memory, recorded when history is on.
 *
 * @param kind    what happened
 * @param address the range's first byte
 * @param bytes   the range's size (as rounded by the device)
 */
public record DeviceOperation(Kind kind, long address, long bytes) {

    /** Kinds of device operation. */
    public enum Kind { MALLOC, FREE, RESERVE, RELEASE, MAP, UNMAP }
}
