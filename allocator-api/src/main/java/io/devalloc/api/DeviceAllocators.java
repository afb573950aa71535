package io.devalloc.api;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.internal.GuardedListener;
import io.devalloc.api.internal.ListeningDeviceMemory;
import io.devalloc.api.internal.ObservedAllocator;
import io.devalloc.api.internal.ThresholdWatch;
import io.devalloc.api.jfr.JfrEvents;
import io.devalloc.api.jmx.AllocatorMXBeans;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.MemoryGauge;
import io.devalloc.api.observe.ObservabilitySettings;
import io.devalloc.api.observe.OutOfMemoryHandler;
import io.devalloc.api.observe.ThresholdListener;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.spi.DeviceRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * The plain (no Guice) way in: opens a device and builds an allocator over it, both found with
 * {@link java.util.ServiceLoader}.
 * <pre>{@code
 * try (DeviceAllocator allocator = DeviceAllocators.builder()
 *         .device("sim:80GiB").allocator("direct").config("memory_limit_mb:1024").build()) {
 *     long address = allocator.malloc(1 << 20);
 *     allocator.free(address);
 * }
 * }</pre>
 * The allocator owns the device it opened: closing the allocator closes the device.
 *
 * <p>{@link Builder#decorate} wraps the built allocator, for example to record every call for a later replay
 * ({@code .decorate(RecordingAllocator.to(Path.of("run.csv"), RecordingAllocator.Format.RMM_CSV))} with module
 * {@code trace-io}); closing the decorated allocator closes the one inside and its device.
 *
 * <p>{@link Builder#name}, {@link Builder#jfrEvents} and {@link Builder#registerMXBean} turn on JFR events and a
 * JMX bean (or, without code, {@link Builder#observability} with {@link ObservabilitySettings#fromEnvironment()}).
 *
 * <p>{@link #devices()} and {@link #allocators()} tell what the class path (or module path) offers.
 */
public final class DeviceAllocators {

    private DeviceAllocators() {
    }

    /** A builder with the defaults: device {@code auto}, allocator {@code direct}, empty configuration. */
    public static Builder builder() {
        return new Builder();
    }

    /** Opens {@code deviceSpec} and builds allocator {@code allocator} with {@code config} over it. */
    public static DeviceAllocator open(String deviceSpec, String allocator, String config) {
        return builder().device(deviceSpec).allocator(allocator).config(config).build();
    }

    /** Builds from {@link DevallocSettings} (e.g. {@link DevallocSettings#fromEnvironment()}). */
    public static DeviceAllocator open(DevallocSettings settings) {
        return open(settings.device(), settings.allocator(), settings.config());
    }

    /**
     * Every device provider found with {@link java.util.ServiceLoader}, available or not, with the reason, in
     * priority order (what {@code auto} picks first comes first).
     */
    public static List<ProviderStatus> devices() {
        return DeviceRegistry.load().describe();
    }

    /** The names of every allocator found with {@link java.util.ServiceLoader}. */
    public static List<String> allocators() {
        return AllocatorRegistry.load().names();
    }

    /** Builds allocators. Not thread-safe; the allocators it builds are. */
    public static final class Builder {
        private String device = "auto";
        /** A device the caller opened and keeps, or null: then {@link #device} is opened and owned. */
        private DeviceMemory openedDevice;
        private String allocator = DevallocSettings.DEFAULT_ALLOCATOR;
        /** The provider to build with, or null: then {@link #allocator} is looked up. */
        private AllocatorProvider allocatorProvider;
        private String config = "";
        private DeviceRegistry devices;
        private AllocatorRegistry allocators;
        private final List<UnaryOperator<DeviceAllocator>> decorations = new ArrayList<>();
        private final List<AllocatorListener> listeners = new ArrayList<>();
        private final List<ThresholdWatch> thresholds = new ArrayList<>();
        private OutOfMemoryHandler outOfMemoryHandler;
        private int maxOutOfMemoryRetries = OutOfMemoryHandler.DEFAULT_MAX_RETRIES;
        private String name = "";
        private boolean jfrEvents;
        private boolean registerMXBean;

        private Builder() {
        }

        /** The device spec: {@code sim:80GiB}, {@code host}, {@code pinned-host}, {@code cuda:0}, {@code auto}. */
        public Builder device(String spec) {
            this.device = Objects.requireNonNull(spec, "spec");
            this.openedDevice = null;
            return this;
        }

        /**
         * Builds over {@code opened}, a device the caller opened and keeps: closing the allocator leaves it open,
         * and a build that fails leaves it as it was. The configuration is read as the provider's
         * {@link AllocatorProvider#create(DeviceMemory, String, AllocatorListener)} reads it. Replaces a spec given
         * before (and a later spec replaces it).
         */
        public Builder device(DeviceMemory opened) {
            this.openedDevice = Objects.requireNonNull(opened, "opened");
            return this;
        }

        /** The allocator name: {@code direct}, {@code bfc}, {@code caching}. */
        public Builder allocator(String name) {
            this.allocator = Objects.requireNonNull(name, "name");
            this.allocatorProvider = null;
            return this;
        }

        /**
         * Builds with {@code provider} itself, not looked up by name (one a tool configured, say, such as
         * {@link AllocatorProvider#withoutEnvironment()}). Replaces a name given before (and a later name replaces
         * it).
         */
        public Builder allocator(AllocatorProvider provider) {
            this.allocatorProvider = Objects.requireNonNull(provider, "provider");
            return this;
        }

        /** The allocator's configuration, {@code key:value,key:value}. */
        public Builder config(String text) {
            this.config = Objects.requireNonNull(text, "text");
            return this;
        }

        /** Uses these device providers instead of the ones {@link java.util.ServiceLoader} finds. */
        public Builder deviceProviders(List<? extends DeviceMemoryProvider> providers) {
            this.devices = DeviceRegistry.of(List.copyOf(providers));
            return this;
        }

        /** Uses these allocator providers instead of the ones {@link java.util.ServiceLoader} finds. */
        public Builder allocatorProviders(List<? extends AllocatorProvider> providers) {
            this.allocators = AllocatorRegistry.of(List.copyOf(providers));
            return this;
        }

        /**
         * Tells {@code listener} of the allocator's device calls, out-of-memory errors, retries and cache releases
         * (see {@link AllocatorListener}). May be called more than once: every listener is told, in the order given,
         * and one that throws is logged and ignored. With no listener, no handler and no threshold, the allocator is
         * built exactly as without this builder's observability: nothing is wrapped.
         */
        public Builder listener(AllocatorListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * Asks {@code handler} when an allocation is about to fail for want of memory, with at most
         * {@link OutOfMemoryHandler#DEFAULT_MAX_RETRIES} retries per request (see {@link OutOfMemoryHandler}).
         */
        public Builder outOfMemoryHandler(OutOfMemoryHandler handler) {
            return outOfMemoryHandler(handler, OutOfMemoryHandler.DEFAULT_MAX_RETRIES);
        }

        /**
         * Asks {@code handler} when an allocation is about to fail, with at most {@code maxRetries} retries per
         * request. Replaces a handler set before.
         *
         * @throws IllegalArgumentException {@code maxRetries < 0}
         */
        public Builder outOfMemoryHandler(OutOfMemoryHandler handler, int maxRetries) {
            if (maxRetries < 0) {
                throw new IllegalArgumentException("maxRetries " + maxRetries + " < 0");
            }
            this.outOfMemoryHandler = Objects.requireNonNull(handler, "handler");
            this.maxOutOfMemoryRetries = maxRetries;
            return this;
        }

        /**
         * Tells {@code listener} each time {@code gauge} crosses one of {@code levels} (bytes), once per crossing in
         * each direction (see {@link ThresholdListener}). May be called more than once.
         *
         * @throws IllegalArgumentException no level, a level below 1, or a level given twice
         */
        public Builder threshold(MemoryGauge gauge, ThresholdListener listener, long... levels) {
            thresholds.add(new ThresholdWatch(gauge, listener, levels));
            return this;
        }

        /**
         * The allocator's name in JFR events, its MXBean's ObjectName and metrics: chosen by the user and stable
         * across runs (e.g. {@code trainer}). Default: the allocator's kind ({@code caching}).
         *
         * @throws IllegalArgumentException a blank name
         */
        public Builder name(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("an allocator's name must not be blank");
            }
            this.name = name.strip();
            return this;
        }

        /**
         * Writes JFR events (package {@code io.devalloc.api.jfr}): one per device call, out-of-memory error, retry
         * and cache release, and the periodic {@code io.devalloc.MemoryUsage} gauges (the hook is removed when the
         * allocator is closed). Off by default; when off nothing is installed.
         */
        public Builder jfrEvents(boolean on) {
            this.jfrEvents = on;
            return this;
        }

        /**
         * Registers the allocator's {@link io.devalloc.api.jmx.AllocatorMXBean} with the platform MBean server as
         * {@code io.devalloc:type=Allocator,name=NAME} ({@link #name}); closing the allocator unregisters it. Off by
         * default. {@link #build()} fails, leaving nothing registered or open, when the name is already registered.
         */
        public Builder registerMXBean(boolean on) {
            this.registerMXBean = on;
            return this;
        }

        /**
         * Applies settings read from outside (e.g. {@link ObservabilitySettings#fromEnvironment()}): a name given
         * there replaces the one set before, and JFR events and the MXBean are turned on when the settings turn
         * them on (never off: what code turned on stays on).
         */
        public Builder observability(ObservabilitySettings settings) {
            Objects.requireNonNull(settings, "settings");
            if (!settings.name().isEmpty()) {
                this.name = settings.name();
            }
            this.jfrEvents |= settings.jfrEvents();
            this.registerMXBean |= settings.registerMXBean();
            return this;
        }

        /**
         * Wraps the built allocator in {@code decoration} (applied in the order given). A decorator owns what it
         * wraps: closing it closes the allocator inside, and so its device.
         */
        public Builder decorate(UnaryOperator<DeviceAllocator> decoration) {
            decorations.add(Objects.requireNonNull(decoration, "decoration"));
            return this;
        }

        /**
         * Validates the allocator name and configuration, opens the device, builds the allocator and applies the
         * decorations. Nothing is left open when it fails: a decoration that throws closes what was built.
         */
        public DeviceAllocator build() {
            AllocatorProvider provider = allocatorProvider != null ? allocatorProvider
                    : (allocators != null ? allocators : AllocatorRegistry.load()).get(allocator);
            boolean ownsDevice = openedDevice == null;
            // Check the configuration before touching any device, so a typo costs no device open. Over a device the
            // caller opened, the provider reads the text its own way (create(DeviceMemory, String, listener)), as a
            // tool replaying recorded configuration texts needs: PyTorch's syntax for caching, say.
            AllocatorConfig parsed = ownsDevice ? AllocatorConfig.parse(config, provider.configSchema()) : null;
            String allocatorName = name.isEmpty() ? provider.name() : name;
            DeviceMemory memory = ownsDevice ? (devices != null ? devices : DeviceRegistry.load()).open(device)
                    : openedDevice;
            DeviceAllocator built;
            AllocatorListener listener;
            boolean listening;
            try {
                List<AllocatorListener> told = listeners;
                if (jfrEvents) {
                    told = new ArrayList<>(listeners);
                    told.add(JfrEvents.listener(allocatorName, memory.descriptor().id()));
                }
                listener = GuardedListener.of(told);
                listening = !told.isEmpty();
                DeviceMemory seen = listening ? new ListeningDeviceMemory(memory, listener) : memory;
                built = ownsDevice ? provider.create(new AllocatorSetup(seen, parsed, true, listener))
                        : provider.create(seen, config, listener);
            } catch (RuntimeException | Error e) {
                if (ownsDevice) {
                    try {
                        memory.close();
                    } catch (RuntimeException closeFailure) {
                        e.addSuppressed(closeFailure);
                    }
                }
                throw e;
            }
            if (listening || outOfMemoryHandler != null || !thresholds.isEmpty()) {
                List<ThresholdWatch> watches = new ArrayList<>();
                for (ThresholdWatch w : thresholds) {
                    watches.add(w.copy()); // a watch has state: each allocator built gets its own
                }
                built = new ObservedAllocator(built, listener, outOfMemoryHandler, maxOutOfMemoryRetries, watches);
            }
            for (UnaryOperator<DeviceAllocator> decoration : decorations) {
                DeviceAllocator decorated;
                try {
                    decorated = Objects.requireNonNull(decoration.apply(built), "a decoration returned null");
                } catch (RuntimeException e) {
                    throw closing(built, e);
                }
                built = decorated;
            }
            // Outermost, so that the gauges and the bean's operations go through every decorator.
            if (jfrEvents) {
                built = wrapOrClose(built, b -> JfrEvents.withMemoryUsageEvents(b, allocatorName));
            }
            if (registerMXBean) {
                built = wrapOrClose(built, b -> AllocatorMXBeans.register(b, allocatorName));
            }
            return built;
        }

        /** {@code wrap} applied to {@code allocator}; when it throws, {@code allocator} is closed. */
        private static DeviceAllocator wrapOrClose(DeviceAllocator allocator, UnaryOperator<DeviceAllocator> wrap) {
            try {
                return wrap.apply(allocator);
            } catch (RuntimeException e) {
                throw closing(allocator, e);
            }
        }

        /** Closes {@code allocator} (and so its device) and returns {@code failure} with any close failure added. */
        private static RuntimeException closing(DeviceAllocator allocator, RuntimeException failure) {
            try {
                allocator.close();
            } catch (RuntimeException closeFailure) {
                failure.addSuppressed(closeFailure);
            }
            return failure;
        }
    }
}
