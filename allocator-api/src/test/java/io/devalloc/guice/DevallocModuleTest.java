package io.devalloc.guice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.google.inject.AbstractModule;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.ProvisionException;
import com.google.inject.multibindings.Multibinder;
import com.google.inject.multibindings.OptionalBinder;
import io.devalloc.api.DevallocSettings;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.internal.ListeningDeviceMemory;
import io.devalloc.api.internal.ObservedAllocator;
import io.devalloc.api.observe.AllocationFailure;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.DeviceCall;
import io.devalloc.api.observe.OutOfMemoryHandler;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import java.util.ArrayList;
import java.util.Collections;
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

    private Injector injector(String config, com.google.inject.Module... more) {
        List<com.google.inject.Module> modules = new ArrayList<>(List.of(more));
        modules.add(new DevallocModule(new DevallocSettings("fake:2GiB", "direct", config),
                List.of(provider), List.of(new DirectAllocatorProvider())));
        return Guice.createInjector(modules);
    }

    /** Remembers the device calls it is told of, as "malloc 4096". */
    static final class CallLog implements AllocatorListener {
        final List<String> calls = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void deviceCall(DeviceCall call, long address, long bytes, long nanos, boolean succeeded) {
            calls.add(call.tag() + " " + bytes + (succeeded ? "" : " failed"));
        }
    }

    @Test
    void withNoListenerNorHandlerBoundTheAllocatorIsNotWrapped() {
        DeviceAllocator a = injector("").getInstance(DeviceAllocator.class);
        assertFalse(a instanceof ObservedAllocator, a.getClass().getName());
        assertSame(device, a.device());
        a.close();
    }

    @Test
    void listenersBoundWithAMultibinderAreToldOfTheDeviceCallsInBindingOrder() {
        CallLog first = new CallLog();
        CallLog second = new CallLog();
        when(device.malloc(4096)).thenReturn(0x1000L);
        Injector injector = injector("", new AbstractModule() {
            @Override
            protected void configure() {
                Multibinder<AllocatorListener> listeners = Multibinder.newSetBinder(binder(), AllocatorListener.class);
                listeners.addBinding().toInstance(first);
                listeners.addBinding().toInstance(second);
            }
        });
        DeviceAllocator a = injector.getInstance(DeviceAllocator.class);
        assertTrue(a.device() instanceof ListeningDeviceMemory, a.device().getClass().getName());
        assertSame(device, injector.getInstance(DeviceMemory.class), "the injected device is the device itself");
        a.free(a.malloc(4096));
        assertEquals(List.of("malloc 4096", "free 4096"), first.calls);
        assertEquals(first.calls, second.calls);
        a.close();
        verify(device).close();
    }

    @Test
    void aHandlerSetWithAnOptionalBinderTurnsAnOutOfMemoryErrorIntoARetry() {
        when(device.memoryInfo()).thenReturn(new MemoryInfo(0, 2L << 30));
        when(device.malloc(anyLong())).thenReturn(0L, 0x2000L);
        List<AllocationFailure> failures = new ArrayList<>();
        Injector injector = injector("", new AbstractModule() {
            @Override
            protected void configure() {
                OptionalBinder.newOptionalBinder(binder(), OutOfMemoryHandler.class).setBinding()
                        .toInstance(f -> failures.add(f));
            }
        });
        DeviceAllocator a = injector.getInstance(DeviceAllocator.class);
        assertEquals(0x2000L, a.malloc(1 << 20));
        assertEquals(1, failures.size());
        assertEquals(1 << 20, failures.get(0).requestedBytes());
        assertEquals(0, failures.get(0).retryCount());
        assertSame(device, a.device(), "a handler alone does not wrap the device");
        a.close();
    }

    @Test
    void aHandlerBoundDirectlyIsUsedToo() {
        when(device.memoryInfo()).thenReturn(new MemoryInfo(0, 2L << 30));
        when(device.malloc(anyLong())).thenReturn(0L, 0x3000L);
        List<AllocationFailure> failures = new ArrayList<>();
        Injector injector = injector("", new AbstractModule() {
            @Override
            protected void configure() {
                bind(OutOfMemoryHandler.class).toInstance(f -> failures.add(f));
            }
        });
        DeviceAllocator a = injector.getInstance(DeviceAllocator.class);
        assertEquals(0x3000L, a.malloc(1 << 20));
        assertEquals(1, failures.size());
        a.close();
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
        AllocatorProvider failing = mock(AllocatorProvider.class);
        when(failing.name()).thenReturn("failing");
        when(failing.configSchema()).thenReturn(ConfigSchema.empty("allocator 'failing'"));
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
