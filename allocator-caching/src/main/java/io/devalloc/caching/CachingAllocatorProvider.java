package io.devalloc.caching;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.spi.EnvironmentConfig;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Allocator {@code caching}: PyTorch's CUDA caching allocator. The configuration uses {@code PYTORCH_CUDA_ALLOC_CONF}'s
 * keys (see {@link CachingConfig}). When the configuration given to the provider is empty, the provider reads
 * PyTorch's environment variable instead: {@code PYTORCH_CUDA_ALLOC_CONF}, else {@code PYTORCH_HIP_ALLOC_CONF}, else
 * {@code PYTORCH_ALLOC_CONF} (the first one set), so that a program tuned for PyTorch keeps its settings. An explicit
 * configuration (devalloc's {@code devalloc.config} / {@code DEVALLOC_CONFIG}, or the builder's) wins.
 * {@link #configFromEnvironment(String)} says when the variable applies, and which one. Immutable and thread-safe.
 */
public final class CachingAllocatorProvider implements PyTorchAllocatorProvider {

    public static final String NAME = "caching";

    private static final Logger LOG = LoggerFactory.getLogger(CachingAllocatorProvider.class);

    private final Map<String, String> environment;

    /** The provider that {@link java.util.ServiceLoader} creates: reads the process environment. */
    public CachingAllocatorProvider() {
        this(System.getenv());
    }

    /** A provider that reads PyTorch's variables from {@code environment} instead (for tests and embedding). */
    public CachingAllocatorProvider(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    private CachingOptions options(AllocatorConfig config) {
        if (config.explicitValues().isEmpty()) {
            String fromEnv = CachingConfig.fromEnvironment(environment);
            if (!fromEnv.isBlank()) {
                String variable = CachingConfig.environmentVariable(environment);
                LOG.info("allocator 'caching': no configuration given; using {}={}", variable, fromEnv);
                return CachingConfig.parse(fromEnv);
            }
        }
        return CachingConfig.from(config);
    }

    /**
     * The variable's configuration when {@code configText} is empty and one of PyTorch's variables is set to a
     * non-blank value (the first set, as {@link CachingConfig#environmentVariable(Map)} finds it), else nothing.
     */
    @Override
    public List<EnvironmentConfig> configFromEnvironment(String configText) {
        if (configText != null && !configText.isBlank()) {
            return List.of();
        }
        String fromEnv = CachingConfig.fromEnvironment(environment);
        if (fromEnv.isBlank()) {
            return List.of();
        }
        return List.of(new EnvironmentConfig(CachingConfig.environmentVariable(environment), fromEnv.strip()));
    }

    /** A provider that reads none of PyTorch's variables: the configuration text alone decides. */
    @Override
    public CachingAllocatorProvider withoutEnvironment() {
        return environment.isEmpty() ? this : new CachingAllocatorProvider(Map.of());
    }

    /**
     * The settings PyTorch users tune, as the advisor sweeps them (see {@code CachingGrid}): the defaults,
     * expandable segments, {@code max_split_size_mb} from 20 to past the largest request, power-of-two rounding
     * divisions, garbage collection with a memory fraction, and combinations of them.
     */
    @Override
    public List<String> defaultGrid(long largestRequestBytes) {
        return CachingGrid.of(largestRequestBytes);
    }

    @Override
    public Set<String> devallocKeys() {
        return Set.of("search_pool_after_release");
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "PyTorch's CUDA caching allocator: small and large pools per stream, 512 B rounding, 2/20 MiB segments";
    }

    @Override
    public ConfigSchema configSchema() {
        return CachingConfig.SCHEMA;
    }

    @Override
    public CachingAllocator create(AllocatorSetup setup) {
        return new CachingArena(setup.device(), setup.ownsDevice(), options(setup.config()), setup.listener());
    }

    @Override
    public CachingAllocator create(DeviceMemory device, String configText) {
        return create(device, configText, AllocatorListener.NONE);
    }

    @Override
    public CachingAllocator create(DeviceMemory device, String configText, AllocatorListener listener) {
        if (configText == null || configText.isBlank()) {
            return create(new AllocatorSetup(device, AllocatorConfig.defaults(configSchema()), false, listener));
        }
        return new CachingArena(device, false, CachingConfig.parse(configText), listener);
    }

    /** A caching allocator over {@code device} with explicit options; the caller owns the device. */
    public static CachingAllocator create(DeviceMemory device, CachingOptions options) {
        return new CachingArena(device, false, options);
    }
}
