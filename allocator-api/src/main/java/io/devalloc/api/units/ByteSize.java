package io.devalloc.api.units;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;

/**
 * Parses and formats byte sizes: {@code 80GiB}, {@code 512MiB}, {@code 2M}, {@code 1.5GiB}, {@code 4096}.
 *
 * <p>{@code KiB/MiB/GiB/TiB} and the bare {@code K/M/G/T} are powers of 1024; {@code KB/MB/GB/TB} are powers of
 * 1000; {@code B} or no unit means bytes. Units are case-insensitive. Fractions are allowed when the result is a
 * whole number of bytes. Only ASCII digits count. Stateless and thread-safe.
 */
public final class ByteSize {

    public static final long KiB = 1024L;
    public static final long MiB = 1024L * KiB;
    public static final long GiB = 1024L * MiB;
    public static final long TiB = 1024L * GiB;

    private ByteSize() {
    }

    /**
     * Parses a size.
     *
     * @throws IllegalArgumentException with a message naming the text and the accepted forms when it is not a
     *                                  size, is negative, has a fraction of a byte, or does not fit in a long
     */
    public static long parse(String text) {
        return parse(text, false);
    }

    /**
     * {@link #parse(String)}, except that a size that is not a whole number of bytes ({@code 1.7GiB}) is rounded down
     * to one instead of refused: for a capacity, where a fraction of a byte means nothing.
     *
     * @throws IllegalArgumentException as {@link #parse(String)} does, but for a fraction of a byte
     */
    public static long parseRoundingDown(String text) {
        return parse(text, true);
    }

    private static long parse(String text, boolean roundDown) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("empty size; expected a number with an optional unit such as 80GiB");
        }
        String t = text.strip();
        if (t.startsWith("-")) {
            throw new IllegalArgumentException("size '" + text + "' is negative");
        }
        int split = 0;
        while (split < t.length() && ((t.charAt(split) >= '0' && t.charAt(split) <= '9') || t.charAt(split) == '.')) {
            split++;
        }
        String number = t.substring(0, split);
        String unit = t.substring(split).strip().toLowerCase(Locale.ROOT);
        long multiplier = switch (unit) {
            case "", "b" -> 1L;
            case "k", "kib" -> KiB;
            case "m", "mib" -> MiB;
            case "g", "gib" -> GiB;
            case "t", "tib" -> TiB;
            case "kb" -> 1_000L;
            case "mb" -> 1_000_000L;
            case "gb" -> 1_000_000_000L;
            case "tb" -> 1_000_000_000_000L;
            default -> throw new IllegalArgumentException("unknown size unit '" + t.substring(split).strip()
                    + "' in '" + text + "'; use B, KiB, MiB, GiB, TiB"
                    + " (or K, M, G, T; KB, MB, GB, TB for powers of 1000)");
        };
        if (number.isEmpty() || number.chars().filter(c -> c == '.').count() > 1 || number.endsWith(".")) {
            throw new IllegalArgumentException(
                    "'" + text + "' is not a size; expected a number with an optional unit such as 80GiB");
        }
        try {
            BigDecimal value =
                    new BigDecimal(number).multiply(BigDecimal.valueOf(multiplier));
            if (value.signum() < 0) {
                throw new IllegalArgumentException("size '" + text + "' is negative");
            }
            if (roundDown) {
                value = value.setScale(0, RoundingMode.DOWN);
            }
            try {
                return value.longValueExact();
            } catch (ArithmeticException e) {
                if (value.stripTrailingZeros().scale() > 0) {
                    throw new IllegalArgumentException("size '" + text + "' is not a whole number of bytes");
                }
                throw new IllegalArgumentException("size '" + text + "' is larger than " + Long.MAX_VALUE + " bytes");
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "'" + text + "' is not a size; expected a number with an optional unit such as 80GiB");
        }
    }

    /** Formats bytes for people: {@code 0 B}, {@code 512 B}, {@code 1.50 KiB}, {@code 80.00 GiB}. */
    public static String format(long bytes) {
        if (bytes < 0) {
            return "-" + format(bytes == Long.MIN_VALUE ? Long.MAX_VALUE : -bytes);
        }
        if (bytes < KiB) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double value = bytes;
        int unit = -1;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%.2f %s", value, units[unit]);
    }

    /**
     * Rounds {@code bytes} up to a multiple of {@code alignment} (a power of two), or returns -1 when the result
     * would overflow a long. Callers treat -1 as "too large".
     */
    public static long roundUp(long bytes, long alignment) {
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two, got " + alignment);
        }
        if (bytes > Long.MAX_VALUE - (alignment - 1)) {
            return -1;
        }
        return (bytes + alignment - 1) & -alignment;
    }

    /** Formats an address as {@code 0x...} hex. */
    public static String hex(long address) {
        return "0x" + Long.toHexString(address);
    }
}
