package io.devalloc.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.spi.DeviceMemoryProvider;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The two providers: registration, argument parsing and opening, over {@link FakeCuda}. */
class CudaProvidersTest {

    private static final long HOST_MEMORY = 1L << 30;

    private final FakeCuda cuda = new FakeCuda(2, 256L << 20);
    private final AtomicInteger probes = new AtomicInteger();
    private final CudaAvailability available = new CudaAvailability(library -> {
        probes.incrementAndGet();
        return null;
    }, driverPresent -> cuda);
    private final CudaAvailability unavailable = new CudaAvailability(library -> "Cannot open library: libcuda.so.1",
            driverPresent -> {
                throw new AssertionError("no CUDA call without the driver");
            });

    private static Map<String, DeviceMemoryProvider> loaded() {
        return ServiceLoader.load(DeviceMemoryProvider.class).stream().map(ServiceLoader.Provider::get)
                .collect(Collectors.toMap(DeviceMemoryProvider::name, p -> p));
    }

    @Test
    void serviceLoaderFindsBothProviders() {
        Map<String, DeviceMemoryProvider> providers = loaded();
        assertInstanceOf(CudaDeviceMemoryProvider.class, providers.get("cuda"));
        assertInstanceOf(CudaHostMemoryProvider.class, providers.get("cuda-host"));
        assertEquals(10, providers.get("cuda").priority());
        assertEquals(6, providers.get("cuda-host").priority());
        for (DeviceMemoryProvider p : providers.values()) {
            assertTrue(p.name().matches("[a-z][a-z0-9-]*"));
            assertFalse(p.description().isBlank());
            assertTrue(p.argumentHelp().startsWith("CUDA device index"), p.argumentHelp());
        }
    }

    @Test
    void constructorsAndDescriptionsDoNoWork() {
        AtomicInteger asked = new AtomicInteger();
        Supplier<CudaAvailability> counting = () -> {
            asked.incrementAndGet();
            return available;
        };
        DeviceMemoryProvider gpu = new CudaDeviceMemoryProvider(counting);
        DeviceMemoryProvider host = new CudaHostMemoryProvider(counting, () -> {
            throw new AssertionError("not before open");
        });
        for (DeviceMemoryProvider p : new DeviceMemoryProvider[] {gpu, host}) {
            p.name();
            p.description();
            p.priority();
            p.argumentHelp();
        }
        assertEquals(0, asked.get());
        assertEquals(0, probes.get());
    }

    @Test
    void bothProvidersShareOneCachedProbe() {
        CudaDeviceMemoryProvider gpu = new CudaDeviceMemoryProvider(() -> available);
        CudaHostMemoryProvider host = new CudaHostMemoryProvider(() -> available, () -> HOST_MEMORY);
        assertTrue(gpu.probe().available());
        assertTrue(host.probe().available());
        assertEquals(2, gpu.deviceCount());
        assertEquals(2, host.deviceCount());
        assertEquals("2 CUDA devices: 0 Fake GPU 0 (256.00 MiB), 1 Fake GPU 1 (256.00 MiB); driver for CUDA 12.4,"
                + " JCuda runtime 12.6", gpu.probe().reason());
        assertEquals(1, probes.get());
    }

    @Test
    void theDefaultProvidersShareTheJvmWideProbe() {
        assertEquals(new CudaDeviceMemoryProvider().probe(), new CudaHostMemoryProvider().probe());
    }

    @Test
    void opensTheGpuNamedByTheArgument() {
        CudaDeviceMemoryProvider gpu = new CudaDeviceMemoryProvider(() -> available);
        try (DeviceMemory d = gpu.open("")) {
            assertEquals("cuda:0", d.descriptor().id());
            assertEquals("Fake GPU 0", d.descriptor().name());
            assertEquals(DeviceKind.GPU, d.descriptor().kind());
            assertTrue(d.virtualMemory().isPresent(), "the probe found the driver library");
        }
        try (DeviceMemory d = gpu.open(" 1 ")) {
            assertEquals("cuda:1", d.descriptor().id());
        }
    }

    @Test
    void opensPinnedHostMemoryWithTheMachinesMemoryAsCapacity() {
        CudaHostMemoryProvider host = new CudaHostMemoryProvider(() -> available, () -> HOST_MEMORY);
        try (DeviceMemory d = host.open("1")) {
            assertEquals("cuda-host:1", d.descriptor().id());
            assertEquals(DeviceKind.PINNED_HOST, d.descriptor().kind());
            assertEquals(HOST_MEMORY, d.descriptor().totalBytes());
        }
        CudaHostMemoryProvider unknownMemory = new CudaHostMemoryProvider(() -> available, () -> 0);
        assertThrows(DeviceUnavailableException.class, () -> unknownMemory.open(""));
        assertTrue(CudaHostMemoryProvider.physicalMemory() > 0, "this machine's memory can be read");
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "-1", "1.0", "0x1", "99999999999", "8GiB"})
    void malformedArgumentsAreConfigurationErrors(String argument) {
        CudaDeviceMemoryProvider gpu = new CudaDeviceMemoryProvider(() -> available);
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class, () -> gpu.open(argument));
        assertEquals("device", e.key());
        assertEquals(argument, e.value());
        assertTrue(e.getMessage().contains("cuda:" + argument), e.getMessage());
        assertTrue(e.getMessage().contains("CUDA device index"), e.getMessage());
    }

    @Test
    void anIndexPastTheCountNamesTheCount() {
        CudaDeviceMemoryProvider gpu = new CudaDeviceMemoryProvider(() -> available);
        DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class, () -> gpu.open("2"));
        assertEquals("no CUDA device 2 for provider 'cuda': this machine has 2 CUDA devices (indices 0 to 1)",
                e.getMessage());
        CudaHostMemoryProvider host = new CudaHostMemoryProvider(() -> available, () -> HOST_MEMORY);
        assertThrows(DeviceUnavailableException.class, () -> host.open("5"));
    }

    @Test
    void unavailableProvidersSayWhyWhenOpened() {
        CudaDeviceMemoryProvider gpu = new CudaDeviceMemoryProvider(() -> unavailable);
        CudaHostMemoryProvider host = new CudaHostMemoryProvider(() -> unavailable, () -> HOST_MEMORY);
        assertFalse(gpu.probe().available());
        assertEquals(0, gpu.deviceCount());
        assertEquals(0, host.deviceCount());
        DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class, () -> gpu.open(""));
        assertTrue(e.getMessage().startsWith("device provider 'cuda' is unavailable: no NVIDIA driver"),
                e.getMessage());
        e = assertThrows(DeviceUnavailableException.class, () -> host.open("0"));
        assertTrue(e.getMessage().startsWith("device provider 'cuda-host' is unavailable: no NVIDIA driver"),
                e.getMessage());
    }
}
