package io.devalloc.caching;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.host.CachingHostAllocatorProvider;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimDeviceProbe;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.AllocatorReliabilityContract;
import io.devalloc.testkit.DeviceProbe;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The reliability suites (model-based run, fault injection through every device call kind, races, heap) for
 * {@code caching} in the configurations the issue names and for {@code caching-host}, on the simulator, whose
 * events complete only when a stream's work is completed.
 */
class CachingReliabilityTests {

    abstract static class OnSim extends AllocatorReliabilityContract {
        @Override
        protected DeviceMemory openDevice() {
            return SimulatedDevice.builder().capacity(ByteSize.GiB).eventCompletion(EventCompletion.MANUAL).build();
        }

        @Override
        protected DeviceProbe probe(DeviceMemory device) {
            return new SimDeviceProbe((SimulatedDevice) device);
        }
    }

    abstract static class Caching extends OnSim {
        abstract String config();

        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new CachingAllocatorProvider().create(device, config());
        }

        @Override
        protected String configuration() {
            return "caching " + (config().isEmpty() ? "default" : config());
        }

        @Override
        protected boolean recordHistory(DeviceAllocator allocator, int maxEntries) {
            allocator.unwrap(CachingAllocator.class).orElseThrow().recordHistory(maxEntries);
            return true;
        }

    }

    @Nested
    class Defaults extends Caching {
        @Override
        String config() {
            return "";
        }
    }

    @Nested
    class ExpandableSegments extends Caching {
        @Override
        String config() {
            return "expandable_segments:True";
        }

        @Override
        protected boolean liveBlocksMapped() {
            return true;
        }
    }

    @Nested
    class MaxSplitSizeAndRoundup extends Caching {
        @Override
        String config() {
            return "max_split_size_mb:128,roundup_power2_divisions:4";
        }
    }

    @Nested
    class CachingHost extends OnSim {
        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new CachingHostAllocatorProvider().create(device, "");
        }

        @Override
        protected String configuration() {
            return "caching-host default";
        }

        /** PyTorch's host allocator counts the size it asked {@code cudaHostAlloc} for, not the device's rounding. */
        @Override
        protected boolean reservedExcludesDeviceRounding() {
            return true;
        }
    }
}
