package io.devalloc.host;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.testkit.DeviceAllocatorContract;

/**
 * The allocator contract for the {@code direct} allocator over real host memory: every pattern the suite writes
 * goes to native memory, so overlapping allocations would show up as overwritten bytes.
 */
class DirectAllocatorOnHostContractTest extends DeviceAllocatorContract {

    @Override
    protected DeviceMemory openDevice() {
        return new HostMemoryProvider().open("256MiB");
    }

    @Override
    protected DeviceAllocator createAllocator(DeviceMemory device) {
        return new DirectAllocatorProvider().create(device, "");
    }
}
