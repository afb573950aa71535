package io.devalloc.caching.host;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigOption;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingOptions;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The options of allocator {@code caching-host}: PyTorch's {@code pinned_*} keys of {@code PYTORCH_CUDA_ALLOC_CONF}
 * that make sense for a pinned-host cache over any {@link io.devalloc.api.device.DeviceMemory}, with PyTorch's
 * defaults, rules and error texts, plus one key of devalloc's own, {@code pinned_round_threshold_mb}. The size
 * arithmetic that depends on them is {@link #roundSize(long)}.
 *
 * <h2>Syntax</h2>
 * {@code key:value,key:value}, parsed by the project's {@link AllocatorConfig} against {@link #SCHEMA}. Booleans
 * are exactly {@code True} or {@code False}, as PyTorch's tokenizer wants them; numbers are plain ASCII digits.
 * Unknown keys, repeated keys and bad values are refused with an {@link InvalidConfigurationException} that names
 * the key and value and (for PyTorch's keys) contains PyTorch's own message.
 *
 * <h2>Keys</h2>
 * <table>
 *   <caption>Keys of allocator 'caching-host'</caption>
 *   <tr><th>key</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code pinned_round_threshold_mb}</td><td>0 (off: PyTorch's rounding)</td><td><b>devalloc's
 *       answer to pytorch/pytorch#150517.</b> PyTorch rounds every pinned request up to the next power of two, so a
 *       20.4 GiB buffer holds 32 GiB of page-locked RAM. With a threshold of T MiB, a request whose power of two
 *       would be at most T MiB is still rounded to it (small requests keep PyTorch's few size classes and high
 *       reuse); any larger request is rounded up to a multiple of 2 MiB instead (at most 2 MiB - 1 byte wasted per
 *       buffer). A whole number of MiB, 0 to 2<sup>42</sup>.</td></tr>
 *   <tr><td>{@code pinned_reserve_segment_size_mb}</td><td>0 (no reserve)</td><td>PyTorch's reserve segment: on
 *       the first cache miss, one device allocation of this many MiB is made and never freed; later misses carve
 *       their blocks from it with a bump pointer (each rounded up to 4 KiB) until it is used up, and only then call
 *       the device. Blocks carved from it are cached like any other block but never returned to the device
 *       ({@code emptyCache} keeps them). &gt; 0: "Pinned reserve segment size has to be greater than 0".</td></tr>
 *   <tr><td>{@code pinned_use_background_threads}</td><td>False</td><td>Accepted for compatibility and not needed:
 *       PyTorch's option moves event processing to a helper thread polling every 100 &micro;s; here every allocation
 *       processes the completed events itself (PyTorch's default), under the allocator's lock, so the value has no
 *       effect.</td></tr>
 *   <tr><td>{@code pinned_use_cuda_host_register} (alias {@code pinned_use_hip_host_register})</td><td>False</td>
 *       <td>Only {@code False} is accepted. PyTorch's {@code True} replaces {@code cudaHostAlloc} with
 *       {@code malloc} + prefaulting + {@code cudaHostRegister}; here the device decides how its memory is pinned
 *       ({@code cuda-host} calls {@code cudaHostAlloc}, {@code pinned-host} calls {@code mlock}), so {@code True} is
 *       refused with an explanation rather than silently ignored.</td></tr>
 *   <tr><td>{@code pinned_num_register_threads}</td><td>1</td><td>Validated as PyTorch does (a power of two
 *       &le; 128: "Number of register threads has to be power of 2, got N") so that PyTorch configuration strings
 *       parse; it only matters with {@code pinned_use_cuda_host_register:True}, so it has no effect here.</td></tr>
 * </table>
 *
 * <p>Immutable and thread-safe.
 *
 * @param roundThreshold     bytes; power-of-two rounding only up to this size, 2 MiB multiples above it; 0 for
 *                           PyTorch's rounding everywhere
 * @param reserveSegmentSize bytes of the reserve segment, 0 for none
 * @param useBackgroundThreads the value of {@code pinned_use_background_threads} (no effect, see above)
 * @param numRegisterThreads the value of {@code pinned_num_register_threads} (no effect, see above)
 * @param configText         the configuration text these options were parsed from ("" for the defaults)
 */
public record CachingHostOptions(long roundThreshold, long reserveSegmentSize, boolean useBackgroundThreads,
                                 int numRegisterThreads, String configText) {

    private static final long MiB = ByteSize.MiB;

    /** Above the threshold, sizes are rounded up to a multiple of this (PyTorch's {@code kRoundLarge}). */
    public static final long ROUND_LARGE = 2 * MiB;
    /** Blocks carved from the reserve segment are rounded up to a multiple of this, as upstream. */
    public static final long RESERVE_ALIGNMENT = 4096;
    /**
     * The largest request served: 2<sup>62</sup> bytes, the largest power of two whose rounding cannot overflow a
     * {@code long} (PyTorch's 64 size classes go to 2<sup>63</sup>, which a signed {@code long} cannot hold).
     */
    public static final long MAX_REQUEST = 1L << 62;
    /** The largest {@code pinned_round_threshold_mb}: {@link #MAX_REQUEST} in MiB. */
    public static final long MAX_THRESHOLD_MB = MAX_REQUEST / MiB;

    /** devalloc's key: power-of-two rounding only up to this many MiB. */
    public static final ConfigOption<Long> PINNED_ROUND_THRESHOLD_MB = ConfigOption.integer(
            "pinned_round_threshold_mb", 0, MAX_THRESHOLD_MB, 0L,
            "round pinned requests to a power of two only when that power is at most this many MiB, and larger ones"
                    + " to a multiple of 2 MiB (default 0: always a power of two, as PyTorch; see pytorch#150517)");
    /** PyTorch's key, with PyTorch's rule and message. */
    public static final ConfigOption<Long> PINNED_RESERVE_SEGMENT_SIZE_MB = CachingOptions.PINNED_RESERVE_SEGMENT_SIZE_MB;
    /** PyTorch's key; accepted, no effect (allocation processes events itself). */
    public static final ConfigOption<Boolean> PINNED_USE_BACKGROUND_THREADS = CachingOptions.PINNED_USE_BACKGROUND_THREADS;
    /** PyTorch's key; only {@code False} is accepted. */
    public static final ConfigOption<Boolean> PINNED_USE_CUDA_HOST_REGISTER = CachingOptions.PINNED_USE_CUDA_HOST_REGISTER;
    /** ROCm spelling of {@link #PINNED_USE_CUDA_HOST_REGISTER}. */
    public static final ConfigOption<Boolean> PINNED_USE_HIP_HOST_REGISTER = CachingOptions.PINNED_USE_HIP_HOST_REGISTER;
    /** PyTorch's key, validated as PyTorch does; no effect here. */
    public static final ConfigOption<Integer> PINNED_NUM_REGISTER_THREADS = CachingOptions.PINNED_NUM_REGISTER_THREADS;

    /** The keys of allocator {@code caching-host}. */
    public static final ConfigSchema SCHEMA = ConfigSchema.of("allocator 'caching-host'", List.of(
            PINNED_ROUND_THRESHOLD_MB, PINNED_RESERVE_SEGMENT_SIZE_MB, PINNED_USE_BACKGROUND_THREADS,
            PINNED_USE_CUDA_HOST_REGISTER, PINNED_USE_HIP_HOST_REGISTER, PINNED_NUM_REGISTER_THREADS));

    /**
     * Checks the invariants that parsing guarantees, so that hand-built options are as safe as parsed ones.
     *
     * @throws IllegalArgumentException naming the broken invariant
     */
    public CachingHostOptions {
        Objects.requireNonNull(configText, "configText");
        if (roundThreshold < 0 || roundThreshold > MAX_REQUEST) {
            throw new IllegalArgumentException("round threshold must be in [0, 2^62] bytes (0 = off), got "
                    + roundThreshold);
        }
        if (reserveSegmentSize < 0) {
            throw new IllegalArgumentException("reserve segment size must be >= 0 (0 = none), got "
                    + reserveSegmentSize);
        }
        if (numRegisterThreads < 1 || numRegisterThreads > CachingOptions.MAX_REGISTER_THREADS
                || Integer.bitCount(numRegisterThreads) != 1) {
            throw new IllegalArgumentException("register threads must be a power of 2 <= 128, got "
                    + numRegisterThreads);
        }
    }

    /** PyTorch's defaults (power-of-two rounding everywhere, no reserve), with configuration text "". */
    public static CachingHostOptions defaults() {
        return new CachingHostOptions(0, 0, false, 1, "");
    }

    /** The defaults with {@code pinned_round_threshold_mb} set to {@code thresholdMb}. */
    public static CachingHostOptions withRoundThresholdMb(long thresholdMb) {
        return parse(PINNED_ROUND_THRESHOLD_MB.name() + ":" + thresholdMb);
    }

    /**
     * Parses a configuration text ({@code null} or blank: the defaults).
     *
     * @throws InvalidConfigurationException for an unknown, malformed or repeated entry or a bad value
     */
    public static CachingHostOptions parse(String text) {
        String t = text == null ? "" : text;
        return build(AllocatorConfig.parse(t, SCHEMA), t);
    }

    /**
     * The options of a configuration already parsed against {@link #SCHEMA} (what a provider's
     * {@code create(AllocatorSetup)} receives).
     *
     * @throws InvalidConfigurationException for {@code pinned_use_cuda_host_register:True}
     * @throws IllegalArgumentException      when {@code config} was parsed against another schema
     */
    public static CachingHostOptions from(AllocatorConfig config) {
        Objects.requireNonNull(config, "config");
        return build(config, canonicalText(config));
    }

    private static CachingHostOptions build(AllocatorConfig config, String text) {
        if (config.schema() != SCHEMA) {
            throw new IllegalArgumentException("configuration was parsed against the schema of "
                    + config.schema().owner() + ", not " + SCHEMA.owner());
        }
        for (ConfigOption<Boolean> register : List.of(PINNED_USE_CUDA_HOST_REGISTER, PINNED_USE_HIP_HOST_REGISTER)) {
            if (config.get(register)) {
                throw new InvalidConfigurationException(register.name(), "True", register.name()
                        + ":True is not supported by " + SCHEMA.owner() + ": it makes PyTorch pin memory with malloc +"
                        + " cudaHostRegister instead of cudaHostAlloc, but here the device decides how memory is pinned"
                        + " (cuda-host: cudaHostAlloc, pinned-host: mlock). Leave it out or set it to False.");
            }
        }
        long thresholdMb = config.get(PINNED_ROUND_THRESHOLD_MB);
        long reserveMb = config.get(PINNED_RESERVE_SEGMENT_SIZE_MB);
        return new CachingHostOptions(thresholdMb * MiB, Math.min(reserveMb, Long.MAX_VALUE / MiB) * MiB,
                config.get(PINNED_USE_BACKGROUND_THREADS), config.get(PINNED_NUM_REGISTER_THREADS), text);
    }

    /**
     * The size of the block that serves a request of {@code size} bytes.
     * <ul>
     *   <li>0 &rarr; 0 (the null allocation).</li>
     *   <li>With no threshold (PyTorch): the next power of two, {@code c10::llvm::PowerOf2Ceil}: 40,960 &rarr; 65,536;
     *       81,920 &rarr; 131,072; 1 &rarr; 1; a power of two is unchanged.</li>
     *   <li>With a threshold T: the next power of two when that is at most T; otherwise the next multiple of 2 MiB.
     *       With T = 16 MiB: 20.4 MiB &rarr; 22 MiB (PyTorch: 32 MiB), 33 MiB &rarr; 34 MiB (64 MiB), 65 MiB &rarr;
     *       66 MiB (128 MiB), while 9 MiB &rarr; 16 MiB as in PyTorch.</li>
     * </ul>
     * A rounded size that is a power of two is produced by one rule only (the 2 MiB rule yields a power of two P
     * only for requests whose own power of two is P, which it uses only when P &gt; T), so blocks of one rounded
     * size always serve the same requests.
     *
     * @throws IllegalArgumentException if {@code size} is negative or above {@link #MAX_REQUEST}
     */
    public long roundSize(long size) {
        if (size < 0 || size > MAX_REQUEST) {
            throw new IllegalArgumentException("size must be in [0, 2^62], got " + size);
        }
        if (size <= 1) {
            return size;
        }
        long power = Long.highestOneBit(size - 1) << 1;
        if (roundThreshold == 0 || power <= roundThreshold) {
            return power;
        }
        return (size + ROUND_LARGE - 1) & -ROUND_LARGE;
    }

    /** {@link #roundThreshold} in MiB, as configured. */
    public long roundThresholdMb() {
        return roundThreshold / MiB;
    }

    /** The explicit values as configuration text, booleans spelled True/False so that it parses again. */
    private static String canonicalText(AllocatorConfig config) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Object> e : config.explicitValues().entrySet()) {
            if (!sb.isEmpty()) {
                sb.append(',');
            }
            Object v = e.getValue();
            sb.append(e.getKey()).append(':').append(v instanceof Boolean b ? (b ? "True" : "False") : String.valueOf(v));
        }
        return sb.toString();
    }
}
