package io.devalloc.api.jfr;

import io.devalloc.api.observe.AllocatorListener.RetryCause;
import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** {@value #NAME}: the allocator tries an allocation again (after releasing its cache, waiting, or a handler's ask). */
@Name(AllocationRetryEvent.NAME)
@Label("Allocation Retry")
@Category({"devalloc", "Allocator"})
@Description("The allocator tries an allocation again: after releasing cached memory, waiting for frees, or at an"
        + " out-of-memory handler's request")
final class AllocationRetryEvent extends AllocatorEvent {

    static final String NAME = "io.devalloc.AllocationRetry";

    @Label("Requested Size")
    @Description("The bytes the caller asked for")
    @DataAmount(DataAmount.BYTES)
    long requestedSize;

    @Label("Attempt")
    @Description("1 for the first retry of this request, 2 for the second, ...")
    int attempt;

    @Label("Cause")
    @Description("CACHE_RELEASED, FREES_AWAITED or HANDLER")
    String cause;

    /**
     * Writes, if a recording wants it, retry {@code attempt} of a request for {@code requestedBytes} on the allocator
     * and device named.
     */
    void write(String allocatorName, String deviceId, long requestedBytes, int attempt, RetryCause cause) {
        if (shouldCommit()) {
            source(allocatorName, deviceId);
            this.requestedSize = requestedBytes;
            this.attempt = attempt;
            this.cause = cause.name();
            commit();
        }
    }
}
