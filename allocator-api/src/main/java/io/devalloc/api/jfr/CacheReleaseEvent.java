package io.devalloc.api.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Timespan;

/** {@value #NAME}: the allocator gave cached, unused memory back to the device. */
@Name(CacheReleaseEvent.NAME)
@Label("Cache Release")
@Category({"devalloc", "Allocator"})
@Description("The allocator gave cached, unused memory back to the device (empty_cache, a release before a retry,"
        + " garbage collection of the cache)")
final class CacheReleaseEvent extends AllocatorEvent {

    static final String NAME = "io.devalloc.CacheRelease";

    @Label("Released Size")
    @Description("The bytes given back in this release (0 when there was nothing to give)")
    @DataAmount(DataAmount.BYTES)
    long releasedSize;

    @Label("Call Duration")
    @Description("How long the release took, wall-clock (the event's own duration is 0: it is written after the"
            + " release)")
    @Timespan(Timespan.NANOSECONDS)
    long callDuration;

    /**
     * Writes, if a recording wants it, a release of {@code bytes} that took {@code nanos} on the allocator and device
     * named.
     */
    void write(String allocatorName, String deviceId, long bytes, long nanos) {
        if (shouldCommit()) {
            source(allocatorName, deviceId);
            this.releasedSize = bytes;
            this.callDuration = nanos;
            commit();
        }
    }
}
