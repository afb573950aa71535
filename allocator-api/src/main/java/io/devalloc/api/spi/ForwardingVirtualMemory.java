package io.devalloc.api.spi;

import io.devalloc.api.device.VirtualMemory;
import java.util.Objects;

/**
 * A virtual-memory decorator's starting point: every method of {@link VirtualMemory} forwarded to
 * {@link #delegate()} (the two-argument {@code map} through the three-argument one, as the interface's default
 * does). Override what the decorator changes.
 *
 * <p>As thread-safe as the delegate and the overrides.
 */
public abstract class ForwardingVirtualMemory implements VirtualMemory {

    private final VirtualMemory delegate;

    protected ForwardingVirtualMemory(VirtualMemory delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The virtual memory this one decorates. */
    public VirtualMemory delegate() {
        return delegate;
    }

    @Override
    public long granularity() {
        return delegate.granularity();
    }

    @Override
    public long reserve(long bytes) {
        return delegate.reserve(bytes);
    }

    @Override
    public void release(long base) {
        delegate.release(base);
    }

    @Override
    public boolean map(long address, long bytes, long pieceBytes) {
        return delegate.map(address, bytes, pieceBytes);
    }

    @Override
    public void unmap(long address, long bytes) {
        delegate.unmap(address, bytes);
    }

    @Override
    public long mappedBytes() {
        return delegate.mappedBytes();
    }
}
