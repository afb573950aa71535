package io.devalloc.sim.broken;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.spi.ForwardingDeviceMemory;
import io.devalloc.api.spi.ForwardingVirtualMemory;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.DeviceCall;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.DeviceMemoryContract;
import io.devalloc.testkit.UnmapFailure;
import java.util.Optional;

/**
 * Device contract subclasses over deliberately broken devices. Their names do not end in "Test", so Surefire does
 * not run them; {@link ContractCatchesViolationsTest} runs them through the JUnit engine and expects failures.
 */
final class BrokenDeviceFixtures {

    private BrokenDeviceFixtures() {
    }

    /**
     * Leaves the range of a failed unmap mapped (the simulator unmaps it, and this device maps it back before
     * reporting the failure), as an adapter would that kept its bookkeeping when the driver failed.
     */
    static class MappedAfterFailedUnmap extends DeviceMemoryContract {
        private SimulatedDevice sim;

        @Override
        protected DeviceMemory openDevice() {
            sim = SimulatedDevice.ofCapacity(ByteSize.GiB);
            VirtualMemory keepsFailedRanges = new ForwardingVirtualMemory(sim.virtualMemory().orElseThrow()) {
                @Override
                public void unmap(long address, long bytes) {
                    try {
                        delegate().unmap(address, bytes);
                    } catch (DeviceException e) {
                        delegate().map(address, bytes); // the bug under test
                        throw e;
                    }
                }
            };
            return new ForwardingDeviceMemory(sim) {
                @Override
                public Optional<VirtualMemory> virtualMemory() {
                    return Optional.of(keepsFailedRanges);
                }
            };
        }

        @Override
        protected UnmapFailure armUnmapFailure() {
            sim.failNextCallWith(DeviceCall.UNMAP, new DeviceException("injected unmap failure"));
            return UnmapFailure.armed();
        }
    }
}
