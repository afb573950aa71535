package io.devalloc.api.config;

import java.util.Objects;

/**
 * Text from a file or the environment, made fit to quote in a message, a note or a JSON report: at most a few
 * hundred characters of it, on one line, with no character that a terminal would act on. A trace comes from a
 * stranger: a field of 100 MB must not become a 100 MB error line, and an escape sequence in a file must not reach
 * the terminal that prints the message (set its title, clear its screen).
 *
 * <p>Control characters (C0, DEL, C1) and the bidirectional overrides and isolates are written as escapes
 * ({@code \x1b}, {@code \u202e}); the text is cut after {@code limit} characters, never inside a surrogate pair,
 * with what was left out counted. The work is bounded by {@code limit}, not by the text's length. Stateless and
 * thread-safe.
 */
public final class UntrustedText {

    /** How many characters of a value a message quotes by default. */
    public static final int DEFAULT_LIMIT = 200;

    private UntrustedText() {
    }

    /** {@code text} as a message may quote it: {@link #DEFAULT_LIMIT} characters at most, controls escaped. */
    public static String excerpt(CharSequence text) {
        return excerpt(text, DEFAULT_LIMIT);
    }

    /**
     * {@code text} as a message may quote it: its first {@code limit} characters (one fewer when the last would split
     * a surrogate pair), control characters escaped, and {@code … (N more characters)} when it was cut.
     *
     * @throws IllegalArgumentException {@code limit < 1}
     */
    public static String excerpt(CharSequence text, int limit) {
        Objects.requireNonNull(text, "text");
        if (limit < 1) {
            throw new IllegalArgumentException("limit " + limit + " < 1");
        }
        int length = text.length();
        int end = Math.min(length, limit);
        if (end < length && end > 0 && Character.isHighSurrogate(text.charAt(end - 1))) {
            end--;
        }
        StringBuilder out = new StringBuilder(end + 32);
        for (int i = 0; i < end; i++) {
            char c = text.charAt(i);
            if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
                out.append("\\x").append(Character.forDigit(c >> 4, 16)).append(Character.forDigit(c & 0xf, 16));
            } else if ((c >= '\u202a' && c <= '\u202e') || (c >= '\u2066' && c <= '\u2069')) {
                out.append("\\u").append(Integer.toHexString(c));
            } else {
                out.append(c);
            }
        }
        if (end < length) {
            out.append("… (").append(length - end).append(" more characters)");
        }
        return out.toString();
    }
}
