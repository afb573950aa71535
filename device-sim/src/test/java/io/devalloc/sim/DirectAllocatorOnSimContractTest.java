package io.devalloc.sim;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.units.ByteSize;
import io.devalloc.testkit.DeviceAllocatorContract;

class DirectAllocatorOnSimContractTest extends DeviceAllocatorContract {

    @Override
    protected DeviceMemory openDevice() {
        return SimulatedDevice.ofCapacity(ByteSize.GiB);
    }

    @Override
    protected DeviceAllocator createAllocator(DeviceMemory device) {
        return new DirectAllocatorProvider().create(device, "");
    }
}
