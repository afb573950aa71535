package io.devalloc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.devalloc.api.device.DeviceMemory;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Optional;

/**
 * A byte pattern at the first, middle and last byte of an allocation, written and read back through the device's
 * host view where it has one (nothing is written or checked otherwise): an overlapping allocation's write shows as a
 * changed byte. The contracts and the model run use it alike.
 */
final class HostPatterns {

    private HostPatterns() {
    }

    /** The offsets in a range of {@code size} bytes that hold the pattern: first, middle, last. */
    static long[] offsets(long size) {
        return new long[] {0, size / 2, size - 1};
    }

    /** Writes {@code pattern} at the {@link #offsets} of the range, if the device has a host view. */
    static void write(DeviceMemory device, long address, long size, byte pattern) {
        Optional<MemorySegment> view = device.hostView(address, size);
        if (view.isPresent()) {
            for (long o : offsets(size)) {
                view.get().set(ValueLayout.JAVA_BYTE, o, pattern);
            }
        }
    }

    /** Asserts that {@link #write} left {@code pattern} there, if the device has a host view. */
    static void assertIntact(DeviceMemory device, long address, long size, byte pattern) {
        Optional<MemorySegment> view = device.hostView(address, size);
        if (view.isPresent()) {
            for (long o : offsets(size)) {
                assertEquals(pattern, view.get().get(ValueLayout.JAVA_BYTE, o), "byte " + o + " of 0x"
                        + Long.toHexString(address) + " was overwritten: another allocation overlaps it");
            }
        }
    }
}
