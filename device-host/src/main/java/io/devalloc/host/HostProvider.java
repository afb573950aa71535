package io.devalloc.host;

import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * What the {@code host} and {@code pinned-host} providers share: one device, libc's calls and the physical memory
 * probed lazily by {@link HostProviderSupport}, and an optional capacity as the argument.
 *
 * <p>Thread-safe. The constructor does no work; the first {@link #probe()} does, and caches the answer.
 */
abstract class HostProvider implements DeviceMemoryProvider {

    static final String ARGUMENT_HELP = "optional capacity such as 8GiB (default: MemTotal)";

    final HostProviderSupport support;
    private final String name;

    HostProvider(String name, Supplier<? extends NativeMemoryCalls> linker, Supplier<SystemMemory> systemMemory,
                 BiFunction<NativeMemoryCalls, Optional<SystemMemory>, Availability> check) {
        this.name = name;
        this.support = new HostProviderSupport(name, linker, systemMemory, check);
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final Availability probe() {
        return support.probe().availability();
    }

    @Override
    public final int deviceCount() {
        return probe().available() ? 1 : 0;
    }

    @Override
    public final String argumentHelp() {
        return ARGUMENT_HELP;
    }
}
