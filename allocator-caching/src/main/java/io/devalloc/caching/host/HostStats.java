package io.devalloc.caching.host;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * PyTorch's host allocator statistics ({@code HostStats}, kept as upstream's {@code HostStatsStaged}), reported by
 * {@code host_memory_stats()}: {@code allocations} and {@code allocated_bytes} (the blocks the allocator holds from
 * the device), {@code active_requests} and {@code active_bytes} (blocks not back on a free list, kept per size
 * class of {@link HostCachingArena#sizeIndex} and summed when reported), {@code num_host_alloc} and
 * {@code num_host_free}, and the {@code host_alloc_time} and {@code host_free_time} of the device calls.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class HostStats {

    private final Stat allocations = new Stat();
    private final Stat allocatedBytes = new Stat();
    private final Stat[] activeRequests = new Stat[HostCachingArena.SIZE_CLASSES];
    private final Stat[] activeBytes = new Stat[HostCachingArena.SIZE_CLASSES];
    private final DurationStat hostAllocTime = new DurationStat();
    private final DurationStat hostFreeTime = new DurationStat();

    /** Every count above, for the resets. */
    private final Stat[] counts = new Stat[2 + 2 * HostCachingArena.SIZE_CLASSES];

    HostStats() {
        counts[0] = allocations;
        counts[1] = allocatedBytes;
        for (int i = 0; i < HostCachingArena.SIZE_CLASSES; i++) {
            activeRequests[i] = new Stat();
            activeBytes[i] = new Stat();
            counts[2 + 2 * i] = activeRequests[i];
            counts[3 + 2 * i] = activeBytes[i];
        }
    }

    /** A block of {@code size} bytes the allocator holds from now on ({@code add_allocated_block}). */
    void blockAdded(long size) {
        allocations.increase(1);
        allocatedBytes.increase(size);
    }

    /** A block of {@code size} bytes the allocator no longer holds. */
    void blockRemoved(long size) {
        allocations.decrease(1);
        allocatedBytes.decrease(size);
    }

    /** A block of {@code size} bytes handed out: an active request until it is back on a free list. */
    void activated(long size) {
        int c = HostCachingArena.sizeIndex(size);
        activeRequests[c].increase(1);
        activeBytes[c].increase(size);
    }

    /** A block of {@code size} bytes no longer an active request. */
    void deactivated(long size) {
        int c = HostCachingArena.sizeIndex(size);
        activeRequests[c].decrease(1);
        activeBytes[c].decrease(size);
    }

    /** The duration of one device allocation. */
    void hostAllocTimed(long micros) {
        hostAllocTime.increase(micros);
    }

    /** The duration of one device free. */
    void hostFreeTimed(long micros) {
        hostFreeTime.increase(micros);
    }

    /** The blocks held now ({@code allocations.current}). */
    long blocks() {
        return allocations.current;
    }

    /** Their bytes ({@code allocated_bytes.current}). */
    long blockBytes() {
        return allocatedBytes.current;
    }

    /** The active requests now, over every size class ({@code active_requests.current}). */
    long activeRequests() {
        return summed(activeRequests).current;
    }

    /** Their bytes ({@code active_bytes.current}). */
    long activeBytes() {
        return summed(activeBytes).current;
    }

    /** {@code host_memory_stats()}: a sorted, unmodifiable map with PyTorch's key names. */
    SortedMap<String, Long> asMap() {
        TreeMap<String, Long> m = new TreeMap<>();
        putStat(m, "allocations", allocations);
        putStat(m, "allocated_bytes", allocatedBytes);
        putStat(m, "active_requests", summed(activeRequests));
        putStat(m, "active_bytes", summed(activeBytes));
        m.put("num_host_alloc", allocations.allocated);
        m.put("num_host_free", allocations.freed);
        putDuration(m, "host_alloc_time", hostAllocTime);
        putDuration(m, "host_free_time", hostFreeTime);
        return Collections.unmodifiableSortedMap(m);
    }

    /** {@code reset_accumulated_host_memory_stats}: the totals added and removed, and the durations' totals. */
    void resetAccumulated() {
        for (Stat s : counts) {
            s.resetAccumulated();
        }
        hostAllocTime.resetAccumulated();
        hostFreeTime.resetAccumulated();
    }

    /** {@code reset_peak_host_memory_stats}: peaks to the current values, durations' min and max to 0. */
    void resetPeaks() {
        for (Stat s : counts) {
            s.resetPeak();
        }
        hostAllocTime.resetPeak();
        hostFreeTime.resetPeak();
    }

    /** Upstream's {@code add_bucket_stats}: peaks are summed per bucket, an upper bound of the real peak. */
    private static Stat summed(Stat[] buckets) {
        Stat s = new Stat();
        for (Stat b : buckets) {
            s.current += b.current;
            s.peak += b.peak;
            s.allocated += b.allocated;
            s.freed += b.freed;
        }
        return s;
    }

    private static void putStat(Map<String, Long> m, String prefix, Stat s) {
        m.put(prefix + ".allocated", s.allocated);
        m.put(prefix + ".current", s.current);
        m.put(prefix + ".freed", s.freed);
        m.put(prefix + ".peak", s.peak);
    }

    private static void putDuration(Map<String, Long> m, String prefix, DurationStat d) {
        m.put(prefix + ".avg", d.count == 0 ? 0 : d.total / d.count);
        m.put(prefix + ".count", d.count);
        m.put(prefix + ".max", d.max);
        m.put(prefix + ".min", d.min);
        m.put(prefix + ".total", d.total);
    }
}
