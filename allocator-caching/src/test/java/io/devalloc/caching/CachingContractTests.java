package io.devalloc.caching;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.DeviceAllocatorContract;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;

/** The project's allocator contract on the caching allocator, in several configurations, on sim and host memory. */
class CachingContractTests {

    abstract static class OnSim extends DeviceAllocatorContract {
        abstract String config();

        @Override
        protected DeviceMemory openDevice() {
            return SimulatedDevice.ofCapacity(ByteSize.GiB);
        }

        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new CachingAllocatorProvider().create(device, config());
        }

        @AfterEach
        void arenaInvariantsHold() {
            if (!allocator.isClosed()) {
                CachingInvariants.check((CachingArena) allocator);
            }
        }
    }

    @Nested
    class Defaults extends OnSim {
        @Override
        String config() {
            return "";
        }
    }

    @Nested
    class ExpandableSegments extends OnSim {
        @Override
        String config() {
            return "expandable_segments:True";
        }
    }

    @Nested
    class MaxSplitSizeAndRoundup extends OnSim {
        @Override
        String config() {
            return "max_split_size_mb:20,roundup_power2_divisions:[64:8,>:2]";
        }
    }

    @Nested
    class FractionAndGarbageCollection extends OnSim {
        @Override
        String config() {
            return "per_process_memory_fraction:0.9,garbage_collection_threshold:0.5";
        }
    }

    @Nested
    class OnHostMemory extends DeviceAllocatorContract {
        @Override
        protected DeviceMemory openDevice() {
            return DeviceRegistry.load().open("host:1GiB");
        }

        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new CachingAllocatorProvider().create(device, "");
        }
    }
}
