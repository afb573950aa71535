package io.devalloc.host;

import com.sun.management.OperatingSystemMXBean;
import io.devalloc.api.units.ByteSize;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The machine's physical memory, the default capacity of a host device.
 *
 * @param bytes  total physical memory
 * @param source where the figure came from, for messages ({@code MemTotal} or {@code OperatingSystemMXBean})
 */
record SystemMemory(long bytes, String source) {

    /**
     * Reads {@code MemTotal} from {@code /proc/meminfo} (what {@code free} reports), falling back to the JDK's
     * {@code OperatingSystemMXBean} where there is no procfs. Not cached: callers (the providers) cache it.
     *
     * @throws IllegalStateException if neither source gives a positive size
     */
    static SystemMemory read() {
        long memTotal = memTotal(Path.of("/proc/meminfo"));
        if (memTotal > 0) {
            return new SystemMemory(memTotal, "MemTotal");
        }
        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os
                && os.getTotalMemorySize() > 0) {
            return new SystemMemory(os.getTotalMemorySize(), "OperatingSystemMXBean");
        }
        throw new IllegalStateException("cannot tell how much physical memory this machine has: /proc/meminfo has"
                + " no MemTotal and the OperatingSystemMXBean reports none; give the capacity explicitly, e.g."
                + " host:8GiB");
    }

    /** {@code MemTotal} in bytes from a meminfo file, or -1 when it is missing or unreadable. */
    static long memTotal(Path meminfo) {
        try {
            List<String> lines = Files.readAllLines(meminfo);
            for (String line : lines) {
                if (line.startsWith("MemTotal:")) {
                    String[] parts = line.substring("MemTotal:".length()).strip().split("\\s+");
                    long value = Long.parseLong(parts[0]);
                    // The kernel writes "kB" and means KiB.
                    return parts.length > 1 && parts[1].equalsIgnoreCase("kB") ? Math.multiplyExact(value, ByteSize.KiB)
                            : value;
                }
            }
            return -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** E.g. {@code 23.59 GiB (MemTotal)}. */
    String describe() {
        return ByteSize.format(bytes) + " (" + source + ")";
    }
}
