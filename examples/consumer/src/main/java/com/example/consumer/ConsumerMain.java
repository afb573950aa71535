package com.example.consumer;

import io.devalloc.api.Allocation;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingAllocator;
import java.io.PrintStream;

/**
 * What a project that depends on devalloc does: builds PyTorch's caching allocator over a simulated 1 GiB GPU,
 * allocates, frees, prints the stats after each step and gives the cache back to the device.
 *
 * <p>Run it with {@code ../../mvnw verify exec:exec} in {@code examples/consumer} after {@code ./mvnw install} at
 * devalloc's root. It prints one line per step; devalloc's {@code ConsumerBuildTest} checks them.
 */
public final class ConsumerMain {

    private ConsumerMain() {
    }

    public static void main(String[] args) {
        run(System.out);
    }

    /**
     * Runs the steps, printing to {@code out}.
     *
     * @return the allocator's stats after the cache was emptied, the allocator's last state
     */
    public static AllocatorStats run(PrintStream out) {
        out.println("guice: " + (guicePresent() ? "present" : "absent"));
        out.println("consumer module: " + describe(ConsumerMain.class.getModule()));
        try (DeviceAllocator allocator = DeviceAllocators.builder()
                .device("sim:1GiB")
                .allocator("caching")
                .build()) {
            out.println("allocator: " + allocator.name() + " on " + allocator.device().descriptor().provider() + ", "
                    + ByteSize.format(allocator.device().descriptor().totalBytes()));
            try (Allocation weights = allocator.allocate(256 * ByteSize.MiB);
                 Allocation activations = allocator.allocate(48 * ByteSize.MiB)) {
                out.println("allocated: " + ByteSize.format(weights.size()) + " and "
                        + ByteSize.format(activations.size()));
                print(out, "after allocate", allocator.stats());
            }
            long raw = allocator.malloc(ByteSize.MiB);
            allocator.free(raw);
            // The caching allocator keeps what was freed for the next request of that size.
            print(out, "after free", allocator.stats());
            allocator.unwrap(CachingAllocator.class).orElseThrow().emptyCache();
            AllocatorStats last = allocator.stats();
            print(out, "after emptyCache", last);
            return last;
        }
    }

    private static void print(PrintStream out, String when, AllocatorStats stats) {
        out.println("stats " + when + ": " + stats.activeAllocations() + " live, "
                + ByteSize.format(stats.allocatedBytes()) + " allocated, "
                + ByteSize.format(stats.reservedBytes()) + " reserved, "
                + stats.allocationCount() + " allocations, " + stats.freeCount() + " frees, "
                + stats.deviceMallocs() + " device mallocs, " + stats.deviceFrees() + " device frees");
    }

    /** Whether Guice can be loaded: on the module path as a module, on the class path as a class. */
    static boolean guicePresent() {
        if (ModuleLayer.boot().findModule("com.google.guice").isPresent()) {
            return true;
        }
        try {
            Class.forName("com.google.inject.Guice", false, ConsumerMain.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException absent) {
            return false;
        }
    }

    private static String describe(Module module) {
        return module.isNamed() ? module.getName() + " (module path)" : "unnamed (class path)";
    }
}
