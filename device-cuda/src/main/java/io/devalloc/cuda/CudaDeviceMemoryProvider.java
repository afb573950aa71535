package io.devalloc.cuda;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The {@code cuda} device: memory of an NVIDIA GPU from {@code cudaMalloc}, through JCuda, with CUDA's
 * virtual-memory API where the GPU has it. {@code cuda:1} is device 1; {@code cuda} alone is device 0. It has the
 * highest priority of all providers, so {@code auto} picks a GPU whenever there is one.
 *
 * <p>Thread-safe. The constructor does no work and loads no JCuda class; the first {@link #probe()} does (see
 * {@link CudaAvailability}), and the answer is shared with {@code cuda-host} and cached for the JVM's life.
 */
public final class CudaDeviceMemoryProvider implements DeviceMemoryProvider {

    /** The provider's name in device specs. */
    public static final String NAME = "cuda";

    private final Supplier<CudaAvailability> availability;

    public CudaDeviceMemoryProvider() {
        // A lambda rather than a method reference, so that not even CudaAvailability loads before a probe.
        this(() -> CudaAvailability.shared());
    }

    /** For tests: the probe from elsewhere. */
    CudaDeviceMemoryProvider(Supplier<CudaAvailability> availability) {
        this.availability = Objects.requireNonNull(availability, "availability");
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "NVIDIA GPU memory through JCuda 12.6 (cudaMalloc, streams, events, CUDA virtual memory)";
    }

    @Override
    public int priority() {
        return 10;
    }

    @Override
    public Availability probe() {
        return availability.get().probe().availability();
    }

    @Override
    public int deviceCount() {
        return availability.get().probe().deviceCount();
    }

    @Override
    public String argumentHelp() {
        return CudaProviderSupport.ARGUMENT_HELP;
    }

    @Override
    public DeviceMemory open(String argument) {
        CudaAvailability.Probe probe = availability.get().probe();
        int index = CudaProviderSupport.deviceIndex(NAME, argument, probe);
        return CudaDeviceMemory.gpu(probe.api(), index, probe.driverPresent());
    }
}
