package io.devalloc.api.spi;

import io.devalloc.api.error.InvalidConfigurationException;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The allocation algorithms on the class path ({@code direct} is always there; {@code bfc} and {@code caching}
 * when their modules are). Found with {@link java.util.ServiceLoader}; a provider that cannot be loaded is logged and
 * skipped. Immutable and thread-safe.
 */
public final class AllocatorRegistry {

    private static final Logger LOG = LoggerFactory.getLogger(AllocatorRegistry.class);

    private final Map<String, AllocatorProvider> providers;

    private AllocatorRegistry(Map<String, AllocatorProvider> providers) {
        this.providers = providers;
    }

    /** The providers registered on the context class loader. */
    public static AllocatorRegistry load() {
        ClassLoader cl = Thread.currentThread().getContextClassLoader();
        return load(cl != null ? cl : AllocatorRegistry.class.getClassLoader());
    }

    /** The providers registered on {@code loader}. */
    public static AllocatorRegistry load(ClassLoader loader) {
        return of(ServiceDiscovery.load(AllocatorProvider.class, loader, LOG));
    }

    /** A registry of exactly these providers. */
    public static AllocatorRegistry of(List<? extends AllocatorProvider> list) {
        return new AllocatorRegistry(ServiceDiscovery.byName(list, AllocatorProvider::name, LOG));
    }

    /** Names, in discovery order. */
    public List<String> names() {
        return List.copyOf(providers.keySet());
    }

    /** All providers, in discovery order. */
    public List<AllocatorProvider> providers() {
        return List.copyOf(providers.values());
    }

    /**
     * The provider with this name.
     *
     * @throws InvalidConfigurationException naming the known allocators if there is none
     */
    public AllocatorProvider get(String name) {
        AllocatorProvider p = providers.get(name);
        if (p == null) {
            throw new InvalidConfigurationException("allocator", name, "unknown allocator '" + name
                    + "'; available: " + (providers.isEmpty() ? "(none on the class path)"
                    : String.join(", ", providers.keySet())));
        }
        return p;
    }
}
