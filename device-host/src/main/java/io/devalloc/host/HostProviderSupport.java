package io.devalloc.host;

import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.internal.CachedProbe;
import io.devalloc.api.internal.Failures;
import io.devalloc.api.internal.NativeAccess;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.units.ByteSize;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the {@code host} and {@code pinned-host} providers share: linking libc once and caching the probe, and
 * reading the device argument (an optional capacity).
 *
 * <p>Thread-safe: the probe runs at most once, as {@link CachedProbe} runs it.
 */
final class HostProviderSupport extends CachedProbe<HostProviderSupport.Probe> {

    private static final Logger LOG = LoggerFactory.getLogger(HostProviderSupport.class);

    /**
     * A cached probe.
     *
     * @param availability the answer
     * @param calls        the linked libc calls, or null when unavailable
     * @param memory       the machine's physical memory, or empty when it could not be read
     * @param memoryError  why it could not be read, or null
     */
    record Probe(Availability availability, NativeMemoryCalls calls, Optional<SystemMemory> memory,
                 String memoryError) {
    }

    private final String provider;
    private final Supplier<? extends NativeMemoryCalls> linker;
    private final Supplier<SystemMemory> systemMemory;
    /** What the provider checks once libc is linked: given the calls and the physical memory, is it usable? */
    private final BiFunction<NativeMemoryCalls, Optional<SystemMemory>, Availability> check;

    HostProviderSupport(String provider, Supplier<? extends NativeMemoryCalls> linker,
                        Supplier<SystemMemory> systemMemory,
                        BiFunction<NativeMemoryCalls, Optional<SystemMemory>, Availability> check) {
        this.provider = provider;
        this.linker = Objects.requireNonNull(linker, "linker");
        this.systemMemory = Objects.requireNonNull(systemMemory, "systemMemory");
        this.check = Objects.requireNonNull(check, "check");
    }

    @Override
    protected Probe outOfResources() {
        return new Probe(Availability.unavailable("the probe ran out of resources; try again"), null, Optional.empty(),
                null);
    }

    @Override
    protected Probe run() {
        NativeMemoryCalls calls;
        try {
            calls = linker.get();
        } catch (VirtualMachineError e) {
            return null;
        } catch (Throwable t) {
            // Catching LinkageError too is deliberate: a probe must leave the JVM usable whatever it finds.
            String hint = t instanceof IllegalCallerException
                    ? "; allow native access with " + NativeAccess.option(HostProviderSupport.class) : "";
            LOG.debug("{}: linking libc failed", provider, t);
            return new Probe(Availability.unavailable("cannot call the C library through java.lang.foreign: "
                    + Failures.describe(t) + hint), null, Optional.empty(), null);
        }
        Optional<SystemMemory> memory;
        String memoryError = null;
        try {
            memory = Optional.of(systemMemory.get());
        } catch (VirtualMachineError e) {
            return null;
        } catch (Throwable t) {
            memory = Optional.empty();
            memoryError = Failures.describe(t);
        }
        try {
            Availability availability = check.apply(calls, memory);
            return new Probe(availability, availability.available() ? calls : null, memory, memoryError);
        } catch (VirtualMachineError e) {
            return null;
        } catch (Throwable t) {
            LOG.debug("{}: probe failed", provider, t);
            return new Probe(Availability.unavailable("probing failed: " + Failures.describe(t)), null, memory,
                    memoryError);
        }
    }

    /**
     * The calls to open a device with.
     *
     * @throws DeviceUnavailableException with the probe's reason when unavailable
     */
    NativeMemoryCalls requireAvailable() {
        Probe p = probe();
        requireAvailable(provider, p.availability());
        return p.calls();
    }

    /**
     * Reads a device argument: {@code ""} or {@code "0"} (device index 0) for the default capacity, or a size such
     * as {@code 8GiB}.
     *
     * @param minimum the smallest capacity that can hold one allocation
     * @throws DeviceUnavailableException     for a device index other than 0, or when the default capacity is
     *                                        asked for but the machine's memory cannot be read
     * @throws InvalidConfigurationException  for anything that is not a size, or a capacity below {@code minimum}
     */
    long capacity(String argument, long minimum) {
        Objects.requireNonNull(argument, "argument");
        String arg = argument.strip();
        Probe p = probe();
        if (arg.isEmpty() || arg.equals("0")) {
            return p.memory().map(SystemMemory::bytes).orElseThrow(() -> new DeviceUnavailableException(
                    "cannot open " + provider + " with its default capacity: " + p.memoryError()
                            + "; give a capacity instead, e.g. " + provider + ":8GiB"));
        }
        if (arg.chars().allMatch(Character::isDigit)) {
            throw new DeviceUnavailableException("no device " + arg + " for provider '" + provider + "': " + provider
                    + " has one device, index 0. For a capacity give a unit, e.g. " + provider + ":" + arg + "B or "
                    + provider + ":8GiB");
        }
        long capacity;
        try {
            capacity = ByteSize.parse(arg);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationException("device", argument, "malformed argument in device spec '"
                    + provider + ":" + argument + "': " + e.getMessage() + ". " + provider + " takes "
                    + HostProvider.ARGUMENT_HELP);
        }
        if (capacity < minimum) {
            throw new InvalidConfigurationException("device", argument, "capacity '" + argument + "' of device spec '"
                    + provider + ":" + argument + "' is too small: " + provider + " needs at least " + minimum
                    + " bytes (" + ByteSize.format(minimum) + "), its allocation granularity");
        }
        p.memory().filter(m -> capacity > m.bytes()).ifPresent(m -> LOG.warn(
                "{}: capacity {} is more than the machine's {}; allocations beyond physical memory rely on swap"
                        + " or overcommit (and pinned ones cannot use either)",
                provider, ByteSize.format(capacity), m.describe()));
        return capacity;
    }
}
