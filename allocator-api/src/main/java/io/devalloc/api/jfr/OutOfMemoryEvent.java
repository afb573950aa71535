package io.devalloc.api.jfr;

import io.devalloc.api.error.OutOfMemoryException;
import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * {@value #NAME}: an allocation failed for want of memory. One event per failed attempt, before an out-of-memory
 * handler is asked whether to retry (so a request the handler retried twice and then served gives two events, each
 * followed by an {@value AllocationRetryEvent#NAME}).
 */
@Name(OutOfMemoryEvent.NAME)
@Label("Out of Memory")
@Category({"devalloc", "Allocator"})
@Description("An allocation failed for want of memory (before any out-of-memory handler is asked to retry)")
final class OutOfMemoryEvent extends AllocatorEvent {

    static final String NAME = "io.devalloc.OutOfMemory";

    @Label("Requested Size")
    @Description("The bytes the caller asked for")
    @DataAmount(DataAmount.BYTES)
    long requestedSize;

    @Label("Reason")
    @Description("DEVICE_EXHAUSTED, LIMIT_REACHED or REQUEST_TOO_LARGE")
    String reason;

    @Label("Device Free")
    @Description("The device's free memory when the allocation failed")
    @DataAmount(DataAmount.BYTES)
    long deviceFree;

    @Label("Reserved")
    @Description("The bytes the allocator held from the device")
    @DataAmount(DataAmount.BYTES)
    long reserved;

    @Label("Allocated")
    @Description("The bytes in the allocator's live allocations")
    @DataAmount(DataAmount.BYTES)
    long allocated;

    @Label("Message")
    @Description("The error's message, as the caller sees it")
    String message;

    /**
     * Writes, if a recording wants it, the failed allocation of {@code requestedBytes} on the allocator and device
     * named.
     */
    void write(String allocatorName, String deviceId, long requestedBytes, OutOfMemoryException error) {
        if (shouldCommit()) {
            source(allocatorName, deviceId);
            this.requestedSize = requestedBytes;
            this.reason = error.reason().name();
            this.deviceFree = error.deviceFreeBytes();
            this.reserved = error.reservedBytes();
            this.allocated = error.allocatedBytes();
            this.message = error.getMessage();
            commit();
        }
    }
}
