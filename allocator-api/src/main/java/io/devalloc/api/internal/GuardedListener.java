package io.devalloc.api.internal;

import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.observe.DeviceCall;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every listener a builder was given, each call passed to each in order, and whatever one throws caught, logged and
 * counted, so that a faulty listener never breaks an allocation nor keeps the others from being told. The first
 * failure of each listener is logged at WARN with its stack trace, later ones at DEBUG (a listener that throws on
 * every call must not flood the log of a program that allocates a million times a second).
 *
 * <p>A {@link VirtualMachineError} (out of Java heap, stack overflow) is not caught: nothing can be promised after it.
 *
 * <p>Thread-safe when the listeners are.
 */
public final class GuardedListener implements AllocatorListener {

    private static final Logger LOG = LoggerFactory.getLogger(GuardedListener.class);

    private final AllocatorListener[] listeners;
    private final AtomicLong failures = new AtomicLong();

    private GuardedListener(AllocatorListener[] listeners) {
        this.listeners = listeners;
    }

    /**
     * The listeners, guarded; {@link AllocatorListener#NONE} when the list is empty. A listener that is already
     * guarded is not guarded twice.
     */
    public static AllocatorListener of(List<? extends AllocatorListener> listeners) {
        List<AllocatorListener> real = listeners.stream().map(l -> Objects.requireNonNull(l, "listener"))
                .map(AllocatorListener.class::cast).toList();
        if (real.isEmpty()) {
            return AllocatorListener.NONE;
        }
        if (real.size() == 1 && real.get(0) instanceof GuardedListener guarded) {
            return guarded;
        }
        return new GuardedListener(real.toArray(AllocatorListener[]::new));
    }

    /** How many times a listener threw, over this guard's life. */
    public long failures() {
        return failures.get();
    }

    @Override
    public void deviceCall(DeviceCall call, long address, long bytes, long nanos, boolean succeeded) {
        for (AllocatorListener l : listeners) {
            try {
                l.deviceCall(call, address, bytes, nanos, succeeded);
            } catch (RuntimeException | Error e) {
                failed(l, "deviceCall", e);
            }
        }
    }

    @Override
    public void outOfMemory(long requestedBytes, OutOfMemoryException error) {
        for (AllocatorListener l : listeners) {
            try {
                l.outOfMemory(requestedBytes, error);
            } catch (RuntimeException | Error e) {
                failed(l, "outOfMemory", e);
            }
        }
    }

    @Override
    public void allocationRetried(long requestedBytes, int attempt, RetryCause cause) {
        for (AllocatorListener l : listeners) {
            try {
                l.allocationRetried(requestedBytes, attempt, cause);
            } catch (RuntimeException | Error e) {
                failed(l, "allocationRetried", e);
            }
        }
    }

    @Override
    public void cacheReleased(long bytes, long nanos) {
        for (AllocatorListener l : listeners) {
            try {
                l.cacheReleased(bytes, nanos);
            } catch (RuntimeException | Error e) {
                failed(l, "cacheReleased", e);
            }
        }
    }

    private void failed(AllocatorListener listener, String method, Throwable e) {
        if (e instanceof VirtualMachineError vmError) {
            throw vmError;
        }
        if (failures.getAndIncrement() == 0) {
            LOG.warn("Allocator listener {} threw from {}; ignored (later failures are logged at DEBUG)", listener,
                    method, e);
        } else {
            LOG.debug("Allocator listener {} threw from {}; ignored", listener, method, e);
        }
    }

    @Override
    public String toString() {
        return "GuardedListener" + List.of(listeners);
    }
}
