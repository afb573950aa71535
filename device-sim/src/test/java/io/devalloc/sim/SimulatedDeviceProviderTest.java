package io.devalloc.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.units.ByteSize;
import org.junit.jupiter.api.Test;

class SimulatedDeviceProviderTest {

    @Test
    void foundByServiceLoaderAndOpenedBySpec() {
        DeviceRegistry registry = DeviceRegistry.load();
        assertTrue(registry.names().contains("sim"), registry.names().toString());
        try (DeviceMemory d = registry.open("sim:80GiB")) {
            assertEquals(80 * ByteSize.GiB, d.descriptor().totalBytes());
            assertEquals(DeviceKind.SIMULATED, d.descriptor().kind());
            assertEquals("sim:0", d.descriptor().id());
        }
        try (DeviceMemory d = registry.open("sim")) {
            assertEquals(SimulatedDeviceProvider.DEFAULT_CAPACITY, d.descriptor().totalBytes());
        }
    }

    @Test
    void capacityArgument() {
        assertEquals(512 * ByteSize.MiB, SimulatedDeviceProvider.parseCapacity("512MiB"));
        assertEquals(1932735283L, SimulatedDeviceProvider.parseCapacity("1.8GiB"), "rounded down to bytes");
        assertEquals(80 * ByteSize.GiB, SimulatedDeviceProvider.parseCapacity("0"));
        assertEquals(80 * ByteSize.GiB, SimulatedDeviceProvider.parseCapacity(""));
        InvalidConfigurationException ambiguous = assertThrows(InvalidConfigurationException.class,
                () -> SimulatedDeviceProvider.parseCapacity("1024"));
        assertTrue(ambiguous.getMessage().contains("unit"), ambiguous.getMessage());
        assertThrows(InvalidConfigurationException.class, () -> SimulatedDeviceProvider.parseCapacity("lots"));
        assertThrows(InvalidConfigurationException.class, () -> SimulatedDeviceProvider.parseCapacity("1KiB"));
        assertThrows(InvalidConfigurationException.class, () -> SimulatedDeviceProvider.parseCapacity("99999999TiB"));
        assertThrows(InvalidConfigurationException.class, () -> SimulatedDeviceProvider.parseCapacity("33TiB"));
        assertEquals(32 * ByteSize.TiB, SimulatedDeviceProvider.parseCapacity("32TiB"));
    }

    @Test
    void alwaysAvailableWithLowestPriority() {
        SimulatedDeviceProvider p = new SimulatedDeviceProvider();
        assertTrue(p.probe().available());
        assertEquals(1, p.priority());
        assertEquals(1, p.deviceCount());
    }
}
