package io.devalloc.api.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.MemoryAddress;
import jdk.jfr.Timespan;

/**
 * The fields the four device-call events share. JFR takes an abstract event class's fields and annotations into
 * each concrete event; the abstract class itself is never registered.
 */
@Category({"devalloc", "Device"})
abstract class DeviceCallEvent extends AllocatorEvent {

    @Label("Address")
    @Description("The address given or returned (0 for a malloc that found no memory)")
    @MemoryAddress
    long address;

    @Label("Size")
    @Description("The bytes the call concerned (for a free, the size of the allocation freed)")
    @DataAmount(DataAmount.BYTES)
    long size;

    @Label("Succeeded")
    @Description("False when a malloc or map found no memory, or the call threw")
    boolean succeeded;

    @Label("Call Duration")
    @Description("How long the device call took, wall-clock (the event's own duration is 0: it is written after the"
            + " call returned)")
    @Timespan(Timespan.NANOSECONDS)
    long callDuration;

    /**
     * Writes, if a recording wants it, a call on {@code bytes} at {@code address} that took {@code nanos} on the
     * allocator and device named.
     */
    final void write(String allocatorName, String deviceId, long address, long bytes, long nanos, boolean ok) {
        if (shouldCommit()) {
            source(allocatorName, deviceId);
            this.address = address;
            this.size = bytes;
            this.callDuration = nanos;
            this.succeeded = ok;
            commit();
        }
    }
}
