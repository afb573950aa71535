package io.devalloc.host;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.testkit.AllocatorReliabilityContract;

/**
 * The reliability suites for the {@code direct} allocator over real host memory: every allocation's bytes are
 * written and read back, so overlapping or freed-too-early memory shows as overwritten bytes. Host memory injects no
 * faults (the fault suite skips here; it runs on the simulator in {@code device-sim}).
 */
class DirectOnHostReliabilityTest extends AllocatorReliabilityContract {

    @Override
    protected DeviceMemory openDevice() {
        return new HostMemoryProvider().open("1GiB");
    }

    @Override
    protected DeviceAllocator createAllocator(DeviceMemory device) {
        return new DirectAllocatorProvider().create(device, "");
    }

    @Override
    protected String configuration() {
        return "direct on host memory";
    }
}
