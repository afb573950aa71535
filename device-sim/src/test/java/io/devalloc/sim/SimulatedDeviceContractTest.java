package io.devalloc.sim;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.units.ByteSize;
import io.devalloc.testkit.DeviceMemoryContract;

class SimulatedDeviceContractTest extends DeviceMemoryContract {

    @Override
    protected DeviceMemory openDevice() {
        return SimulatedDevice.ofCapacity(ByteSize.GiB);
    }
}
