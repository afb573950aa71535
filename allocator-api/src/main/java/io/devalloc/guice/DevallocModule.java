package io.devalloc.guice;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.internal.AllocatorRegistry;
import io.devalloc.api.DevallocSettings;
import io.devalloc.api.internal.DeviceRegistry;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.spi.DeviceMemoryProvider;
import java.util.List;
import java.util.Objects;

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
    DeviceAllocator deviceAllocator(DeviceMemory device, DevallocSettings s) {
        AllocatorProvider provider = allocators().get(s.allocator());
        try {
            return provider.create(
                    new AllocatorSetup(device, AllocatorConfig.parse(s.config(), provider.configSchema()), true));
        } catch (RuntimeException | Error e) {
            // Nothing owns the device yet: close it rather than leak it.
            try {
                device.close();
            } catch (RuntimeException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
    }
}
