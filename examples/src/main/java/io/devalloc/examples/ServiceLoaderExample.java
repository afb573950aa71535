package io.devalloc.examples;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.registry.AllocatorRegistry;
import io.devalloc.api.registry.DeviceRegistry;
import io.devalloc.api.registry.DeviceSpec;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.units.ByteSize;
import java.util.ServiceLoader;

/**
 * How devices and allocators are plugged in. Adapter modules (device-sim, device-host, device-cuda) and
 * allocator modules list their {@link DeviceMemoryProvider} and {@link AllocatorProvider} implementations in
 * {@code META-INF/services}; putting a module's jar on the class path is all it takes to add it.
 *
 * <p>The example first asks {@link ServiceLoader} directly, to show there is nothing more to discovery, then uses
 * {@link DeviceRegistry}, which adds what applications need on top: skipping a provider that fails to load,
 * probing availability without throwing, and choosing by name ({@code sim:4GiB}) or by priority ({@code auto}).
 * Opened this way the caller owns the device and closes it itself, after the allocator built over it. Run it
 * with {@code java -cp examples/target/devalloc-launcher.jar io.devalloc.examples.ServiceLoaderExample}.
 */
public final class ServiceLoaderExample {

    private ServiceLoaderExample() {
    }

    public static void main(String[] args) {
        System.out.println("Device providers registered with ServiceLoader:");
        for (ServiceLoader.Provider<DeviceMemoryProvider> found : ServiceLoader.load(DeviceMemoryProvider.class)
                .stream().toList()) {
            DeviceMemoryProvider provider = found.get();
            // Constructing a provider does no work; probe() is where it looks for hardware.
            Availability availability = DeviceRegistry.probe(provider);
            System.out.println("  " + provider.name() + " (priority " + provider.priority() + ", "
                    + found.type().getName() + "): " + (availability.available() ? "available" : "unavailable")
                    + ", " + availability.reason());
        }
        System.out.println("Allocator providers registered with ServiceLoader:");
        for (AllocatorProvider provider : ServiceLoader.load(AllocatorProvider.class)) {
            System.out.println("  " + provider.name() + ": " + provider.description());
        }

        DeviceRegistry devices = DeviceRegistry.load();
        AllocatorProvider direct = AllocatorRegistry.load().get("direct");

        // By name: the spec's argument (here a capacity) goes to the provider.
        // Resources close in reverse order: the allocator first, then the device it allocated from.
        try (DeviceMemory sim = devices.open("sim:4GiB");
             DeviceAllocator allocator = direct.create(sim, "")) {
            long address = allocator.malloc(ByteSize.GiB);
            System.out.println("by name 'sim:4GiB': " + sim.descriptor() + ", allocated 1 GiB at "
                    + ByteSize.hex(address) + ", device now has " + ByteSize.format(sim.memoryInfo().freeBytes())
                    + " free");
            allocator.free(address);
        }

        // By priority: 'auto' resolves to the available provider with the highest priority.
        DeviceSpec best = devices.resolve(DeviceSpec.AUTO);
        try (DeviceMemory device = devices.open(DeviceSpec.AUTO);
             DeviceAllocator allocator = direct.create(device, "")) {
            long address = allocator.malloc(64 * ByteSize.MiB);
            System.out.println("by 'auto': provider '" + best.provider() + "', " + device.descriptor()
                    + ", allocated 64 MiB at " + ByteSize.hex(address));
            allocator.free(address);
            System.out.println("  allocator stats: " + allocator.stats().allocationCount() + " allocation, "
                    + allocator.stats().freeCount() + " free");
        }
    }
}
