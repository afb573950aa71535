package io.devalloc.cuda;

import com.sun.management.OperatingSystemMXBean;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.units.ByteSize;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The {@code cuda-host} device: page-locked host memory from {@code cudaHostAlloc} with
 * {@code cudaHostAllocPortable}, which every GPU can reach by DMA, the memory to stage host-device copies through.
 * {@code cuda-host:1} allocates through device 1's context; the memory is portable to all devices either way. Its
 * capacity is the machine's physical memory ({@code MemTotal}).
 *
 * <p>Unlike {@code pinned-host} ({@code mlock}, in {@code device-host}), the CUDA driver registers this memory, so
 * copies from it are true DMA without a staging buffer, and {@code RLIMIT_MEMLOCK} does not apply.
 *
 * <p>Thread-safe. The constructor does no work and loads no JCuda class; the probe is shared with {@code cuda}.
 */
public final class CudaHostMemoryProvider extends CudaProvider {

    /** The provider's name in device specs. */
    public static final String NAME = "cuda-host";

    private final LongSupplier physicalMemory;

    public CudaHostMemoryProvider() {
        this(() -> CudaAvailability.shared(), () -> physicalMemory());
    }

    /** For tests: the probe and the machine's memory from elsewhere. */
    CudaHostMemoryProvider(Supplier<CudaAvailability> availability, LongSupplier physicalMemory) {
        super(NAME, availability);
        this.physicalMemory = Objects.requireNonNull(physicalMemory, "physicalMemory");
    }

    @Override
    public String description() {
        return "page-locked host memory from cudaHostAlloc (portable), DMA-reachable by every GPU, through JCuda 12.6";
    }

    @Override
    public int priority() {
        return 6;
    }

    @Override
    public String argumentHelp() {
        return ARGUMENT_HELP + " (whose context allocates; the memory is portable)";
    }

    @Override
    DeviceMemory open(CudaAvailability.Probe probe, int index) {
        long capacity = physicalMemory.getAsLong();
        if (capacity < CudaDeviceMemory.HOST_PAGE) {
            throw new DeviceUnavailableException("cannot open " + NAME + ":" + index + ": the machine's physical"
                    + " memory cannot be read (/proc/meminfo has no MemTotal and the OperatingSystemMXBean reports "
                    + capacity + " bytes)");
        }
        return CudaDeviceMemory.pinnedHost(probe.api(), index, capacity);
    }

    /** {@code MemTotal} from {@code /proc/meminfo}, else the JDK's figure, else 0. */
    static long physicalMemory() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/meminfo"));
            for (String line : lines) {
                if (line.startsWith("MemTotal:")) {
                    String[] parts = line.substring("MemTotal:".length()).strip().split("\\s+");
                    long value = Long.parseLong(parts[0]);
                    // The kernel writes "kB" and means KiB.
                    return parts.length > 1 && parts[1].equalsIgnoreCase("kB")
                            ? Math.multiplyExact(value, ByteSize.KiB) : value;
                }
            }
        } catch (IOException | RuntimeException e) {
            // Fall back below.
        }
        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
            return Math.max(0, os.getTotalMemorySize());
        }
        return 0;
    }
}
