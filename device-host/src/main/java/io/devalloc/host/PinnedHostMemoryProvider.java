package io.devalloc.host;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.spi.Availability;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The {@code pinned-host} device: native memory locked into RAM with {@code mlock}, the host side of fast
 * GPU transfers (what {@code cudaHostAlloc} gives). Capacity as for {@code host}.
 *
 * <p>Pinning is bounded by {@code RLIMIT_MEMLOCK} ({@code ulimit -l}, often 8 MiB) unless the process has
 * {@code CAP_IPC_LOCK}. The probe locks and unlocks one page: if even that is refused the provider is unavailable,
 * with the reason and the fix; otherwise its reason states the limit, because larger pinned allocations can still
 * be refused later (then {@link DeviceMemory#malloc} throws a {@link DeviceException} that explains it).
 *
 * <p>Thread-safe. The constructor does no work; the first {@link #probe()} does, and caches the answer.
 */
public final class PinnedHostMemoryProvider extends HostProvider {

    /** The provider's name in device specs. */
    public static final String NAME = "pinned-host";

    public PinnedHostMemoryProvider() {
        // Lambdas rather than method references, so that not even the classes behind them load before a probe.
        this(() -> FfmNativeMemoryCalls.link(), () -> SystemMemory.read());
    }

    /** For tests: libc and the physical memory from elsewhere. */
    PinnedHostMemoryProvider(Supplier<? extends NativeMemoryCalls> linker, Supplier<SystemMemory> systemMemory) {
        super(NAME, linker, systemMemory, PinnedHostMemoryProvider::check);
    }

    /** Locks and unlocks one page: the cheapest proof that pinning works here at all. */
    private static Availability check(NativeMemoryCalls calls, Optional<SystemMemory> memory) {
        long page = HostMemory.pinnedAlignment(calls);
        long address = calls.alloc(page, page);
        if (address == 0) {
            return Availability.unavailable("could not allocate one page (" + page + " bytes) to test mlock");
        }
        try {
            int errno = calls.mlock(address, page);
            if (errno != 0) {
                return Availability.unavailable("this process may not lock memory: " + MemlockAdvice.explain(
                        "mlock of one page (" + page + " bytes)", errno, page, -1, calls));
            }
            calls.munlock(address, page);
        } finally {
            calls.free(address);
        }
        String limit = MemlockAdvice.limits(calls);
        String bound = calls.mayExceedMemlockLimit()
                ? "; this process has CAP_IPC_LOCK, so the limit does not bind it"
                : "; pinned allocations beyond it in total will fail (raise it with `ulimit -l`, see the error"
                        + " message)";
        return Availability.available("page-locked host memory through mlock, "
                + memory.map(SystemMemory::describe).orElse("physical memory unknown, give a capacity such as "
                + NAME + ":1GiB") + "; RLIMIT_MEMLOCK " + limit + bound);
    }

    @Override
    public String description() {
        return "page-locked (mlock) native host memory through java.lang.foreign, page aligned, as cudaHostAlloc gives;"
                + " on Linux also virtual memory in 2 MiB granules, locked as they are mapped";
    }

    @Override
    public int priority() {
        return 4;
    }

    @Override
    public DeviceMemory open(String argument) {
        NativeMemoryCalls calls = support.requireAvailable();
        return HostMemory.pinned(calls, support.capacity(argument, HostMemory.pinnedAlignment(calls)));
    }
}
