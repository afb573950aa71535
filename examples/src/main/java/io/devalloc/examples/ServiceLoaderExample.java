package io.devalloc.examples;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.ProviderStatus;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.units.ByteSize;
import java.util.ServiceLoader;

/**
 * How devices and allocators are plugged in. Adapter modules (device-sim, device-host, device-cuda) and
 * allocator modules list their {@link DeviceMemoryProvider} and {@link AllocatorProvider} implementations in
 * {@code META-INF/services} (and {@code provides} them in their module descriptors); putting a module's jar on the
 * class path or module path is all it takes to add it.
 *
 * <p>The example first asks {@link ServiceLoader} directly, to show there is nothing more to discovery, then uses
 * {@link DeviceAllocators}, which adds what applications need on top: skipping a provider that fails to load,
 * probing availability without throwing ({@link DeviceAllocators#devices()}), and choosing by name
 * ({@code sim:4GiB}) or by priority ({@code auto}). The allocator it builds owns its device. Run it with
 * {@code java -cp examples/target/devalloc-launcher.jar io.devalloc.examples.ServiceLoaderExample} (Java 25).
 */
public final class ServiceLoaderExample {

    private ServiceLoaderExample() {
    }

    public static void main(String[] args) {
        System.out.println("Device providers registered with ServiceLoader:");
        for (ServiceLoader.Provider<DeviceMemoryProvider> found : ServiceLoader.load(DeviceMemoryProvider.class)
                .stream().toList()) {
            // Constructing a provider does no work; probe() is where it looks for hardware.
            System.out.println("  " + found.get().name() + " (" + found.type().getName() + ")");
        }
        System.out.println("Allocator providers registered with ServiceLoader:");
        for (AllocatorProvider provider : ServiceLoader.load(AllocatorProvider.class)) {
            System.out.println("  " + provider.name() + ": " + provider.description());
        }

        System.out.println("Probed, highest priority first (what 'auto' picks comes first):");
        for (ProviderStatus status : DeviceAllocators.devices()) {
            System.out.println("  " + status.name() + " (priority " + status.priority() + "): "
                    + (status.availability().available() ? "available" : "unavailable") + ", "
                    + status.availability().reason());
        }

        // By name: the spec's argument (here a capacity) goes to the provider.
        try (DeviceAllocator allocator = DeviceAllocators.open("sim:4GiB", "direct", "")) {
            DeviceMemory sim = allocator.device();
            long address = allocator.malloc(ByteSize.GiB);
            System.out.println("by name 'sim:4GiB': " + sim.descriptor() + ", allocated 1 GiB at "
                    + ByteSize.hex(address) + ", device now has " + ByteSize.format(sim.memoryInfo().freeBytes())
                    + " free");
            allocator.free(address);
        }

        // By priority: 'auto' resolves to the available provider with the highest priority.
        try (DeviceAllocator allocator = DeviceAllocators.open("auto", "direct", "")) {
            long address = allocator.malloc(64 * ByteSize.MiB);
            System.out.println("by 'auto': " + allocator.device().descriptor() + ", allocated 64 MiB at "
                    + ByteSize.hex(address));
            allocator.free(address);
            System.out.println("  allocator stats: " + allocator.stats().allocationCount() + " allocation, "
                    + allocator.stats().freeCount() + " free");
        }
    }
}
