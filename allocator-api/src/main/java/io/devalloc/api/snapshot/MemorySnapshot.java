package io.devalloc.api.snapshot;

import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.stats.AllocatorStats;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What an allocator holds at one moment: its segments and their blocks, its stats, and the settings it runs with.
 * Both algorithms fill it in, so reports and checks work the same on each.
 *
 * <p>{@code settings} is what the allocator was configured with, in effect: for {@code caching} PyTorch's
 * {@code allocator_settings} dict, for the others their own options in effect under keys of their own, usually the
 * configuration key and sometimes a derived figure such as {@code memory_limit_bytes} (each allocator's
 * {@code snapshot()} documents its keys). Exports write it as the snapshot's
 * {@code allocator_settings}. Values are plain: {@link String}, {@link Boolean}, {@link Integer}, {@link Long},
 * {@link BigInteger}, {@link Double}, and {@link Map}s with {@link String} keys or {@link List}s of those; the
 * record holds an unmodifiable copy that keeps the maps' iteration order.
 *
 * @param allocator the allocator's name, e.g. {@code "direct"}, {@code "bfc"}, {@code "caching"}
 * @param device    the device it allocates from
 * @param segments  segments in address order
 * @param stats     the stats at the moment of the snapshot
 * @param settings  the allocator's settings, in its own key order (empty when it has none to report)
 */
public record MemorySnapshot(String allocator, DeviceDescriptor device, List<SegmentSnapshot> segments,
                             AllocatorStats stats, Map<String, Object> settings) {

    /**
     * @throws IllegalArgumentException if a setting is not a plain value (see above), naming its path
     */
    public MemorySnapshot {
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(stats, "stats");
        segments = List.copyOf(segments);
        @SuppressWarnings("unchecked")
        Map<String, Object> copy = (Map<String, Object>) immutableCopy(Objects.requireNonNull(settings, "settings"),
                "settings");
        settings = copy;
    }

    /** A snapshot with no settings to report. */
    public MemorySnapshot(String allocator, DeviceDescriptor device, List<SegmentSnapshot> segments,
                          AllocatorStats stats) {
        this(allocator, device, segments, stats, Map.of());
    }

    /** A deep, unmodifiable, order-keeping copy of a plain settings value. */
    private static Object immutableCopy(Object value, String path) {
        return switch (value) {
            case String s -> s;
            case Boolean b -> b;
            case Integer i -> i;
            case Long l -> l;
            case BigInteger big -> big;
            case Double d -> d;
            case Map<?, ?> map -> {
                Map<String, Object> copy = new LinkedHashMap<>();
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    if (!(e.getKey() instanceof String key)) {
                        throw new IllegalArgumentException(path + ": a settings key must be a String, got "
                                + (e.getKey() == null ? "null" : e.getKey().getClass().getName()));
                    }
                    copy.put(key, immutableCopy(e.getValue(), path + "." + key));
                }
                yield Collections.unmodifiableMap(copy);
            }
            case List<?> list -> {
                List<Object> copy = new ArrayList<>(list.size());
                for (int i = 0; i < list.size(); i++) {
                    copy.add(immutableCopy(list.get(i), path + "[" + i + "]"));
                }
                yield Collections.unmodifiableList(copy);
            }
            case null -> throw new IllegalArgumentException(path + ": a setting cannot be null");
            default -> throw new IllegalArgumentException(path + ": a setting must be a String, Boolean, Integer,"
                    + " Long, BigInteger, Double, Map or List, got " + value.getClass().getName());
        };
    }

    /** Sum of segment sizes. */
    public long totalSegmentBytes() {
        long sum = 0;
        for (SegmentSnapshot s : segments) {
            sum += s.size();
        }
        return sum;
    }

    /** Bytes in blocks of the given state, over all segments. */
    public long bytesIn(BlockState state) {
        long sum = 0;
        for (SegmentSnapshot s : segments) {
            sum += s.bytesIn(state);
        }
        return sum;
    }

    /**
     * Checks the snapshot's structural invariants: every segment tiled exactly by its blocks, segments in
     * address order and disjoint.
     *
     * @throws IllegalStateException naming the first violation
     */
    public void checkInvariants() {
        long previousEnd = Long.MIN_VALUE;
        for (SegmentSnapshot s : segments) {
            if (s.address() < previousEnd) {
                throw new IllegalStateException("segment 0x" + Long.toHexString(s.address())
                        + " overlaps or precedes the previous segment");
            }
            s.checkTiling();
            previousEnd = s.end();
        }
    }
}
