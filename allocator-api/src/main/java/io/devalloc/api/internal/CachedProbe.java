package io.devalloc.api.internal;

import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.spi.Availability;

/**
 * A device provider's probe, run once and remembered for the owner's life (the {@code host} and {@code cuda}
 * providers' probes of libc and of CUDA). A probe that met a {@link VirtualMachineError} is not remembered, since
 * such an error says nothing about the platform: the call that met it gets {@link #outOfResources()} and the next
 * call probes again.
 *
 * <p>Thread-safe: the probe runs at most once at a time, under this object's monitor, and its result is published
 * through a volatile field.
 *
 * @param <P> what the probe finds
 */
public abstract class CachedProbe<P> {

    private volatile P probe;

    protected CachedProbe() {
    }

    /** The probe, run on the first call. Never throws. */
    public final P probe() {
        P p = probe;
        if (p != null) {
            return p;
        }
        synchronized (this) {
            if (probe == null) {
                P computed = run();
                if (computed == null) {
                    return outOfResources();
                }
                probe = computed;
            }
            return probe;
        }
    }

    /** Runs the probe; never throws, and returns null after a {@link VirtualMachineError}, which is not cached. */
    protected abstract P run();

    /** The answer, not cached, when the probe ran out of resources. */
    protected abstract P outOfResources();

    /**
     * Throws unless the probe found the device usable.
     *
     * @throws DeviceUnavailableException naming the provider and the probe's reason
     */
    public static void requireAvailable(String provider, Availability availability) {
        if (!availability.available()) {
            throw new DeviceUnavailableException("device provider '" + provider + "' is unavailable: "
                    + availability.reason());
        }
    }
}
