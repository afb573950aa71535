package io.devalloc.guice;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.Multibinder;
import com.google.inject.multibindings.OptionalBinder;
import io.devalloc.api.DevallocSettings;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.internal.GuardedListener;
import io.devalloc.api.internal.ListeningDeviceMemory;
import io.devalloc.api.internal.ObservedAllocator;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.OutOfMemoryHandler;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.spi.DeviceRegistry;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The Guice way in: install this module and inject {@link DeviceAllocator} (and, if needed, its
 * {@link DeviceMemory}).
 * <pre>{@code
 * Injector injector = Guice.createInjector(new DevallocModule(new DevallocSettings("sim:80GiB", "direct", "")));
 * DeviceAllocator allocator = injector.getInstance(DeviceAllocator.class);
 * }</pre>
 * Device and allocator providers are discovered with {@link java.util.ServiceLoader}; which ones are used comes
 * from {@link DevallocSettings} (by default from the {@code devalloc.*} system properties and
 * {@code DEVALLOC_*} environment variables). Following Guice's advice, {@code configure()} does no work: the
 * device is probed and opened when the allocator is first injected. Everything is a singleton.
 *
 * <p><b>Observability.</b> The module declares a {@link Multibinder} of {@link AllocatorListener} and an
 * {@link OptionalBinder} of {@link OutOfMemoryHandler}, so another module may add listeners and set a handler, and
 * the injected allocator is built with them as {@code DeviceAllocators.builder().listener(...)} and
 * {@code .outOfMemoryHandler(...)} build it (the handler with {@link OutOfMemoryHandler#DEFAULT_MAX_RETRIES}):
 * <pre>{@code
 * Multibinder.newSetBinder(binder(), AllocatorListener.class).addBinding().to(MyTracker.class);
 * OptionalBinder.newOptionalBinder(binder(), OutOfMemoryHandler.class).setBinding().to(Spiller.class);
 * }</pre>
 * (a plain {@code bind(OutOfMemoryHandler.class).to(...)} works too). With neither bound, the allocator is built
 * exactly as without them: nothing is wrapped. {@link DeviceMemory}, when injected, is the device itself, not the
 * wrapper that tells the listeners of the allocator's device calls.
 *
 * <p>The injected allocator owns the device: closing the allocator at shutdown closes the device too. To use other
 * providers than the discovered ones (in tests, say), pass them to
 * {@link #DevallocModule(DevallocSettings, List, List)}.
 *
 * <p>Thread-safe: the module is immutable, and the objects it provides are thread-safe singletons.
 *
 * <p>Guice is an optional dependency of {@code allocator-api}: only this package uses it, so applications that do
 * not use Guice never need it on their class path.
 */
public final class DevallocModule extends AbstractModule {

    private final DevallocSettings settings;
    private final DeviceRegistry devices;
    private final AllocatorRegistry allocators;

    /** Settings from the {@code devalloc.*} system properties and {@code DEVALLOC_*} environment variables. */
    public DevallocModule() {
        this(DevallocSettings.fromEnvironment());
    }

    /** The given settings, over the providers {@link java.util.ServiceLoader} finds. */
    public DevallocModule(DevallocSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.devices = null;
        this.allocators = null;
    }

    /** The given settings over exactly these providers instead of the discovered ones. */
    public DevallocModule(DevallocSettings settings, List<? extends DeviceMemoryProvider> deviceProviders,
                          List<? extends AllocatorProvider> allocatorProviders) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.devices = DeviceRegistry.of(List.copyOf(deviceProviders));
        this.allocators = AllocatorRegistry.of(List.copyOf(allocatorProviders));
    }

    @Override
    protected void configure() {
        bind(DevallocSettings.class).toInstance(settings);
        // Declared here, so that the set may be empty and the handler absent, and other modules add to them.
        Multibinder.newSetBinder(binder(), AllocatorListener.class);
        OptionalBinder.newOptionalBinder(binder(), OutOfMemoryHandler.class);
    }

    private DeviceRegistry devices() {
        return devices != null ? devices : DeviceRegistry.load(DevallocModule.class.getClassLoader());
    }

    private AllocatorRegistry allocators() {
        return allocators != null ? allocators : AllocatorRegistry.load(DevallocModule.class.getClassLoader());
    }

    @Provides
    @Singleton
    DeviceMemory deviceMemory(DevallocSettings s) {
        // Validate the allocator and its configuration first, so a typo costs no device open.
        AllocatorProvider provider = allocators().get(s.allocator());
        AllocatorConfig.parse(s.config(), provider.configSchema());
        return devices().open(s.device());
    }

    @Provides
    @Singleton
    DeviceAllocator deviceAllocator(DeviceMemory device, DevallocSettings s, Set<AllocatorListener> listeners,
                                    Optional<OutOfMemoryHandler> handler) {
        AllocatorProvider provider = allocators().get(s.allocator());
        AllocatorListener listener = GuardedListener.of(List.copyOf(listeners));
        boolean listening = !listeners.isEmpty();
        DeviceAllocator built;
        try {
            DeviceMemory seen = listening ? new ListeningDeviceMemory(device, listener) : device;
            built = provider.create(new AllocatorSetup(seen,
                    AllocatorConfig.parse(s.config(), provider.configSchema()), true, listener));
        } catch (RuntimeException | Error e) {
            // Nothing owns the device yet: close it rather than leak it.
            try {
                device.close();
            } catch (RuntimeException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
        if (!listening && handler.isEmpty()) {
            return built;
        }
        return new ObservedAllocator(built, listener, handler.orElse(null), OutOfMemoryHandler.DEFAULT_MAX_RETRIES,
                List.of());
    }
}
