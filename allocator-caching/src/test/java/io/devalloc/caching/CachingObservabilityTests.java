package io.devalloc.caching;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.host.CachingHostAllocatorProvider;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.AllocatorObservabilityContract;
import java.util.Map;
import org.junit.jupiter.api.Nested;

/**
 * The observability contract (listener, out-of-memory handler, thresholds) on caching, with and without expandable
 * segments (maps and unmaps) and garbage collection, and on caching-host.
 */
class CachingObservabilityTests {

    abstract static class OnSim extends AllocatorObservabilityContract {
        @Override
        protected DeviceMemory openDevice() {
            return SimulatedDevice.ofCapacity(ByteSize.GiB);
        }

        @Override
        protected AllocatorProvider allocatorProvider() {
            return new CachingAllocatorProvider(Map.of());
        }
    }

    @Nested
    class Defaults extends OnSim {
    }

    @Nested
    class ExpandableSegments extends OnSim {
        @Override
        protected String config() {
            return "expandable_segments:True";
        }
    }

    @Nested
    class FractionAndGarbageCollection extends OnSim {
        @Override
        protected String config() {
            return "per_process_memory_fraction:0.9,garbage_collection_threshold:0.5";
        }
    }

    /** caching-host rounds to powers of two: on 768 MiB, 5/8 of the device rounds to 512 MiB, not all of it. */
    @Nested
    class Host extends AllocatorObservabilityContract {
        @Override
        protected DeviceMemory openDevice() {
            return SimulatedDevice.ofCapacity(768 * ByteSize.MiB);
        }

        @Override
        protected AllocatorProvider allocatorProvider() {
            return new CachingHostAllocatorProvider();
        }
    }

    @Nested
    class HostWithReserveSegment extends AllocatorObservabilityContract {
        @Override
        protected DeviceMemory openDevice() {
            return SimulatedDevice.ofCapacity(768 * ByteSize.MiB);
        }

        @Override
        protected AllocatorProvider allocatorProvider() {
            return new CachingHostAllocatorProvider();
        }

        @Override
        protected String config() {
            return "pinned_reserve_segment_size_mb:16";
        }
    }
}
