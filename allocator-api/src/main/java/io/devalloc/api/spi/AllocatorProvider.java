package io.devalloc.api.spi;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.observe.AllocatorListener;
import java.util.List;
import java.util.Optional;

/**
 * A plug-in allocation algorithm ({@code direct}, {@code bfc}, {@code caching}). Found with
 * {@link java.util.ServiceLoader}: list the implementation in
 * {@code META-INF/services/io.devalloc.api.spi.AllocatorProvider}. Thread-safe, with a cheap no-argument
 * constructor.
 *
 * <p><b>Configuration from the environment.</b> A provider may take part of an allocator's configuration from
 * environment variables of the framework it ports, so that a program tuned for that framework keeps its settings:
 * {@code caching} reads {@code PYTORCH_CUDA_ALLOC_CONF} (or {@code PYTORCH_HIP_ALLOC_CONF}, {@code PYTORCH_ALLOC_CONF})
 * when it is given no configuration, {@code bfc} TensorFlow's {@code TF_FORCE_GPU_ALLOW_GROWTH} and
 * {@code TF_ENABLE_GPU_GARBAGE_COLLECTION}. Such a provider reads them from the process environment when
 * {@link java.util.ServiceLoader} creates it, or from a map given to a constructor of its own (for tests and
 * embedding), and says what it takes through {@link #configFromEnvironment(String)}: the allocator itself is not
 * asked, so that tools which show the configuration that ran (the replay's tables, JSON and report) can say where
 * it came from instead of calling it the defaults.
 */
public interface AllocatorProvider {

    /** The name used to select it, e.g. {@code bfc}. */
    String name();

    /** One line saying what it is. */
    String description();

    /** The configuration keys it accepts. */
    ConfigSchema configSchema();

    /** Builds an allocator. The configuration must have been parsed against {@link #configSchema()}. */
    DeviceAllocator create(AllocatorSetup setup);

    /**
     * Parses {@code configText} and builds an allocator over {@code device}; the caller keeps ownership of the
     * device.
     *
     * @throws io.devalloc.api.error.InvalidConfigurationException if the configuration is refused
     */
    default DeviceAllocator create(DeviceMemory device, String configText) {
        return create(new AllocatorSetup(device, AllocatorConfig.parse(configText, configSchema()), false));
    }

    /**
     * {@link #create(DeviceMemory, String)} with a listener in the setup: what a tool that builds allocators from
     * configuration texts (the replay) uses to watch one. The caller keeps ownership of the device and wraps it
     * itself if device calls are to be seen (the listener here is told only of what the allocator alone sees). A
     * provider that overrides {@code create(DeviceMemory, String)} to read the text its own way overrides this too.
     *
     * @param listener already guarded (see {@link AllocatorSetup#listener()})
     * @throws io.devalloc.api.error.InvalidConfigurationException if the configuration is refused
     */
    default DeviceAllocator create(DeviceMemory device, String configText, AllocatorListener listener) {
        return create(new AllocatorSetup(device, AllocatorConfig.parse(configText, configSchema()), false, listener));
    }

    /**
     * What an allocator created from {@code configText} ({@link #create(DeviceMemory, String)}) takes from environment
     * variables rather than from the text, in the order it applies them: the variables this provider reads, in the
     * environment it reads them from (see above). The answer must match what {@code create} applies: a variable
     * that is set but ignored (an empty value, a value the framework would refuse, a key the text sets and the
     * variable does not override) is not listed.
     *
     * <p>The default, for providers that read no environment, is the empty list: the text alone decides.
     *
     * @param configText the configuration text {@code create} is given (null or blank: none)
     * @return the parts of the configuration from the environment, empty when there are none
     * @throws io.devalloc.api.error.InvalidConfigurationException if the text is refused, as {@code create} would
     */
    default List<EnvironmentConfig> configFromEnvironment(String configText) {
        return List.of();
    }

    /**
     * This provider as one that reads no environment variables: its allocators take their configuration from the
     * text alone, and {@link #configFromEnvironment(String)} is empty. For tools that compare configurations (the
     * advisor runs every configuration exactly as written, whatever {@code PYTORCH_CUDA_ALLOC_CONF} says in the
     * shell that started it). A provider that reads the environment must override this; the default, for those
     * that read none, is this provider itself.
     */
    default AllocatorProvider withoutEnvironment() {
        return this;
    }

    /**
     * The configurations worth trying when looking for this allocator's best setting on a workload whose largest
     * request is {@code largestRequestBytes}, most common first: the first is the allocator's defaults (the empty
     * text), each is a text {@link #create(DeviceMemory, String)} accepts. The advisor ({@code devalloc advise})
     * sweeps it when no other grid is given. The default, for allocators that offer none, is the empty list.
     *
     * @param largestRequestBytes the workload's largest allocation request, for settings with a size threshold
     *                            (0 when unknown)
     */
    default List<String> defaultGrid(long largestRequestBytes) {
        return List.of();
    }

    /**
     * The configuration to replay a recorded trace with, on one thread, when {@code configText} is given: the text
     * itself, unless the allocator waits for other threads to free memory before failing a request, which on one
     * thread could only stall (TensorFlow's BFC waits 10 s: {@code bfc} adds {@code retry_timeout_ms:0} unless
     * the text sets its retry). The default is {@code configText}.
     */
    default String replayConfig(String configText) {
        return configText;
    }

    /**
     * Whether this allocator ports PyTorch's caching allocator, so that a replay through it can be judged by what
     * PyTorch's allocator recorded in a memory snapshot (its segment rows: the replay's ground truth). Another
     * allocator makes different device calls by design. The default is {@code false}.
     */
    default boolean portsPyTorch() {
        return false;
    }

    /**
     * The environment variable of the framework this allocator ports that takes {@code configText} as it is
     * ({@code PYTORCH_CUDA_ALLOC_CONF}), or empty when there is none or the text uses a key of devalloc's own,
     * which the framework refuses: then the setting goes in devalloc's {@code DEVALLOC_CONFIG}. The default is
     * empty.
     */
    default Optional<String> frameworkVariable(String configText) {
        return Optional.empty();
    }

    /**
     * What the framework documents against the setting {@code configText}, one sentence each, for a reader who
     * pastes it into a job: the advisor shows them beside its recommendation. The default is none.
     */
    default List<String> caveats(String configText) {
        return List.of();
    }
}
