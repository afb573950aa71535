package io.devalloc.api.spi;

import io.devalloc.api.ProviderStatus;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.internal.Failures;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device providers on the class path, and the choice between them.
 *
 * <p>{@link #load()} finds providers with {@link java.util.ServiceLoader}. A provider that cannot be instantiated is
 * logged and skipped (it does not stop the others), and of two providers with the same name the first wins, with a
 * warning. {@link #open(String)} opens a device from a spec ({@link DeviceSpec}); for {@code auto} it takes the
 * available provider with the highest priority, logging every candidate and why it was or wasn't chosen.
 *
 * <p>Immutable after construction and thread-safe. Probes run through {@link #probe(DeviceMemoryProvider)}, which
 * turns a probe that throws into "unavailable" with the exception as the reason.
 */
public final class DeviceRegistry {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceRegistry.class);

    private final Map<String, DeviceMemoryProvider> providers;

    private DeviceRegistry(Map<String, DeviceMemoryProvider> providers) {
        this.providers = providers;
    }

    /** The providers registered for {@link java.util.ServiceLoader} on the context class loader. */
    public static DeviceRegistry load() {
        ClassLoader cl = Thread.currentThread().getContextClassLoader();
        return load(cl != null ? cl : DeviceRegistry.class.getClassLoader());
    }

    /** The providers registered for {@link java.util.ServiceLoader} on {@code loader}. */
    public static DeviceRegistry load(ClassLoader loader) {
        return of(ServiceDiscovery.load(DeviceMemoryProvider.class, loader, LOG));
    }

    /** A registry of exactly these providers (for tests and for applications that wire providers by hand). */
    public static DeviceRegistry of(List<? extends DeviceMemoryProvider> list) {
        return new DeviceRegistry(ServiceDiscovery.byName(list, DeviceMemoryProvider::name, LOG));
    }

    /** Provider names, in discovery order. */
    public List<String> names() {
        return List.copyOf(providers.keySet());
    }

    /** The provider with this name, or null. */
    public DeviceMemoryProvider provider(String name) {
        return providers.get(name);
    }

    /** Probes a provider without ever throwing. */
    public static Availability probe(DeviceMemoryProvider provider) {
        try {
            Availability a = provider.probe();
            return a != null ? a
                    : Availability.unavailable("the probe of provider '" + provider.name() + "' returned nothing");
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable t) {
            return Availability.unavailable("the probe failed: " + Failures.describe(t));
        }
    }

    /** A provider's priority, or 0 when asking for it fails (a broken provider must not break the choice). */
    static int priorityOf(DeviceMemoryProvider p) {
        try {
            return p.priority();
        } catch (RuntimeException | LinkageError e) {
            return 0;
        }
    }

    private static String text(Supplier<String> s) {
        try {
            return String.valueOf(s.get());
        } catch (RuntimeException | LinkageError e) {
            return "(failed: " + Failures.describe(e) + ")";
        }
    }

    /** Every provider with its availability, highest priority first. Never throws for a broken provider. */
    public List<ProviderStatus> describe() {
        List<ProviderStatus> out = new ArrayList<>();
        for (DeviceMemoryProvider p : byPriority()) {
            Availability a = probe(p);
            int count = 0;
            if (a.available()) {
                try {
                    count = p.deviceCount();
                } catch (RuntimeException | LinkageError e) {
                    a = Availability.unavailable("counting devices failed: " + Failures.describe(e));
                }
            }
            out.add(new ProviderStatus(p.name(), text(p::description), priorityOf(p), a, count, text(p::argumentHelp),
                    p.getClass().getName()));
        }
        return out;
    }

    private List<DeviceMemoryProvider> byPriority() {
        List<DeviceMemoryProvider> list = new ArrayList<>(providers.values());
        list.sort(Comparator.comparingInt(DeviceRegistry::priorityOf).reversed()
                .thenComparing(DeviceMemoryProvider::name));
        return list;
    }

    /**
     * Resolves a spec to a provider and argument: the named provider, or for {@code auto} the available one with
     * the highest priority. Every candidate is logged at info level with the reason it was or wasn't chosen.
     *
     * @throws DeviceUnavailableException if the named provider is unknown or unavailable, or none is available
     */
    public DeviceSpec resolve(String spec) {
        DeviceSpec parsed = DeviceSpec.parse(spec);
        if (!parsed.isAuto()) {
            DeviceMemoryProvider p = providers.get(parsed.provider());
            if (p == null) {
                throw new DeviceUnavailableException("unknown device provider '" + parsed.provider() + "' in spec '"
                        + spec + "'; known providers: " + (providers.isEmpty() ? "(none on the class path)"
                        : String.join(", ", providers.keySet())) + ". Run 'devalloc devices' to see them all.");
            }
            Availability a = probe(p);
            if (!a.available()) {
                LOG.info("device candidate '{}' (priority {}): unavailable: {}", p.name(), priorityOf(p), a.reason());
                throw new DeviceUnavailableException(
                        "device provider '" + p.name() + "' is unavailable: " + a.reason());
            }
            LOG.info("device candidate '{}' (priority {}): chosen by name ({})", p.name(), priorityOf(p), a.reason());
            return parsed;
        }
        DeviceMemoryProvider chosen = null;
        List<String> reasons = new ArrayList<>();
        for (DeviceMemoryProvider p : byPriority()) {
            Availability a = probe(p);
            if (!a.available()) {
                LOG.info("device candidate '{}' (priority {}): not chosen, unavailable: {}", p.name(), priorityOf(p),
                        a.reason());
                reasons.add(p.name() + ": " + a.reason());
            } else if (chosen == null) {
                chosen = p;
                LOG.info("device candidate '{}' (priority {}): chosen, highest available priority ({})", p.name(),
                        priorityOf(p), a.reason());
            } else {
                LOG.info("device candidate '{}' (priority {}): available but not chosen, '{}' has priority {}",
                        p.name(), priorityOf(p), chosen.name(), priorityOf(chosen));
            }
        }
        if (chosen == null) {
            throw new DeviceUnavailableException("no device provider is available"
                    + (reasons.isEmpty() ? " (none on the class path: add device-sim, device-host or device-cuda)"
                    : ": " + String.join("; ", reasons)));
        }
        return new DeviceSpec(chosen.name(), "");
    }

    /**
     * Opens a device from a spec such as {@code sim:80GiB}, {@code host}, {@code cuda:0} or {@code auto}.
     * The caller owns (and closes) the device.
     */
    public DeviceMemory open(String spec) {
        DeviceSpec resolved = resolve(spec);
        DeviceMemory device = providers.get(resolved.provider()).open(resolved.argument());
        LOG.info("opened device {}", device.descriptor());
        return device;
    }
}
