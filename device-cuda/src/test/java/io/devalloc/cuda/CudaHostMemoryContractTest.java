package io.devalloc.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.testkit.DeviceMemoryContract;
import org.junit.jupiter.api.Test;

/**
 * The project's device contract on the {@code cuda-host} variant over {@link FakeCuda}, whose
 * {@code cudaHostAlloc} hands out real native memory, so the suite writes and reads through the host views.
 */
class CudaHostMemoryContractTest extends DeviceMemoryContract {

    private FakeCuda cuda;

    @Override
    protected DeviceMemory openDevice() {
        cuda = new FakeCuda(1, 1L << 30);
        return CudaDeviceMemory.pinnedHost(cuda, 0, 256L << 20);
    }

    @Test
    void isPinnedHostMemoryWithoutVirtualMemory() {
        assertEquals(DeviceKind.PINNED_HOST, device.descriptor().kind());
        assertEquals("cuda-host", device.descriptor().provider());
        assertTrue(device.virtualMemory().isEmpty());
        device.close();
        assertEquals(0, cuda.liveAllocations());
    }
}
