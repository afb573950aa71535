package io.devalloc.bfc;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigOption;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.spi.EnvironmentConfig;
import io.devalloc.api.units.ByteSize;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * BFC's options. Defaults follow TensorFlow's {@code GPUBFCAllocator} (what TensorFlow uses on a GPU), not the
 * plain {@code BFCAllocator::Options} defaults, which differ for growth and garbage collection:
 *
 * <table>
 *   <caption>Options, their defaults and the upstream default they follow</caption>
 *   <tr><th>key</th><th>devalloc default</th><th>GPUBFCAllocator</th><th>plain BFCAllocator</th></tr>
 *   <tr><td>{@code allow_growth}</td><td>false</td><td>false</td><td>true</td></tr>
 *   <tr><td>{@code garbage_collection}</td><td>true (unless {@code TF_ENABLE_GPU_GARBAGE_COLLECTION=false})</td>
 *       <td>unset → env → true</td><td>false</td></tr>
 *   <tr><td>{@code memory_limit_mb}</td><td>the device's total</td><td>total memory given</td><td>same</td></tr>
 *   <tr><td>{@code fragmentation_fraction}</td><td>0 (cap 128 MiB)</td><td>0</td><td>0</td></tr>
 *   <tr><td>{@code allow_retry_on_failure}</td><td>true</td><td>true</td><td>true</td></tr>
 *   <tr><td>{@code retry_timeout_ms}</td><td>10000</td><td>10 s, fixed</td><td>10 s, fixed</td></tr>
 *   <tr><td>{@code timestamped}</td><td>false</td><td>off unless a timing counter is set</td><td>same</td></tr>
 *   <tr><td>{@code virtual_memory}</td><td>false: plain device mallocs, regions never coalesce</td><td>
 *       {@code DeviceMemAllocator} (the {@code GpuVirtualMemAllocator} branch of {@code CreateSubAllocator} is
 *       compiled out with {@code #if 0}, "Observed OOM issues when using the virtual memory allocators")</td>
 *       <td>-</td></tr>
 * </table>
 *
 * <p>{@code virtual_memory:true} is TensorFlow's {@code GpuVirtualMemAllocator} path (one reservation of the whole
 * limit, regions that coalesce), still useful against region fragmentation with growth; {@code virtual_memory:auto}
 * turns it on when the device offers virtual memory. Neither is what TensorFlow's GPU BFC does today.
 *
 * @param allowGrowth           start with a 2 MiB region and double, instead of one region of the whole limit
 * @param garbageCollection     on out of memory, free wholly unused regions to make room for a larger one
 * @param memoryLimitBytes      the most the arena may hold, or 0 for the device's total
 * @param fragmentationFraction if &gt; 0, the internal-fragmentation cap is this fraction of the limit
 * @param allowRetryOnFailure   wait for frees before failing
 * @param retryTimeoutMillis    how long to wait for frees
 * @param timestamped           stream-ordered reuse: freed memory is reused by other streams only after the device
 *                              finished the work queued before the free (TensorFlow's timestamped allocator)
 * @param virtualMemory         whether to build regions from the device's virtual memory (coalescing regions)
 */
public record BfcOptions(boolean allowGrowth, boolean garbageCollection, long memoryLimitBytes,
                         double fragmentationFraction, boolean allowRetryOnFailure, long retryTimeoutMillis,
                         boolean timestamped, VirtualMemoryUse virtualMemory) {

    private static final Logger LOG = LoggerFactory.getLogger(BfcOptions.class);

    /** Whether regions come from virtual memory. */
    public enum VirtualMemoryUse {
        /** When the device offers virtual memory. */
        AUTO,
        /** Always; opening fails on a device without it. */
        ON,
        /** Never: plain device mallocs, regions never coalesce. */
        OFF
    }

    /** TensorFlow's environment switch for growth. */
    public static final String ENV_FORCE_ALLOW_GROWTH = "TF_FORCE_GPU_ALLOW_GROWTH";
    /** TensorFlow's environment switch for region garbage collection. */
    public static final String ENV_GARBAGE_COLLECTION = "TF_ENABLE_GPU_GARBAGE_COLLECTION";

    public static final ConfigOption<Boolean> ALLOW_GROWTH = ConfigOption.bool("allow_growth", false,
            "grow from a 2 MiB region by doubling instead of taking one region of the whole limit at the first"
                    + " allocation (TF_FORCE_GPU_ALLOW_GROWTH overrides it)");
    public static final ConfigOption<Boolean> GARBAGE_COLLECTION = ConfigOption.bool("garbage_collection", true,
            "on out of memory, free wholly unused regions to make room for a larger one"
                    + " (default from TF_ENABLE_GPU_GARBAGE_COLLECTION, else true)");
    public static final ConfigOption<Long> MEMORY_LIMIT_MB = ConfigOption.integer("memory_limit_mb", 1,
            Long.MAX_VALUE / ByteSize.MiB, null, "the most the arena may hold, in MiB (default: the device's total)");
    public static final ConfigOption<Double> FRAGMENTATION_FRACTION = ConfigOption.decimal("fragmentation_fraction",
            0, 1, false, 0.0, "if > 0, split a chunk when the leftover is at least this fraction of the limit"
                    + " (default 0: a 128 MiB cap)");
    public static final ConfigOption<Boolean> ALLOW_RETRY_ON_FAILURE = ConfigOption.bool("allow_retry_on_failure",
            true, "on out of memory, wait up to retry_timeout_ms for frees before failing");
    public static final ConfigOption<Long> RETRY_TIMEOUT_MS = ConfigOption.integer("retry_timeout_ms", 0,
            86_400_000L, 10_000L, "how long a failing allocation waits for frees (TensorFlow: 10000)");
    public static final ConfigOption<Boolean> TIMESTAMPED = ConfigOption.bool("timestamped", false,
            "stream-ordered reuse: memory freed on a stream is reused by other streams only after the device"
                    + " finished that stream's earlier work");
    public static final ConfigOption<String> VIRTUAL_MEMORY = new ConfigOption<>("virtual_memory",
            "auto, true or false", "false",
            "build regions from the device's virtual memory so that they coalesce, as TensorFlow's"
                    + " GpuVirtualMemAllocator (auto: when the device offers it; default false, as TensorFlow's GPU"
                    + " BFC, whose regions never coalesce)",
            text -> switch (text.toLowerCase(Locale.ROOT)) {
                case "auto", "true", "false" -> text.toLowerCase(Locale.ROOT);
                default -> throw new IllegalArgumentException();
            });

    static final ConfigSchema SCHEMA = ConfigSchema.of("allocator 'bfc'", List.of(ALLOW_GROWTH, GARBAGE_COLLECTION,
            MEMORY_LIMIT_MB, FRAGMENTATION_FRACTION, ALLOW_RETRY_ON_FAILURE, RETRY_TIMEOUT_MS, TIMESTAMPED,
            VIRTUAL_MEMORY));

    public BfcOptions {
        Objects.requireNonNull(virtualMemory, "virtualMemory");
        if (memoryLimitBytes < 0) {
            throw new IllegalArgumentException(
                    "memory limit must be >= 0 (0 = the device's total), got " + memoryLimitBytes);
        }
        if (!(fragmentationFraction >= 0 && fragmentationFraction < 1)) {
            throw new IllegalArgumentException(
                    "fragmentation fraction must be in [0, 1), got " + fragmentationFraction);
        }
        if (retryTimeoutMillis < 0) {
            throw new IllegalArgumentException("retry timeout must be >= 0, got " + retryTimeoutMillis);
        }
    }

    /** GPUBFCAllocator's defaults, with no environment applied. */
    public static BfcOptions defaults() {
        return new BfcOptions(false, true, 0, 0.0, true, 10_000, false, VirtualMemoryUse.OFF);
    }

    public BfcOptions withAllowGrowth(boolean v) {
        return new BfcOptions(v, garbageCollection, memoryLimitBytes, fragmentationFraction, allowRetryOnFailure,
                retryTimeoutMillis, timestamped, virtualMemory);
    }

    public BfcOptions withGarbageCollection(boolean v) {
        return new BfcOptions(allowGrowth, v, memoryLimitBytes, fragmentationFraction, allowRetryOnFailure,
                retryTimeoutMillis, timestamped, virtualMemory);
    }

    public BfcOptions withMemoryLimit(long bytes) {
        return new BfcOptions(allowGrowth, garbageCollection, bytes, fragmentationFraction, allowRetryOnFailure,
                retryTimeoutMillis, timestamped, virtualMemory);
    }

    public BfcOptions withFragmentationFraction(double v) {
        return new BfcOptions(allowGrowth, garbageCollection, memoryLimitBytes, v, allowRetryOnFailure,
                retryTimeoutMillis, timestamped, virtualMemory);
    }

    public BfcOptions withRetry(boolean allow, long timeoutMillis) {
        return new BfcOptions(allowGrowth, garbageCollection, memoryLimitBytes, fragmentationFraction, allow,
                timeoutMillis, timestamped, virtualMemory);
    }

    public BfcOptions withTimestamped(boolean v) {
        return new BfcOptions(allowGrowth, garbageCollection, memoryLimitBytes, fragmentationFraction,
                allowRetryOnFailure, retryTimeoutMillis, v, virtualMemory);
    }

    public BfcOptions withVirtualMemory(VirtualMemoryUse v) {
        return new BfcOptions(allowGrowth, garbageCollection, memoryLimitBytes, fragmentationFraction,
                allowRetryOnFailure, retryTimeoutMillis, timestamped, v);
    }

    /**
     * The options from a parsed configuration and TensorFlow's environment switches, with TensorFlow's parsing
     * rules: {@code TF_FORCE_GPU_ALLOW_GROWTH} overrides {@code allow_growth} when it is exactly {@code true} or
     * {@code false} (a warning says so), and is otherwise ignored with an error in the log;
     * {@code TF_ENABLE_GPU_GARBAGE_COLLECTION} gives the default of {@code garbage_collection} when that key is not
     * set: unset means true, exactly {@code true}/{@code false} as given, anything else an error in the log and true.
     */
    public static BfcOptions from(AllocatorConfig config, Map<String, String> environment) {
        boolean growth = forceAllowGrowth(config.get(ALLOW_GROWTH), environment.get(ENV_FORCE_ALLOW_GROWTH));
        boolean gc = config.isSet(GARBAGE_COLLECTION) ? config.get(GARBAGE_COLLECTION)
                : garbageCollectionFromEnvironment(environment.get(ENV_GARBAGE_COLLECTION));
        Long limitMb = config.get(MEMORY_LIMIT_MB);
        VirtualMemoryUse vm = switch (config.get(VIRTUAL_MEMORY)) {
            case "true" -> VirtualMemoryUse.ON;
            case "auto" -> VirtualMemoryUse.AUTO;
            default -> VirtualMemoryUse.OFF;
        };
        return new BfcOptions(growth, gc, limitMb == null ? 0 : limitMb * ByteSize.MiB,
                config.get(FRAGMENTATION_FRACTION), config.get(ALLOW_RETRY_ON_FAILURE), config.get(RETRY_TIMEOUT_MS),
                config.get(TIMESTAMPED), vm);
    }

    /**
     * What {@link #from(AllocatorConfig, Map)} takes from TensorFlow's environment switches for {@code config}, in
     * that method's order: {@code allow_growth} from {@code TF_FORCE_GPU_ALLOW_GROWTH} when it is exactly
     * {@code true} or {@code false} (it overrides the configuration), and {@code garbage_collection} from
     * {@code TF_ENABLE_GPU_GARBAGE_COLLECTION} when it is exactly {@code true} or {@code false} and the configuration
     * does not set that key. A switch that is unset, or set to a value TensorFlow refuses (the options keep the
     * configured or default value), is not listed.
     */
    public static List<EnvironmentConfig> fromEnvironment(AllocatorConfig config, Map<String, String> environment) {
        List<EnvironmentConfig> taken = new ArrayList<>(2);
        String growth = environment.get(ENV_FORCE_ALLOW_GROWTH);
        if (isSwitchValue(growth)) {
            taken.add(new EnvironmentConfig(ENV_FORCE_ALLOW_GROWTH, ALLOW_GROWTH.name() + ":" + growth));
        }
        String gc = environment.get(ENV_GARBAGE_COLLECTION);
        if (!config.isSet(GARBAGE_COLLECTION) && isSwitchValue(gc)) {
            taken.add(new EnvironmentConfig(ENV_GARBAGE_COLLECTION, GARBAGE_COLLECTION.name() + ":" + gc));
        }
        return List.copyOf(taken);
    }

    /** TensorFlow's switches take exactly {@code true} or {@code false}; anything else is ignored. */
    private static boolean isSwitchValue(String env) {
        return "true".equals(env) || "false".equals(env);
    }

    /** TensorFlow's {@code GetForceGPUAllowGrowth...} rule. */
    static boolean forceAllowGrowth(boolean configured, String env) {
        if (env == null) {
            return configured;
        }
        if (isSwitchValue(env)) {
            boolean forced = env.equals("true");
            if (forced != configured) {
                LOG.warn("Overriding allow_growth setting because the {} environment variable is set. Original config"
                        + " value was {}.", ENV_FORCE_ALLOW_GROWTH, configured);
            }
            return forced;
        }
        LOG.error("The {} environment variable is set but could not be parsed: \"{}\". Valid values are \"true\" or"
                + " \"false\". Using original config value of {}.", ENV_FORCE_ALLOW_GROWTH, env, configured);
        return configured;
    }

    /** TensorFlow's {@code GetGarbageCollectionValue} rule. */
    static boolean garbageCollectionFromEnvironment(String env) {
        if (env == null) {
            return true;
        }
        if (isSwitchValue(env)) {
            return env.equals("true");
        }
        LOG.error("The {} environment variable is set but could not be parsed: \"{}\". Valid values are \"true\" or"
                + " \"false\". Using the default value \"true\".", ENV_GARBAGE_COLLECTION, env);
        return true;
    }
}
