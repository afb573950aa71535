package io.devalloc.api.spi;

import io.devalloc.api.error.InvalidConfigurationException;
import java.util.Objects;

/**
 * A device spec string, {@code provider[:argument]}: {@code sim:80GiB}, {@code host}, {@code pinned-host},
 * {@code cuda:0}. {@code auto} (or an empty spec) means the best available device.
 *
 * @param provider the provider name, or {@code "auto"}
 * @param argument the text after the first colon ({@code ""} when there is none)
 */
public record DeviceSpec(String provider, String argument) {

    /** The spec that picks the best available device. */
    public static final String AUTO = "auto";

    public DeviceSpec {
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(argument, "argument");
    }

    /**
     * Parses a spec.
     *
     * @throws InvalidConfigurationException if the provider part is not a lower-case name
     */
    public static DeviceSpec parse(String spec) {
        if (spec == null || spec.isBlank()) {
            return new DeviceSpec(AUTO, "");
        }
        String s = spec.strip();
        int colon = s.indexOf(':');
        String name = colon < 0 ? s : s.substring(0, colon).strip();
        String arg = colon < 0 ? "" : s.substring(colon + 1).strip();
        if (!name.matches("[a-z][a-z0-9-]*")) {
            throw new InvalidConfigurationException("device", spec, "malformed device spec '" + spec
                    + "': expected provider[:argument] such as sim:80GiB, host, pinned-host, cuda:0 or auto");
        }
        if (colon >= 0 && arg.isEmpty()) {
            throw new InvalidConfigurationException("device", spec, "device spec '" + spec
                    + "' has a colon but no argument; drop the colon or give one, e.g. cuda:0");
        }
        if (name.equals(AUTO) && !arg.isEmpty()) {
            throw new InvalidConfigurationException("device", spec, "device spec 'auto' takes no argument");
        }
        return new DeviceSpec(name, arg);
    }

    /** Whether this asks for the best available device. */
    public boolean isAuto() {
        return provider.equals(AUTO);
    }

    @Override
    public String toString() {
        return argument.isEmpty() ? provider : provider + ":" + argument;
    }
}
