package io.devalloc.api.spi;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * What both registries do with {@link ServiceLoader}: load every implementation, skipping (and logging) one that
 * cannot be instantiated so that it does not stop the others, and index them by name, first one winning.
 * Stateless and thread-safe.
 */
final class ServiceDiscovery {

    private ServiceDiscovery() {
    }

    static <T> List<T> load(Class<T> type, ClassLoader loader, Logger log) {
        List<T> found = new ArrayList<>();
        Iterator<T> it = ServiceLoader.load(type, loader).iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    break;
                }
                found.add(it.next());
            } catch (ServiceConfigurationError | LinkageError e) {
                log.warn("skipping a {} that could not be loaded: {}", type.getSimpleName(), e.toString());
            }
        }
        return found;
    }

    static <T> Map<String, T> byName(List<? extends T> providers, Function<T, String> name, Logger log) {
        Map<String, T> map = new LinkedHashMap<>();
        for (T p : providers) {
            String n;
            try {
                n = name.apply(p);
            } catch (RuntimeException | LinkageError e) {
                log.warn("skipping provider {}: its name() failed: {}", p.getClass().getName(), e.toString());
                continue;
            }
            T previous = map.putIfAbsent(n, p);
            if (previous != null) {
                log.warn("two providers are named '{}': using {}, ignoring {}", name.apply(p),
                        previous.getClass().getName(), p.getClass().getName());
            }
        }
        return map;
    }
}
