package io.devalloc.api.jmx;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.spi.MemorySummary;
import io.devalloc.api.stats.PoolUsage;

/** The {@link AllocatorMXBean} of one allocator: every attribute read from the allocator when asked. */
final class AllocatorBean implements AllocatorMXBean {

    private final DeviceAllocator allocator;
    private final String name;

    AllocatorBean(DeviceAllocator allocator, String name) {
        this.allocator = allocator;
        this.name = name;
    }

    private PoolUsage total() {
        return allocator.memoryUsage().get(0);
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public String getAllocatorKind() {
        return allocator.name();
    }

    @Override
    public String getDeviceId() {
        return allocator.device().descriptor().id();
    }

    @Override
    public boolean isClosed() {
        return allocator.isClosed();
    }

    @Override
    public long getReservedBytes() {
        return allocator.stats().reservedBytes();
    }

    @Override
    public long getAllocatedBytes() {
        return allocator.stats().allocatedBytes();
    }

    @Override
    public long getActiveBytes() {
        return total().activeBytes();
    }

    @Override
    public long getRequestedBytes() {
        return allocator.stats().requestedBytes();
    }

    @Override
    public long getInactiveSplitBytes() {
        return total().inactiveSplitBytes();
    }

    @Override
    public long getCachedBytes() {
        return allocator.stats().cachedBytes();
    }

    @Override
    public long getPeakReservedBytes() {
        return allocator.stats().peakReservedBytes();
    }

    @Override
    public long getPeakAllocatedBytes() {
        return allocator.stats().peakAllocatedBytes();
    }

    @Override
    public long getPeakRequestedBytes() {
        return allocator.stats().peakRequestedBytes();
    }

    @Override
    public long getActiveAllocations() {
        return allocator.stats().activeAllocations();
    }

    @Override
    public long getPeakActiveAllocations() {
        return allocator.stats().peakActiveAllocations();
    }

    @Override
    public long getAllocationCount() {
        return allocator.stats().allocationCount();
    }

    @Override
    public long getFreeCount() {
        return allocator.stats().freeCount();
    }

    @Override
    public long getDeviceMallocs() {
        return allocator.stats().deviceMallocs();
    }

    @Override
    public long getDeviceFrees() {
        return allocator.stats().deviceFrees();
    }

    @Override
    public long getOutOfMemoryErrors() {
        return allocator.stats().outOfMemoryErrors();
    }

    @Override
    public long getAllocationRetries() {
        return allocator.stats().allocationRetries();
    }

    @Override
    public long getLimitBytes() {
        return allocator.stats().limitBytes();
    }

    @Override
    public void emptyCache() {
        allocator.releaseCachedMemory();
    }

    @Override
    public void resetPeakStats() {
        allocator.resetPeakStats();
    }

    @Override
    public String memorySummary() {
        return allocator.unwrap(MemorySummary.class).map(s -> s.memorySummary(false))
                .orElseGet(() -> StatsSummary.of(allocator, name));
    }
}
