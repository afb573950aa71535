package io.devalloc.sim.broken;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimDeviceProbe;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.AllocatorReliabilityContract;
import io.devalloc.testkit.DeviceProbe;
import java.util.ArrayList;
import java.util.List;

/**
 * Reliability-suite subclasses over deliberately broken allocators. Their names do not end in "Test", so Surefire
 * does not run them; {@link ReliabilityCatchesViolationsTest} runs them through the JUnit engine and expects
 * failures.
 */
final class BrokenReliabilityFixtures {

    private BrokenReliabilityFixtures() {
    }

    abstract static class OnSim extends AllocatorReliabilityContract {
        @Override
        protected DeviceMemory openDevice() {
            return SimulatedDevice.builder().capacity(ByteSize.GiB).eventCompletion(EventCompletion.MANUAL).build();
        }

        @Override
        protected DeviceProbe probe(DeviceMemory device) {
            return new SimDeviceProbe((SimulatedDevice) device);
        }

        DeviceAllocator direct(DeviceMemory device) {
            return new DirectAllocatorProvider().create(device, "");
        }
    }

    /** Overlaps every third allocation with the one before (the contract's fixture, in the model-based run). */
    static class Overlapping extends OnSim {
        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new BrokenAllocatorFixtures.Overlapping().createAllocator(device);
        }
    }

    /** Reports one allocation too many once anything was freed. */
    static class MiscountingStats extends OnSim {
        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new BrokenAllocatorFixtures.MiscountingStats().createAllocator(device);
        }
    }

    /**
     * Answers a free whose device call failed as if it had succeeded: the caller drops the allocation while the
     * allocator (and the device) still hold it, so the books no longer agree after a fault.
     */
    static class SwallowsDeviceErrors extends OnSim {
        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new ForwardingAllocator(direct(device)) {
                @Override
                public void free(long address) {
                    try {
                        delegate.free(address);
                    } catch (DeviceException ignored) {
                        // the bug under test
                    }
                }
            };
        }
    }

    /** Keeps 4 KiB of Java heap for every allocation it ever made: the heap grows with the run. */
    static class HoardsHeap extends OnSim {
        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new ForwardingAllocator(direct(device)) {
                private final List<byte[]> hoard = new ArrayList<>();

                @Override
                public synchronized long malloc(long bytes, DeviceStream stream) {
                    long address = delegate.malloc(bytes, stream);
                    hoard.add(new byte[4096]);
                    return address;
                }
            };
        }
    }
}
