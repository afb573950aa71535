package io.devalloc.caching;

import java.util.Map;
import java.util.TreeMap;

/**
 * PyTorch's {@code DeviceStats}: nine metrics, each a {@code Stat} of (current, peak, allocated, freed) for each of
 * all / small pool / large pool, the oversize stats, and the counters. Updates go to "all" and to the block's pool,
 * as upstream's {@code for_each_selected_stat_type}.
 *
 * <p>Not thread-safe: the arena's lock guards it; {@link #memoryStats} copies.
 */
final class DeviceStats {

    /** The metrics, in PyTorch's key names. */
    enum Metric {
        ALLOCATION("allocation"),
        SEGMENT("segment"),
        ACTIVE("active"),
        INACTIVE_SPLIT("inactive_split"),
        ALLOCATED_BYTES("allocated_bytes"),
        RESERVED_BYTES("reserved_bytes"),
        ACTIVE_BYTES("active_bytes"),
        INACTIVE_SPLIT_BYTES("inactive_split_bytes"),
        REQUESTED_BYTES("requested_bytes");

        final String key;

        Metric(String key) {
            this.key = key;
        }
    }

    static final int ALL = 0;
    static final int SMALL = 1;
    static final int LARGE = 2;
    static final String[] TYPE_KEYS = {"all", "small_pool", "large_pool"};
    static final int CURRENT = 0;
    static final int PEAK = 1;
    static final int ALLOCATED = 2;
    static final int FREED = 3;
    static final String[] FIELD_KEYS = {"current", "peak", "allocated", "freed"};

    /** [metric][type][field] flattened. */
    private final long[] stats = new long[Metric.values().length * 3 * 4];
    /** Oversize allocations and segments: [field]. */
    final long[] oversizeAllocations = new long[4];
    final long[] oversizeSegments = new long[4];

    long numAllocRetries;
    long numOoms;
    long numSyncAllStreams;
    long numDeviceAlloc;
    long numDeviceFree;
    /** Allocations refused by {@code throw_on_cudamalloc_oom} before any device call. */
    long numOomRejections;

    private static int index(Metric m, int type, int field) {
        return (m.ordinal() * 3 + type) * 4 + field;
    }

    long get(Metric m, int type, int field) {
        return stats[index(m, type, field)];
    }

    /** Increases the metric for "all" and the pool's type. */
    void increase(Metric m, boolean small, long n) {
        increase(stats, index(m, ALL, 0), n);
        increase(stats, index(m, small ? SMALL : LARGE, 0), n);
    }

    void decrease(Metric m, boolean small, long n) {
        decrease(stats, index(m, ALL, 0), n);
        decrease(stats, index(m, small ? SMALL : LARGE, 0), n);
    }

    static void increase(long[] a, int base, long n) {
        a[base + CURRENT] += n;
        a[base + PEAK] = Math.max(a[base + PEAK], a[base + CURRENT]);
        a[base + ALLOCATED] += n;
    }

    static void decrease(long[] a, int base, long n) {
        a[base + CURRENT] -= n;
        a[base + FREED] += n;
    }

    /**
     * The allocator closed and holds nothing: every current figure to 0. Peaks, the allocated and freed totals and
     * the counters stay as they were, as {@code bfc} and {@code caching-host} keep theirs: a close is no call of
     * the caller's to count (so {@code allocated - freed} no longer equals {@code current} afterwards).
     */
    void releasedAll() {
        for (int i = 0; i < stats.length; i += 4) {
            stats[i + CURRENT] = 0;
        }
        oversizeAllocations[CURRENT] = 0;
        oversizeSegments[CURRENT] = 0;
    }

    /** {@code reset_peak_memory_stats}: every peak to its current value. */
    void resetPeaks() {
        for (int i = 0; i < stats.length; i += 4) {
            stats[i + PEAK] = stats[i + CURRENT];
        }
        oversizeAllocations[PEAK] = oversizeAllocations[CURRENT];
        oversizeSegments[PEAK] = oversizeSegments[CURRENT];
    }

    /** {@code reset_accumulated_memory_stats}: allocated and freed to 0, and the six counters to 0. */
    void resetAccumulated() {
        for (int i = 0; i < stats.length; i += 4) {
            stats[i + ALLOCATED] = 0;
            stats[i + FREED] = 0;
        }
        oversizeAllocations[ALLOCATED] = 0;
        oversizeAllocations[FREED] = 0;
        oversizeSegments[ALLOCATED] = 0;
        oversizeSegments[FREED] = 0;
        numAllocRetries = 0;
        numOoms = 0;
        numSyncAllStreams = 0;
        numDeviceAlloc = 0;
        numDeviceFree = 0;
        numOomRejections = 0;
    }

    /** {@code memory_stats()}: the flat, sorted map with PyTorch's key names. */
    Map<String, Long> memoryStats(long maxSplitSize) {
        Map<String, Long> m = new TreeMap<>();
        for (Metric metric : Metric.values()) {
            for (int t = 0; t < 3; t++) {
                for (int f = 0; f < 4; f++) {
                    m.put(metric.key + "." + TYPE_KEYS[t] + "." + FIELD_KEYS[f], get(metric, t, f));
                }
            }
        }
        for (int f = 0; f < 4; f++) {
            m.put("oversize_allocations." + FIELD_KEYS[f], oversizeAllocations[f]);
            m.put("oversize_segments." + FIELD_KEYS[f], oversizeSegments[f]);
        }
        m.put("num_alloc_retries", numAllocRetries);
        m.put("num_ooms", numOoms);
        m.put("num_sync_all_streams", numSyncAllStreams);
        m.put("num_device_alloc", numDeviceAlloc);
        m.put("num_device_free", numDeviceFree);
        m.put("num_oom_rejections", numOomRejections);
        m.put("max_split_size", maxSplitSize == Long.MAX_VALUE ? -1 : maxSplitSize);
        return m;
    }
}
