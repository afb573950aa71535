package io.devalloc.caching.host;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigOption;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingConfig;
import io.devalloc.caching.SizeRules;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The options of allocator {@code caching-host}: PyTorch's {@code pinned_*} keys of {@code PYTORCH_CUDA_ALLOC_CONF}
 * that make sense for a pinned-host cache over any {@link io.devalloc.api.device.DeviceMemory}, with PyTorch's
 * defaults, rules and error texts (including PyTorch 2.10&ndash;2.13's {@code pinned_max_round_threshold_mb} and
 * {@code pinned_max_cached_size_mb}), plus one key of devalloc's own, {@code pinned_round_threshold_mb}. The size
 * arithmetic that depends on them is {@link #roundSize(long)}; the free-time limit is {@link #maxCachedSize()}.
 *
 * <p>PyTorch's keys here are allocator {@code caching}'s own {@link ConfigOption}s ({@link CachingConfig}), which
 * validate them with PyTorch's rules and messages, and their values are converted with its helpers (MiB to bytes
 * clamped as upstream, the configuration text of a parsed configuration), so that both allocators accept and read
 * PyTorch's one configuration string alike. What is this class's own: devalloc's {@code pinned_round_threshold_mb},
 * the refusal of {@code pinned_use_cuda_host_register:True}, and the rules that span keys.
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
 *       buffer). A whole number of MiB, 0 to 2<sup>42</sup>. It predates PyTorch's
 *       {@code pinned_max_round_threshold_mb} (below), which answers the same issue by not rounding large requests
 *       at all; <b>the two cannot be combined</b> (a non-zero value together with {@code pinned_max_round_threshold_mb}
 *       is refused with a message saying which to keep), because both decide how a request above a threshold is
 *       sized. It combines with {@code pinned_max_cached_size_mb}: requests above the cached size are not rounded
 *       at all, whichever rounding rule is in force.</td></tr>
 *   <tr><td>{@code pinned_max_round_threshold_mb}</td><td>unlimited (every request rounded, as before
 *       PyTorch 2.10)</td><td><b>PyTorch's key</b> (pytorch#171662, an {@code AcceleratorAllocatorConfig} key): a
 *       request of more than this many MiB is not rounded to a power of two; its block is exactly the requested
 *       size (the device port takes any byte count, see {@link #roundSize(long)}). Requests of at most the threshold
 *       are rounded as always. 0 is accepted and means that no request is rounded. Whole MiB in ASCII digits, as
 *       upstream's {@code toSizeT}; values above {@code Long.MAX_VALUE / 1 MiB} are clamped to it (upstream clamps
 *       to {@code SIZE_MAX / 1 MiB}), values above 2<sup>64</sup> - 1 are refused (upstream's {@code stoull}
 *       throws). Upstream has no message of its own for these keys; a bad value gets the project's
 *       {@link InvalidConfigurationException} naming key and value.</td></tr>
 *   <tr><td>{@code pinned_max_cached_size_mb}</td><td>unlimited (every block cached)</td><td><b>PyTorch's
 *       key</b>: a freed block of more than this many MiB is returned to the device ({@code cudaFreeHost}) as soon
 *       as it would otherwise go back on its free list: at the free when no stream was recorded, else once its last
 *       event has completed (found by the next allocation or {@code emptyCache}). It counts as a host free, as
 *       upstream: {@code allocations} and {@code allocated_bytes} fall, {@code num_host_free} and
 *       {@code host_free_time} grow. Requests above it are never rounded (a block that is not cached cannot be
 *       reused, so rounding it would only waste memory): upstream rounds only when the request is at most
 *       <em>both</em> {@code pinned_max_round_threshold_mb} and this. When both keys are given and the threshold is
 *       the larger, upstream's warning is logged through slf4j at WARN, once per parse (upstream's
 *       {@code TORCH_WARN_ONCE}: once per process): "pinned_max_round_threshold_mb (T) &gt;
 *       pinned_max_cached_size_mb (C). The cache size limit takes precedence: allocations above
 *       pinned_max_cached_size_mb are never rounded up." 0 means nothing is cached. As upstream, the comparison at
 *       allocation is of the <em>request</em>, so a request just under the limit may be rounded to a block above
 *       it, which is then not cached. Blocks carved from the reserve segment are never returned to the device and
 *       stay cached whatever their size (see the package documentation). Same number syntax as the threshold.
 *       Both limits are reported as PyTorch's snapshot reports them by {@link #maxRoundThresholdSetting()} and
 *       {@link #maxCachedSizeSetting()} (bytes, -1 when unlimited). Upstream reads both keys from the accelerator
 *       configuration that {@code PYTORCH_CUDA_ALLOC_CONF} also feeds; allocator {@code caching} accepts them too
 *       (they only act here) and reports them in its {@code allocator_settings}.</td></tr>
 *   <tr><td>{@code pinned_free_catch_all}</td><td>False</td><td>PyTorch's key ({@code True}/{@code False}).
 *       Upstream wraps the pinned {@code free} in a catch-all so that an exception cannot escape a destructor: with
 *       {@code False} it warns "Exception in pinned allocator free(), rethrowing" and rethrows, with {@code True} it
 *       warns "Suppressed exception in pinned allocator free()" and returns. Here the same applies to device
 *       failures ({@link io.devalloc.api.error.DeviceException}) inside {@code free}; a swallowed failure leaves the
 *       block allocated (its memory is not reused), as upstream's early exit does. Bad frees (unknown address,
 *       double free) are errors of the caller and are always thrown.</td></tr>
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
 * @param roundThreshold     bytes ({@code pinned_round_threshold_mb}); power-of-two rounding only up to this size,
 *                           2 MiB multiples above it; 0 for PyTorch's rounding everywhere
 * @param maxRoundThreshold  bytes ({@code pinned_max_round_threshold_mb}); requests above it are not rounded;
 *                           {@link #UNLIMITED} when not set. Only {@link #UNLIMITED} when {@code roundThreshold} is
 *                           not 0
 * @param maxCachedSize      bytes ({@code pinned_max_cached_size_mb}); freed blocks above it go back to the device
 *                           and requests above it are not rounded; {@link #UNLIMITED} when not set
 * @param reserveSegmentSize bytes of the reserve segment, 0 for none
 * @param useBackgroundThreads the value of {@code pinned_use_background_threads} (no effect, see above)
 * @param numRegisterThreads the value of {@code pinned_num_register_threads} (no effect, see above)
 * @param freeCatchAll       {@code pinned_free_catch_all}: a device failure inside {@code free} is logged and
 *                           swallowed instead of thrown
 * @param configText         the configuration text these options were parsed from ("" for the defaults)
 */
public record CachingHostOptions(long roundThreshold, long maxRoundThreshold, long maxCachedSize,
                                 long reserveSegmentSize, boolean useBackgroundThreads, int numRegisterThreads,
                                 boolean freeCatchAll, String configText) {

    private static final Logger LOG = LoggerFactory.getLogger(CachingHostOptions.class);
    private static final long MiB = ByteSize.MiB;

    /**
     * The value of {@link #maxRoundThreshold} and {@link #maxCachedSize} when their key is not given: no limit
     * (upstream's default {@code SIZE_MAX}). Every size this allocator serves ({@link #MAX_REQUEST} at most) is below
     * it.
     */
    public static final long UNLIMITED = Long.MAX_VALUE;
    /** The largest value of the two {@code pinned_max_*_mb} keys; larger ones are clamped to it, as upstream. */
    public static final long MAX_LIMIT_MB = CachingConfig.MAX_PINNED_LIMIT_MB;

    /** Above the threshold, sizes are rounded up to a multiple of this (PyTorch's {@code kRoundLarge}). */
    public static final long ROUND_LARGE = SizeRules.ROUND_LARGE;
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
    public static final ConfigOption<Long> PINNED_RESERVE_SEGMENT_SIZE_MB =
            CachingConfig.PINNED_RESERVE_SEGMENT_SIZE_MB;
    /** PyTorch's key; accepted, no effect (allocation processes events itself). */
    public static final ConfigOption<Boolean> PINNED_USE_BACKGROUND_THREADS =
            CachingConfig.PINNED_USE_BACKGROUND_THREADS;
    /** PyTorch's key; only {@code False} is accepted. */
    public static final ConfigOption<Boolean> PINNED_USE_CUDA_HOST_REGISTER =
            CachingConfig.PINNED_USE_CUDA_HOST_REGISTER;
    /** ROCm spelling of {@link #PINNED_USE_CUDA_HOST_REGISTER}. */
    public static final ConfigOption<Boolean> PINNED_USE_HIP_HOST_REGISTER = CachingConfig.PINNED_USE_HIP_HOST_REGISTER;
    /** PyTorch's key, validated as PyTorch does; no effect here. */
    public static final ConfigOption<Integer> PINNED_NUM_REGISTER_THREADS = CachingConfig.PINNED_NUM_REGISTER_THREADS;
    /** PyTorch's key (2.10+): requests above this many MiB are not rounded. Its value is the (clamped) MiB. */
    public static final ConfigOption<Long> PINNED_MAX_ROUND_THRESHOLD_MB = CachingConfig.PINNED_MAX_ROUND_THRESHOLD_MB;
    /** PyTorch's key (2.10+): freed blocks above this many MiB are not cached. Its value is the (clamped) MiB. */
    public static final ConfigOption<Long> PINNED_MAX_CACHED_SIZE_MB = CachingConfig.PINNED_MAX_CACHED_SIZE_MB;

    /** PyTorch's key: a device failure inside {@code free} is logged and swallowed instead of thrown. */
    public static final ConfigOption<Boolean> PINNED_FREE_CATCH_ALL = CachingConfig.PINNED_FREE_CATCH_ALL;

    /** The keys of allocator {@code caching-host}. */
    public static final ConfigSchema SCHEMA = ConfigSchema.of("allocator 'caching-host'", List.of(
            PINNED_ROUND_THRESHOLD_MB, PINNED_RESERVE_SEGMENT_SIZE_MB, PINNED_USE_BACKGROUND_THREADS,
            PINNED_USE_CUDA_HOST_REGISTER, PINNED_USE_HIP_HOST_REGISTER, PINNED_NUM_REGISTER_THREADS,
            PINNED_MAX_ROUND_THRESHOLD_MB, PINNED_MAX_CACHED_SIZE_MB, PINNED_FREE_CATCH_ALL));

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
        if (maxRoundThreshold < 0) {
            throw new IllegalArgumentException("max round threshold must be >= 0 bytes (UNLIMITED = none), got "
                    + maxRoundThreshold);
        }
        if (maxCachedSize < 0) {
            throw new IllegalArgumentException("max cached size must be >= 0 bytes (UNLIMITED = none), got "
                    + maxCachedSize);
        }
        if (roundThreshold != 0 && maxRoundThreshold != UNLIMITED) {
            throw new IllegalArgumentException("round threshold (pinned_round_threshold_mb) and max round threshold"
                    + " (pinned_max_round_threshold_mb) cannot both be set; got " + roundThreshold + " and "
                    + maxRoundThreshold);
        }
        if (reserveSegmentSize < 0) {
            throw new IllegalArgumentException("reserve segment size must be >= 0 (0 = none), got "
                    + reserveSegmentSize);
        }
        if (numRegisterThreads < 1 || numRegisterThreads > CachingConfig.MAX_REGISTER_THREADS
                || Integer.bitCount(numRegisterThreads) != 1) {
            throw new IllegalArgumentException("register threads must be a power of 2 <= 128, got "
                    + numRegisterThreads);
        }
    }

    /**
     * Options without PyTorch 2.10's limits ({@link #maxRoundThreshold} and {@link #maxCachedSize}
     * {@link #UNLIMITED}), as before those keys existed.
     */
    public CachingHostOptions(long roundThreshold, long reserveSegmentSize, boolean useBackgroundThreads,
                              int numRegisterThreads, String configText) {
        this(roundThreshold, UNLIMITED, UNLIMITED, reserveSegmentSize, useBackgroundThreads, numRegisterThreads,
                false, configText);
    }

    /** Options without {@code pinned_free_catch_all} (off, PyTorch's default). */
    public CachingHostOptions(long roundThreshold, long maxRoundThreshold, long maxCachedSize, long reserveSegmentSize,
                              boolean useBackgroundThreads, int numRegisterThreads, String configText) {
        this(roundThreshold, maxRoundThreshold, maxCachedSize, reserveSegmentSize, useBackgroundThreads,
                numRegisterThreads, false, configText);
    }

    /** PyTorch's defaults (power-of-two rounding everywhere, every block cached, no reserve), with text "". */
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
        return build(config, CachingConfig.canonicalText(config));
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
        boolean maxRoundSet = config.isSet(PINNED_MAX_ROUND_THRESHOLD_MB);
        boolean maxCachedSet = config.isSet(PINNED_MAX_CACHED_SIZE_MB);
        if (thresholdMb != 0 && maxRoundSet) {
            throw bothRoundThresholds(config);
        }
        // The pinned keys PyTorch's configuration shares with allocator caching are read as it reads them.
        long maxRoundThreshold = CachingConfig.sizeInBytes(config, PINNED_MAX_ROUND_THRESHOLD_MB);
        long maxCachedSize = CachingConfig.sizeInBytes(config, PINNED_MAX_CACHED_SIZE_MB);
        CachingHostOptions options = new CachingHostOptions(thresholdMb * MiB, maxRoundThreshold, maxCachedSize,
                CachingConfig.sizeInBytes(config, PINNED_RESERVE_SEGMENT_SIZE_MB),
                config.get(PINNED_USE_BACKGROUND_THREADS), config.get(PINNED_NUM_REGISTER_THREADS),
                config.get(PINNED_FREE_CATCH_ALL), text);
        if (maxRoundSet && maxCachedSet && maxRoundThreshold > maxCachedSize) {
            LOG.warn(precedenceWarning(maxRoundThreshold, maxCachedSize));
        }
        return options;
    }

    /**
     * Upstream's {@code TORCH_WARN_ONCE} of {@code AcceleratorAllocatorConfig} when both limits are given and the
     * round threshold is the larger (the values in MiB, upstream's {@code >> 20}).
     */
    static String precedenceWarning(long maxRoundThreshold, long maxCachedSize) {
        return PINNED_MAX_ROUND_THRESHOLD_MB.name() + " (" + (maxRoundThreshold >> 20) + ") > "
                + PINNED_MAX_CACHED_SIZE_MB.name() + " (" + (maxCachedSize >> 20) + "). The cache size limit takes"
                + " precedence: allocations above " + PINNED_MAX_CACHED_SIZE_MB.name() + " are never rounded up.";
    }

    /** devalloc's and PyTorch's round threshold together: refused, naming the one given later in the text. */
    private static InvalidConfigurationException bothRoundThresholds(AllocatorConfig config) {
        ConfigOption<Long> later = PINNED_MAX_ROUND_THRESHOLD_MB;
        for (String key : config.explicitValues().keySet()) {
            if (key.equals(PINNED_MAX_ROUND_THRESHOLD_MB.name())) {
                later = PINNED_MAX_ROUND_THRESHOLD_MB;
            } else if (key.equals(PINNED_ROUND_THRESHOLD_MB.name())) {
                later = PINNED_ROUND_THRESHOLD_MB;
            }
        }
        String value = String.valueOf(config.get(later));
        return new InvalidConfigurationException(later.name(), value, PINNED_ROUND_THRESHOLD_MB.name() + " and "
                + PINNED_MAX_ROUND_THRESHOLD_MB.name() + " cannot be combined in " + SCHEMA.owner() + ": both decide"
                + " how a request above a threshold is sized (" + PINNED_ROUND_THRESHOLD_MB.name() + ", devalloc's: a"
                + " multiple of 2 MiB; " + PINNED_MAX_ROUND_THRESHOLD_MB.name() + ", PyTorch's: exactly the requested"
                + " size). Keep " + PINNED_MAX_ROUND_THRESHOLD_MB.name() + " for PyTorch's behaviour, or "
                + PINNED_ROUND_THRESHOLD_MB.name() + " for 2 MiB classes that nearby sizes share; "
                + PINNED_MAX_CACHED_SIZE_MB.name() + " combines with either.");
    }


    /**
     * The size of the block that serves a request of {@code size} bytes.
     * <ul>
     *   <li>0 &rarr; 0 (the null allocation).</li>
     *   <li>Above {@link #maxRoundThreshold} or above {@link #maxCachedSize} (PyTorch 2.10+): {@code size} itself,
     *       unrounded. Upstream's rule, {@code size <= pinned_max_round_threshold() && size <= pinned_max_cached_size()
     *       ? PowerOf2Ceil(size) : size}; it compares the request, not its rounded size. With a 64 MiB threshold,
     *       80 MiB &rarr; 80 MiB (rounded: 128 MiB), 64 MiB &rarr; 64 MiB, 40 MiB &rarr; 64 MiB.</li>
     *   <li>With no threshold (PyTorch): the next power of two, {@code c10::llvm::PowerOf2Ceil}: 40,960 &rarr; 65,536;
     *       81,920 &rarr; 131,072; 1 &rarr; 1; a power of two is unchanged.</li>
     *   <li>With devalloc's threshold T ({@code pinned_round_threshold_mb}): the next power of two when that is at
     *       most T; otherwise the next multiple of 2 MiB. With T = 16 MiB: 20.4 MiB &rarr; 22 MiB (PyTorch: 32 MiB),
     *       33 MiB &rarr; 34 MiB (64 MiB), 65 MiB &rarr; 66 MiB (128 MiB),
     *       while 9 MiB &rarr; 16 MiB as in PyTorch.</li>
     * </ul>
     * A rounded size that is a power of two is produced by one rule only (the 2 MiB rule yields a power of two P
     * only for requests whose own power of two is P, which it uses only when P &gt; T), so blocks of one rounded
     * size always serve the same requests.
     *
     * <p><b>Unrounded sizes and the device.</b> Upstream hands the exact request to {@code cudaHostAlloc}, which
     * takes any byte count (it locks whole pages internally). devalloc does the same: {@code DeviceMemory.malloc}
     * takes any count of at least 1 byte and returns an address aligned to the device's {@code alignment()}, and a
     * pinned block is never split, so no neighbour needs its end aligned. The power-of-two rule already produces
     * sizes such as 2 or 4 bytes. Pieces of the reserve segment keep their 4 KiB rounding of the extent, as
     * upstream.
     *
     * @throws IllegalArgumentException if {@code size} is negative or above {@link #MAX_REQUEST}
     */
    public long roundSize(long size) {
        if (size < 0 || size > MAX_REQUEST) {
            throw new IllegalArgumentException("size must be in [0, 2^62], got " + size);
        }
        if (size <= 1 || size > maxRoundThreshold || size > maxCachedSize) {
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

    /**
     * {@link #maxRoundThreshold} as the newest PyTorch's snapshot reports it in {@code allocator_settings}
     * ({@code "max_round_threshold"}, an {@code int64_t} cast of the byte value): -1 when unlimited, else bytes.
     * (A value clamped to {@link #MAX_LIMIT_MB} shows as its bytes; upstream's cast of its clamped
     * {@code SIZE_MAX / 1 MiB} MiB would show -1,048,576.)
     */
    public long maxRoundThresholdSetting() {
        return maxRoundThreshold == UNLIMITED ? -1 : maxRoundThreshold;
    }

    /** {@link #maxCachedSize} as PyTorch's {@code allocator_settings["max_cached_size"]}: -1 when unlimited. */
    public long maxCachedSizeSetting() {
        return maxCachedSize == UNLIMITED ? -1 : maxCachedSize;
    }
}
