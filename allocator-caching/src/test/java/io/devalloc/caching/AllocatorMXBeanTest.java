package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.jmx.AllocatorMXBean;
import io.devalloc.api.jmx.AllocatorMXBeans;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.sim.SimulatedDeviceProvider;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.Test;

/** The allocator's MXBean as a JMX client sees it, through the platform MBean server. */
class AllocatorMXBeanTest {

    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();

    private static DeviceAllocator caching(String name) {
        return DeviceAllocators.builder().device("sim:1GiB").allocator("caching")
                .config("per_process_memory_fraction:0.5")
                .name(name).registerMXBean(true).build();
    }

    private AllocatorMXBean proxy(String name) {
        return JMX.newMXBeanProxy(server, AllocatorMXBeans.objectName(name), AllocatorMXBean.class);
    }

    @Test
    void theAttributesAreTheAllocatorsStats() throws Exception {
        try (DeviceAllocator a = caching("jmx-getters")) {
            long one = a.malloc(1000);
            long two = a.malloc(3 * ByteSize.MiB + 100); // rounded up to 512 B: allocated > requested
            a.free(one);
            AllocatorStats s = a.stats();
            ObjectName name = new ObjectName("io.devalloc:type=Allocator,name=jmx-getters");
            assertTrue(server.isRegistered(name));
            assertEquals(s.reservedBytes(), server.getAttribute(name, "ReservedBytes"));
            assertEquals(s.allocatedBytes(), server.getAttribute(name, "AllocatedBytes"));
            AllocatorMXBean bean = proxy("jmx-getters");
            assertEquals("jmx-getters", bean.getName());
            assertEquals("caching", bean.getAllocatorKind());
            assertEquals("sim:0", bean.getDeviceId());
            assertFalse(bean.isClosed());
            assertEquals(s.reservedBytes(), bean.getReservedBytes());
            assertEquals(s.allocatedBytes(), bean.getAllocatedBytes());
            assertEquals(a.memoryUsage().get(0).activeBytes(), bean.getActiveBytes());
            assertEquals(s.requestedBytes(), bean.getRequestedBytes());
            assertEquals(a.memoryUsage().get(0).inactiveSplitBytes(), bean.getInactiveSplitBytes());
            assertEquals(s.cachedBytes(), bean.getCachedBytes());
            assertEquals(s.peakReservedBytes(), bean.getPeakReservedBytes());
            assertEquals(s.peakAllocatedBytes(), bean.getPeakAllocatedBytes());
            assertEquals(s.peakRequestedBytes(), bean.getPeakRequestedBytes());
            assertEquals(s.activeAllocations(), bean.getActiveAllocations());
            assertEquals(s.peakActiveAllocations(), bean.getPeakActiveAllocations());
            assertEquals(s.allocationCount(), bean.getAllocationCount());
            assertEquals(s.freeCount(), bean.getFreeCount());
            assertEquals(s.deviceMallocs(), bean.getDeviceMallocs());
            assertEquals(s.deviceFrees(), bean.getDeviceFrees());
            assertEquals(s.outOfMemoryErrors(), bean.getOutOfMemoryErrors());
            assertEquals(s.allocationRetries(), bean.getAllocationRetries());
            assertEquals(512 * ByteSize.MiB, bean.getLimitBytes());
            // Figures that tell the getters apart (a getter wired to the wrong figure fails above).
            assertEquals(2, s.deviceMallocs(), "a small and a large segment");
            assertTrue(s.reservedBytes() > s.allocatedBytes() && s.allocatedBytes() > s.requestedBytes());
            a.free(two);
        }
    }

    @Test
    void emptyCacheResetPeakStatsAndMemorySummaryWork() {
        try (DeviceAllocator a = caching("jmx-operations")) {
            a.free(a.malloc(3 * ByteSize.MiB));
            AllocatorMXBean bean = proxy("jmx-operations");
            assertTrue(bean.getReservedBytes() > 0, "the freed block stays cached");
            assertTrue(bean.getPeakAllocatedBytes() > 0);

            bean.emptyCache();
            assertEquals(0, a.stats().reservedBytes(), "empty_cache gave the segment back");
            assertEquals(1, a.stats().deviceFrees());

            bean.resetPeakStats();
            assertEquals(0, a.stats().peakAllocatedBytes(), "the peak is reset to the current 0");
            assertEquals(0, bean.getPeakReservedBytes());

            String summary = bean.memorySummary();
            assertTrue(summary.contains("PyTorch CUDA memory summary"), summary);
            assertEquals(a.unwrap(CachingAllocator.class).orElseThrow().memorySummary(false), summary);
        }
    }

    @Test
    void anAllocatorWithoutASummaryOfItsOwnShowsItsStatsAndPools() {
        try (DeviceAllocator a = DeviceAllocators.builder().device("sim:1GiB").allocator("direct")
                .name("jmx-direct").registerMXBean(true).build()) {
            long live = a.malloc(3000);
            String summary = proxy("jmx-direct").memorySummary();
            assertTrue(summary.contains("jmx-direct (direct on sim:0)"), summary);
            assertTrue(summary.matches("(?s).*reserved_bytes\\s+" + a.stats().reservedBytes() + "\\b.*"), summary);
            assertTrue(summary.matches("(?s).*\\n\\s+all\\s+" + a.stats().reservedBytes() + "\\s.*"), summary);
            a.free(live);
        }
    }

    @Test
    void closingUnregistersTheBean() {
        ObjectName name = AllocatorMXBeans.objectName("jmx-close");
        DeviceAllocator a = caching("jmx-close");
        assertTrue(server.isRegistered(name));
        a.close();
        assertFalse(server.isRegistered(name));
        a.close(); // idempotent
        try (DeviceAllocator again = caching("jmx-close")) {
            assertTrue(server.isRegistered(name), "the name is free again");
        }
        assertFalse(server.isRegistered(name));
    }

    @Test
    void aNameAlreadyTakenIsRefusedAndLeavesNothingBehind() {
        OpeningProvider devices = new OpeningProvider();
        try (DeviceAllocator first = caching("jmx-duplicate")) {
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> DeviceAllocators.builder().deviceProviders(List.of(devices)).device("sim:1GiB")
                            .allocator("caching").name("jmx-duplicate").registerMXBean(true).jfrEvents(true)
                            .build());
            assertTrue(e.getMessage().contains("already registered") && e.getMessage().contains("another name"),
                    e.getMessage());
            assertEquals("name", e.key());
            assertEquals("jmx-duplicate", e.value());
            assertEquals(1, devices.opened.size());
            SimulatedDevice device = devices.opened.get(0);
            assertThrows(IllegalStateException.class, () -> device.malloc(1), "the device was closed");
            assertEquals("caching", proxy("jmx-duplicate").getAllocatorKind());
            first.free(first.malloc(1000));
            assertEquals(first.stats().allocationCount(), proxy("jmx-duplicate").getAllocationCount(),
                    "the bean registered is still the first allocator's");

            // The failed build's JFR hook was removed with it: no gauge event carries its name.
            List<RecordedEvent> gauges = new CopyOnWriteArrayList<>();
            try (RecordingStream stream = new RecordingStream()) {
                stream.enable("io.devalloc.MemoryUsage").withPeriod(Duration.ofMillis(20));
                stream.onEvent("io.devalloc.MemoryUsage", ev -> {
                    if ("jmx-duplicate".equals(ev.getString("allocator"))) {
                        gauges.add(ev);
                    }
                });
                stream.startAsync();
                Thread.sleep(300);
                stream.stop();
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new AssertionError(ie);
            }
            assertEquals(List.of(), gauges);
        }
    }

    @Test
    void namesThatObjectNamesCannotHoldBareAreQuoted() throws Exception {
        assertEquals(new ObjectName("io.devalloc:type=Allocator,name=trainer"),
                AllocatorMXBeans.objectName("trainer"));
        ObjectName quoted = AllocatorMXBeans.objectName("a,b=c:d");
        assertEquals("\"a,b=c:d\"", quoted.getKeyProperty("name"));
        assertEquals("a,b=c:d", ObjectName.unquote(quoted.getKeyProperty("name")));
        assertThrows(IllegalArgumentException.class, () -> AllocatorMXBeans.objectName(" "));
        try (DeviceAllocator a = caching("team, run=3")) {
            assertTrue(server.isRegistered(AllocatorMXBeans.objectName("team, run=3")));
            assertEquals("team, run=3", proxy("team, run=3").getName());
        }
    }

    /** The simulator's provider, keeping every device it opens so that a test can check it was closed. */
    private static final class OpeningProvider implements DeviceMemoryProvider {
        private final SimulatedDeviceProvider sim = new SimulatedDeviceProvider();
        final List<SimulatedDevice> opened = new ArrayList<>();

        @Override
        public String name() {
            return sim.name();
        }

        @Override
        public String description() {
            return sim.description();
        }

        @Override
        public int priority() {
            return sim.priority();
        }

        @Override
        public Availability probe() {
            return sim.probe();
        }

        @Override
        public int deviceCount() {
            return sim.deviceCount();
        }

        @Override
        public String argumentHelp() {
            return sim.argumentHelp();
        }

        @Override
        public DeviceMemory open(String argument) {
            SimulatedDevice device = (SimulatedDevice) sim.open(argument);
            opened.add(device);
            return device;
        }
    }
}
