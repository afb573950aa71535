package io.devalloc.api.spi;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.internal.AllocationRequest;
import io.devalloc.api.internal.Failures;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What every allocator repeats, written once: the device it allocates from and whether it owns it, the lock that
 * guards its state, the argument checks and the null allocation of size 0, the check that it is open, and a
 * {@link #close()} that returns everything once, keeps going past device failures, closes an owned device last, and
 * throws the first failure with the others suppressed.
 *
 * <p>A subclass implements the algorithm and {@link #releaseAll(CloseFailures)}; it takes {@link #lock} around its
 * state and calls {@link #ensureOpen()} inside it. {@code close()} runs {@code releaseAll} exactly once, under the
 * lock, after which {@link #isClosed()} is true and {@link #ensureOpen()} throws; the contract of
 * {@link DeviceAllocator} for closed allocators (stats and snapshots still answer) is the subclass's to keep.
 *
 * <p>Thread-safe as far as this class goes: {@code close()} may race any call; the flag it sets is volatile.
 */
public abstract class AbstractDeviceAllocator implements DeviceAllocator {

    /** Guards the subclass's state; {@link #close()} holds it while {@link #releaseAll} runs. */
    protected final ReentrantLock lock = new ReentrantLock();

    private final DeviceMemory device;
    private final boolean ownsDevice;
    private volatile boolean closed;

    /**
     * @param device     the device to allocate from
     * @param ownsDevice whether {@link #close()} closes the device too (allocators built by
     *                   {@code DeviceAllocators} own theirs)
     */
    protected AbstractDeviceAllocator(DeviceMemory device, boolean ownsDevice) {
        this.device = Objects.requireNonNull(device, "device");
        this.ownsDevice = ownsDevice;
    }

    @Override
    public final DeviceMemory device() {
        return device;
    }

    /** Whether {@link #close()} closes the device too. */
    protected final boolean ownsDevice() {
        return ownsDevice;
    }

    @Override
    public final boolean isClosed() {
        return closed;
    }

    /**
     * The argument checks every allocator makes on a request (a negative size, a null stream: an
     * {@link IllegalArgumentException} or {@link NullPointerException} that changes nothing).
     *
     * @return true when the request is the null allocation (size 0), which returns address 0 and changes nothing
     */
    protected static boolean isNullRequest(long bytes, DeviceStream stream) {
        AllocationRequest.check(bytes, stream);
        return bytes == 0;
    }

    /** Throws {@link IllegalStateException} when closed; call it with {@link #lock} held. */
    protected final void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    /**
     * Returns every byte to the device, once: runs {@link #releaseAll} under {@link #lock}, then closes the device if
     * this allocator owns it, even if releasing failed. Later calls do nothing.
     *
     * @throws RuntimeException the first failure (device frees, unmaps, event destruction, the device's close), with
     *                          every later one suppressed
     */
    @Override
    public final void close() {
        CloseFailures failures = new CloseFailures();
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            failures.attempt(() -> releaseAll(failures));
        } finally {
            lock.unlock();
            if (ownsDevice) {
                failures.attempt(device::close);
            }
        }
        failures.throwFirst();
    }

    /**
     * Gives back everything the allocator holds: called once, by {@link #close()}, with {@link #lock} held and
     * {@link #isClosed()} already true. Record a failure and carry on (e.g. with {@link CloseFailures#attempt}), so
     * that one device error loses no other memory.
     */
    protected abstract void releaseAll(CloseFailures failures);

    /** The failures of one close, the first one thrown with the others suppressed. Not thread-safe. */
    protected static final class CloseFailures {
        private RuntimeException first;

        CloseFailures() {
        }

        /** Records a failure. */
        public void add(RuntimeException failure) {
            first = Failures.chain(first, Objects.requireNonNull(failure, "failure"));
        }

        /** Runs {@code step}, recording a {@link RuntimeException} it throws instead of letting it out. */
        public void attempt(Runnable step) {
            try {
                step.run();
            } catch (RuntimeException e) {
                add(e);
            }
        }

        /** Whether anything failed so far. */
        public boolean any() {
            return first != null;
        }

        void throwFirst() {
            if (first != null) {
                throw first;
            }
        }
    }
}
