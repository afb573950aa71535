package io.devalloc.guice;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.registry.AllocatorRegistry;
import io.devalloc.api.registry.DevallocSettings;
import io.devalloc.api.registry.DeviceRegistry;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorSetup;
import java.util.Objects;

/**
 * The Guice way in: install this module and inject {@link DeviceAllocator} (and, if needed, its
 * {@link DeviceMemory}, {@link DeviceRegistry} and {@link AllocatorRegistry}).
 * <pre>{@code
 * Injector injector = Guice.createInjector(new DevallocModule(new DevallocSettings("sim:80GiB", "direct", "")));
 * DeviceAllocator allocator = injector.getInstance(DeviceAllocator.class);
 * }</pre>
 * Device and allocator providers are discovered with {@link java.util.ServiceLoader}; which ones are used comes
 * from {@link DevallocSettings} (by default from the {@code devalloc.*} system properties and
 * {@code DEVALLOC_*} environment variables). Following Guice's advice, {@code configure()} does no work: the
 * device is probed and opened when the allocator is first injected. Everything is a singleton.
 *
 * <p>The injected allocator owns the device: closing the allocator at shutdown closes the device too. To replace
 * the discovered providers (in tests, say), override the registry bindings with {@code Modules.override}.
 *
 * <p>Thread-safe: the module is immutable, and the objects it provides are thread-safe singletons.
 *
 * <p>Guice is an optional dependency of {@code allocator-api}: only this package uses it, so applications that do
 * not use Guice never need it on their class path.
 */
public final class DevallocModule extends AbstractModule {

    private final DevallocSettings settings;

    /** Settings from the {@code devalloc.*} system properties and {@code DEVALLOC_*} environment variables. */
    public DevallocModule() {
        this(DevallocSettings.fromEnvironment());
    }

    public DevallocModule(DevallocSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
    }

    @Override
    protected void configure() {
        bind(DevallocSettings.class).toInstance(settings);
    }

    @Provides
    @Singleton
    DeviceRegistry deviceRegistry() {
        return DeviceRegistry.load(DevallocModule.class.getClassLoader());
    }

    @Provides
    @Singleton
    AllocatorRegistry allocatorRegistry() {
        return AllocatorRegistry.load(DevallocModule.class.getClassLoader());
    }

    @Provides
    @Singleton
    DeviceMemory deviceMemory(DeviceRegistry devices, AllocatorRegistry allocators, DevallocSettings s) {
        // Validate the allocator and its configuration first, so a typo costs no device open.
        AllocatorProvider provider = allocators.get(s.allocator());
        AllocatorConfig.parse(s.config(), provider.configSchema());
        return devices.open(s.device());
    }

    @Provides
    @Singleton
    DeviceAllocator deviceAllocator(AllocatorRegistry allocators, DeviceMemory device, DevallocSettings s) {
        AllocatorProvider provider = allocators.get(s.allocator());
        try {
            return provider.create(new AllocatorSetup(device, AllocatorConfig.parse(s.config(), provider.configSchema()),
                    true));
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
