package io.devalloc.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.inject.Guice;
import io.devalloc.api.DevallocSettings;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.bfc.BfcAllocator;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.guice.DevallocModule;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every allocator on the class path is reachable through the SPI, the builder and the Guice module. */
class AllocatorWiringTest {

    @Test
    void serviceLoaderFindsDirectAndBfc() {
        assertTrue(AllocatorRegistry.load().names().containsAll(List.of("direct", "bfc", "caching")));
    }

    @Test
    void theBuilderMakesABfcAllocatorThatOwnsItsDevice() {
        try (DeviceAllocator a = DeviceAllocators.open("sim:4GiB", "bfc", "allow_growth:true")) {
            BfcAllocator bfc = assertInstanceOf(BfcAllocator.class, a);
            assertTrue(bfc.options().allowGrowth());
            bfc.free(bfc.malloc(1000));
            assertEquals(2L << 20, bfc.bfcStats().poolBytes(), "growth starts with a 2 MiB region");
        }
    }

    @Test
    void theGuiceModuleInjectsCachingWithPyTorchOptions() {
        DeviceAllocator a = Guice.createInjector(new DevallocModule(new DevallocSettings("sim:4GiB", "caching",
                "max_split_size_mb:64,expandable_segments:True"))).getInstance(DeviceAllocator.class);
        try {
            CachingAllocator c = assertInstanceOf(CachingAllocator.class, a);
            assertEquals(64L << 20, c.options().maxSplitSize());
            assertTrue(c.options().expandableSegments());
            c.free(c.malloc(1000));
            assertEquals(64L << 20, c.memoryStats().get("max_split_size"));
        } finally {
            a.close();
        }
    }

    @Test
    void theGuiceModuleInjectsBfc() {
        DeviceAllocator a = Guice.createInjector(new DevallocModule(new DevallocSettings("sim:4GiB", "bfc",
                "garbage_collection:false"))).getInstance(DeviceAllocator.class);
        try {
            BfcAllocator bfc = assertInstanceOf(BfcAllocator.class, a);
            assertTrue(!bfc.options().garbageCollection());
            assertEquals("sim:0", bfc.device().descriptor().id());
        } finally {
            a.close();
        }
    }
}
