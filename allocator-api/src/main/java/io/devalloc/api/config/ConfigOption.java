package io.devalloc.api.config;

import io.devalloc.api.units.ByteSize;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

/**
 * One key of an allocator's configuration: its name, what values it allows, its default and what it does.
 *
 * @param name         the key, e.g. {@code allow_growth}
 * @param allowed      what values are allowed, for error messages, e.g. {@code "true or false"}
 * @param defaultValue the value when the key is absent (may be null: "not set")
 * @param description  what it does, for help output
 * @param parser       turns the value text into a value; throws {@link IllegalArgumentException} when it is not
 *                     allowed (its message, if any, is added to the error)
 * @param <T>          the value type
 *
 * <p>Immutable and thread-safe when its parser is (all the factories' parsers are).
 */
public record ConfigOption<T>(String name, String allowed, T defaultValue, String description,
                              Function<String, T> parser) {

    public ConfigOption {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(allowed, "allowed");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(parser, "parser");
        if (!name.matches("[a-z][a-z0-9_]*")) {
            throw new IllegalArgumentException("option names are lower_snake_case, got '" + name + "'");
        }
    }

    /** A boolean key: {@code true}/{@code false}, any case (PyTorch writes {@code True}). */
    public static ConfigOption<Boolean> bool(String name, boolean defaultValue, String description) {
        return new ConfigOption<>(name, "true or false", defaultValue, description,
                text -> switch (text.toLowerCase(Locale.ROOT)) {
                    case "true" -> Boolean.TRUE;
                    case "false" -> Boolean.FALSE;
                    default -> throw new IllegalArgumentException();
                });
    }

    /** A whole-number key in {@code [min, max]}. */
    public static ConfigOption<Long> integer(String name, long min, long max, Long defaultValue, String description) {
        return new ConfigOption<>(name, "a whole number from " + min + " to " + max, defaultValue, description,
                text -> {
                    long v = parsed(text, "-?[0-9]+", Long::parseLong);
                    if (v < min || v > max) {
                        throw new IllegalArgumentException();
                    }
                    return v;
                });
    }

    /** A decimal key in {@code [min, max)} (or {@code [min, max]} when {@code maxInclusive}). */
    public static ConfigOption<Double> decimal(String name, double min, double max, boolean maxInclusive,
                                               Double defaultValue, String description) {
        String range = (maxInclusive ? "a number with " + min + " <= value <= " + max
                : "a number with " + min + " <= value < " + max);
        return new ConfigOption<>(name, range, defaultValue, description, text -> {
            double v = parsed(text, "-?[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?", Double::parseDouble);
            if (Double.isNaN(v) || v < min || (maxInclusive ? v > max : v >= max)) {
                throw new IllegalArgumentException();
            }
            return v;
        });
    }

    /**
     * {@code text} parsed by {@code parse} when it matches {@code pattern}; otherwise, or when the number does not
     * fit, an {@link IllegalArgumentException} without a message (the option's parser says what it expected).
     */
    private static <T> T parsed(String text, String pattern, Function<String, T> parse) {
        if (!text.matches(pattern)) {
            throw new IllegalArgumentException();
        }
        try {
            return parse.apply(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException();
        }
    }

    /** A byte-size key such as {@code 512MiB} or {@code 1073741824} (see {@link ByteSize#parse}). */
    public static ConfigOption<Long> size(String name, Long defaultValue, String description) {
        return new ConfigOption<>(name, "a size such as 4096, 512MiB or 2GiB", defaultValue, description,
                ByteSize::parse);
    }

    /** Parses a value of this key, or throws {@link IllegalArgumentException} with a message saying what is allowed. */
    T parse(String text) {
        return parser.apply(text);
    }
}
