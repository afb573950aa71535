package io.devalloc.api.spi;

import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.Optional;

/**
 * A device decorator's starting point (counting, fault injection, observation): every method of
 * {@link DeviceMemory} forwarded to {@link #delegate()}. {@link #virtualMemory()} forwards the delegate's virtual
 * memory unchanged; a decorator that watches maps too wraps it in a {@link ForwardingVirtualMemory}. Override what
 * the decorator changes.
 *
 * <p>As thread-safe as the delegate and the overrides.
 */
public abstract class ForwardingDeviceMemory implements DeviceMemory {

    private final DeviceMemory delegate;

    protected ForwardingDeviceMemory(DeviceMemory delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The device this one decorates. */
    public DeviceMemory delegate() {
        return delegate;
    }

    @Override
    public DeviceDescriptor descriptor() {
        return delegate.descriptor();
    }

    @Override
    public long alignment() {
        return delegate.alignment();
    }

    @Override
    public long malloc(long bytes) {
        return delegate.malloc(bytes);
    }

    @Override
    public void free(long address) {
        delegate.free(address);
    }

    @Override
    public MemoryInfo memoryInfo() {
        return delegate.memoryInfo();
    }

    @Override
    public DeviceStream createStream() {
        return delegate.createStream();
    }

    @Override
    public void destroyStream(DeviceStream stream) {
        delegate.destroyStream(stream);
    }

    @Override
    public boolean hasStream(DeviceStream stream) {
        return delegate.hasStream(stream);
    }

    @Override
    public DeviceEvent createEvent() {
        return delegate.createEvent();
    }

    @Override
    public void recordEvent(DeviceEvent event, DeviceStream stream) {
        delegate.recordEvent(event, stream);
    }

    @Override
    public boolean isEventComplete(DeviceEvent event) {
        return delegate.isEventComplete(event);
    }

    @Override
    public void synchronizeEvent(DeviceEvent event) {
        delegate.synchronizeEvent(event);
    }

    @Override
    public void destroyEvent(DeviceEvent event) {
        delegate.destroyEvent(event);
    }

    @Override
    public void synchronize() {
        delegate.synchronize();
    }

    @Override
    public Optional<VirtualMemory> virtualMemory() {
        return delegate.virtualMemory();
    }

    @Override
    public Optional<MemorySegment> hostView(long address, long bytes) {
        return delegate.hostView(address, bytes);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
