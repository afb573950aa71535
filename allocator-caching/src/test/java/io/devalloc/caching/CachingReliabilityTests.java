package io.devalloc.caching;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.host.CachingHostAllocatorProvider;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.AllocatorReliabilityContract;
import io.devalloc.testkit.DeviceProbe;
import org.junit.jupiter.api.Disabled;
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

        @Test
        @Disabled("issue 15 defect 1: recordHistory(Integer.MAX_VALUE) throws OutOfMemoryError (Requested array size"
                + " exceeds VM limit), which ends the test JVM")
        @Override
        protected void hugeMaxEntriesGrowsAsNeeded() {
            super.hugeMaxEntriesGrowsAsNeeded();
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

        /*
         * Found by this suite on the base of the fixes (seed 0x150015, operation 649): an event creation that runs
         * out during a cache release leaves the device with 20 MiB mapped more than the allocator's reserved bytes.
         */
        @Test
        @Disabled("issue 15 defect 7: after a failed device call on the unmap path (here createEvent running out)"
                + " the expandable segment's books differ from the device's: reserved 98,566,144 B,"
                + " mapped 119,537,664 B")
        @Override
        protected void faultInjection() {
            super.faultInjection();
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
