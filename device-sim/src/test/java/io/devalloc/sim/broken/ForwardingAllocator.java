package io.devalloc.sim.broken;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.stats.AllocatorStats;

/** Forwards everything to a correct allocator; fixtures override one method to break one rule. */
class ForwardingAllocator implements DeviceAllocator {

    final DeviceAllocator delegate;

    ForwardingAllocator(DeviceAllocator delegate) {
        this.delegate = delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public DeviceMemory device() {
        return delegate.device();
    }

    @Override
    public long malloc(long bytes, DeviceStream stream) {
        return delegate.malloc(bytes, stream);
    }

    @Override
    public void free(long address) {
        delegate.free(address);
    }

    @Override
    public void free(long address, long allocationId) {
        delegate.free(address, allocationId);
    }

    @Override
    public long allocationId(long address) {
        return delegate.allocationId(address);
    }

    @Override
    public void recordStream(long address, DeviceStream stream) {
        delegate.recordStream(address, stream);
    }

    @Override
    public AllocatorStats stats() {
        return delegate.stats();
    }

    @Override
    public void resetPeakStats() {
        delegate.resetPeakStats();
    }

    @Override
    public void releaseCachedMemory() {
        delegate.releaseCachedMemory();
    }

    @Override
    public MemorySnapshot snapshot() {
        return delegate.snapshot();
    }

    @Override
    public boolean isClosed() {
        return delegate.isClosed();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
