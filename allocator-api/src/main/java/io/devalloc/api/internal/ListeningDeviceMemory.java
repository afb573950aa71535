package io.devalloc.api.internal;

import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.DeviceCall;
import io.devalloc.api.spi.ForwardingDeviceMemory;
import io.devalloc.api.spi.ForwardingVirtualMemory;
import java.util.Objects;
import java.util.Optional;

/**
 * The device as an allocator sees it when a listener is set: every {@code malloc}, {@code free}, {@code map} and
 * {@code unmap} timed and told to the listener, the rest forwarded untouched. This is how devalloc observes device
 * calls without a hook in any allocator: the builder hands the allocator this wrapper instead of the device, so an
 * allocator built without a listener runs exactly the code it ran before.
 *
 * <p>{@code free} carries no size on the port, so the wrapper remembers the size of each live {@code malloc} (one
 * hash-map entry per device allocation, a few per gigabyte: allocators cache). A call that throws is told as not
 * succeeded, then the exception goes on.
 *
 * <p>Thread-safe: the size map is guarded by this object; the listener is called outside it.
 */
public final class ListeningDeviceMemory extends ForwardingDeviceMemory {

    private final AllocatorListener listener;
    private final LongLongHashMap sizes = new LongLongHashMap(64);
    private final Optional<VirtualMemory> virtualMemory;

    /**
     * @param device   the device to observe
     * @param listener told of every call (guard it first: see {@link GuardedListener})
     */
    public ListeningDeviceMemory(DeviceMemory device, AllocatorListener listener) {
        super(device);
        this.listener = Objects.requireNonNull(listener, "listener");
        this.virtualMemory = device.virtualMemory().map(ListeningVirtualMemory::new);
    }

    @Override
    public long malloc(long bytes) {
        long start = System.nanoTime();
        long address;
        try {
            address = delegate().malloc(bytes);
        } catch (RuntimeException | Error e) {
            listener.deviceCall(DeviceCall.MALLOC, NULL, bytes, System.nanoTime() - start, false);
            throw e;
        }
        long nanos = System.nanoTime() - start;
        if (address != NULL) {
            synchronized (this) {
                sizes.put(address, bytes, 0);
            }
        }
        listener.deviceCall(DeviceCall.MALLOC, address, bytes, nanos, address != NULL);
        return address;
    }

    @Override
    public void free(long address) {
        long bytes;
        synchronized (this) {
            bytes = sizes.get(address, 0);
        }
        long start = System.nanoTime();
        try {
            delegate().free(address);
        } catch (RuntimeException | Error e) {
            listener.deviceCall(DeviceCall.FREE, address, bytes, System.nanoTime() - start, false);
            throw e;
        }
        long nanos = System.nanoTime() - start;
        synchronized (this) {
            sizes.remove(address, 0);
        }
        listener.deviceCall(DeviceCall.FREE, address, bytes, nanos, true);
    }

    @Override
    public Optional<VirtualMemory> virtualMemory() {
        return virtualMemory;
    }

    @Override
    public String toString() {
        return delegate().toString();
    }

    /** The device's virtual memory, its {@code map} and {@code unmap} told to the listener. */
    private final class ListeningVirtualMemory extends ForwardingVirtualMemory {

        ListeningVirtualMemory(VirtualMemory delegate) {
            super(delegate);
        }

        @Override
        public boolean map(long address, long bytes, long pieceBytes) {
            long start = System.nanoTime();
            boolean mapped;
            try {
                mapped = delegate().map(address, bytes, pieceBytes);
            } catch (RuntimeException | Error e) {
                listener.deviceCall(DeviceCall.MAP, address, bytes, System.nanoTime() - start, false);
                throw e;
            }
            listener.deviceCall(DeviceCall.MAP, address, bytes, System.nanoTime() - start, mapped);
            return mapped;
        }

        @Override
        public void unmap(long address, long bytes) {
            long start = System.nanoTime();
            try {
                delegate().unmap(address, bytes);
            } catch (RuntimeException | Error e) {
                // The port's contract: a failed unmap counts as unmapped.
                listener.deviceCall(DeviceCall.UNMAP, address, bytes, System.nanoTime() - start, false);
                throw e;
            }
            listener.deviceCall(DeviceCall.UNMAP, address, bytes, System.nanoTime() - start, true);
        }

        @Override
        public String toString() {
            return delegate().toString();
        }
    }
}
