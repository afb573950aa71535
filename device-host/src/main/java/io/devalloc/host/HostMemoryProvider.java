package io.devalloc.host;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.Availability;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The {@code host} device: ordinary native memory from libc's {@code posix_memalign}, reached through
 * {@code java.lang.foreign}, with a capacity of the machine's {@code MemTotal} unless the spec gives one
 * ({@code host:8GiB}). It runs allocators on real memory on any machine, GPU or not.
 *
 * <p>Thread-safe. The constructor does no work; the first {@link #probe()} links libc and caches the answer.
 */
public final class HostMemoryProvider extends HostProvider {

    /** The provider's name in device specs. */
    public static final String NAME = "host";

    public HostMemoryProvider() {
        // Lambdas rather than method references, so that not even the classes behind them load before a probe.
        this(() -> FfmNativeMemoryCalls.link(), () -> SystemMemory.read());
    }

    /** For tests: libc and the physical memory from elsewhere. */
    HostMemoryProvider(Supplier<? extends NativeMemoryCalls> linker, Supplier<SystemMemory> systemMemory) {
        super(NAME, linker, systemMemory, HostMemoryProvider::check);
    }

    private static Availability check(NativeMemoryCalls calls, Optional<SystemMemory> memory) {
        return Availability.available("native memory through java.lang.foreign (posix_memalign), "
                + memory.map(SystemMemory::describe)
                        .orElse("physical memory unknown, give a capacity such as host:8GiB"));
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
    public DeviceMemory open(String argument) {
        NativeMemoryCalls calls = support.requireAvailable();
        return HostMemory.host(calls, support.capacity(argument, HostMemory.HOST_ALIGNMENT));
    }
}
