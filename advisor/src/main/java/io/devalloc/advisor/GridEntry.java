package io.devalloc.advisor;

import java.util.Objects;

/**
 * One setting of a grid: a configuration text exactly as {@code --config} takes it, and where it came from.
 *
 * @param config the configuration text, stripped; empty for the allocator's defaults
 * @param origin where it came from: {@code built-in caching grid}, {@code grid.txt:12}, {@code recorded}
 */
public record GridEntry(String config, String origin) {

    public GridEntry {
        config = Objects.requireNonNull(config, "config").strip();
        Objects.requireNonNull(origin, "origin");
    }
}
