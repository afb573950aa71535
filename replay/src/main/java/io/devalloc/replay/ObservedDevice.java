package io.devalloc.replay;

import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.spi.ForwardingDeviceMemory;
import io.devalloc.api.spi.ForwardingVirtualMemory;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@link DeviceMemory} decorator that counts what an allocator takes from the device and gives back: successful
 * mallocs and virtual-memory maps ("grows"), frees and unmaps ("shrinks"), with their sizes, reported to a
 * {@link Listener} as primitive arguments (no boxing, no record per call). Everything else is passed through.
 *
 * <p>Counting starts with {@link #startObserving()}, so that a warm start's restored segments are not counted as
 * the replay's device mallocs; sizes of live mallocs are tracked from the start, so that freeing a restored segment
 * reports its size. Thread-safe, as the port requires: the bookkeeping is guarded by this object's lock.
 */
final class ObservedDevice extends ForwardingDeviceMemory {

    /** What the decorator reports; called on the allocator's thread, inside the allocator's call. */
    interface Listener {
        /** A successful device malloc ({@code map} false) or virtual-memory map ({@code map} true) of {@code bytes}. */
        void grew(long bytes, boolean map);

        /** A device free or unmap of {@code bytes}. */
        void shrank(long bytes, boolean unmap);
    }

    private static final long MISSING = -1;

    private final DeviceMemory delegate;
    private final Listener listener;
    private final LongLongHashMap live = new LongLongHashMap(256);
    private final Optional<VirtualMemory> virtualMemory;
    private boolean observing;
    private long mallocs;
    private long frees;
    private long maps;
    private long unmaps;
    /**
     * While positive, mallocs and maps are refused ("no memory") and each free or unmap counts it down: the trace's
     * own cache flush, reproduced ({@link #refuseGrowthUntilShrinks}).
     */
    private long refusals;

    ObservedDevice(DeviceMemory delegate, Listener listener) {
        super(delegate);
        this.delegate = delegate;
        this.listener = Objects.requireNonNull(listener, "listener");
        this.virtualMemory = delegate.virtualMemory().map(ObservedVirtualMemory::new);
    }

    /** The device being observed. */
    @Override
    public DeviceMemory delegate() {
        return delegate;
    }

    /** Counts and reports from now on. */
    synchronized void startObserving() {
        observing = true;
    }

    /**
     * Successful mallocs plus maps since {@link #startObserving()}. Read without the lock, for the replay's hot loop:
     * exact on the thread that makes the allocator's calls (the replaying thread), which is the only one that asks.
     */
    long grows() {
        return mallocs + maps;
    }

    /** Frees plus unmaps since {@link #startObserving()}; read without the lock, as {@link #grows()}. */
    long shrinks() {
        return frees + unmaps;
    }

    synchronized long mallocs() {
        return mallocs;
    }

    synchronized long frees() {
        return frees;
    }

    synchronized long maps() {
        return maps;
    }

    synchronized long unmaps() {
        return unmaps;
    }



    /**
     * Refuses every malloc and map as "no memory", as a full device would, until the allocator has freed or unmapped
     * {@code shrinks} times ({@link Long#MAX_VALUE}: until {@link #stopRefusing()}). A warm replay reproduces the
     * recorded allocator's own cache flush this way: the device malloc that failed in the recording fails here too,
     * and the allocator's retry ladder frees what it frees, until as many segments went as in the recording.
     */
    synchronized void refuseGrowthUntilShrinks(long shrinks) {
        refusals = Math.max(0, shrinks);
    }

    /** Ends {@link #refuseGrowthUntilShrinks}. */
    synchronized void stopRefusing() {
        refusals = 0;
    }

    /** Whether mallocs and maps are refused now. */
    synchronized boolean refusing() {
        return refusals > 0;
    }

    private synchronized void shrunk() {
        if (refusals > 0 && refusals != Long.MAX_VALUE) {
            refusals--;
        }
    }

    @Override
    public long malloc(long bytes) {
        if (refusing()) {
            return NULL;
        }
        long address = delegate.malloc(bytes);
        if (address != NULL) {
            synchronized (this) {
                live.put(address, bytes, MISSING);
                if (observing) {
                    mallocs++;
                    listener.grew(bytes, false);
                }
            }
        }
        return address;
    }

    @Override
    public void free(long address) {
        delegate.free(address);
        shrunk();
        synchronized (this) {
            long bytes = live.remove(address, MISSING);
            if (observing) {
                frees++;
                listener.shrank(Math.max(0, bytes), false);
            }
        }
    }










    @Override
    public Optional<VirtualMemory> virtualMemory() {
        return virtualMemory;
    }



    @Override
    public String toString() {
        return "observed " + delegate;
    }

    /** Counts maps and unmaps; reservations cost no memory and are passed through uncounted. */
    private final class ObservedVirtualMemory extends ForwardingVirtualMemory {

        ObservedVirtualMemory(VirtualMemory vm) {
            super(vm);
        }

        /** Forwards the pieces as asked (the two-argument {@code map} arrives here as one-granule pieces). */
        @Override
        public boolean map(long address, long bytes, long pieceBytes) {
            if (refusing()) {
                return false;
            }
            boolean mapped = super.map(address, bytes, pieceBytes);
            if (mapped) {
                synchronized (ObservedDevice.this) {
                    if (observing) {
                        maps++;
                        listener.grew(bytes, true);
                    }
                }
            }
            return mapped;
        }

        @Override
        public void unmap(long address, long bytes) {
            super.unmap(address, bytes);
            shrunk();
            synchronized (ObservedDevice.this) {
                if (observing) {
                    unmaps++;
                    listener.shrank(bytes, true);
                }
            }
        }
    }
}
