package io.devalloc.sim;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.testkit.DeviceMemoryContract;
import io.devalloc.testkit.UnmapFailure;

class SimulatedDeviceContractTest extends DeviceMemoryContract {

    @Override
    protected DeviceMemory openDevice() {
        return SimulatedDevice.ofCapacity(ByteSize.GiB);
    }

    @Override
    protected UnmapFailure armUnmapFailure() {
        ((SimulatedDevice) device).failNextCallWith(DeviceCall.UNMAP, new DeviceException("injected unmap failure"));
        return UnmapFailure.armed();
    }
}
