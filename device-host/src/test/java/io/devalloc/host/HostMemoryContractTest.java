package io.devalloc.host;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.testkit.DeviceMemoryContract;
import io.devalloc.testkit.UnmapFailure;

/**
 * The project's device contract on plain host memory, opened through the provider as users do, over the real libc
 * calls with a hook to make an unmap's {@code madvise} fail.
 */
class HostMemoryContractTest extends DeviceMemoryContract {

    private final MadviseFaults faults = new MadviseFaults();

    @Override
    protected DeviceMemory openDevice() {
        return new HostMemoryProvider(faults::calls, SystemMemory::read).open("256MiB");
    }

    @Override
    protected UnmapFailure armUnmapFailure() {
        faults.failNextMadvise();
        return UnmapFailure.armed();
    }
}
