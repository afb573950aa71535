package io.devalloc.caching;

import static io.devalloc.caching.SizeRules.LARGE_BUFFER;
import static io.devalloc.caching.SizeRules.MIN_LARGE_ALLOC;
import static io.devalloc.caching.SizeRules.ROUNDUP_INTERVALS;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigOption;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.config.UntrustedText;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.units.ByteSize;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The configuration of the caching allocator, PyTorch's {@code CUDAAllocatorConfig}: every key of
 * {@code PYTORCH_CUDA_ALLOC_CONF} that the native CUDA caching allocator reads ({@link #SCHEMA}), with PyTorch's
 * defaults, validation rules and error texts, and the parser that turns a configuration text into
 * {@link CachingOptions} ({@link #parse}, {@link #from}, {@link #fromEnvironment}). The pinned keys are shared with
 * allocator {@code caching-host}, whose options read them with the same {@link ConfigOption}s and helpers.
 *
 * <h2>Where the text comes from</h2>
 * PyTorch reads the first of {@value #ENV}, {@value #ENV_HIP} and {@value #ENV_GENERIC} that is set (set and
 * empty counts as set), and only that one; {@link #fromEnvironment(Map)} applies that rule, and
 * {@code CachingConfig.parse(CachingConfig.fromEnvironment(System.getenv()))} reads the process environment.
 * The order was checked in upstream's source (2026): {@code AcceleratorAllocatorConfig}'s loader in
 * {@code c10/core/AllocatorConfig.cpp} tries {@code PYTORCH_CUDA_ALLOC_CONF}, {@code PYTORCH_HIP_ALLOC_CONF},
 * {@code PYTORCH_ALLOC_CONF} in that order and parses the first found, with no deprecation warning, and
 * {@code CUDAAllocatorConfig::instance()} does the same (the HIP name only in ROCm builds). The comment in
 * {@code AllocatorConfig.h} that calls {@code PYTORCH_ALLOC_CONF} the primary variable describes the torch 2.9/2.10
 * order (generic first, the others warned about as deprecated), which newer code reversed.
 *
 * <h2>Syntax</h2>
 * {@code key:value,key:value}, list values in brackets ({@code roundup_power2_divisions:[256:1,512:2,>:8]}),
 * whitespace ignored, parsed by the project's {@link AllocatorConfig} against {@link #SCHEMA}. Booleans are exactly
 * {@code True} or {@code False}, as upstream. Numbers must be plain ASCII digits (decimals for the two fractions);
 * upstream's {@code stoull}/{@code stod} also accept a valid prefix such as {@code 20abc}, devalloc refuses it.
 * AllocatorConfig is stricter than PyTorch's tokenizer in two more ways: a key given twice is refused (PyTorch lets
 * the later one win) and stray commas are refused.
 *
 * <h2>One string, one object</h2>
 * PyTorch keeps one global configuration and every {@code parseArgs} call resets {@code max_split_size},
 * {@code roundup_power2_divisions} and {@code garbage_collection_threshold} to their defaults and sets
 * {@code max_non_split_rounding} to {@code large_segment_size} before applying the string, while the other keys
 * keep the value of an earlier string. A {@link CachingOptions} is always built from one string and the defaults,
 * so those reset semantics hold trivially; a caller that wants PyTorch's runtime {@code setAllocatorSettings}
 * behaviour for the persistent keys must merge strings itself.
 *
 * <h2>Keys</h2>
 * <table>
 *   <caption>Keys, defaults and PyTorch's rules (the error text is PyTorch's)</caption>
 *   <tr><th>key</th><th>default</th><th>rule / error</th></tr>
 *   <tr><td>{@code backend}</td><td>{@code native}</td><td>{@code native} or {@code cudaMallocAsync}, else
 *       "Unknown allocator backend, options are native and cudaMallocAsync". Only {@code native} is implemented:
 *       the value is kept so that the allocator's creator can refuse {@code cudaMallocAsync} with a clear message.
 *       With {@code cudaMallocAsync} and other keys, PyTorch's warning "backend:cudaMallocAsync ignores
 *       max_split_size_mb,roundup_power2_divisions, and garbage_collect_threshold." is logged.</td></tr>
 *   <tr><td>{@code large_segment_size_mb}</td><td>20 (MiB)</td><td>&gt; 10: "CachingAllocator option
 *       large_segment_size_mb must be &gt; 10 MB". The segment size of large requests under 10 MiB; also the
 *       default of {@code max_non_split_rounding_mb}. Read before the other keys, so its position does not
 *       matter.</td></tr>
 *   <tr><td>{@code max_split_size_mb}</td><td>unlimited ({@link Long#MAX_VALUE}; shown as -1)</td><td>&ge; 20:
 *       "CachingAllocator option max_split_size_mb too small, must be &gt;= 20"; and, as in the newest upstream,
 *       &ge; {@code large_segment_size_mb} (same message with that bound). Values above
 *       {@code Long.MAX_VALUE / 1 MiB} are clamped to it, as upstream clamps to {@code SIZE_MAX / 1 MiB}. Cached
 *       blocks of at least this size are never split, and requests below it never take them.</td></tr>
 *   <tr><td>{@code max_non_split_rounding_mb}</td><td>{@code large_segment_size_mb}</td><td>&ge; 20 and &ge;
 *       {@code large_segment_size_mb}: "CachingAllocator option max_non_split_rounding_mb too small, must be &gt;=
 *       20". A request of at least {@code max_split_size} may take a cached unsplittable block at most this much
 *       larger.</td></tr>
 *   <tr><td>{@code garbage_collection_threshold}</td><td>0 (off)</td><td>in (0, 1): "garbage_collect_threshold is
 *       invalid, set it in (0.0, 1.0)". Only acts when a memory fraction is set.</td></tr>
 *   <tr><td>{@code roundup_power2_divisions}</td><td>all 16 entries 0</td><td>Single form {@code 4}: every entry,
 *       a power of two ({@code 0} is refused): "For roundups, the divisions has to be power of 2". List form
 *       {@code [256:1,512:2,1024:4,>:8]}: a key is a power-of-two boundary in MiB ("For roundups, the intervals
 *       have to be power of 2"), its index is log2(key) clamped to 0..15 (256 &rarr; index 8, i.e. 256-512 MiB);
 *       the first key also fills every lower index; {@code >} fills the indices after the last key given before
 *       it; values are 0 or a power of two ("For roundups, the divisions has to be power of 2 or 0 to disable
 *       roundup"). devalloc also refuses values above 2^30 (stored as {@code int}). See
 *       {@link SizeRules#roundSize}.</td></tr>
 *   <tr><td>{@code expandable_segments}</td><td>False</td><td>{@code True}/{@code False}. On a device without
 *       virtual memory PyTorch warns "expandable_segments not supported on this platform" and stays off: that check
 *       belongs to the allocator's creator.</td></tr>
 *   <tr><td>{@code release_lock_on_cudamalloc} (alias {@code release_lock_on_hipmalloc})</td><td>False</td>
 *       <td>{@code True}/{@code False}: "Expected 'True' or 'False' but got 'x'" (PyTorch adds the token's index
 *       in its ConfigTokenizer, which says nothing to a user and is left out).
 *       When both spellings are given, the later one wins.</td></tr>
 *   <tr><td>{@code pinned_use_cuda_host_register} (alias {@code pinned_use_hip_host_register})</td><td>False</td>
 *       <td>{@code True}/{@code False}; the later spelling wins.</td></tr>
 *   <tr><td>{@code pinned_num_register_threads}</td><td>1</td><td>power of two and &le; 128: "Number of register
 *       threads has to be power of 2, got N", "Number of register threads should be less than or equal to 128, got
 *       N"</td></tr>
 *   <tr><td>{@code pinned_use_background_threads}</td><td>False</td><td>{@code True}/{@code False}</td></tr>
 *   <tr><td>{@code pinned_reserve_segment_size_mb}</td><td>0 (no reserve)</td><td>&gt; 0: "Pinned reserve
 *       segment size has to be greater than 0"</td></tr>
 *   <tr><td>{@code graph_capture_record_stream_reuse}</td><td>False</td><td>{@code True}/{@code False}</td></tr>
 *   <tr><td>{@code per_process_memory_fraction}</td><td>1.0 (no limit)</td><td>in [0, 1]:
 *       "per_process_memory_fraction is invalid, set it in [0.0, 1.0]". A fraction below 1 limits the allocator to
 *       fraction &times; total device memory (rounded, as upstream's {@code setMemoryFraction}).</td></tr>
 *   <tr><td>{@code expandable_segments_reserve}</td><td>9/8 of device memory</td><td>A fraction of device memory
 *       ({@code 0.5}) or GiB ({@code 40G}), C locale, positive and finite; the address space each new expandable
 *       segment reserves, clamped to 9/8 of device memory. A bad value is not an error: upstream's warning
 *       "Ignoring invalid expandable-segment reserve value 'v' in PYTORCH_CUDA_ALLOC_CONF (expected a positive,
 *       finite fraction like 0.5 or an absolute size like 40G); using default." is logged. One allocation cannot
 *       span segments: a larger request is out of memory. See {@link ExpandableSegmentReserve}.</td></tr>
 *   <tr><td>{@code expandable_segments_reserve_by_class}</td><td>none</td><td>{@code [class:value,...]}, values as
 *       above; the reserve of segments whose stream is tagged with that class
 *       ({@link CachingAllocator#setExpandableSegmentReserveClass}). A bad entry is warned about and skipped, the
 *       others apply; a value that is not a bracketed list is refused
 *       (upstream's tokenizer would misread it).</td></tr>
 *   <tr><td>{@code throw_on_cudamalloc_oom}</td><td>False</td><td>{@code True}/{@code False}. Before any device
 *       allocation (malloc or expandable map) that would take the allocator past the <em>configured</em>
 *       {@code per_process_memory_fraction} &times; total memory (1.0 when not set), fail at once, skipping the rest
 *       of the retry ladder: {@code num_oom_rejections} counts it (not {@code num_ooms}), no {@code oom} trace entry
 *       is recorded, only the rejection observers are called, and the message is upstream's "CUDA out of memory.
 *       Allocation was preemptively rejected because it would exceed per_process_memory_fraction limit. Requested
 *       size: ...". As in upstream's {@code alloc_block}, the runtime limit is checked first: with a configured
 *       fraction below 1 that check answers before this one (an ordinary out of memory), so the refusal acts when
 *       the fraction is 1 (the whole device) or after {@code setPerProcessMemoryFraction} raised the runtime limit.
 *       The spec summary "acts only with a fraction" is not what upstream's code does.</td></tr>
 *   <tr><td>{@code pinned_free_catch_all}</td><td>False</td><td>{@code True}/{@code False}; upstream's pinned
 *       allocator swallows (and logs) exceptions from its {@code free} instead of rethrowing them. Accepted for
 *       compatibility; the device allocator ignores it.</td></tr>
 *   <tr><td>{@code pinned_max_round_threshold_mb}, {@code pinned_max_cached_size_mb}</td><td>unlimited</td><td>
 *       Whole MiB (clamped as upstream). Keys of the pinned-host allocator ({@code caching-host}), accepted here
 *       because PyTorch's one configuration string carries them; reported in {@code allocator_settings} as
 *       {@code max_round_threshold} and {@code max_cached_size} (bytes, -1 when unlimited).</td></tr>
 *   <tr><td>{@code search_pool_after_release}</td><td>False</td><td>devalloc's key, not PyTorch's: pytorch#191302
 *       (an open pull request fixing #189504). After the retry ladder waits for every event and releases the
 *       cache, search the pool again before the last device allocation, so that a block whose free waited on an
 *       event is found. Off by default, as upstream today (which fails that allocation; the same call made again
 *       succeeds).</td></tr>
 * </table>
 *
 * <p>An unknown key is refused with PyTorch's "Unrecognized key 'k' in CUDA allocator config" (by {@link #parse};
 * code that parses with {@code AllocatorConfig.parse(text, SCHEMA)} directly gets AllocatorConfig's own "unknown
 * configuration key" message).
 *
 * <p>Every refusal is an {@link InvalidConfigurationException} naming the key and value, whose message contains
 * PyTorch's text in parentheses.
 *
 * <p>Stateless and thread-safe.
 */
public final class CachingConfig {

    private static final Logger LOG = LoggerFactory.getLogger(CachingConfig.class);

    private static final long MiB = ByteSize.MiB;

    /** The most pinned register threads PyTorch allows. */
    public static final int MAX_REGISTER_THREADS = 128;
    /** The largest division count stored (devalloc limit; PyTorch allows any power of two). */
    public static final int MAX_DIVISIONS = 1 << 30;
    /** The largest value of the two {@code pinned_max_*_mb} keys; larger ones are clamped to it, as upstream. */
    public static final long MAX_PINNED_LIMIT_MB = Long.MAX_VALUE / MiB;

    /** PyTorch's configuration variable, read first. */
    public static final String ENV = "PYTORCH_CUDA_ALLOC_CONF";
    /** ROCm's spelling, read when {@link #ENV} is not set. */
    public static final String ENV_HIP = "PYTORCH_HIP_ALLOC_CONF";
    /** The device-generic variable, read when neither of the others is set. */
    public static final String ENV_GENERIC = "PYTORCH_ALLOC_CONF";
    /** The variables in the order PyTorch reads them. */
    public static final List<String> ENV_VARIABLES = List.of(ENV, ENV_HIP, ENV_GENERIC);

    private static final String BOOL_ERROR = "Expected 'True' or 'False' but got";

    public static final ConfigOption<CachingOptions.Backend> BACKEND = new ConfigOption<>("backend",
            "native or cudaMallocAsync", CachingOptions.Backend.NATIVE,
            "the allocator backend; only native is implemented", CachingOptions.Backend::parse);
    public static final ConfigOption<Long> LARGE_SEGMENT_SIZE_MB = new ConfigOption<>("large_segment_size_mb",
            "a whole number of MiB > 10", LARGE_BUFFER / MiB,
            "the segment size, in MiB, of large requests under 10 MiB (PyTorch: 20)", text -> {
                long v = nonNegativeInteger(text);
                if (v <= MIN_LARGE_ALLOC / MiB) {
                    throw new IllegalArgumentException("CachingAllocator option large_segment_size_mb must be > "
                            + MIN_LARGE_ALLOC / MiB + " MB");
                }
                return v;
            });
    public static final ConfigOption<Long> MAX_SPLIT_SIZE_MB = new ConfigOption<>("max_split_size_mb",
            "a whole number of MiB >= 20 and >= large_segment_size_mb", null,
            "cached blocks of at least this many MiB are never split (default: unlimited)",
            text -> splitSizeMb("max_split_size_mb", text));
    public static final ConfigOption<Long> MAX_NON_SPLIT_ROUNDING_MB = new ConfigOption<>("max_non_split_rounding_mb",
            "a whole number of MiB >= 20 and >= large_segment_size_mb", null,
            "how many MiB larger than an oversize request an unsplittable cached block may be"
                    + " (default: large_segment_size_mb)",
            text -> splitSizeMb("max_non_split_rounding_mb", text));
    public static final ConfigOption<Double> GARBAGE_COLLECTION_THRESHOLD = new ConfigOption<>(
            "garbage_collection_threshold", "a number with 0.0 < value < 1.0", 0.0,
            "free old cached blocks when usage passes this fraction of the allowed memory (default 0: off)", text -> {
                double v = decimal(text);
                if (!(v > 0 && v < 1.0)) {
                    throw new IllegalArgumentException("garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
                }
                return v;
            });
    /** Its value is the (validated) text; {@link #from} expands it. Absent means all 16 entries 0. */
    public static final ConfigOption<String> ROUNDUP_POWER2_DIVISIONS = new ConfigOption<>("roundup_power2_divisions",
            "a power of 2, or a list such as [256:1,512:2,1024:4,>:8] of power-of-2 MiB boundaries and divisions"
                    + " (0 or a power of 2)", null,
            "round requests up to one of N divisions between powers of two instead of to 512 bytes", text -> {
                expandDivisions(text);
                return text;
            });
    public static final ConfigOption<Boolean> EXPANDABLE_SEGMENTS = bool("expandable_segments",
            "map physical pages into reserved address ranges on demand instead of one device malloc per segment");
    public static final ConfigOption<Boolean> RELEASE_LOCK_ON_CUDAMALLOC = bool("release_lock_on_cudamalloc",
            "release the allocator lock around the device malloc");
    public static final ConfigOption<Boolean> RELEASE_LOCK_ON_HIPMALLOC = bool("release_lock_on_hipmalloc",
            "ROCm spelling of release_lock_on_cudamalloc");
    public static final ConfigOption<Boolean> PINNED_USE_CUDA_HOST_REGISTER = bool("pinned_use_cuda_host_register",
            "pinned memory from malloc + cudaHostRegister instead of cudaHostAlloc");
    public static final ConfigOption<Boolean> PINNED_USE_HIP_HOST_REGISTER = bool("pinned_use_hip_host_register",
            "ROCm spelling of pinned_use_cuda_host_register");
    public static final ConfigOption<Integer> PINNED_NUM_REGISTER_THREADS = new ConfigOption<>(
            "pinned_num_register_threads", "a power of 2 <= 128", 1,
            "threads that prefault pinned pages before cudaHostRegister", text -> {
                long v = nonNegativeInteger(text);
                if (Long.bitCount(v) != 1) {
                    throw new IllegalArgumentException("Number of register threads has to be power of 2, got " + v);
                }
                if (v > MAX_REGISTER_THREADS) {
                    throw new IllegalArgumentException("Number of register threads should be less than or equal to "
                            + MAX_REGISTER_THREADS + ", got " + v);
                }
                return (int) v;
            });
    public static final ConfigOption<Boolean> PINNED_USE_BACKGROUND_THREADS = bool("pinned_use_background_threads",
            "process pinned-memory events on a background thread instead of at each allocation");
    public static final ConfigOption<Long> PINNED_RESERVE_SEGMENT_SIZE_MB = new ConfigOption<>(
            "pinned_reserve_segment_size_mb", "a whole number of MiB > 0", 0L,
            "a pinned segment of this many MiB served by a bump allocator and never freed (default 0: none)", text -> {
                long v = nonNegativeInteger(text);
                if (v == 0) {
                    throw new IllegalArgumentException("Pinned reserve segment size has to be greater than 0");
                }
                return v;
            });
    public static final ConfigOption<Boolean> GRAPH_CAPTURE_RECORD_STREAM_REUSE = bool(
            "graph_capture_record_stream_reuse", "allow reuse of record_stream blocks during graph capture");
    public static final ConfigOption<Double> PER_PROCESS_MEMORY_FRACTION = new ConfigOption<>(
            "per_process_memory_fraction", "a number with 0.0 <= value <= 1.0", 1.0,
            "the fraction of the device's total memory the allocator may use (default 1.0: no limit)", text -> {
                double v = decimal(text);
                if (!(v >= 0.0 && v <= 1.0)) {
                    throw new IllegalArgumentException("per_process_memory_fraction is invalid, set it in [0.0, 1.0]");
                }
                return v;
            });

    /**
     * Its value is the text; bad values are warned about and ignored when the options are built, as upstream's
     * {@code parseReserveSpec} does.
     */
    public static final ConfigOption<String> EXPANDABLE_SEGMENTS_RESERVE = new ConfigOption<>(
            "expandable_segments_reserve", "a positive fraction of device memory such as 0.5, or GiB such as 40G",
            null, "address space each expandable segment reserves (default: 9/8 of device memory, also the most)",
            text -> text);
    /** Its value is the list's text; a bad entry is warned about and skipped when the options are built. */
    public static final ConfigOption<String> EXPANDABLE_SEGMENTS_RESERVE_BY_CLASS = new ConfigOption<>(
            "expandable_segments_reserve_by_class", "a list such as [capture:0.25,workspace:40G]", null,
            "the reserve of expandable segments whose stream has that reserve class", text -> {
                ExpandableSegmentReserve.checkListShape(text); // the entries are read (and warned about) once, later
                return text;
            });
    public static final ConfigOption<Boolean> THROW_ON_CUDAMALLOC_OOM = bool("throw_on_cudamalloc_oom",
            "refuse a device allocation that would pass per_process_memory_fraction of the device at once, without"
                    + " the retry ladder (counted in num_oom_rejections)");
    public static final ConfigOption<Boolean> PINNED_FREE_CATCH_ALL = bool("pinned_free_catch_all",
            "pinned-host allocator: swallow (and log) exceptions from free instead of rethrowing them");
    /**
     * PyTorch's key (2.10+, pytorch#171662): pinned requests above this many MiB are not rounded to a power of two.
     * Its value is the MiB, clamped as upstream clamps to {@code SIZE_MAX / 1 MiB}; absent means unlimited. Shared
     * with {@code caching-host}, where it acts.
     */
    public static final ConfigOption<Long> PINNED_MAX_ROUND_THRESHOLD_MB = wholeMegabytes(
            "pinned_max_round_threshold_mb",
            "pinned requests above this many MiB are not rounded to a power of two (default: unlimited)");
    /** PyTorch's key (2.10+): freed pinned blocks above this many MiB are not cached. As above. */
    public static final ConfigOption<Long> PINNED_MAX_CACHED_SIZE_MB = wholeMegabytes("pinned_max_cached_size_mb",
            "freed pinned blocks above this many MiB go back to the device instead of the cache (default: unlimited)");
    /** devalloc's key for pytorch#191302 (an open pull request), off by default as upstream today. */
    public static final ConfigOption<Boolean> SEARCH_POOL_AFTER_RELEASE = bool("search_pool_after_release",
            "after the retry ladder waits for events and releases cached blocks, search the pool again before the"
                    + " last device allocation (pytorch#191302; default False, as upstream today)");

    /** The keys of the caching allocator. */
    public static final ConfigSchema SCHEMA = ConfigSchema.of("allocator 'caching'", List.of(BACKEND,
            LARGE_SEGMENT_SIZE_MB, MAX_SPLIT_SIZE_MB, MAX_NON_SPLIT_ROUNDING_MB, GARBAGE_COLLECTION_THRESHOLD,
            ROUNDUP_POWER2_DIVISIONS, EXPANDABLE_SEGMENTS, RELEASE_LOCK_ON_CUDAMALLOC, RELEASE_LOCK_ON_HIPMALLOC,
            PINNED_USE_CUDA_HOST_REGISTER, PINNED_USE_HIP_HOST_REGISTER, PINNED_NUM_REGISTER_THREADS,
            PINNED_USE_BACKGROUND_THREADS, PINNED_RESERVE_SEGMENT_SIZE_MB, GRAPH_CAPTURE_RECORD_STREAM_REUSE,
            PER_PROCESS_MEMORY_FRACTION, EXPANDABLE_SEGMENTS_RESERVE, EXPANDABLE_SEGMENTS_RESERVE_BY_CLASS,
            THROW_ON_CUDAMALLOC_OOM, PINNED_FREE_CATCH_ALL, PINNED_MAX_ROUND_THRESHOLD_MB, PINNED_MAX_CACHED_SIZE_MB,
            SEARCH_POOL_AFTER_RELEASE));

    private CachingConfig() {
    }

    /**
     * The configuration text PyTorch would read from {@code env}: the value of the first of {@value #ENV},
     * {@value #ENV_HIP} and {@value #ENV_GENERIC} that is set (an empty value counts as set), else "".
     */
    public static String fromEnvironment(Map<String, String> env) {
        Objects.requireNonNull(env, "env");
        for (String name : ENV_VARIABLES) {
            String value = env.get(name);
            if (value != null) {
                return value;
            }
        }
        return "";
    }

    /**
     * The name of the variable {@link #fromEnvironment(Map)} reads in {@code env}: the first of {@value #ENV},
     * {@value #ENV_HIP} and {@value #ENV_GENERIC} that is set, or null when none is.
     */
    public static String environmentVariable(Map<String, String> env) {
        Objects.requireNonNull(env, "env");
        for (String name : ENV_VARIABLES) {
            if (env.get(name) != null) {
                return name;
            }
        }
        return null;
    }

    /**
     * Parses a configuration text ({@code null} or blank: the defaults).
     *
     * @throws InvalidConfigurationException for an unknown key (with PyTorch's "Unrecognized key 'k' in CUDA
     *                                       allocator config"), a malformed or repeated entry, or a bad value (with
     *                                       PyTorch's message in parentheses)
     */
    public static CachingOptions parse(String confText) {
        String text = confText == null ? "" : confText;
        AllocatorConfig config;
        try {
            config = AllocatorConfig.parse(text, SCHEMA);
        } catch (InvalidConfigurationException e) {
            throw withUpstreamText(e);
        }
        return build(config, text);
    }

    /**
     * The options of a configuration already parsed against {@link #SCHEMA} (what a provider's
     * {@code create(AllocatorSetup)} receives). Also checks the rules that span keys ({@code max_split_size_mb} and
     * {@code max_non_split_rounding_mb} at least {@code large_segment_size_mb}). The configuration text is
     * rebuilt from the explicit values, e.g. {@code max_split_size_mb:40,expandable_segments:True}.
     *
     * @throws InvalidConfigurationException when a rule spanning keys is broken
     * @throws IllegalArgumentException      when {@code config} was parsed against another schema
     */
    public static CachingOptions from(AllocatorConfig config) {
        Objects.requireNonNull(config, "config");
        return build(config, canonicalText(config));
    }

    private static CachingOptions build(AllocatorConfig config, String text) {
        if (config.schema() != SCHEMA) {
            throw new IllegalArgumentException("configuration was parsed against the schema of "
                    + config.schema().owner() + ", not " + SCHEMA.owner());
        }
        CachingOptions.Backend backend = config.get(BACKEND);
        long largeMb = config.get(LARGE_SEGMENT_SIZE_MB);
        long large = mibToBytes(largeMb);
        long maxSplit = Long.MAX_VALUE;
        if (config.isSet(MAX_SPLIT_SIZE_MB)) {
            maxSplit = mibToBytes(atLeastLargeSegment(MAX_SPLIT_SIZE_MB, config.get(MAX_SPLIT_SIZE_MB), largeMb,
                    text));
        }
        long maxNonSplit = large;
        if (config.isSet(MAX_NON_SPLIT_ROUNDING_MB)) {
            maxNonSplit = mibToBytes(atLeastLargeSegment(MAX_NON_SPLIT_ROUNDING_MB,
                    config.get(MAX_NON_SPLIT_ROUNDING_MB), largeMb, text));
        }
        String divisionsText = config.get(ROUNDUP_POWER2_DIVISIONS);
        int[] divisions = divisionsText == null ? new int[ROUNDUP_INTERVALS] : expandDivisions(divisionsText);
        if (backend == CachingOptions.Backend.CUDA_MALLOC_ASYNC && config.explicitValues().size() > 1) {
            LOG.warn("backend:cudaMallocAsync ignores max_split_size_mb,roundup_power2_divisions, and"
                    + " garbage_collect_threshold.");
        }
        return new CachingOptions(backend, large, maxSplit, maxNonSplit, config.get(GARBAGE_COLLECTION_THRESHOLD),
                divisions, config.get(EXPANDABLE_SEGMENTS),
                lastGiven(config, RELEASE_LOCK_ON_CUDAMALLOC, RELEASE_LOCK_ON_HIPMALLOC),
                lastGiven(config, PINNED_USE_CUDA_HOST_REGISTER, PINNED_USE_HIP_HOST_REGISTER),
                config.get(PINNED_NUM_REGISTER_THREADS), config.get(PINNED_USE_BACKGROUND_THREADS),
                sizeInBytes(config, PINNED_RESERVE_SEGMENT_SIZE_MB), config.get(GRAPH_CAPTURE_RECORD_STREAM_REUSE),
                config.get(PER_PROCESS_MEMORY_FRACTION),
                ExpandableSegmentReserve.parse(config.get(EXPANDABLE_SEGMENTS_RESERVE),
                        config.get(EXPANDABLE_SEGMENTS_RESERVE_BY_CLASS)),
                config.get(THROW_ON_CUDAMALLOC_OOM), config.get(PINNED_FREE_CATCH_ALL),
                sizeInBytes(config, PINNED_MAX_ROUND_THRESHOLD_MB),
                sizeInBytes(config, PINNED_MAX_CACHED_SIZE_MB), config.get(SEARCH_POOL_AFTER_RELEASE), text);
    }

    /**
     * The bytes of a key given in whole MiB ({@code pinned_reserve_segment_size_mb}, {@code pinned_max_*_mb}, ...) in
     * a parsed configuration, clamped as upstream clamps to {@code SIZE_MAX / 1 MiB}; {@link Long#MAX_VALUE}
     * (unlimited) when the key has no value (not given and no default). Also how {@code caching-host} reads the
     * pinned keys they share.
     */
    public static long sizeInBytes(AllocatorConfig config, ConfigOption<Long> mibKey) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(mibKey, "mibKey");
        Long mb = config.get(mibKey);
        return mb == null ? Long.MAX_VALUE : mibToBytes(mb);
    }

    // ------------------------------------------------------------------------------------------------ parsing

    private static ConfigOption<Boolean> bool(String name, String description) {
        return new ConfigOption<>(name, "True or False", false, description, text -> switch (text) {
            case "True" -> Boolean.TRUE;
            case "False" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException(BOOL_ERROR + " '" + UntrustedText.excerpt(text) + "'");
        });
    }

    private static ConfigOption<Long> wholeMegabytes(String name, String description) {
        return new ConfigOption<>(name, "a whole number of MiB from 0 (values above " + MAX_PINNED_LIMIT_MB
                + " count as " + MAX_PINNED_LIMIT_MB + ")", null, description, CachingConfig::parseWholeMegabytes);
    }

    /** Upstream's {@code toSizeT} (up to 2^64 - 1), clamped to {@link #MAX_PINNED_LIMIT_MB}. */
    private static long parseWholeMegabytes(String text) {
        if (!text.matches("[0-9]+")) {
            throw new IllegalArgumentException("Expected a non-negative integer but got '"
                    + UntrustedText.excerpt(text) + "'");
        }
        long mb;
        try {
            mb = Long.parseUnsignedLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Value '" + UntrustedText.excerpt(text) + "' is out of range");
        }
        return Long.compareUnsigned(mb, MAX_PINNED_LIMIT_MB) > 0 ? MAX_PINNED_LIMIT_MB : mb;
    }

    /** PyTorch's {@code toSizeT}, strictly: ASCII digits only. */
    private static long nonNegativeInteger(String text) {
        if (!text.matches("[0-9]+")) {
            throw new IllegalArgumentException("Expected a non-negative integer but got '"
                    + UntrustedText.excerpt(text) + "'");
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Value '" + UntrustedText.excerpt(text) + "' is out of range");
        }
    }

    /** PyTorch's {@code toDouble}, strictly: a whole decimal number. */
    private static double decimal(String text) {
        if (!text.matches("[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?")) {
            throw new IllegalArgumentException("Expected a number but got '" + UntrustedText.excerpt(text) + "'");
        }
        return Double.parseDouble(text);
    }

    private static long splitSizeMb(String key, String text) {
        long v = nonNegativeInteger(text);
        if (v < LARGE_BUFFER / MiB) {
            throw new IllegalArgumentException(tooSmall(key, LARGE_BUFFER / MiB));
        }
        return v;
    }

    private static String tooSmall(String key, long minMb) {
        return "CachingAllocator option " + key + " too small, must be >= " + minMb;
    }

    /** The newest upstream rule: at least {@code large_segment_size_mb}, checked once every key is known. */
    private static long atLeastLargeSegment(ConfigOption<Long> option, long mb, long largeMb, String text) {
        if (mb < largeMb) {
            String value = Long.toString(mb);
            // The rule spans two keys, so the text is named: the value alone is not what is wrong.
            throw new InvalidConfigurationException(option.name(), value, "bad value '" + UntrustedText.excerpt(value)
                    + "' for configuration key '" + option.name() + "' in configuration '"
                    + UntrustedText.excerpt(text) + "' of "
                    + SCHEMA.owner() + " (" + tooSmall(option.name(), largeMb) + "); allowed: " + option.allowed());
        }
        return mb;
    }

    /** MiB to bytes, clamping as upstream clamps to {@code SIZE_MAX / 1 MiB}. */
    private static long mibToBytes(long mb) {
        return Math.min(mb, Long.MAX_VALUE / MiB) * MiB;
    }

    /** The value of whichever spelling came last in the text, else the default (false). */
    private static boolean lastGiven(AllocatorConfig config, ConfigOption<Boolean> a, ConfigOption<Boolean> b) {
        Boolean result = null;
        for (Map.Entry<String, Object> e : config.explicitValues().entrySet()) {
            if (e.getKey().equals(a.name()) || e.getKey().equals(b.name())) {
                result = (Boolean) e.getValue();
            }
        }
        return result != null ? result : a.defaultValue();
    }

    /**
     * Expands a {@code roundup_power2_divisions} value into 16 entries with PyTorch's rules
     * ({@code parseRoundUpPower2Divisions}).
     */
    private static int[] expandDivisions(String text) {
        List<String> t = lex(text);
        int[] d = new int[ROUNDUP_INTERVALS];
        if (t.isEmpty() || !t.getFirst().equals("[")) {
            if (t.size() != 1 || isDelimiter(t.getFirst())) {
                throw malformedDivisions(text);
            }
            long value = nonNegativeInteger(t.getFirst());
            if (Long.bitCount(value) != 1) {
                throw new IllegalArgumentException("For roundups, the divisions has to be power of 2");
            }
            Arrays.fill(d, storedDivision(value));
            return d;
        }
        int end = t.size() - 1;
        if (!t.get(end).equals("]") || end == 0) {
            throw malformedDivisions(text);
        }
        boolean first = true;
        int lastIndex = 0;
        int i = 1;
        while (i < end) {
            if (i + 2 >= end || !t.get(i + 1).equals(":") || isDelimiter(t.get(i))
                    || isDelimiter(t.get(i + 2))) {
                throw malformedDivisions(text);
            }
            String key = t.get(i);
            long value = nonNegativeInteger(t.get(i + 2));
            if (value != 0 && Long.bitCount(value) != 1) {
                throw new IllegalArgumentException(
                        "For roundups, the divisions has to be power of 2 or 0 to disable roundup");
            }
            int stored = storedDivision(value);
            if (key.equals(">")) {
                Arrays.fill(d, Math.min(lastIndex + 1, ROUNDUP_INTERVALS), ROUNDUP_INTERVALS, stored);
            } else {
                long boundary = nonNegativeInteger(key);
                if (Long.bitCount(boundary) != 1) {
                    throw new IllegalArgumentException("For roundups, the intervals have to be power of 2");
                }
                int index = Math.min(63 - Long.numberOfLeadingZeros(boundary), ROUNDUP_INTERVALS - 1);
                if (first) {
                    Arrays.fill(d, 0, index, stored);
                    first = false;
                }
                d[index] = stored;
                lastIndex = index;
            }
            i += 3;
            if (i < end) {
                if (!t.get(i).equals(",")) {
                    throw malformedDivisions(text);
                }
                i++;
            }
        }
        return d;
    }

    private static int storedDivision(long value) {
        if (value > MAX_DIVISIONS) {
            throw new IllegalArgumentException("For roundups, at most " + MAX_DIVISIONS
                    + " divisions are supported, got " + value);
        }
        return (int) value;
    }

    private static IllegalArgumentException malformedDivisions(String text) {
        return new IllegalArgumentException("Expected a power of 2 or a list such as [256:1,512:2,>:8] but got '"
                + text + "'");
    }

    private static boolean isDelimiter(String token) {
        return token.equals(",") || token.equals(":") || token.equals("[") || token.equals("]");
    }

    /** PyTorch's {@code ConfigTokenizer}: , : [ ] are tokens of their own; whitespace is dropped. */
    private static List<String> lex(String text) {
        List<String> tokens = new ArrayList<>();
        StringBuilder buf = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == ',' || c == ':' || c == '[' || c == ']') {
                if (!buf.isEmpty()) {
                    tokens.add(buf.toString());
                    buf.setLength(0);
                }
                tokens.add(String.valueOf(c));
            } else if (!Character.isWhitespace(c)) {
                buf.append(c);
            }
        }
        if (!buf.isEmpty()) {
            tokens.add(buf.toString());
        }
        return tokens;
    }

    /**
     * Adds PyTorch's wording to AllocatorConfig's refusal of an unknown key. Where PyTorch's message names its own
     * tokenizer ("Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'x'"), the message keeps only its
     * words ("Expected 'True' or 'False' but got 'x'"): a token index and a C++ class name tell a user nothing about
     * the text they typed, which AllocatorConfig's message already names.
     */
    private static InvalidConfigurationException withUpstreamText(InvalidConfigurationException e) {
        String key = e.key();
        if (key == null || SCHEMA.option(key) != null) {
            return e;
        }
        InvalidConfigurationException replaced = new InvalidConfigurationException(key, e.value(),
                "Unrecognized key '" + UntrustedText.excerpt(key) + "' in CUDA allocator config (" + e.getMessage()
                        + ")");
        replaced.initCause(e);
        return replaced;
    }

    /**
     * The explicit values of a parsed configuration as configuration text, in the order given, booleans spelled
     * True/False so that it parses again ({@code max_split_size_mb:40,expandable_segments:True}). Also how
     * {@code caching-host} reports the text of a configuration it did not parse itself.
     */
    public static String canonicalText(AllocatorConfig config) {
        Objects.requireNonNull(config, "config");
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Object> e : config.explicitValues().entrySet()) {
            if (!sb.isEmpty()) {
                sb.append(',');
            }
            Object v = e.getValue();
            String value = v instanceof Boolean b ? (b ? "True" : "False") : String.valueOf(v);
            sb.append(e.getKey()).append(':').append(value);
        }
        return sb.toString();
    }

    /**
     * The options an arena on {@code device} runs with: {@code options}, checked where only the allocator's creation
     * can check them, since they depend on the device or name a backend devalloc does not offer. Without the
     * device's virtual memory, expandable segments are turned off with a warning, as PyTorch carries on without the
     * driver's API; with them, the large page must be a multiple of the device's mapping granule; and only
     * {@code backend:native} is offered ({@code cudaMallocAsync} is parsed, then refused here).
     *
     * @throws InvalidConfigurationException for a large page off the granule, or a backend other than native
     */
    static CachingOptions forDevice(CachingOptions options, DeviceMemory device) {
        CachingOptions checked = options;
        if (checked.expandableSegments() && device.virtualMemory().isEmpty()) {
            // The arena's logger: the warning is the allocator's, as upstream logs it.
            LoggerFactory.getLogger(CachingArena.class).warn("expandable_segments not supported on this platform ({}"
                    + " has no virtual memory); continuing without expandable segments", device.descriptor().id());
            checked = checked.withExpandableSegments(false);
        }
        if (checked.expandableSegments()) {
            long granule = device.virtualMemory().orElseThrow().granularity();
            if (checked.largeSegmentSize() % granule != 0) {
                // PyTorch's cuMemCreate of such a page fails at the first large allocation; say so up front.
                String mb = Long.toString(checked.largeSegmentSize() / (1024 * 1024));
                throw new InvalidConfigurationException("large_segment_size_mb", mb,
                        "large_segment_size_mb:" + mb + " with expandable_segments:True: an expandable segment's large"
                        + " page must be a multiple of the mapping granule of " + device.descriptor().id() + " ("
                        + ByteSize.format(granule) + "); choose a large_segment_size_mb that is a"
                        + " multiple of it, or expandable_segments:False");
            }
        }
        if (checked.backend() != CachingOptions.Backend.NATIVE) {
            throw new InvalidConfigurationException("backend", checked.backend().configName(),
                    "backend:" + checked.backend().configName()
                    + " is not offered by devalloc; use backend:native (the caching allocator) or the 'direct'"
                    + " allocator");
        }
        return checked;
    }
}
