package io.devalloc.bfc;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimDeviceProbe;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.AllocatorReliabilityContract;
import io.devalloc.testkit.DeviceProbe;
import java.util.Map;
import org.junit.jupiter.api.Nested;

/**
 * The reliability suites (model-based run, fault injection through every device call kind, races, heap) for BFC in
 * each configuration the issue names, on the simulator. Every configuration adds {@code retry_timeout_ms:0}: the
 * runs are single-threaded (or their frees come from the racing threads anyway), so a retry could only wait its
 * 10 s for a free that never comes.
 */
class BfcReliabilityTests {

    abstract static class OnSim extends AllocatorReliabilityContract {
        abstract String config();

        @Override
        protected DeviceMemory openDevice() {
            return SimulatedDevice.builder().capacity(ByteSize.GiB).eventCompletion(EventCompletion.MANUAL).build();
        }

        @Override
        protected DeviceProbe probe(DeviceMemory device) {
            return new SimDeviceProbe((SimulatedDevice) device);
        }

        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            String retry = "retry_timeout_ms:0";
            String config = config().isEmpty() ? retry : config() + "," + retry;
            return new BfcAllocatorProvider(Map.of()).create(device, config);
        }

        @Override
        protected String configuration() {
            return "bfc " + (config().isEmpty() ? "default" : config());
        }

        /**
         * TensorFlow's BFC counts a region as the bytes it asked of the device (the GPU sub-allocator's
         * {@code bytes_received} is {@code num_bytes}), while the simulator, as {@code cudaMalloc}, rounds each
         * malloc up to its 512 B granule. Regions are whole MiB until the device refuses one: then the 10% backpedal
         * can ask for an odd multiple of 256 B, and the device holds 256 B more than the pool counts (found by the
         * 10-million-operation fault run of {@code allow_growth:true}, at operation 5,004,504). Regions of virtual
         * memory are counted as mapped, whole granules, so there the check stays exact.
         */
        @Override
        protected boolean reservedExcludesDeviceRounding() {
            return !config().contains("virtual_memory:true");
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
    class Growing extends OnSim {
        @Override
        String config() {
            return "allow_growth:true";
        }
    }

    @Nested
    class Timestamped extends OnSim {
        @Override
        String config() {
            return "timestamped:true";
        }
    }

    @Nested
    class VirtualMemory extends OnSim {
        @Override
        String config() {
            return "virtual_memory:true";
        }
    }
}
