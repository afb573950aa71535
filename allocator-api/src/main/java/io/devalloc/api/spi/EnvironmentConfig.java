package io.devalloc.api.spi;

import io.devalloc.api.config.UntrustedText;
import java.util.List;
import java.util.Objects;

/**
 * A part of an allocator's configuration that came from an environment variable rather than from the configuration
 * text its provider was given, as {@link AllocatorProvider#configFromEnvironment(String)} reports it: for
 * {@code caching}, {@code PYTORCH_CUDA_ALLOC_CONF} when no configuration was given; for {@code bfc}, TensorFlow's
 * {@code TF_FORCE_GPU_ALLOW_GROWTH} and {@code TF_ENABLE_GPU_GARBAGE_COLLECTION}.
 *
 * @param variable the environment variable, e.g. {@code PYTORCH_CUDA_ALLOC_CONF}
 * @param config   what it set, in the configuration syntax ({@code key:value,...}), e.g.
 *                 {@code max_split_size_mb:128} or {@code allow_growth:true}
 */
public record EnvironmentConfig(String variable, String config) {

    /** The most characters of the configuration that {@link #describe()} shows: every real one is far shorter. */
    public static final int SHOWN = 500;

    public EnvironmentConfig {
        Objects.requireNonNull(variable, "variable");
        Objects.requireNonNull(config, "config");
        if (variable.isBlank() || config.isBlank()) {
            throw new IllegalArgumentException("an environment configuration needs a variable and a configuration, got "
                    + UntrustedText.excerpt(variable) + "=" + UntrustedText.excerpt(config));
        }
    }

    /**
     * {@code max_split_size_mb:128 (from PYTORCH_CUDA_ALLOC_CONF)}: at most {@value #SHOWN} characters of the
     * configuration, control characters escaped ({@link UntrustedText}), since an environment can hold a valid
     * configuration of any length (leading zeros, blanks) and reports quote this line.
     */
    public String describe() {
        return UntrustedText.excerpt(config, SHOWN) + " (from " + variable + ")";
    }

    /**
     * The configuration an allocator runs with, as a user reads it: the text it was given (stripped), then each part
     * from the environment as {@link #describe()} writes it, separated by {@code "; "}: e.g.
     * {@code max_split_size_mb:128 (from PYTORCH_CUDA_ALLOC_CONF)}, or
     * {@code memory_limit_mb:1024; allow_growth:true (from TF_FORCE_GPU_ALLOW_GROWTH)}. Empty when there is neither
     * (the allocator runs with its defaults).
     *
     * @param configText      the configuration text the provider was given, or null for none
     * @param fromEnvironment what the provider took from the environment besides
     */
    public static String describe(String configText, List<EnvironmentConfig> fromEnvironment) {
        StringBuilder sb = new StringBuilder(configText == null ? "" : configText.strip());
        for (EnvironmentConfig e : fromEnvironment) {
            if (!sb.isEmpty()) {
                sb.append("; ");
            }
            sb.append(e.describe());
        }
        return sb.toString();
    }
}
