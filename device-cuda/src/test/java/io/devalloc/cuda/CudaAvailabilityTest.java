package io.devalloc.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.devalloc.api.error.DeviceUnavailableException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The probe's order, its answers and its caching, with the library check and the CUDA calls substituted. */
class CudaAvailabilityTest {

    private final AtomicInteger libraryChecks = new AtomicInteger();
    private final List<Boolean> apiRequests = new ArrayList<>();
    private final CudaApi api = mock(CudaApi.class);

    private CudaAvailability availability(String libraryProblem) {
        return new CudaAvailability(library -> {
            assertEquals("libcuda.so.1", library);
            libraryChecks.incrementAndGet();
            return libraryProblem;
        }, driverPresent -> {
            apiRequests.add(driverPresent);
            return api;
        });
    }

    private void deviceCount(int rc, int count) {
        when(api.getDeviceCount(any())).thenAnswer(inv -> {
            ((int[]) inv.getArgument(0))[0] = count;
            return rc;
        });
    }

    @Test
    void withoutTheDriverLibraryJCudaIsNeverTouched() {
        CudaAvailability a = availability("Cannot open library: libcuda.so.1");
        CudaAvailability.Probe p = a.probe();
        assertFalse(p.availability().available());
        assertTrue(p.availability().reason().startsWith("no NVIDIA driver: libcuda.so.1 not found"),
                p.availability().reason());
        assertTrue(p.availability().reason().contains("Cannot open library"), p.availability().reason());
        assertEquals(0, p.deviceCount());
        assertNull(p.api());
        assertFalse(p.driverPresent());
        assertTrue(apiRequests.isEmpty(), "no CUDA call without the driver library");
    }

    @Test
    void theAnswerIsCached() {
        CudaAvailability a = availability(null);
        deviceCount(0, 2);
        CudaAvailability.Probe first = a.probe();
        assertSame(first, a.probe());
        assertEquals(1, libraryChecks.get());
        verify(api, times(1)).getDeviceCount(any());
        assertEquals(List.of(true), apiRequests);
    }

    @Test
    void aCheckThatCannotBeMadeIsUnavailableWithAHint() {
        CudaAvailability a = new CudaAvailability(library -> {
            throw new IllegalCallerException("native access denied");
        }, d -> api);
        CudaAvailability.Probe p = a.probe();
        assertFalse(p.availability().available());
        assertTrue(p.availability().reason().contains("--enable-native-access=ALL-UNNAMED"), p.availability().reason());
    }

    @Test
    void aJCudaThatCannotLoadIsUnavailable() {
        CudaAvailability a = new CudaAvailability(library -> null, d -> {
            throw new UnsatisfiedLinkError("Error while loading native library \"JCudaRuntime-12.6.0-linux-x86_64\"\n"
                    + "more lines");
        });
        CudaAvailability.Probe p = a.probe();
        assertFalse(p.availability().available());
        assertTrue(p.availability().reason().contains("JCuda's native CUDA runtime library could not be loaded"),
                p.availability().reason());
        assertFalse(p.availability().reason().contains("more lines"), "first line only");
        assertSame(p, a.probe(), "cached");

        when(api.getDeviceCount(any()))
                .thenThrow(new NoClassDefFoundError("Could not initialize class jcuda.runtime.JCuda"));
        assertFalse(availability(null).probe().availability().available());
    }

    @Test
    void error35MeansNoUsableDriver() {
        deviceCount(CudaApi.ERROR_INSUFFICIENT_DRIVER, 0);
        String reason = availability(null).probe().availability().reason();
        assertTrue(reason.startsWith("no NVIDIA driver (cudaErrorInsufficientDriver)"), reason);
    }

    @Test
    void error100MeansNoDevice() {
        deviceCount(CudaApi.ERROR_NO_DEVICE, 0);
        String reason = availability(null).probe().availability().reason();
        assertTrue(reason.startsWith("no CUDA device (cudaErrorNoDevice)"), reason);
    }

    @Test
    void otherErrorsAreNamed() {
        Answers.errorNames(api);
        deviceCount(700, 0);
        String reason = availability(null).probe().availability().reason();
        assertTrue(reason.contains("cudaGetDeviceCount failed: cudaErrorIllegalAddress (700)"), reason);
    }

    @Test
    void zeroDevicesIsUnavailable() {
        deviceCount(0, 0);
        CudaAvailability.Probe p = availability(null).probe();
        assertFalse(p.availability().available());
        assertTrue(p.availability().reason().startsWith("no CUDA device"), p.availability().reason());
    }

    @Test
    void devicesAreDescribed() {
        deviceCount(0, 2);
        Answers.gpu(api, 80L << 30);
        when(api.driverGetVersion(any())).thenAnswer(inv -> {
            ((int[]) inv.getArgument(0))[0] = 12040;
            return 0;
        });
        when(api.runtimeGetVersion(any())).thenAnswer(inv -> {
            ((int[]) inv.getArgument(0))[0] = 12060;
            return 0;
        });
        CudaAvailability.Probe p = availability(null).probe();
        assertTrue(p.availability().available());
        assertEquals("2 CUDA devices: 0 Test GPU (80.00 GiB), 1 Test GPU (80.00 GiB); driver for CUDA 12.4,"
                + " JCuda runtime 12.6", p.availability().reason());
        assertEquals(2, p.deviceCount());
        assertSame(api, p.api());
        assertTrue(p.driverPresent());
    }

    @Test
    void aDeviceWhosePropertiesFailStillCounts() {
        deviceCount(0, 1);
        when(api.getDeviceProperties(anyInt(), any(), any())).thenThrow(new IllegalStateException("odd"));
        CudaAvailability.Probe p = availability(null).probe();
        assertTrue(p.availability().available());
        assertEquals("1 CUDA device: 0 (properties unavailable)", p.availability().reason());
    }

    @Test
    void aVirtualMachineErrorIsNotCached() {
        AtomicInteger calls = new AtomicInteger();
        CudaAvailability a = new CudaAvailability(library -> {
            if (calls.incrementAndGet() == 1) {
                throw new StackOverflowError();
            }
            return "missing";
        }, d -> api);
        assertFalse(a.probe().availability().available());
        assertTrue(a.probe().availability().reason().contains("libcuda.so.1 not found"));
        assertEquals(2, calls.get());
    }

    @Test
    void requireAvailableNamesTheProviderAndTheReason() {
        DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class,
                () -> availability("gone").requireAvailable("cuda"));
        assertTrue(e.getMessage().startsWith("device provider 'cuda' is unavailable: no NVIDIA driver"),
                e.getMessage());
        deviceCount(0, 1);
        assertNotNull(availability(null).requireAvailable("cuda").api());
    }

    @Test
    void versionsDecodeAsCudaEncodesThem() {
        assertEquals("12.4", CudaAvailability.version(12040));
        assertEquals("12.6", CudaAvailability.version(12060));
        assertEquals("13.0", CudaAvailability.version(13000));
    }

    @Test
    void theLibraryCheckUsesTheDynamicLinker() {
        assertNull(CudaAvailability.libraryProblem("libc.so.6"), "libc loads everywhere this runs");
        String problem = CudaAvailability.libraryProblem("libdevalloc-no-such-library.so.9");
        assertNotNull(problem);
        assertTrue(problem.contains("libdevalloc-no-such-library.so.9"), problem);
    }
}
