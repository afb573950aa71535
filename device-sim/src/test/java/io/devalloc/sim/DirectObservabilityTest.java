package io.devalloc.sim;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.units.ByteSize;
import io.devalloc.testkit.AllocatorObservabilityContract;

/** The observability contract (listener, out-of-memory handler, thresholds) on the direct allocator. */
class DirectObservabilityTest extends AllocatorObservabilityContract {

    @Override
    protected DeviceMemory openDevice() {
        return SimulatedDevice.ofCapacity(ByteSize.GiB);
    }

    @Override
    protected AllocatorProvider allocatorProvider() {
        return new DirectAllocatorProvider();
    }
}
