package io.devalloc.replay.report;

import java.util.Locale;

/**
 * A fraction as every report prints it: one decimal ({@code 4.4%}), except that a fraction that is not zero is never
 * printed as {@code 0.0%} and one that is not whole never as {@code 100.0%}: below 0.1%, and just below 100%, as
 * many decimals as its first significant digit needs ({@code 0.04%}, {@code 99.998%}), at most six. Stateless.
 */
public final class Percent {

    private Percent() {
    }

    /** {@code fraction} (1 is all) as a percentage. */
    public static String of(double fraction) {
        double p = fraction * 100;
        double a = Math.abs(p);
        if (a > 0 && a < 0.1) {
            return String.format(Locale.ROOT, "%." + digitsFor(a) + "f%%", p);
        }
        if (a >= 99.95 && a < 100) {
            return String.format(Locale.ROOT, "%." + digitsFor(100 - a) + "f%%", p);
        }
        return String.format(Locale.ROOT, "%.1f%%", p);
    }

    /** Decimals enough for the first significant digit of {@code small}, a positive fraction below 0.1: two to six. */
    private static int digitsFor(double small) {
        return Math.min(6, Math.max(2, (int) Math.ceil(-Math.log10(small))));
    }
}
