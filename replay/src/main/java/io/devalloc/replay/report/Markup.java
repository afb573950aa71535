package io.devalloc.replay.report;

import io.devalloc.api.units.ByteSize;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;

/**
 * Escaping and number formatting shared by the parts of the report. Every piece of text that comes from a
 * result (trace names, configuration strings, differences) goes through {@link #esc(String)}; every number is
 * formatted with {@link Locale#ROOT}, so the page is the same on every machine.
 */
final class Markup {

    private Markup() {
    }

    /**
     * Escapes text for HTML element content and for double- or single-quoted attribute values. Characters that
     * cannot appear in a page (see {@link #unsafe(String, int)}) become U+FFFD, so no input can end an element,
     * open a tag or an attribute, or make the page ill-formed.
     */
    static String esc(String text) {
        if (text == null) {
            return "";
        }
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            String replacement = switch (c) {
                case '&' -> "&amp;";
                case '<' -> "&lt;";
                case '>' -> "&gt;";
                case '"' -> "&quot;";
                case '\'' -> "&#39;";
                default -> unsafe(text, i) ? "\uFFFD" : null;
            };
            if (replacement != null) {
                if (out == null) {
                    out = new StringBuilder(text.length() + 16).append(text, 0, i);
                }
                out.append(replacement);
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? text : out.toString();
    }

    /**
     * Whether the char at {@code i} cannot appear in the page: a control character other than tab, line feed and
     * carriage return, a non-character (U+FFFE, U+FFFF), or half of a surrogate pair without its other half.
     */
    private static boolean unsafe(String text, int i) {
        char c = text.charAt(i);
        if (c < 0x20) {
            return c != '\t' && c != '\n' && c != '\r';
        }
        if (c == 0x7f || c == '\uFFFE' || c == '\uFFFF') {
            return true;
        }
        if (Character.isHighSurrogate(c)) {
            return i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
        }
        if (Character.isLowSurrogate(c)) {
            return i == 0 || !Character.isHighSurrogate(text.charAt(i - 1));
        }
        return false;
    }

    /** A coordinate or length for SVG: at most two decimals, no trailing zeros, no exponent. */
    static String num(double value) {
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException("not a finite coordinate: " + value);
        }
        long hundredths = Math.round(value * 100);
        if (hundredths % 100 == 0) {
            return Long.toString(hundredths / 100);
        }
        return BigDecimal.valueOf(hundredths, 2).stripTrailingZeros().toPlainString();
    }

    /** A whole number with thousands separators: {@code 1,897,922,560}. */
    static String grouped(long value) {
        return String.format(Locale.ROOT, "%,d", value);
    }

    /** Bytes for people ({@code 1.77 GiB}). */
    static String bytes(long value) {
        return ByteSize.format(value);
    }

    /** Bytes for people followed by the exact count: {@code 1.77 GiB (1,897,922,560 B)}. */
    static String bytesExact(long value) {
        return value < ByteSize.KiB ? value + " B" : ByteSize.format(value) + " (" + grouped(value) + " B)";
    }

    /** A fraction as every report prints it ({@link Percent}). */
    static String percent(double fraction) {
        return Percent.of(fraction);
    }

    /** A rate of events per second: {@code 7.42 M/s}, {@code 912.5 k/s}, {@code 40 /s}. */
    static String rate(double perSecond) {
        if (perSecond >= 1e9) {
            return String.format(Locale.ROOT, "%.2f G/s", perSecond / 1e9);
        }
        if (perSecond >= 1e6) {
            return String.format(Locale.ROOT, "%.2f M/s", perSecond / 1e6);
        }
        if (perSecond >= 1e3) {
            return String.format(Locale.ROOT, "%.1f k/s", perSecond / 1e3);
        }
        return String.format(Locale.ROOT, "%.0f /s", perSecond);
    }

    /**
     * A tick value with as many decimals as the step needs ({@code 0.25} needs two, {@code 5} none), trailing
     * zeros removed.
     */
    static String tick(double value, double step) {
        int decimals = 0;
        double s = step;
        while (decimals < 6 && Math.abs(s - Math.rint(s)) > 1e-9 * Math.max(1, Math.abs(s))) {
            s *= 10;
            decimals++;
        }
        BigDecimal d = BigDecimal.valueOf(value).setScale(decimals, RoundingMode.HALF_EVEN).stripTrailingZeros();
        if (d.signum() == 0) {
            return "0";
        }
        return d.toPlainString();
    }
}
