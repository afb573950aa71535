package io.devalloc.examples;

import io.devalloc.api.Allocation;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;

/**
 * The plain API, without any framework: build an allocator with {@link DeviceAllocators#builder()}, allocate
 * with try-with-resources, use the raw {@code malloc}/{@code free} path for a hot loop, read stats and a
 * snapshot, and handle {@link OutOfMemoryException}, whose fields say what was asked and what was there.
 *
 * <p>It uses a simulated 16 GiB GPU ({@code sim:16GiB}), which has capacity but no backing memory, so it runs on
 * any machine. Run it with
 * {@code java -cp examples/target/devalloc-launcher.jar io.devalloc.examples.PlainApiExample}.
 */
public final class PlainApiExample {

    private PlainApiExample() {
    }

    public static void main(String[] args) {
        // The allocator owns the device it opened: closing the allocator closes the simulated GPU too.
        // memory_limit_mb caps what this allocator may hold, below what the device has.
        try (DeviceAllocator allocator = DeviceAllocators.builder()
                .device("sim:16GiB")
                .allocator("direct")
                .config("memory_limit_mb:4096")
                .build()) {
            System.out.println("Opened the '" + allocator.name() + "' allocator on " + allocator.device().descriptor());

            // 1. Handles: closing an Allocation frees it, so try-with-resources scopes device memory.
            try (Allocation weights = allocator.allocate(256 * ByteSize.MiB);
                 Allocation activations = allocator.allocate(48 * ByteSize.MiB)) {
                System.out.println("weights     at " + ByteSize.hex(weights.address()) + ", "
                        + ByteSize.format(weights.size()));
                System.out.println("activations at " + ByteSize.hex(activations.address()) + ", "
                        + ByteSize.format(activations.size()));
                printStats("while both handles are open", allocator.stats());

                // A snapshot lists the segments the allocator holds; direct holds one segment per allocation.
                MemorySnapshot snapshot = allocator.snapshot();
                snapshot.checkInvariants();
                System.out.println("snapshot of '" + snapshot.allocator() + "': " + snapshot.segments().size()
                        + " segments, " + ByteSize.format(snapshot.totalSegmentBytes()) + " in total");
                for (SegmentSnapshot segment : snapshot.segments()) {
                    System.out.println("  segment " + ByteSize.hex(segment.address()) + " "
                            + ByteSize.format(segment.size()));
                }
            }
            printStats("after the handles closed", allocator.stats());

            // 2. The raw path: long addresses and no Java objects per call, for hot loops.
            long[] addresses = new long[1_000];
            for (int i = 0; i < addresses.length; i++) {
                addresses[i] = allocator.malloc(4 * ByteSize.KiB + 512L * i);
            }
            for (long address : addresses) {
                allocator.free(address);
            }
            printStats("after 1,000 raw malloc/free pairs", allocator.stats());

            // 3. Running out. The exception carries the figures needed to decide what to do.
            try {
                allocator.malloc(6 * ByteSize.GiB);
            } catch (OutOfMemoryException e) {
                System.out.println("6 GiB refused: " + e.reason());
                System.out.println("  requested " + ByteSize.format(e.requestedBytes())
                        + ", allocator limit " + ByteSize.format(e.limitBytes())
                        + ", device " + e.deviceId() + " has " + ByteSize.format(e.deviceFreeBytes()) + " free of "
                        + ByteSize.format(e.deviceTotalBytes())
                        + ", this allocator reserves " + ByteSize.format(e.reservedBytes()));
                System.out.println("  message: " + e.getMessage());
            }
            try {
                allocator.malloc(32 * ByteSize.GiB);
            } catch (OutOfMemoryException e) {
                System.out.println("32 GiB refused: " + e.reason() + " (more than the 16 GiB device could ever hold)");
            }
            // A refused call changes nothing: the allocator is still usable and counted the failures.
            printStats("after two refused allocations", allocator.stats());
        }
    }

    private static void printStats(String when, AllocatorStats stats) {
        System.out.println("stats " + when + ": " + stats.activeAllocations() + " live, "
                + ByteSize.format(stats.allocatedBytes()) + " allocated, "
                + ByteSize.format(stats.reservedBytes()) + " reserved, peak "
                + ByteSize.format(stats.peakAllocatedBytes()) + ", "
                + stats.allocationCount() + " allocations, " + stats.freeCount() + " frees, "
                + stats.outOfMemoryErrors() + " out-of-memory errors");
    }
}
