package io.devalloc.advisor;

import io.devalloc.api.units.ByteSize;
import java.util.Locale;

/**
 * How much a setting must save before the advisor recommends changing to it ({@code --min-saving}), when it avoids
 * no out-of-memory error and no cache flush: at least {@code fraction} of the recorded setting's figure and at least
 * {@code bytes}. A change that saves less is not worth the risk of a new setting; the report then says the recorded
 * setting is already best within this margin. For the {@code device-calls} objective only the fraction applies (of
 * the device calls), with at least one call.
 *
 * @param fraction the least saving as a fraction of the recorded figure, in [0, 1]
 * @param bytes    the least saving in bytes, 0 or more
 */
public record MinSaving(double fraction, long bytes) {

    /** The default: 1% and 64 MiB. */
    public static final MinSaving DEFAULT = new MinSaving(0.01, 64 * ByteSize.MiB);

    public MinSaving {
        if (!(fraction >= 0 && fraction <= 1)) {
            throw new IllegalArgumentException("a least saving's fraction is from 0 to 100%, got " + fraction);
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("a least saving in bytes is 0 or more, got " + bytes);
        }
    }

    /**
     * Parses {@code --min-saving}: a percentage, a size, or both separated by a comma ({@code 1%}, {@code 64MiB},
     * {@code 1%,64MiB}, {@code 0} for none); a part not given is 0.
     *
     * @throws IllegalArgumentException naming the text and what is wrong
     */
    public static MinSaving parse(String text) {
        String t = text.strip();
        if (t.isEmpty()) {
            throw new IllegalArgumentException("--min-saving: empty; give a percentage, a size or both, such as"
                    + " 1%,64MiB");
        }
        double fraction = 0;
        long bytes = 0;
        boolean seenFraction = false;
        boolean seenBytes = false;
        for (String part : t.split(",", -1)) {
            String p = part.strip();
            if (p.endsWith("%")) {
                if (seenFraction) {
                    throw new IllegalArgumentException("--min-saving '" + text + "': two percentages");
                }
                seenFraction = true;
                try {
                    fraction = Double.parseDouble(p.substring(0, p.length() - 1).strip()) / 100;
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("--min-saving '" + text + "': '" + p + "' is not a percentage",
                            e);
                }
                if (!(fraction >= 0 && fraction <= 1)) {
                    throw new IllegalArgumentException("--min-saving '" + text + "': a percentage is from 0% to"
                            + " 100%, got " + p);
                }
            } else {
                if (seenBytes) {
                    throw new IllegalArgumentException("--min-saving '" + text + "': two sizes");
                }
                seenBytes = true;
                try {
                    bytes = ByteSize.parse(p);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("--min-saving '" + text + "': " + e.getMessage(), e);
                }
            }
        }
        return new MinSaving(fraction, bytes);
    }

    /** Whether saving {@code saving} bytes of {@code of} reaches the margin. */
    public boolean reached(long saving, long of) {
        return saving > 0 && saving >= bytes && (double) saving >= fraction * of;
    }

    /** Whether saving {@code saving} calls of {@code of} reaches the margin (the fraction, and one call). */
    public boolean reachedCalls(long saving, long of) {
        return saving > 0 && (double) saving >= fraction * of;
    }

    /** {@code 1% and 64.00 MiB}, as reports say it. */
    public String describe() {
        String percent = String.format(Locale.ROOT, "%s%%", trim(fraction * 100));
        if (fraction == 0 && bytes == 0) {
            return "no margin";
        }
        if (bytes == 0) {
            return percent;
        }
        if (fraction == 0) {
            return ByteSize.format(bytes);
        }
        return percent + " and " + ByteSize.format(bytes);
    }

    private static String trim(double v) {
        String s = String.format(Locale.ROOT, "%.4f", v);
        s = s.replaceAll("0+$", "");
        return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    }
}
