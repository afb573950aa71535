package io.devalloc.host;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.testkit.DeviceMemoryContract;

/**
 * The project's device contract on pinned host memory. The suite keeps up to a few tens of MiB live, which is
 * above the usual 8 MiB RLIMIT_MEMLOCK: it passes here because the tests run with CAP_IPC_LOCK.
 */
class PinnedHostMemoryContractTest extends DeviceMemoryContract {

    @Override
    protected DeviceMemory openDevice() {
        return new PinnedHostMemoryProvider().open("256MiB");
    }
}
