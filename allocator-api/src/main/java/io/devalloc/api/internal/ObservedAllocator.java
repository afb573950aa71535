package io.devalloc.api.internal;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.AllocationFailure;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.observe.MemoryGauge;
import io.devalloc.api.observe.OutOfMemoryHandler;
import io.devalloc.api.spi.ForwardingDeviceAllocator;
import io.devalloc.api.spi.LiveBytes;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The decorator the builder puts around an allocator that has a listener, an out-of-memory handler or thresholds:
 * tells the listener of out-of-memory errors, asks the handler whether to retry (with no allocator lock held, so it
 * may free through the allocator), and after each call that can move the reserved or allocated bytes reads them (a
 * plain field read through {@link LiveBytes}) for the threshold watches. Everything else is forwarded, and
 * {@code unwrap} still reaches the allocator inside.
 *
 * <p>Calls made on the allocator inside (through {@code unwrap}, e.g. {@code CachingAllocator.emptyCache()}) are not
 * seen here: the thresholds catch up at the next call made through this decorator.
 *
 * <p>Thread-safe as the allocator inside is; the handler and the threshold listeners must be thread-safe too.
 */
public final class ObservedAllocator extends ForwardingDeviceAllocator {

    private final AllocatorListener listener;
    private final OutOfMemoryHandler handler;
    private final int maxRetries;
    private final ThresholdWatch[] watches;
    private final LiveBytes live;
    /** The two figures as suppliers, made once: the watches read them afresh when a level is crossed. */
    private final LongSupplier reserved;
    private final LongSupplier allocated;

    /**
     * @param allocator  the allocator to observe
     * @param listener   told of out-of-memory errors and the handler's retries (guarded; may be
     *                   {@link AllocatorListener#NONE})
     * @param handler    asked on an out-of-memory error, or null
     * @param maxRetries the most retries the handler may ask for per request
     * @param watches    the threshold watches (started here from the allocator's current figures)
     */
    public ObservedAllocator(DeviceAllocator allocator, AllocatorListener listener, OutOfMemoryHandler handler,
                             int maxRetries, List<ThresholdWatch> watches) {
        super(allocator);
        this.listener = Objects.requireNonNull(listener, "listener");
        this.handler = handler;
        if (maxRetries < 0) {
            throw new IllegalArgumentException("maxRetries " + maxRetries + " < 0");
        }
        this.maxRetries = maxRetries;
        this.watches = watches.toArray(ThresholdWatch[]::new);
        this.live = allocator.unwrap(LiveBytes.class).orElse(null);
        this.reserved = this::reservedFigure;
        this.allocated = this::allocatedFigure;
        for (ThresholdWatch w : this.watches) {
            w.start(figure(w.gauge()));
        }
    }

    @Override
    public long malloc(long bytes, DeviceStream stream) {
        int retries = 0;
        while (true) {
            try {
                long address = delegate().malloc(bytes, stream);
                watch();
                return address;
            } catch (OutOfMemoryException e) {
                listener.outOfMemory(bytes, e);
                boolean retry = retries < maxRetries && askHandler(bytes, stream, retries, e);
                watch();
                if (!retry) {
                    throw e;
                }
                retries++;
                listener.allocationRetried(bytes, retries, RetryCause.HANDLER);
            }
        }
    }

    private boolean askHandler(long bytes, DeviceStream stream, int retries, OutOfMemoryException e) {
        if (handler == null) {
            return false;
        }
        try {
            return handler.onOutOfMemory(new AllocationFailure(bytes, stream, retries, delegate().stats(), e));
        } catch (RuntimeException | AssertionError | LinkageError failure) {
            e.addSuppressed(failure);
            return false;
        }
    }

    @Override
    public void free(long address) {
        try {
            delegate().free(address);
        } finally {
            watch();
        }
    }

    @Override
    public void free(long address, long allocationId) {
        try {
            delegate().free(address, allocationId);
        } finally {
            watch();
        }
    }

    @Override
    public void releaseCachedMemory() {
        try {
            delegate().releaseCachedMemory();
        } finally {
            watch();
        }
    }

    private void watch() {
        for (ThresholdWatch w : watches) {
            w.update(w.gauge() == MemoryGauge.RESERVED ? reserved : allocated);
        }
    }

    private long reservedFigure() {
        return figure(MemoryGauge.RESERVED);
    }

    private long allocatedFigure() {
        return figure(MemoryGauge.ALLOCATED);
    }

    private long figure(MemoryGauge gauge) {
        if (live != null) {
            return gauge == MemoryGauge.RESERVED ? live.reservedBytes() : live.allocatedBytes();
        }
        var stats = delegate().stats();
        return gauge == MemoryGauge.RESERVED ? stats.reservedBytes() : stats.allocatedBytes();
    }

    @Override
    public String toString() {
        return delegate().toString();
    }
}
