package io.devalloc.bfc;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.AllocatorObservabilityContract;
import java.util.Map;
import org.junit.jupiter.api.Nested;

/** The observability contract (listener, out-of-memory handler, thresholds) on bfc, in several configurations. */
class BfcObservabilityTests {

    abstract static class OnSim extends AllocatorObservabilityContract {
        @Override
        protected DeviceMemory openDevice() {
            return SimulatedDevice.ofCapacity(ByteSize.GiB);
        }

        @Override
        protected AllocatorProvider allocatorProvider() {
            return new BfcAllocatorProvider(Map.of());
        }
    }

    @Nested
    class Preallocated extends OnSim {
        @Override
        protected String config() {
            return "retry_timeout_ms:20";
        }
    }

    @Nested
    class GrowingWithMalloc extends OnSim {
        @Override
        protected String config() {
            return "allow_growth:true,virtual_memory:false,retry_timeout_ms:20";
        }
    }

    @Nested
    class GrowingOnVirtualMemory extends OnSim {
        @Override
        protected String config() {
            return "allow_growth:true,virtual_memory:true,retry_timeout_ms:20";
        }
    }
}
