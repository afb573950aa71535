package io.devalloc.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.spi.DeviceSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RegistryTest {

    static DeviceMemoryProvider provider(String name, int priority, Availability availability) {
        DeviceMemoryProvider p = mock(DeviceMemoryProvider.class);
        when(p.name()).thenReturn(name);
        when(p.priority()).thenReturn(priority);
        when(p.probe()).thenReturn(availability);
        when(p.description()).thenReturn(name + " memory");
        when(p.argumentHelp()).thenReturn("none");
        when(p.deviceCount()).thenReturn(availability.available() ? 1 : 0);
        return p;
    }

    static DeviceMemory device(String provider) {
        DeviceMemory d = mock(DeviceMemory.class);
        when(d.descriptor()).thenReturn(new DeviceDescriptor(provider, 0, provider, DeviceKind.SIMULATED, 1L << 30));
        when(d.alignment()).thenReturn(512L);
        return d;
    }

    @Test
    void specParsing() {
        assertEquals(new DeviceSpec("sim", "80GiB"), DeviceSpec.parse("sim:80GiB"));
        assertEquals(new DeviceSpec("cuda", "0"), DeviceSpec.parse(" cuda:0 "));
        assertEquals(new DeviceSpec("pinned-host", ""), DeviceSpec.parse("pinned-host"));
        assertTrue(DeviceSpec.parse("").isAuto());
        assertTrue(DeviceSpec.parse(null).isAuto());
        assertTrue(DeviceSpec.parse("auto").isAuto());
        for (String bad : new String[] {"CUDA:0", ":0", "cuda:", "9x", "auto:1", "sim 80GiB"}) {
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> DeviceSpec.parse(bad), bad);
            assertEquals("device", e.key());
        }
    }

    @Test
    void autoPicksTheAvailableProviderWithTheHighestPriority() {
        DeviceMemoryProvider gpu = provider("cuda", 10, Availability.unavailable("no NVIDIA driver"));
        DeviceMemoryProvider host = provider("host", 5, Availability.available("native"));
        DeviceMemoryProvider sim = provider("sim", 1, Availability.available("always"));
        DeviceMemory hostDevice = device("host");
        when(host.open("")).thenReturn(hostDevice);
        DeviceRegistry r = DeviceRegistry.of(List.of(sim, gpu, host));
        assertEquals(new DeviceSpec("host", ""), r.resolve("auto"));
        assertSame(hostDevice, r.open(""));
        verify(sim, never()).open(any());
    }

    @Test
    void aProbeThatThrowsCountsAsUnavailableAndNeverEscapes() {
        DeviceMemoryProvider broken = provider("cuda", 10, Availability.available("x"));
        when(broken.probe()).thenThrow(new NoClassDefFoundError("Could not initialize class jcuda.driver.JCudaDriver"));
        DeviceMemoryProvider nullProbe = provider("odd", 9, Availability.available("x"));
        when(nullProbe.probe()).thenReturn(null);
        DeviceMemoryProvider sim = provider("sim", 1, Availability.available("always"));
        DeviceMemoryProvider chatty = provider("chatty", 0, Availability.available("x"));
        when(chatty.priority()).thenThrow(new IllegalStateException("no priority"));
        when(chatty.description()).thenThrow(new IllegalStateException("no description"));
        DeviceMemoryProvider nameless = provider("x", 0, Availability.available("x"));
        when(nameless.name()).thenThrow(new IllegalStateException("no name"));
        DeviceRegistry r = DeviceRegistry.of(List.of(broken, nullProbe, sim, chatty, nameless));
        List<ProviderStatus> statuses = r.describe();
        assertEquals(List.of("cuda", "odd", "sim", "chatty"), statuses.stream().map(ProviderStatus::name).toList());
        assertTrue(statuses.get(3).description().contains("no description"));
        assertFalse(statuses.get(0).availability().available());
        assertTrue(statuses.get(0).availability().reason().contains("JCudaDriver"));
        assertFalse(statuses.get(1).availability().available());
        assertEquals(0, statuses.get(0).deviceCount());
        assertEquals("sim", r.resolve("auto").provider());
        DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class, () -> r.open("cuda:0"));
        assertTrue(e.getMessage().contains("JCudaDriver"), e.getMessage());
    }

    @Test
    void unknownProviderNamesTheKnownOnes() {
        DeviceRegistry r = DeviceRegistry.of(List.of(provider("sim", 1, Availability.available("a")),
                provider("host", 5, Availability.available("b"))));
        DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class, () -> r.open("gpu:0"));
        assertTrue(e.getMessage().contains("sim, host"), e.getMessage());
    }

    @Test
    void nothingAvailableSaysWhy() {
        DeviceRegistry r = DeviceRegistry.of(List.of(provider("cuda", 10, Availability.unavailable("no driver"))));
        DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class, () -> r.open("auto"));
        assertTrue(e.getMessage().contains("cuda: no driver"), e.getMessage());
        DeviceUnavailableException empty = assertThrows(DeviceUnavailableException.class,
                () -> DeviceRegistry.of(List.of()).open("auto"));
        assertTrue(empty.getMessage().contains("device-sim"), empty.getMessage());
    }

    @Test
    void duplicateNamesKeepTheFirst() {
        DeviceMemoryProvider first = provider("sim", 1, Availability.available("a"));
        DeviceMemoryProvider second = provider("sim", 9, Availability.available("b"));
        DeviceRegistry r = DeviceRegistry.of(List.of(first, second));
        assertSame(first, r.provider("sim"));
        assertEquals(List.of("sim"), r.names());
    }

    @Test
    void serviceLoaderFindsTheDirectAllocator() {
        AllocatorRegistry r = AllocatorRegistry.load();
        assertTrue(r.names().contains("direct"), r.names().toString());
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class, () -> r.get("bfcc"));
        assertTrue(e.getMessage().contains("direct"), e.getMessage());
    }

    @Test
    void builderChecksTheConfigurationBeforeOpeningTheDevice() {
        DeviceMemoryProvider sim = provider("sim", 1, Availability.available("a"));
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> DeviceAllocators.builder().deviceProviders(List.of(sim))
                        .allocatorProviders(List.of(new DirectAllocatorProvider()))
                        .device("sim").config("memory_limit_mb:lots").build());
        assertEquals("memory_limit_mb", e.key());
        verify(sim, never()).open(any());
    }

    @Test
    void builderClosesTheDeviceWhenTheAllocatorCannotBeBuilt() {
        DeviceMemoryProvider sim = provider("sim", 1, Availability.available("a"));
        DeviceMemory d = device("sim");
        when(sim.open("")).thenReturn(d);
        AllocatorProvider failing = mock(AllocatorProvider.class);
        when(failing.name()).thenReturn("failing");
        when(failing.configSchema()).thenReturn(ConfigSchema.empty("allocator 'failing'"));
        when(failing.create(any())).thenThrow(new IllegalStateException("boom"));
        assertThrows(IllegalStateException.class, () -> DeviceAllocators.builder()
                .deviceProviders(List.of(sim))
                .allocatorProviders(List.of(failing))
                .allocator("failing").build());
        verify(d).close();
    }

    @Test
    void builtAllocatorOwnsItsDevice() {
        DeviceMemoryProvider sim = provider("sim", 1, Availability.available("a"));
        DeviceMemory d = device("sim");
        when(sim.open("")).thenReturn(d);
        DeviceAllocator a = DeviceAllocators.builder().deviceProviders(List.of(sim))
                .allocatorProviders(List.of(new DirectAllocatorProvider())).build();
        assertEquals("direct", a.name());
        a.close();
        verify(d).close();
    }

    @Test
    void anAllocatorOverAnOpenedDeviceLeavesItOpenAndUsesTheProviderGiven() {
        DeviceMemory d = device("sim");
        AllocatorProvider direct = new DirectAllocatorProvider();
        DeviceAllocator a = DeviceAllocators.builder().allocatorProviders(List.of()).device(d).allocator(direct)
                .config("memory_limit_mb:1").build();
        assertEquals("direct", a.name());
        assertSame(d, a.device(), "no listener: the device itself");
        a.close();
        verify(d, never()).close();
        // A listener sees the device calls through a wrapper, still over the caller's device.
        DeviceAllocator listened = DeviceAllocators.builder().device(d).allocator(direct)
                .listener(new AllocatorListener() { }).build();
        assertFalse(listened.device() == d, "a listener wraps the device");
        listened.close();
        verify(d, never()).close();
    }

    @Test
    void aFailedBuildOverAnOpenedDeviceLeavesItOpen() {
        DeviceMemory d = device("sim");
        AllocatorProvider failing = mock(AllocatorProvider.class);
        when(failing.name()).thenReturn("failing");
        when(failing.configSchema()).thenReturn(ConfigSchema.empty("allocator 'failing'"));
        when(failing.create(any(DeviceMemory.class), any(String.class), any(AllocatorListener.class)))
                .thenThrow(new IllegalStateException("boom"));
        assertThrows(IllegalStateException.class, () -> DeviceAllocators.builder().device(d).allocator(failing)
                .build());
        verify(d, never()).close();
        // A spec given after the device replaces it, and a name after the provider replaces it.
        DeviceMemoryProvider sim = provider("sim", 1, Availability.available("a"));
        DeviceMemory opened = device("sim");
        when(sim.open("")).thenReturn(opened);
        DeviceAllocator a = DeviceAllocators.builder().deviceProviders(List.of(sim))
                .allocatorProviders(List.of(new DirectAllocatorProvider())).device(d).device("sim")
                .allocator(failing).allocator("direct").build();
        assertSame(opened, a.device());
        a.close();
        verify(opened).close();
    }

    @Test
    void theDefaultHooksChangeNothing() {
        AllocatorProvider direct = new DirectAllocatorProvider();
        assertEquals("memory_limit_mb:1", direct.replayConfig("memory_limit_mb:1"));
        assertFalse(direct.portsPyTorch());
        assertEquals(Optional.empty(), direct.frameworkVariable(""));
        assertEquals(List.of(), direct.caveats("memory_limit_mb:1"));
    }

    @Test
    void decorationsWrapTheBuiltAllocatorInOrderAndAFailingOneClosesIt() {
        DeviceMemoryProvider sim = provider("sim", 1, Availability.available("a"));
        DeviceMemory d = device("sim");
        when(sim.open("")).thenReturn(d);
        List<String> order = new ArrayList<>();
        DeviceAllocator a = DeviceAllocators.builder().deviceProviders(List.of(sim))
                .allocatorProviders(List.of(new DirectAllocatorProvider()))
                .decorate(inner -> {
                    order.add("first:" + inner.name());
                    return inner;
                })
                .decorate(inner -> {
                    order.add("second:" + inner.name());
                    return inner;
                }).build();
        assertEquals(List.of("first:direct", "second:direct"), order);
        a.close();

        DeviceMemory d2 = device("sim");
        when(sim.open("")).thenReturn(d2);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> DeviceAllocators.builder()
                .deviceProviders(List.of(sim)).allocatorProviders(List.of(new DirectAllocatorProvider()))
                .decorate(inner -> {
                    throw new IllegalStateException("cannot decorate");
                }).build());
        assertEquals("cannot decorate", e.getMessage());
        verify(d2).close();
    }

    @Test
    void theDiscoveredProvidersAreListed() {
        assertTrue(DeviceAllocators.allocators().contains("direct"), DeviceAllocators.allocators()::toString);
        assertEquals(DeviceRegistry.load().names(),
                DeviceAllocators.devices().stream().map(ProviderStatus::name).toList());
    }

    @Test
    void settingsPreferPropertiesThenEnvironmentThenDefaults() {
        DevallocSettings s = DevallocSettings.from(Map.of("devalloc.device", "sim:1GiB"),
                Map.of("DEVALLOC_DEVICE", "host", "DEVALLOC_CONFIG", "memory_limit_mb:5"));
        assertEquals(new DevallocSettings("sim:1GiB", "direct", "memory_limit_mb:5"), s);
        assertEquals(new DevallocSettings("auto", "direct", ""), DevallocSettings.from(Map.of(), Map.of()));
    }

    @Test
    void aSettingLookedUpAloneTellsGivenFromLeftOut() {
        Map<String, String> env = Map.of("DEVALLOC_DEVICE", "auto", "DEVALLOC_ALLOCATOR", "bfc");
        assertEquals(Optional.of("auto"), DevallocSettings.lookup(Map.of(), env,
                DevallocSettings.DEVICE_PROPERTY, DevallocSettings.DEVICE_VARIABLE), "given, though it is the default");
        assertEquals(Optional.of("caching"), DevallocSettings.lookup(Map.of("devalloc.allocator", "caching"),
                env, DevallocSettings.ALLOCATOR_PROPERTY, DevallocSettings.ALLOCATOR_VARIABLE), "the property wins");
        assertEquals(Optional.empty(), DevallocSettings.lookup(Map.of(), env,
                DevallocSettings.CONFIG_PROPERTY, DevallocSettings.CONFIG_VARIABLE));
    }

    @Test
    void directAllocatorSchemaRejectsBadLimit() {
        DirectAllocatorProvider p = new DirectAllocatorProvider();
        assertEquals(1024L, AllocatorConfig.parse("memory_limit_mb:1024", p.configSchema())
                .get(DirectAllocatorProvider.MEMORY_LIMIT_MB));
        assertThrows(InvalidConfigurationException.class,
                () -> AllocatorConfig.parse("memory_limit_mb:0", p.configSchema()));
    }
}
