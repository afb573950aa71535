package io.devalloc.testkit;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

/**
 * The Java heap in use after a full collection: what a run retains, measured by {@link MemoryMXBean} (never by
 * timing). Noisy by a few MiB, so the heap suite compares it with a generous tolerance.
 */
final class RetainedHeap {

    private RetainedHeap() {
    }

    /** Bytes of heap in use after two collections (the second settles what the first's finalisation freed). */
    static long measure() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        memory.gc();
        memory.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }
}
