package io.devalloc.bfc;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.spi.EnvironmentConfig;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Allocator {@code bfc}: TensorFlow's best-fit-with-coalescing allocator. Configuration keys are listed in
 * {@link BfcOptions}; TensorFlow's environment switches {@code TF_FORCE_GPU_ALLOW_GROWTH} and
 * {@code TF_ENABLE_GPU_GARBAGE_COLLECTION} apply with TensorFlow's parsing rules, and
 * {@link #configFromEnvironment(String)} says which of them apply.
 */
public final class BfcAllocatorProvider implements AllocatorProvider {

    public static final String NAME = "bfc";

    private final Map<String, String> environment;

    /** The provider that {@link java.util.ServiceLoader} creates: reads the process environment. */
    public BfcAllocatorProvider() {
        this(System.getenv());
    }

    /** A provider that reads TensorFlow's switches from {@code environment} instead (for tests and embedding). */
    public BfcAllocatorProvider(Map<String, String> environment) {
        this.environment = Map.copyOf(Objects.requireNonNull(environment, "environment"));
    }

    /** A provider that reads none of TensorFlow's switches: the configuration text alone decides. */
    @Override
    public BfcAllocatorProvider withoutEnvironment() {
        return environment.isEmpty() ? this : new BfcAllocatorProvider(Map.of());
    }

    /**
     * The settings the advisor sweeps for BFC: TensorFlow's GPU defaults (one region of the whole limit), growth,
     * growth without garbage collection, and growth with a smaller internal-fragmentation cap
     * ({@code fragmentation_fraction} 0.001 and 0.01 of the limit, where the default cap is 128 MiB). The largest
     * request does not matter to BFC's settings.
     */
    @Override
    public List<String> defaultGrid(long largestRequestBytes) {
        return List.of("", "allow_growth:true", "allow_growth:true,garbage_collection:false",
                "allow_growth:true,fragmentation_fraction:0.001", "allow_growth:true,fragmentation_fraction:0.01");
    }

    /**
     * {@code configText} with {@code retry_timeout_ms:0} unless it sets the retry: a replay on one thread never
     * frees while an allocation waits, so TensorFlow's 10 s wait for frees could only stall.
     */
    @Override
    public String replayConfig(String configText) {
        String conf = configText == null ? "" : configText;
        if (conf.contains("retry_timeout_ms") || conf.contains("allow_retry_on_failure")) {
            return conf;
        }
        return conf.isBlank() ? "retry_timeout_ms:0" : conf + ",retry_timeout_ms:0";
    }

    /** Without growth TensorFlow's BFC takes its whole limit at once, which a reader of a setting must know. */
    @Override
    public List<String> caveats(String configText) {
        String c = configText.toLowerCase(Locale.ROOT).replace(" ", "");
        if (c.contains("allow_growth:true")) {
            return List.of();
        }
        return List.of("without allow_growth, TensorFlow's BFC takes the whole device (or memory_limit) at its first"
                + " allocation");
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "TensorFlow's best-fit-with-coalescing arena: 21 bins, 256 B rounding, regions grown or preallocated";
    }

    @Override
    public ConfigSchema configSchema() {
        return BfcOptions.SCHEMA;
    }

    @Override
    public BfcAllocator create(AllocatorSetup setup) {
        return new BfcArena(setup.device(), setup.ownsDevice(), BfcOptions.from(setup.config(), environment),
                setup.listener());
    }

    @Override
    public BfcAllocator create(DeviceMemory device, String configText) {
        return create(new AllocatorSetup(device, AllocatorConfig.parse(configText, configSchema()), false));
    }

    /** What {@link BfcOptions#fromEnvironment(AllocatorConfig, Map)} takes from this provider's environment. */
    @Override
    public List<EnvironmentConfig> configFromEnvironment(String configText) {
        return BfcOptions.fromEnvironment(AllocatorConfig.parse(configText, configSchema()), environment);
    }

    /**
     * A BFC allocator over {@code device} with explicit options (no environment applied); the caller owns the device.
     */
    public static BfcAllocator create(DeviceMemory device, BfcOptions options) {
        return new BfcArena(device, false, options);
    }
}
