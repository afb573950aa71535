package io.devalloc.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.units.ByteSize;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HostProvidersTest {

    private static final SystemMemory EIGHT_GIB = new SystemMemory(8 * ByteSize.GiB, "MemTotal");

    private static Map<String, DeviceMemoryProvider> loaded() {
        return ServiceLoader.load(DeviceMemoryProvider.class).stream().map(ServiceLoader.Provider::get)
                .collect(Collectors.toMap(DeviceMemoryProvider::name, p -> p));
    }

    private static DeviceMemoryProvider provider(String name) {
        return name.equals("host") ? new HostMemoryProvider() : new PinnedHostMemoryProvider();
    }

    @Test
    void serviceLoaderFindsBothProviders() {
        Map<String, DeviceMemoryProvider> providers = loaded();
        assertInstanceOf(HostMemoryProvider.class, providers.get("host"));
        assertInstanceOf(PinnedHostMemoryProvider.class, providers.get("pinned-host"));
        assertEquals(5, providers.get("host").priority());
        assertEquals(4, providers.get("pinned-host").priority());
        for (DeviceMemoryProvider p : providers.values()) {
            assertTrue(p.name().matches("[a-z][a-z0-9-]*"));
            assertFalse(p.description().isBlank());
            assertEquals("optional capacity such as 8GiB (default: MemTotal)", p.argumentHelp());
        }
    }

    @Test
    void hostIsAvailableHereAndSaysHowMuchMemoryThereIs() {
        HostMemoryProvider host = new HostMemoryProvider();
        Availability a = host.probe();
        assertTrue(a.available(), a.reason());
        assertTrue(a.reason().contains("java.lang.foreign"), a.reason());
        assertTrue(a.reason().contains(SystemMemory.read().describe()), a.reason());
        assertEquals(1, host.deviceCount());
    }

    @Test
    void pinnedHostIsAvailableHereAndStatesTheLimit() {
        PinnedHostMemoryProvider pinned = new PinnedHostMemoryProvider();
        Availability a = pinned.probe();
        assertTrue(a.available(), a.reason());
        assertTrue(a.reason().contains("RLIMIT_MEMLOCK soft "), a.reason());
        // Root with CAP_IPC_LOCK is not bound by the limit; anyone else is told that the limit applies.
        String expected = FfmNativeMemoryCalls.link().mayExceedMemlockLimit() ? "has CAP_IPC_LOCK" : "will fail";
        assertTrue(a.reason().contains(expected), a.reason());
        assertEquals(1, pinned.deviceCount());
    }

    @ParameterizedTest
    @ValueSource(strings = {"host", "pinned-host"})
    void emptyArgumentAndIndexZeroMeanTheDefaultCapacity(String name) {
        long memTotal = SystemMemory.read().bytes();
        for (String argument : new String[] {"", "0", " 0 "}) {
            try (DeviceMemory device = provider(name).open(argument)) {
                assertEquals(memTotal, device.descriptor().totalBytes());
                assertEquals(memTotal, device.memoryInfo().freeBytes());
                assertEquals(name, device.descriptor().provider());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"host", "pinned-host"})
    void aSizeArgumentIsTheCapacity(String name) {
        try (DeviceMemory device = provider(name).open("16MiB")) {
            assertEquals(16 * ByteSize.MiB, device.descriptor().totalBytes());
            assertEquals(name.equals("host") ? DeviceKind.HOST : DeviceKind.PINNED_HOST, device.descriptor().kind());
            long address = device.malloc(ByteSize.MiB);
            assertNotEquals(DeviceMemory.NULL, address);
            device.free(address);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"host", "pinned-host"})
    void malformedArgumentsAreInvalidConfiguration(String name) {
        for (String argument : new String[] {"bogus", "8 GiB of it", "-5MiB", "1.5", "8XB"}) {
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> provider(name).open(argument), argument);
            assertEquals("device", e.key());
            assertEquals(argument, e.value());
            assertTrue(e.getMessage().contains(name + ":" + argument), e.getMessage());
            assertTrue(e.getMessage().contains("8GiB"), e.getMessage());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"host", "pinned-host"})
    void capacitiesBelowOneAllocationAreRefused(String name) {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> provider(name).open("100B"));
        assertTrue(e.getMessage().contains("too small"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"host", "pinned-host"})
    void otherDeviceIndexesDoNotExist(String name) {
        DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class,
                () -> provider(name).open("1"));
        assertTrue(e.getMessage().contains("one device, index 0"), e.getMessage());
    }

    @Test
    void constructorsDoNoWork() {
        Supplier<NativeMemoryCalls> forbidden = () -> {
            throw new AssertionError("linked during construction");
        };
        HostMemoryProvider host = new HostMemoryProvider(forbidden, () -> EIGHT_GIB);
        PinnedHostMemoryProvider pinned = new PinnedHostMemoryProvider(forbidden, () -> EIGHT_GIB);
        assertEquals("host", host.name());
        assertEquals("pinned-host", pinned.name());
        assertFalse(host.argumentHelp().isBlank());
        assertFalse(pinned.description().isBlank());
    }

    @ParameterizedTest
    @ValueSource(strings = {"host", "pinned-host"})
    void aLinkageErrorMakesTheProviderUnavailableOnceAndForAll(String name) {
        AtomicInteger attempts = new AtomicInteger();
        Supplier<NativeMemoryCalls> broken = () -> {
            attempts.incrementAndGet();
            throw new UnsatisfiedLinkError("no posix_memalign in this libc");
        };
        DeviceMemoryProvider p = name.equals("host") ? new HostMemoryProvider(broken, () -> EIGHT_GIB)
                : new PinnedHostMemoryProvider(broken, () -> EIGHT_GIB);
        Availability a = p.probe();
        assertFalse(a.available());
        assertTrue(a.reason().contains("no posix_memalign in this libc"), a.reason());
        assertEquals(a, p.probe());
        assertEquals(0, p.deviceCount());
        DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class, () -> p.open(""));
        assertTrue(e.getMessage().contains("no posix_memalign in this libc"), e.getMessage());
        assertEquals(1, attempts.get(), "the probe is cached");
    }

    @Test
    void deniedNativeAccessSaysHowToAllowIt() {
        HostMemoryProvider host = new HostMemoryProvider(() -> {
            throw new IllegalCallerException("Illegal native access from: unnamed module");
        }, () -> EIGHT_GIB);
        Availability a = host.probe();
        assertFalse(a.available());
        assertTrue(a.reason().contains("--enable-native-access=ALL-UNNAMED"), a.reason());
    }

    @Test
    void refusedMlockMakesPinnedHostUnavailableWithTheFix() {
        NativeMemoryCalls calls = mock(NativeMemoryCalls.class);
        when(calls.pageSize()).thenReturn(4096L);
        when(calls.alloc(4096, 4096)).thenReturn(0x7f00_0000_0000L);
        when(calls.mlock(anyLong(), anyLong())).thenReturn(NativeMemoryCalls.ENOMEM);
        when(calls.memlockLimit()).thenReturn(Optional.of(new NativeMemoryCalls.MemlockLimit(0, 65536)));
        PinnedHostMemoryProvider pinned = new PinnedHostMemoryProvider(() -> calls, () -> EIGHT_GIB);

        Availability a = pinned.probe();
        assertFalse(a.available());
        for (String expected : new String[] {"ENOMEM", "soft 0 bytes (0 B), hard 65536 bytes (64.00 KiB)",
                "ulimit -l", "CAP_IPC_LOCK"}) {
            assertTrue(a.reason().contains(expected), "lacks '" + expected + "': " + a.reason());
        }
        assertFalse(a.reason().contains("already locked by this device"), a.reason());
        verify(calls).free(0x7f00_0000_0000L);
        assertEquals(0, pinned.deviceCount());
        assertThrows(DeviceUnavailableException.class, () -> pinned.open("16MiB"));
    }

    @Test
    void unprivilegedPinnedHostWarnsThatTheLimitBinds() {
        NativeMemoryCalls calls = mock(NativeMemoryCalls.class);
        when(calls.pageSize()).thenReturn(4096L);
        when(calls.alloc(4096, 4096)).thenReturn(0x7f00_0000_0000L);
        when(calls.memlockLimit()).thenReturn(Optional.of(new NativeMemoryCalls.MemlockLimit(8 * ByteSize.MiB,
                NativeMemoryCalls.MemlockLimit.UNLIMITED)));
        when(calls.mayExceedMemlockLimit()).thenReturn(false);
        PinnedHostMemoryProvider pinned = new PinnedHostMemoryProvider(() -> calls, () -> EIGHT_GIB);

        Availability a = pinned.probe();
        assertTrue(a.available(), a.reason());
        assertTrue(a.reason().contains("8.00 GiB (MemTotal)"), a.reason());
        assertTrue(a.reason().contains("soft 8388608 bytes (8.00 MiB), hard unlimited"), a.reason());
        assertTrue(a.reason().contains("will fail"), a.reason());
        verify(calls).mlock(0x7f00_0000_0000L, 4096);
        verify(calls).munlock(0x7f00_0000_0000L, 4096);
        verify(calls).free(0x7f00_0000_0000L);
    }

    @Test
    void unreadablePhysicalMemoryNeedsAnExplicitCapacity() {
        HostMemoryProvider host = new HostMemoryProvider(() -> FfmNativeMemoryCalls.link(), () -> {
            throw new IllegalStateException("no /proc/meminfo");
        });
        Availability a = host.probe();
        assertTrue(a.available(), a.reason());
        assertTrue(a.reason().contains("physical memory unknown"), a.reason());
        DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class, () -> host.open(""));
        assertTrue(e.getMessage().contains("no /proc/meminfo"), e.getMessage());
        assertTrue(e.getMessage().contains("host:8GiB"), e.getMessage());
        try (DeviceMemory device = host.open("1MiB")) {
            assertEquals(ByteSize.MiB, device.descriptor().totalBytes());
        }
    }
}
