package io.devalloc.api.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The keys an allocator accepts. Parsing a configuration against it refuses unknown keys and bad values with a
 * message that lists what is allowed.
 */
public final class ConfigSchema {

    private final String owner;
    private final Map<String, ConfigOption<?>> options;

    private ConfigSchema(String owner, Map<String, ConfigOption<?>> options) {
        this.owner = owner;
        this.options = Collections.unmodifiableMap(options);
    }

    /**
     * A schema of {@code options}, which must have distinct names.
     *
     * @param owner   who reads the configuration, for messages, e.g. {@code "allocator 'bfc'"}
     * @param options its keys
     */
    public static ConfigSchema of(String owner, List<ConfigOption<?>> options) {
        Map<String, ConfigOption<?>> map = new LinkedHashMap<>();
        for (ConfigOption<?> o : options) {
            if (map.put(o.name(), o) != null) {
                throw new IllegalArgumentException("duplicate option '" + o.name() + "' in the schema of " + owner);
            }
        }
        return new ConfigSchema(owner, map);
    }

    /** A schema with no keys: only the empty configuration is accepted. */
    public static ConfigSchema empty(String owner) {
        return new ConfigSchema(owner, Map.of());
    }

    /** Who reads this configuration. */
    public String owner() {
        return owner;
    }

    /** The keys, in declaration order. */
    public List<ConfigOption<?>> options() {
        return new ArrayList<>(options.values());
    }

    /** The option with this name, or null. */
    public ConfigOption<?> option(String name) {
        return options.get(name);
    }

    /** A one-line list of the accepted keys, for messages. */
    public String describeKeys() {
        return options.isEmpty() ? "(none: this allocator takes no options)" : String.join(", ", options.keySet());
    }
}
