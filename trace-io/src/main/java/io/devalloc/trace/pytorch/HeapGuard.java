package io.devalloc.trace.pytorch;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.List;
import java.util.Locale;

/**
 * Ends a pickle's load before its objects fill the Java heap. A pickle is small for what it builds: a dict of one
 * entry is 6 bytes of file and about 140 bytes of heap. The unpickler's budgets end the plainest floods early (one
 * dict, list or tuple per {@value RestrictedUnpickler#BYTES_PER_CONTAINER} bytes, {@value PickleStack#MOST_ITEMS}
 * values on the stack), but what fits them can still expand past any heap, and what a real snapshot keeps depends
 * on how much of it is dropped or compacted as it loads: the heap tells. The load looks every {@value #EVERY}
 * opcodes: a cheap look at the heap in use (garbage included), and only when that is past {@value #PERCENT}% of the
 * most the heap may grow to, the heap in use after the last collection (what the load's objects really hold), which
 * ends the load when it too is past that share. Where the load still runs out, the unpickler turns the error into
 * the same refusal ({@link #exhausted(long)}). Stateless beyond its limit and the pools it looks up once; one load
 * uses it, from one thread.
 */
final class HeapGuard {

    /** Opcodes between two looks at the heap: an opcode builds at most a few hundred bytes. */
    static final int EVERY = 1 << 16;
    /** The share of the heap's maximum that the load's live objects may fill. */
    static final int PERCENT = 85;

    private final long limit;
    /**
     * The heap's pools, looked up the first time the cheap look passes the limit: the management beans cost a few
     * hundred milliseconds to start, which a load that never comes near the limit should not pay.
     */
    private List<MemoryPoolMXBean> pools;

    private HeapGuard(long limit) {
        this.limit = limit;
    }

    /** A guard at {@value #PERCENT}% of this JVM's maximum heap. */
    static HeapGuard ofThisHeap() {
        return new HeapGuard(Runtime.getRuntime().maxMemory() / 100 * PERCENT);
    }

    /** Whether the heap's live objects, as the last collection left them, fill more than the limit. */
    boolean exhausted() {
        Runtime runtime = Runtime.getRuntime();
        if (runtime.totalMemory() - runtime.freeMemory() <= limit) {
            return false;
        }
        if (pools == null) {
            pools = ManagementFactory.getMemoryPoolMXBeans().stream()
                    .filter(p -> p.getType() == MemoryType.HEAP && p.isCollectionUsageThresholdSupported())
                    .toList();
        }
        long live = 0;
        for (MemoryPoolMXBean pool : pools) {
            MemoryUsage after = pool.getCollectionUsage();
            if (after != null) {
                live += after.getUsed();
            }
        }
        return live > limit;
    }

    /** The refusal of a load that filled the heap by byte {@code at} of its file. */
    static String exhausted(long at) {
        long max = Runtime.getRuntime().maxMemory() >> 20;
        return String.format(Locale.ROOT, "this file needs more memory than the Java heap allows (-Xmx%dm): by byte"
                + " %,d its objects filled it; a snapshot of a million trace entries loads in less than 200 MB, so"
                + " either it is larger still (raise the heap with JAVA_TOOL_OPTIONS=-Xmx8g, or convert it once"
                + " with traces/pickle_to_csv.py) or it is built to expand", max, at);
    }
}
