package io.devalloc.api.jmx;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.stats.PoolUsage;
import io.devalloc.api.units.ByteSize;
import java.util.Locale;
import java.util.Map;

/**
 * The memory summary of an allocator that has no {@link io.devalloc.api.spi.MemorySummary} of its own: the figures
 * of {@link DeviceAllocator#stats()} (byte figures also in binary units) and one row per pool of
 * {@link DeviceAllocator#memoryUsage()}. Every allocator has both, so the text exists for all of them.
 */
final class StatsSummary {

    private StatsSummary() {
    }

    static String of(DeviceAllocator allocator, String name) {
        StringBuilder out = new StringBuilder(1024);
        out.append("devalloc memory summary: ").append(name).append(" (").append(allocator.name()).append(" on ")
                .append(allocator.device().descriptor().id()).append(")\n");
        for (Map.Entry<String, Long> e : allocator.stats().asMap().entrySet()) {
            String key = e.getKey();
            long value = e.getValue();
            out.append(String.format(Locale.ROOT, "  %-24s %20d", key, value));
            if ((key.endsWith("_bytes") || key.endsWith("_block") || key.equals("largest_allocation"))
                    && value != Long.MAX_VALUE) {
                out.append("  (").append(ByteSize.format(value)).append(')');
            }
            out.append('\n');
        }
        out.append(String.format(Locale.ROOT, "  %-8s %16s %16s %16s %16s %16s\n", "pool", "reserved", "allocated",
                "active", "requested", "inactive_split"));
        for (PoolUsage u : allocator.memoryUsage()) {
            out.append(String.format(Locale.ROOT, "  %-8s %16d %16d %16d %16d %16d\n", u.pool(), u.reservedBytes(),
                    u.allocatedBytes(), u.activeBytes(), u.requestedBytes(), u.inactiveSplitBytes()));
        }
        return out.toString();
    }
}
