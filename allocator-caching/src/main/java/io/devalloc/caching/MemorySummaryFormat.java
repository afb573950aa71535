package io.devalloc.caching;

import java.util.Locale;
import java.util.Map;

/**
 * PyTorch's {@code torch.cuda.memory_summary()} table, built from a {@code memory_stats()} map: lines 75
 * characters wide between {@code |} borders, byte cells scaled by the all-row's value and count cells by a 750,000
 * threshold, as {@code torch/cuda/memory.py} does.
 */
final class MemorySummaryFormat {

    private static final String[][] BYTE_SECTIONS = {
        {"allocated_bytes", "Allocated memory"},
        {"active_bytes", "Active memory"},
        {"requested_bytes", "Requested memory"},
        {"reserved_bytes", "GPU reserved memory"},
        {"inactive_split_bytes", "Non-releasable memory"},
    };
    private static final String[][] COUNT_SECTIONS = {
        {"allocation", "Allocations"},
        {"active", "Active allocs"},
        {"segment", "GPU reserved segments"},
        {"inactive_split", "Non-releasable allocs"},
    };

    private MemorySummaryFormat() {
    }

    static String format(Map<String, Long> stats, int device, boolean abbreviated) {
        StringBuilder out = new StringBuilder();
        String eq = "=".repeat(75);
        String dash = "-".repeat(75);
        line(out, eq);
        line(out, String.format(Locale.ROOT, " %16s PyTorch CUDA memory summary, device ID %-17d ", "", device));
        line(out, dash);
        line(out, String.format(Locale.ROOT, "  %9s CUDA OOMs: %-12d | %6s cudaMalloc retries: %-8d  ", "",
                stats.get("num_ooms"), "", stats.get("num_alloc_retries")));
        line(out, eq);
        line(out, "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");
        for (String[] section : BYTE_SECTIONS) {
            line(out, dash);
            rows(out, stats, section[0], section[1], abbreviated, true);
        }
        for (String[] section : COUNT_SECTIONS) {
            line(out, dash);
            rows(out, stats, section[0], section[1], abbreviated, false);
        }
        line(out, dash);
        single(out, stats, "oversize_allocations", "Oversize allocations");
        line(out, dash);
        single(out, stats, "oversize_segments", "Oversize GPU segments");
        line(out, eq);
        return out.toString();
    }

    private static void line(StringBuilder out, String text) {
        out.append('|').append(text).append("|\n");
    }

    private static void rows(StringBuilder out, Map<String, Long> stats, String metric, String name,
                             boolean abbreviated, boolean bytes) {
        String[] types = abbreviated ? new String[] {"all"} : new String[] {"all", "large_pool", "small_pool"};
        String[] labels = abbreviated ? new String[] {name} : new String[] {name, "      from large pool",
                "      from small pool"};
        String[] fields = {"current", "peak", "allocated", "freed"};
        long[] reference = new long[4];
        for (int f = 0; f < 4; f++) {
            reference[f] = stats.get(metric + ".all." + fields[f]);
        }
        for (int t = 0; t < types.length; t++) {
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, " %-21s ", labels[t]));
            for (int f = 0; f < 4; f++) {
                long value = stats.get(metric + "." + types[t] + "." + fields[f]);
                row.append("| ").append(bytes ? formatBytes(value, reference[f]) : formatCount(value, reference[f]))
                        .append(' ');
            }
            line(out, row.toString());
        }
    }

    private static void single(StringBuilder out, Map<String, Long> stats, String metric, String name) {
        StringBuilder row = new StringBuilder(String.format(Locale.ROOT, " %-21s ", name));
        for (String f : new String[] {"current", "peak", "allocated", "freed"}) {
            long v = stats.get(metric + "." + f);
            row.append("| ").append(formatCount(v, v)).append(' ');
        }
        line(out, row.toString());
    }

    /** {@code _format_size}: {@code "{n:6d} {unit}"}, dividing while the reference is at least 768 KiB. */
    static String formatBytes(long value, long reference) {
        String[] units = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
        int unit = 0;
        long v = value;
        long ref = reference;
        while (unit < units.length - 1 && ref >= 768 * 1024) {
            ref /= 1024;
            v /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%6d %s", v, units[unit]);
    }

    /** {@code _format_count}: {@code "{n:7d} {unit} "} (with its trailing space), dividing by 1000 at 750,000. */
    static String formatCount(long value, long reference) {
        String[] units = {" ", "K", "M"};
        int unit = 0;
        long v = value;
        long ref = reference;
        while (unit < units.length - 1 && ref >= 750_000) {
            ref /= 1000;
            v /= 1000;
            unit++;
        }
        return String.format(Locale.ROOT, "%7d %s ", v, units[unit]);
    }
}
