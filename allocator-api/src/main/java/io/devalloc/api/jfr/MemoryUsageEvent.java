package io.devalloc.api.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;

/**
 * {@value #NAME}: the gauges of one pool of an allocator (pool {@code all} for the whole allocator), written every
 * period by a hook registered with {@link jdk.jfr.FlightRecorder#addPeriodicEvent}: one event per
 * {@link io.devalloc.api.stats.PoolUsage} of {@link io.devalloc.api.DeviceAllocator#memoryUsage()}.
 */
@Name(MemoryUsageEvent.NAME)
@Label("Memory Usage")
@Category({"devalloc", "Allocator"})
@Description("An allocator's memory gauges, one event per pool (pool 'all' is the whole allocator)")
@Period("1 s")
@StackTrace(false)
final class MemoryUsageEvent extends AllocatorEvent {

    static final String NAME = "io.devalloc.MemoryUsage";

    @Label("Pool")
    @Description("'all' for the whole allocator, else the pool's name (small, large for caching)")
    String pool;

    @Label("Reserved")
    @Description("Bytes held from the device")
    @DataAmount(DataAmount.BYTES)
    long reserved;

    @Label("Allocated")
    @Description("Bytes in live allocations as the allocator sized them")
    @DataAmount(DataAmount.BYTES)
    long allocated;

    @Label("Active")
    @Description("Bytes of blocks in use: allocated, plus freed blocks still waiting on a stream's event")
    @DataAmount(DataAmount.BYTES)
    long active;

    @Label("Requested")
    @Description("Bytes of live allocations as callers asked them")
    @DataAmount(DataAmount.BYTES)
    long requested;

    @Label("Inactive Split")
    @Description("Bytes of free blocks that are pieces of a split segment")
    @DataAmount(DataAmount.BYTES)
    long inactiveSplit;
}
