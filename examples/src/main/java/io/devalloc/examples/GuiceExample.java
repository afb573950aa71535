package io.devalloc.examples;

import com.google.inject.Guice;
import com.google.inject.Injector;
import io.devalloc.api.DevallocSettings;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.units.ByteSize;
import io.devalloc.guice.DevallocModule;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;

/**
 * Guice: install {@link DevallocModule} and inject {@link DeviceAllocator} where device memory is needed. The
 * settings (device, allocator, configuration) are given here in code; {@code new DevallocModule()} would read them
 * from the {@code devalloc.*} system properties or {@code DEVALLOC_*} environment variables instead.
 *
 * <p>The allocator is a singleton that owns its device; the application closes it once at shutdown. Guice 7 uses
 * the {@code jakarta.inject} annotations. Run it with
 * {@code java -cp examples/target/devalloc-launcher.jar io.devalloc.examples.GuiceExample}.
 *
 * <p>On JDK 24 and later, Guice 7.0.0 makes the JVM print a "terminally deprecated method in sun.misc.Unsafe"
 * warning when it generates its constructor accessors. It is harmless; {@code --sun-misc-unsafe-memory-access=allow}
 * or {@code -Dguice_bytecode_gen_option=DISABLED} on the java command line silences it.
 */
public final class GuiceExample {

    private GuiceExample() {
    }

    /** An application component that keeps embedding tables in device memory; it only knows the allocator. */
    static final class EmbeddingStore {
        private final DeviceAllocator allocator;
        private final List<Long> tables = new ArrayList<>();

        @Inject
        EmbeddingStore(DeviceAllocator allocator) {
            this.allocator = allocator;
        }

        /** Allocates a float32 table of {@code rows × dimensions} and returns its device address. */
        long addTable(long rows, long dimensions) {
            long address = allocator.malloc(rows * dimensions * Float.BYTES);
            tables.add(address);
            return address;
        }

        /** Frees every table. */
        void clear() {
            for (long address : tables) {
                allocator.free(address);
            }
            tables.clear();
        }
    }

    @SuppressWarnings("ReferenceEquality") // shows that Guice hands out one singleton instance
    public static void main(String[] args) {
        Injector injector = Guice.createInjector(new DevallocModule(new DevallocSettings("sim:8GiB", "direct", "")));
        // Nothing has been opened yet: the module opens the device when the allocator is first needed.
        EmbeddingStore store = injector.getInstance(EmbeddingStore.class);
        try (DeviceAllocator allocator = injector.getInstance(DeviceAllocator.class)) {
            System.out.println("Injected the '" + allocator.name() + "' allocator on " + allocator.device().descriptor()
                    + "; the same singleton as the store's: " + (allocator == store.allocator));
            long words = store.addTable(50_000, 768);
            long positions = store.addTable(2_048, 768);
            System.out.println("word table at " + ByteSize.hex(words) + ", position table at "
                    + ByteSize.hex(positions) + "; " + ByteSize.format(allocator.stats().allocatedBytes())
                    + " allocated");
            store.clear();
            System.out.println("after clear: " + allocator.stats().activeAllocations() + " live allocations, "
                    + allocator.stats().allocationCount() + " allocations and " + allocator.stats().freeCount()
                    + " frees in total");
        }
        System.out.println("allocator and its device closed at shutdown");
    }
}
