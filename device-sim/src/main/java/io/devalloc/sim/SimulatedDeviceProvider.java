package io.devalloc.sim;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.units.ByteSize;

/**
 * Provider {@code sim}: a {@link SimulatedDevice}, always available, lowest priority (it is never the "best"
 * device when real memory exists). The spec argument is the capacity: {@code sim:80GiB}, {@code sim:512MiB};
 * {@code sim} or {@code sim:0} give 80 GiB, at most 32 TiB. Every open makes a new, independent device.
 * Stateless and thread-safe.
 */
public final class SimulatedDeviceProvider implements DeviceMemoryProvider {

    /** Creates the provider; {@link java.util.ServiceLoader} calls this. */
    public SimulatedDeviceProvider() {
    }

    public static final String NAME = "sim";
    public static final long DEFAULT_CAPACITY = 80 * ByteSize.GiB;
    /** Half of the default address space, so that fragmentation of the address space never limits a full device. */
    public static final long MAX_CAPACITY = SimulatedDevice.DEFAULT_ADDRESS_SPACE / 2;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "simulated GPU: addresses and accounting without memory, top-down like the CUDA driver";
    }

    @Override
    public int priority() {
        return 1;
    }

    @Override
    public Availability probe() {
        return Availability.available("always available (no memory behind the addresses)");
    }

    @Override
    public int deviceCount() {
        return 1;
    }

    @Override
    public String argumentHelp() {
        return "capacity such as 80GiB or 1.8GiB, rounded down to bytes (default 80GiB)";
    }

    @Override
    public DeviceMemory open(String argument) {
        return SimulatedDevice.ofCapacity(parseCapacity(argument));
    }

    static long parseCapacity(String argument) {
        if (argument == null || argument.isBlank() || argument.strip().equals("0")) {
            return DEFAULT_CAPACITY;
        }
        String a = argument.strip();
        if (a.chars().allMatch(Character::isDigit)) {
            throw new InvalidConfigurationException("device", "sim:" + a, "sim:" + a
                    + " is ambiguous: give the capacity with a unit, e.g. sim:80GiB (the simulator has one device,"
                    + " index 0)");
        }
        long capacity;
        try {
            // Decimal sizes are rounded down to bytes, as advise's --capacity is, so that its card (sim:1.8GiB)
            // can be replayed as written.
            capacity = ByteSize.parseRoundingDown(a);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationException("device", "sim:" + a, "bad capacity in device spec sim:" + a
                    + ": " + e.getMessage());
        }
        if (capacity > MAX_CAPACITY) {
            throw new InvalidConfigurationException("device", "sim:" + a, "simulated capacity must be at most "
                    + ByteSize.format(MAX_CAPACITY) + " (half the simulated address space), got " + a);
        }
        if (capacity < ByteSize.MiB) {
            throw new InvalidConfigurationException("device", "sim:" + a,
                    "simulated capacity must be at least 1MiB, got " + a);
        }
        return capacity;
    }
}
