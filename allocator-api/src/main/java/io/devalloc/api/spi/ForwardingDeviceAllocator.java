package io.devalloc.api.spi;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.stats.PoolUsage;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A decorator's starting point: every method of {@link DeviceAllocator} forwarded to {@link #delegate()}, and
 * {@link #unwrap} answered by this decorator or, failing that, by the allocator inside, so that a decorated
 * {@code caching} allocator still offers its own interface and capabilities. Override what the decorator changes.
 *
 * <p>As thread-safe as the delegate and the overrides.
 */
public abstract class ForwardingDeviceAllocator implements DeviceAllocator {

    private final DeviceAllocator delegate;

    protected ForwardingDeviceAllocator(DeviceAllocator delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The allocator this one decorates. */
    public DeviceAllocator delegate() {
        return delegate;
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
    public long allocationId(long address) {
        return delegate.allocationId(address);
    }

    @Override
    public void free(long address, long allocationId) {
        delegate.free(address, allocationId);
    }

    @Override
    public void recordStream(long address, DeviceStream stream) {
        delegate.recordStream(address, stream);
    }

    @Override
    public List<PoolUsage> memoryUsage() {
        return delegate.memoryUsage();
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
    public <T> Optional<T> unwrap(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : delegate.unwrap(type);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
