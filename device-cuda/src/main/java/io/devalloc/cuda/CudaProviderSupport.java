package io.devalloc.cuda;

import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.error.InvalidConfigurationException;
import java.util.Objects;

/**
 * What the {@code cuda} and {@code cuda-host} providers share: reading the device argument (a CUDA device index)
 * and checking it against the probe.
 */
final class CudaProviderSupport {

    static final String ARGUMENT_HELP = "CUDA device index, 0 (the default) to the device count minus one";

    private CudaProviderSupport() {
    }

    /**
     * The device index in {@code argument}, checked against the probe.
     *
     * @throws InvalidConfigurationException if the argument is not a device index
     * @throws DeviceUnavailableException    if CUDA is unavailable, or there is no device with that index
     */
    static int deviceIndex(String provider, String argument, CudaAvailability.Probe probe) {
        int index = parseIndex(provider, argument);
        if (!probe.availability().available()) {
            throw new DeviceUnavailableException("device provider '" + provider + "' is unavailable: "
                    + probe.availability().reason());
        }
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
