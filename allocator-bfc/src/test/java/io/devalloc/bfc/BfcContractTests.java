package io.devalloc.bfc;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.DeviceAllocatorContract;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;

/** The project's allocator contract on BFC, in each of its modes, on the simulated device and on host memory. */
class BfcContractTests {

    abstract static class OnSim extends DeviceAllocatorContract {
        abstract String config();

        @Override
        protected DeviceMemory openDevice() {
            return SimulatedDevice.ofCapacity(ByteSize.GiB);
        }

        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new BfcAllocatorProvider(Map.of()).create(device, config());
        }

        @AfterEach
        void arenaInvariantsHold() {
            if (!allocator.isClosed()) {
                BfcArenaInvariants.check((BfcArena) allocator);
            }
        }
    }

    @Nested
    class Preallocated extends OnSim {
        @Override
        String config() {
            return "retry_timeout_ms:50";
        }
    }

    @Nested
    class Growing extends OnSim {
        @Override
        String config() {
            return "allow_growth:true,virtual_memory:false,retry_timeout_ms:50";
        }
    }

    @Nested
    class GrowingOnVirtualMemory extends OnSim {
        @Override
        String config() {
            return "allow_growth:true,virtual_memory:true,retry_timeout_ms:50";
        }
    }

    @Nested
    class Timestamped extends OnSim {
        @Override
        String config() {
            return "allow_growth:true,timestamped:true,retry_timeout_ms:50";
        }
    }

    @Nested
    class SmallFragmentationCap extends OnSim {
        @Override
        String config() {
            return "allow_growth:true,fragmentation_fraction:0.001,garbage_collection:false,retry_timeout_ms:0";
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
            return new BfcAllocatorProvider(Map.of()).create(device, "allow_growth:true,retry_timeout_ms:50");
        }
    }
}
