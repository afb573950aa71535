package io.devalloc.host;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The {@code host} device: ordinary native memory from libc's {@code posix_memalign}, reached through
 * {@code java.lang.foreign}, with a capacity of the machine's {@code MemTotal} unless the spec gives one
 * ({@code host:8GiB}). It runs allocators on real memory on any machine, GPU or not.
 *
 * <p>Thread-safe. The constructor does no work; the first {@link #probe()} links libc and caches the answer.
 */
public final class HostMemoryProvider implements DeviceMemoryProvider {

    /** The provider's name in device specs. */
    public static final String NAME = "host";

    static final String ARGUMENT_HELP = "optional capacity such as 8GiB (default: MemTotal)";

    private final HostProviderSupport support;

    public HostMemoryProvider() {
        // Lambdas rather than method references, so that not even the classes behind them load before a probe.
        this(() -> FfmNativeMemoryCalls.link(), () -> SystemMemory.read());
    }

    /** For tests: libc and the physical memory from elsewhere. */
    HostMemoryProvider(Supplier<? extends NativeMemoryCalls> linker, Supplier<SystemMemory> systemMemory) {
        this.support = new HostProviderSupport(NAME, linker, systemMemory, HostMemoryProvider::check);
    }

    private static Availability check(NativeMemoryCalls calls, Optional<SystemMemory> memory) {
        return Availability.available("native memory through java.lang.foreign (posix_memalign), "
                + memory.map(SystemMemory::describe)
                        .orElse("physical memory unknown, give a capacity such as host:8GiB"));
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "native host memory through java.lang.foreign (posix_memalign), 256-byte aligned like cudaMalloc;"
                + " on Linux also virtual memory in 2 MiB granules (mmap, mprotect, madvise)";
    }

    @Override
    public int priority() {
        return 5;
    }

    @Override
    public Availability probe() {
        return support.probe().availability();
    }

    @Override
    public int deviceCount() {
        return probe().available() ? 1 : 0;
    }

    @Override
    public String argumentHelp() {
        return ARGUMENT_HELP;
    }

    @Override
    public DeviceMemory open(String argument) {
        NativeMemoryCalls calls = support.requireAvailable();
        return HostMemory.host(calls, support.capacity(argument, HostMemory.HOST_ALIGNMENT));
    }
}
