package io.devalloc.bfc;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.Locale;

/** TensorFlow's text formats for the memory log: human-readable sizes, stats lines and the occupancy map. */
final class MemoryLogFormat {

    static final int OCCUPANCY_RESOLUTION = 100;

    private MemoryLogFormat() {
    }

    /**
     * TensorFlow's {@code HumanReadableNumBytes}: below 1024 {@code "<n>B"}; otherwise divide by 1024 while the
     * value is at least 1 MiB, then print value/1024 with one decimal for KiB and two above: {@code 16.0KiB},
     * {@code 18.00MiB}, {@code 4.64GiB}.
     */
    static String humanBytes(long bytes) {
        if (bytes < 0) {
            // Upstream negates first and prefixes the sign.
            return "-" + humanBytes(bytes == Long.MIN_VALUE ? Long.MAX_VALUE : -bytes);
        }
        if (bytes < 1024) {
            return bytes + "B";
        }
        String units = "KMGTPE";
        int unit = 0;
        long value = bytes;
        while (value >= 1024L * 1024) {
            value /= 1024;
            unit++;
        }
        char u = units.charAt(unit);
        // value / 1024 is exact in binary; C's printf rounds such ties to even (1.125 -> "1.12"), where
        // String.format would round them up, so round the exact value half-even.
        BigDecimal scaled = new BigDecimal(value / 1024.0)
                .setScale(u == 'K' ? 1 : 2, RoundingMode.HALF_EVEN);
        return scaled.toPlainString() + u + "iB";
    }

    /** TensorFlow's {@code AllocatorStats::DebugString}: eight lines, values right-aligned in 20 characters. */
    static String statsDebugString(long limit, long inUse, long maxInUse, long numAllocs, long maxAllocSize,
                                   long pool, long peakPool, long largestFree) {
        // BFC leaves bytes_reserved at 0; the pool figures follow on their own lines.
        return String.format(Locale.ROOT, """
                        Limit:            %20d
                        InUse:            %20d
                        MaxInUse:         %20d
                        NumAllocs:        %20d
                        MaxAllocSize:     %20d
                        Reserved:         %20d
                        PeakReserved:     %20d
                        LargestFreeBlock: %20d
                        PoolBytes:        %20d
                        PeakPoolBytes:    %20d""",
                limit, inUse, maxInUse, numAllocs, maxAllocSize, 0L, 0L, largestFree, pool, peakPool);
    }

    /**
     * TensorFlow's {@code RenderRegion}: paints {@code c} over the columns covering {@code [offset, offset + size)}
     * of {@code total} bytes.
     */
    static void paint(char[] rendered, long total, long offset, long size, char c) {
        int resolution = rendered.length;
        int start = (int) multiplyDivide(offset, resolution, total);
        int end = (int) multiplyDivide(offset + size - 1, resolution, total);
        for (int i = Math.max(0, start); i <= Math.min(resolution - 1, end); i++) {
            rendered[i] = c;
        }
    }

    private static long multiplyDivide(long value, long factor, long divisor) {
        return Math.multiplyHigh(value, factor) == 0 ? value * factor / divisor
                : BigInteger.valueOf(value).multiply(BigInteger.valueOf(factor))
                        .divide(BigInteger.valueOf(divisor)).longValueExact();
    }
}
