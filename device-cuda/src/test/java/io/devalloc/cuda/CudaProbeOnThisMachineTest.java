package io.devalloc.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.spi.DeviceRegistry;
import java.util.List;
import java.util.ServiceLoader;
import jcuda.runtime.JCuda;
import org.junit.jupiter.api.Test;

/**
 * The real probe, on a machine without an NVIDIA driver (like the one this project is built on): both providers
 * say they are unavailable and why, nothing throws, and JCuda's runtime class still works afterwards.
 */
class CudaProbeOnThisMachineTest {

    private static final boolean NO_DRIVER =
            CudaAvailability.libraryProblem(CudaAvailability.DRIVER_LIBRARY) != null;

    @Test
    void bothProvidersAreUnavailableAndSayItIsTheDriver() {
        assumeTrue(NO_DRIVER, "this machine has an NVIDIA driver; CudaGpuIntegrationTest covers it");
        List<DeviceMemoryProvider> providers = ServiceLoader.load(DeviceMemoryProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.name().startsWith("cuda"))
                .toList();
        assertEquals(2, providers.size());
        for (DeviceMemoryProvider p : providers) {
            Availability a = p.probe();
            assertFalse(a.available(), p.name());
            assertTrue(a.reason().contains("driver"), a.reason());
            assertTrue(a.reason().contains("libcuda.so.1"), a.reason());
            assertEquals(0, p.deviceCount());
            DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class, () -> p.open(""));
            assertTrue(e.getMessage().contains(a.reason()), e.getMessage());
        }
    }

    @Test
    void theRegistryListsThemWithTheReasonAndAutoDoesNotPickThem() {
        assumeTrue(NO_DRIVER, "this machine has an NVIDIA driver");
        DeviceRegistry registry = DeviceRegistry.load();
        assertTrue(registry.names().containsAll(List.of("cuda", "cuda-host")), registry.names().toString());
        Availability a = DeviceRegistry.probe(registry.provider("cuda"));
        assertFalse(a.available());
        assertTrue(a.reason().startsWith("no NVIDIA driver"), a.reason());
    }

    @Test
    void jcudasRuntimeClassStillWorksAfterTheProbe() {
        assumeTrue(NO_DRIVER, "this machine has an NVIDIA driver");
        assertNotNull(new CudaDeviceMemoryProvider().probe());
        assertNotNull(new CudaHostMemoryProvider().probe());
        int[] count = {-1};
        int rc = JCuda.cudaGetDeviceCount(count);
        assertEquals(35, rc, "cudaErrorInsufficientDriver, as a code: exceptions stay disabled");
        assertEquals("cudaErrorInsufficientDriver", JCuda.cudaGetErrorName(rc));
        assertEquals(35, JCuda.cudaGetDeviceCount(count), "and again");
    }
}
