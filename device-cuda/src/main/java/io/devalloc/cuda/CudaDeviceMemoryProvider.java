package io.devalloc.cuda;

import io.devalloc.api.device.DeviceMemory;
import java.util.function.Supplier;

/**
 * The {@code cuda} device: memory of an NVIDIA GPU from {@code cudaMalloc}, through JCuda, with CUDA's
 * virtual-memory API where the GPU has it. {@code cuda:1} is device 1; {@code cuda} alone is device 0. It has the
 * highest priority of all providers, so {@code auto} picks a GPU whenever there is one.
 *
 * <p>Thread-safe. The constructor does no work and loads no JCuda class; the first {@link #probe()} does (see
 * {@link CudaAvailability}), and the answer is shared with {@code cuda-host} and cached for the JVM's life.
 */
public final class CudaDeviceMemoryProvider extends CudaProvider {

    /** The provider's name in device specs. */
    public static final String NAME = "cuda";

    public CudaDeviceMemoryProvider() {
        // A lambda rather than a method reference, so that not even CudaAvailability loads before a probe.
        this(() -> CudaAvailability.shared());
    }

    /** For tests: the probe from elsewhere. */
    CudaDeviceMemoryProvider(Supplier<CudaAvailability> availability) {
        super(NAME, availability);
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
    public String argumentHelp() {
        return ARGUMENT_HELP;
    }

    @Override
    DeviceMemory open(CudaAvailability.Probe probe, int index) {
        return CudaDeviceMemory.gpu(probe.api(), index, probe.driverPresent());
    }
}
