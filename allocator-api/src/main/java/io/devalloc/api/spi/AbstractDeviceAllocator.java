package io.devalloc.api.spi;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.error.UnknownStreamException;
import io.devalloc.api.internal.AllocationRequest;
import io.devalloc.api.internal.Failures;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import java.util.Collection;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * What every allocator repeats, written once: the device it allocates from and whether it owns it, the lock that
 * guards its state, the argument checks and the null allocation of size 0, the check that it is open, the free path
 * and its checks, the listener and the timing of cache releases it is told of, and a {@link #close()} that returns
 * everything once, keeps going past device failures, closes an owned device last, and throws the first failure with
 * the others suppressed.
 *
 * <p>A subclass implements the algorithm and {@link #releaseAll(CloseFailures)}; it takes {@link #lock} around its
 * state and calls {@link #ensureOpen()} inside it. {@code close()} runs {@code releaseAll} exactly once, under the
 * lock, after which {@link #isClosed()} is true and {@link #ensureOpen()} throws; the contract of
 * {@link DeviceAllocator} for closed allocators (stats and snapshots still answer) is the subclass's to keep.
 *
 * <p><b>The free path</b> is a template: {@link #free(long)}, {@link #free(long, long)} and
 * {@link #allocationId(long)} take the lock, check, and throw the {@link InvalidFreeException}s of the contract
 * ({@code UNKNOWN_ADDRESS} for an address that is not live, {@code DOUBLE_FREE} for a stale allocation id); the
 * subclass answers the questions with plain methods, so that the free path stays free of lambdas and boxing:
 * {@link #liveAllocation} (its own handle of the live allocation at an address), {@link #allocationIdOf},
 * {@link #releaseAllocation} (the algorithm's free), and, where it needs them, {@link #beginFreeLocked},
 * {@link #afterFree} and {@link #issueAllocationId}.
 *
 * <p><b>Cold reads</b> (getters read when a registry scrapes or a test asks) take the lock with
 * {@link #readLocked(LongSupplier)} or {@link #copyLocked(Supplier)}; never on allocate or free.
 *
 * <p>Thread-safe as far as this class goes: {@code close()} may race any call; the flag it sets is volatile.
 */
public abstract class AbstractDeviceAllocator implements DeviceAllocator {

    /** Guards the subclass's state; {@link #close()} holds it while {@link #releaseAll} runs. */
    protected final ReentrantLock lock = new ReentrantLock();

    /** What {@link #liveAllocation} answers for an address that is not a live allocation. */
    protected static final long NOT_LIVE = -1;

    private final DeviceMemory device;
    private final boolean ownsDevice;
    private volatile boolean closed;
    /** Told of retries and cache releases; {@link AllocatorListener#NONE} when none was set. */
    private final AllocatorListener listener;
    /** Whether a listener was set: computed once, so that no release is timed for nobody. */
    private final boolean listening;

    /**
     * An allocator that tells no listener.
     *
     * @param device     the device to allocate from
     * @param ownsDevice whether {@link #close()} closes the device too (allocators built by
     *                   {@code DeviceAllocators} own theirs)
     */
    protected AbstractDeviceAllocator(DeviceMemory device, boolean ownsDevice) {
        this(device, ownsDevice, AllocatorListener.NONE);
    }

    /**
     * @param device     the device to allocate from
     * @param ownsDevice whether {@link #close()} closes the device too (allocators built by
     *                   {@code DeviceAllocators} own theirs)
     * @param listener   told of retries ({@link #tellRetried}) and cache releases ({@link #startRelease},
     *                   {@link #endRelease}), with the lock held; {@link AllocatorListener#NONE} for none
     */
    protected AbstractDeviceAllocator(DeviceMemory device, boolean ownsDevice, AllocatorListener listener) {
        this.device = Objects.requireNonNull(device, "device");
        this.ownsDevice = ownsDevice;
        this.listener = Objects.requireNonNull(listener, "listener");
        this.listening = !AllocatorListener.NONE.equals(listener);
    }

    @Override
    public final DeviceMemory device() {
        return device;
    }

    /** {@code allocator 'NAME' on DEVICE}, as error messages and logs name an allocator. */
    @Override
    public String toString() {
        return "allocator '" + name() + "' on " + device.descriptor().id();
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

    // ------------------------------------------------------------------------------------------------ free

    /**
     * Frees the live allocation at {@code address}; address 0 (the null allocation) does nothing but
     * {@link #afterFree}. Under the lock: {@link #beginFreeLocked}, the open check, the lookup, then
     * {@link #releaseAllocation}; {@link #afterFree} once the lock is released, if the free succeeded.
     *
     * @throws InvalidFreeException with {@code UNKNOWN_ADDRESS} if it is not a live allocation (nothing changes)
     */
    @Override
    public final void free(long address) {
        if (address == 0) {
            afterFree();
            return;
        }
        lock.lock();
        try {
            beginFreeLocked();
            ensureOpen();
            long allocation = liveAllocation(address);
            if (allocation == NOT_LIVE) {
                throw new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, address, toString());
            }
            releaseAllocation(address, allocation);
        } finally {
            lock.unlock();
        }
        afterFree();
    }

    /**
     * Frees the allocation at {@code address} if it is still the one {@code allocationId} names, as
     * {@link #free(long)} does.
     *
     * @throws InvalidFreeException with {@code DOUBLE_FREE} if no live allocation at {@code address} has that id
     *                              (nothing changes)
     */
    @Override
    public final void free(long address, long allocationId) {
        lock.lock();
        try {
            beginFreeLocked();
            ensureOpen();
            long allocation = liveAllocation(address);
            if (allocation == NOT_LIVE || allocationIdOf(allocation) != allocationId) {
                throw new InvalidFreeException(InvalidFreeException.Reason.DOUBLE_FREE, address, toString());
            }
            releaseAllocation(address, allocation);
        } finally {
            lock.unlock();
        }
        afterFree();
    }

    /**
     * Marks the live allocation at {@code address} as used on {@code stream}; address 0 (the null allocation) does
     * nothing. Under the lock: the open check, the lookup, the check that the device has the stream, then
     * {@link #recordStreamLocked}.
     *
     * @throws InvalidFreeException   with {@code UNKNOWN_ADDRESS} if it is not a live allocation (nothing changes)
     * @throws UnknownStreamException if the device does not have the stream (nothing changes)
     */
    @Override
    public void recordStream(long address, DeviceStream stream) {
        Objects.requireNonNull(stream, "stream");
        if (address == 0) {
            return;
        }
        lock.lock();
        try {
            ensureOpen();
            long allocation = liveAllocation(address);
            if (allocation == NOT_LIVE) {
                throw new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, address, toString());
            }
            if (!device().hasStream(stream)) {
                throw new UnknownStreamException(stream, toString());
            }
            recordStreamLocked(allocation, stream);
        } finally {
            lock.unlock();
        }
    }

    /**
     * What {@link #recordStream} does to a live allocation once checked, with the lock held: nothing here, for an
     * allocator that never reuses memory before the device is done with it.
     */
    protected void recordStreamLocked(long allocation, DeviceStream stream) {
    }

    /**
     * The id of the live allocation at {@code address} ({@link #issueAllocationId}), under the lock; answers on a
     * closed allocator too, where nothing is live.
     *
     * @throws InvalidFreeException with {@code UNKNOWN_ADDRESS} if it is not a live allocation
     */
    @Override
    public final long allocationId(long address) {
        lock.lock();
        try {
            long allocation = liveAllocation(address);
            if (allocation == NOT_LIVE) {
                throw new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, address, toString());
            }
            return issueAllocationId(allocation);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The subclass's handle of the live allocation at exactly {@code address} (a block or chunk index, an id: any
     * value but {@link #NOT_LIVE}), or {@code NOT_LIVE}. Called with the lock held; changes nothing.
     */
    protected abstract long liveAllocation(long address);

    /**
     * The allocation id of a live allocation, as {@link #free(long, long)} compares it: no id is ever issued twice
     * while the allocator lives. Called with the lock held; changes nothing.
     */
    protected abstract long allocationIdOf(long allocation);

    /**
     * The id {@link #allocationId(long)} answers for a live allocation: {@link #allocationIdOf} unless the subclass
     * issues ids on first request. Called with the lock held.
     */
    protected long issueAllocationId(long allocation) {
        return allocationIdOf(allocation);
    }

    /**
     * The algorithm's free of the live allocation at {@code address} found by {@link #liveAllocation}, with the
     * lock held and the allocator open. A device failure it throws reaches the caller; leave the allocation live
     * then, as the contract asks.
     */
    protected abstract void releaseAllocation(long address, long allocation);

    /** Called first in a free, with the lock held, before the open check (e.g. to begin a history call). */
    protected void beginFreeLocked() {
    }

    /**
     * Called after a free succeeded, with the lock released, and after a free of address 0 (e.g. to wake
     * allocations waiting for memory).
     */
    protected void afterFree() {
    }

    // ------------------------------------------------------------------------------------------------ cold reads

    /** Runs {@code read} with the lock held: for cold getters only, never on allocate or free. */
    protected final long readLocked(LongSupplier read) {
        lock.lock();
        try {
            return read.getAsLong();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code copy} with the lock held, so that what it builds (a list, a map, a stats record) is consistent:
     * for cold reads only, never on allocate or free.
     */
    protected final <T> T copyLocked(Supplier<T> copy) {
        lock.lock();
        try {
            return copy.get();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code change} with the lock held: for cold controls only (resetting statistics, say), never on allocate
     * or free.
     */
    protected final void runLocked(Runnable change) {
        lock.lock();
        try {
            change.run();
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------------ listener

    /** Whether a listener was set: what to check before working out what only a listener would be told. */
    protected final boolean listening() {
        return listening;
    }

    /** Tells the listener that an allocation of {@code bytes} was retried once, for {@code cause}, if one is set. */
    protected final void tellRetried(long bytes, RetryCause cause) {
        if (listening) {
            listener.allocationRetried(bytes, 1, cause);
        }
    }

    /**
     * The start of a release of cached memory, for {@link #endRelease}: {@link System#nanoTime()} when a listener is
     * set, else 0 (nothing is timed for nobody). Read the bytes held before it too, so that {@code endRelease} can
     * tell what the release gave back.
     */
    protected final long startRelease() {
        return listening ? System.nanoTime() : 0;
    }

    /**
     * Tells the listener, if one is set, of a release of cached memory begun with {@link #startRelease} that gave
     * {@code releasedBytes} back to the device; call it in a {@code finally}, so that a release that failed part
     * way is told what it did give back. With {@code evenNothing} false, a release that gave nothing back is not
     * told (releases that run on cache misses would be noise).
     */
    protected final void endRelease(long start, long releasedBytes, boolean evenNothing) {
        if (listening && (releasedBytes > 0 || evenNothing)) {
            listener.cacheReleased(releasedBytes, System.nanoTime() - start);
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

    /**
     * For {@link #releaseAll}: destroys every event of {@code events} (an allocator's pool of idle events) on the
     * device and empties it, recording each failure and carrying on, so that one event the device cannot destroy
     * leaks no other.
     */
    protected final void destroyEvents(Collection<DeviceEvent> events, CloseFailures failures) {
        for (DeviceEvent e : events) {
            try {
                device.destroyEvent(e);
            } catch (RuntimeException ex) {
                failures.add(ex);
            }
        }
        events.clear();
    }

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
