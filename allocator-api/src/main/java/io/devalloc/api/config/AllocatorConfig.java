package io.devalloc.api.config;

import io.devalloc.api.error.InvalidConfigurationException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A parsed, validated allocator configuration.
 *
 * <p>The text syntax is PyTorch's {@code PYTORCH_CUDA_ALLOC_CONF} syntax, shared by every allocator:
 * {@code key:value,key:value}. Whitespace around keys and values is ignored, and commas inside square brackets
 * belong to the value, so list values such as {@code roundup_power2_divisions:[256:1,512:2,>:8]} work. An empty
 * or blank text means "all defaults". Unknown keys, malformed pairs, repeated keys and bad values are refused
 * with an {@link InvalidConfigurationException} that names the key, the value and what is allowed.
 *
 * <p>Immutable and thread-safe.
 */
public final class AllocatorConfig {

    private final ConfigSchema schema;
    private final Map<String, Object> values;

    private AllocatorConfig(ConfigSchema schema, Map<String, Object> values) {
        this.schema = schema;
        this.values = Collections.unmodifiableMap(values);
    }

    /** The configuration with every key at its default. */
    public static AllocatorConfig defaults(ConfigSchema schema) {
        return new AllocatorConfig(Objects.requireNonNull(schema, "schema"), new LinkedHashMap<>());
    }

    /**
     * Parses {@code text} against {@code schema}.
     *
     * @throws InvalidConfigurationException on any unknown key, malformed pair, repeated key or bad value
     */
    public static AllocatorConfig parse(String text, ConfigSchema schema) {
        Objects.requireNonNull(schema, "schema");
        Map<String, Object> values = new LinkedHashMap<>();
        if (text == null || text.isBlank()) {
            return new AllocatorConfig(schema, values);
        }
        for (String pair : splitPairs(text)) {
            // A configuration may come from a stranger's environment or file: messages quote a bounded excerpt.
            String where = where(text, pair);
            String shownPair = UntrustedText.excerpt(pair.strip());
            int colon = pair.indexOf(':');
            if (colon < 0) {
                throw new InvalidConfigurationException(pair.strip(), null, "malformed configuration entry '"
                        + shownPair + "'" + where + " for " + schema.owner() + ": expected key:value (a key, a"
                        + " colon, then the value); accepted keys: " + schema.describeKeys());
            }
            String key = pair.substring(0, colon).strip();
            String value = pair.substring(colon + 1).strip();
            String shownKey = UntrustedText.excerpt(key);
            if (key.isEmpty()) {
                throw new InvalidConfigurationException(null, value, "configuration entry '" + shownPair + "'"
                        + where + " for " + schema.owner() + " has no key before its colon; accepted keys: "
                        + schema.describeKeys());
            }
            ConfigOption<?> option = schema.option(key);
            if (option == null) {
                throw new InvalidConfigurationException(key, value, "unknown configuration key '" + shownKey + "'"
                        + where + " for " + schema.owner() + "; accepted keys: " + schema.describeKeys());
            }
            if (values.containsKey(key)) {
                throw new InvalidConfigurationException(key, value, "configuration key '" + shownKey + "' given twice"
                        + where + " for " + schema.owner());
            }
            if (value.isEmpty()) {
                throw new InvalidConfigurationException(key, value, "configuration key '" + shownKey + "'" + where
                        + " for " + schema.owner() + " has no value; allowed: " + option.allowed());
            }
            Object parsed;
            try {
                parsed = option.parse(value);
            } catch (IllegalArgumentException e) {
                String detail = e.getMessage() == null ? "" : " (" + e.getMessage() + ")";
                throw new InvalidConfigurationException(key, value, "bad value '" + UntrustedText.excerpt(value)
                        + "' for configuration key '" + shownKey + "'" + where + " of " + schema.owner() + detail
                        + "; allowed: " + option.allowed());
            }
            values.put(key, parsed);
        }
        return new AllocatorConfig(schema, values);
    }

    /**
     * Where an entry's error happened, for its message: {@code " in configuration 'TEXT'"} when the text holds more
     * than that entry, so that a user with several entries (or a file of them) sees which text was refused; nothing
     * when the entry is the whole text, which the message names anyway.
     */
    private static String where(String text, String pair) {
        return text.strip().equals(pair.strip()) ? ""
                : " in configuration '" + UntrustedText.excerpt(text.strip()) + "'";
    }

    /** Splits on commas that are not inside square brackets. */
    private static List<String> splitPairs(String text) {
        List<String> pairs = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '[') {
                depth++;
            } else if (c == ']') {
                if (--depth < 0) {
                    throw new InvalidConfigurationException(null, null, "unbalanced ']' at position " + i
                            + " in configuration '" + UntrustedText.excerpt(text) + "'");
                }
            } else if (c == ',' && depth == 0) {
                addPair(pairs, text, start, i);
                start = i + 1;
            }
        }
        if (depth != 0) {
            throw new InvalidConfigurationException(null, null, "unclosed '[' in configuration '"
                    + UntrustedText.excerpt(text) + "'");
        }
        addPair(pairs, text, start, text.length());
        return pairs;
    }

    private static void addPair(List<String> pairs, String text, int from, int to) {
        String pair = text.substring(from, to);
        if (pair.isBlank()) {
            throw new InvalidConfigurationException(null, null, "empty entry at position " + from
                    + " in configuration '" + UntrustedText.excerpt(text) + "' (stray comma?)");
        }
        pairs.add(pair);
    }

    /** The schema it was checked against. */
    public ConfigSchema schema() {
        return schema;
    }

    /** The value of {@code option}: as given, or its default. */
    @SuppressWarnings("unchecked")
    public <T> T get(ConfigOption<T> option) {
        requireKnown(option);
        Object v = values.get(option.name());
        return v != null ? (T) v : option.defaultValue();
    }

    /** Whether the key was given explicitly. */
    public boolean isSet(ConfigOption<?> option) {
        requireKnown(option);
        return values.containsKey(option.name());
    }

    @SuppressWarnings("ReferenceEquality") // the schema's own option object, not one with the same name
    private void requireKnown(ConfigOption<?> option) {
        if (schema.option(option.name()) != option) {
            throw new IllegalArgumentException(
                    "option '" + option.name() + "' is not part of the schema of " + schema.owner());
        }
    }

    /** The explicitly given keys and values. */
    public Map<String, Object> explicitValues() {
        return values;
    }

    /** The canonical text form of the explicit values, {@code key:value,...}. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Object> e : values.entrySet()) {
            if (!sb.isEmpty()) {
                sb.append(',');
            }
            sb.append(e.getKey()).append(':').append(e.getValue());
        }
        return sb.toString();
    }
}
