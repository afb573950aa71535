package io.devalloc.host;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.testkit.DeviceMemoryContract;

/** The project's device contract on plain host memory, opened through the provider as users do. */
class HostMemoryContractTest extends DeviceMemoryContract {

    @Override
    protected DeviceMemory openDevice() {
        return new HostMemoryProvider().open("256MiB");
    }
}
