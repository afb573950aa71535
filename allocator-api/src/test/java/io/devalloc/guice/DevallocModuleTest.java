package io.devalloc.guice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.ProvisionException;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.DevallocSettings;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import java.util.List;
import org.junit.jupiter.api.Test;

class DevallocModuleTest {

    private final DeviceMemoryProvider provider = mock(DeviceMemoryProvider.class);
    private final DeviceMemory device = mock(DeviceMemory.class);

    DevallocModuleTest() {
        when(provider.name()).thenReturn("fake");
        when(provider.priority()).thenReturn(3);
        when(provider.probe()).thenReturn(Availability.available("test"));
        when(provider.open("2GiB")).thenReturn(device);
        when(device.descriptor()).thenReturn(new DeviceDescriptor("fake", 0, "fake", DeviceKind.SIMULATED, 2L << 30));
        when(device.alignment()).thenReturn(256L);
    }

    private Injector injector(String config) {
        return Guice.createInjector(new DevallocModule(new DevallocSettings("fake:2GiB", "direct", config),
                List.of(provider), List.of(new io.devalloc.api.direct.DirectAllocatorProvider())));
    }

    @Test
    void injectsASingletonAllocatorOverTheConfiguredDevice() {
        Injector injector = injector("memory_limit_mb:64");
        verify(provider, never()).open(any());
        DeviceAllocator a = injector.getInstance(DeviceAllocator.class);
        assertSame(a, injector.getInstance(DeviceAllocator.class));
        assertSame(device, injector.getInstance(DeviceMemory.class));
        assertEquals("direct", a.name());
        assertEquals(64L << 20, a.stats().limitBytes());
        a.close();
        verify(device).close();
    }

    @Test
    void theDeviceIsClosedWhenTheAllocatorCannotBeBuilt() {
        io.devalloc.api.spi.AllocatorProvider failing = mock(io.devalloc.api.spi.AllocatorProvider.class);
        when(failing.name()).thenReturn("failing");
        when(failing.configSchema()).thenReturn(io.devalloc.api.config.ConfigSchema.empty("allocator 'failing'"));
        when(failing.create(any())).thenThrow(new IllegalStateException("boom"));
        Injector injector = Guice.createInjector(new DevallocModule(
                new DevallocSettings("fake:2GiB", "failing", ""), List.of(provider), List.of(failing)));
        assertThrows(ProvisionException.class, () -> injector.getInstance(DeviceAllocator.class));
        verify(device).close();
    }

    @Test
    void aBadConfigurationFailsInjectionWithTheTypedErrorAndOpensNothing() {
        Injector injector = injector("memory_limit:64");
        ProvisionException e = assertThrows(ProvisionException.class,
                () -> injector.getInstance(DeviceAllocator.class));
        assertTrue(e.getCause() instanceof InvalidConfigurationException, String.valueOf(e.getCause()));
        verify(provider, never()).open(any());
    }
}
