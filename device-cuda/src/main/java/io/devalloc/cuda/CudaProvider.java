package io.devalloc.cuda;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.internal.CachedProbe;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What the {@code cuda} and {@code cuda-host} providers share: the probe, shared by both and asked lazily, and
 * reading the device argument (a CUDA device index) and checking it against the probe.
 *
 * <p>Thread-safe. The constructor does no work and loads no JCuda class.
 */
abstract class CudaProvider implements DeviceMemoryProvider {

    static final String ARGUMENT_HELP = "CUDA device index, 0 (the default) to the device count minus one";

    private final String name;
    private final Supplier<CudaAvailability> availability;

    CudaProvider(String name, Supplier<CudaAvailability> availability) {
        this.name = name;
        this.availability = Objects.requireNonNull(availability, "availability");
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final Availability probe() {
        return availability.get().probe().availability();
    }

    @Override
    public final int deviceCount() {
        return availability.get().probe().deviceCount();
    }

    @Override
    public final DeviceMemory open(String argument) {
        CudaAvailability.Probe probe = availability.get().probe();
        return open(probe, deviceIndex(name, argument, probe));
    }

    /** Opens device {@code index}, which the probe has. */
    abstract DeviceMemory open(CudaAvailability.Probe probe, int index);

    /**
     * The device index in {@code argument}, checked against the probe.
     *
     * @throws InvalidConfigurationException if the argument is not a device index
     * @throws DeviceUnavailableException    if CUDA is unavailable, or there is no device with that index
     */
    static int deviceIndex(String provider, String argument, CudaAvailability.Probe probe) {
        int index = parseIndex(provider, argument);
        CachedProbe.requireAvailable(provider, probe.availability());
        int count = probe.deviceCount();
        if (index >= count) {
            throw new DeviceUnavailableException("no CUDA device " + index + " for provider '" + provider
                    + "': this machine has " + count + (count == 1 ? " CUDA device (index 0)"
                    : " CUDA devices (indices 0 to " + (count - 1) + ")"));
        }
        return index;
    }

    /** {@code ""} is device 0; otherwise a non-negative decimal index. */
    static int parseIndex(String provider, String argument) {
        Objects.requireNonNull(argument, "argument");
        String arg = argument.strip();
        if (arg.isEmpty()) {
            return 0;
        }
        if (arg.chars().allMatch(c -> c >= '0' && c <= '9')) {
            try {
                return Integer.parseInt(arg);
            } catch (NumberFormatException e) {
                // Too many digits: fall through to the message below.
            }
        }
        throw new InvalidConfigurationException("device", argument, "malformed argument in device spec '" + provider
                + ":" + argument + "': " + provider + " takes a " + ARGUMENT_HELP + ", e.g. " + provider + ":0");
    }
}
