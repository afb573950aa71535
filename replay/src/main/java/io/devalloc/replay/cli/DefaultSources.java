package io.devalloc.replay.cli;

/**
 * What a launcher's default-value provider tells a command of where an option's default came from, so that a report
 * can name it (e.g. {@code DEVALLOC_CONFIG=expandable_segments:True}) instead of leaving the user to guess why a
 * setting was used. Implemented by the launcher's provider; a command without one names no source.
 */
public interface DefaultSources {

    /**
     * Where the default of {@code option} (its longest name, e.g. {@code --config}) comes from, e.g.
     * {@code DEVALLOC_CONFIG=max_split_size_mb:64} or {@code -Ddevalloc.config=...}; null when it has no such default.
     */
    String sourceOf(String option);
}
