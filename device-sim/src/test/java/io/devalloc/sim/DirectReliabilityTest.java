package io.devalloc.sim;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.units.ByteSize;
import io.devalloc.testkit.AllocatorReliabilityContract;
import io.devalloc.testkit.DeviceProbe;

/**
 * The reliability suites (model-based run, fault injection through every {@link DeviceCall} kind, races, heap) for
 * the {@code direct} allocator on the simulator, whose events complete only when a stream's work is completed.
 */
class DirectReliabilityTest extends AllocatorReliabilityContract {

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
        return new DirectAllocatorProvider().create(device, "");
    }

    @Override
    protected String configuration() {
        return "direct";
    }
}
