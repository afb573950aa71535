package io.devalloc.sim;

import static io.devalloc.api.units.ByteSize.MiB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import java.util.List;
import org.junit.jupiter.api.Test;

class SimulatedDeviceTest {

    private static final long TOP = SimulatedDevice.DEFAULT_TOP_ADDRESS;

    @Test
    void topDownPlacementFromTheTopAddress() {
        try (SimulatedDevice d = SimulatedDevice.builder().capacity(1L << 30).build()) {
            long a = d.malloc(20 * MiB);
            long b = d.malloc(2 * MiB);
            long c = d.malloc(1000);
            assertEquals(TOP - 20 * MiB, a);
            assertEquals(a - 2 * MiB, b);
            assertEquals(b - 1024, c, "1000 B rounds to two 512 B granules");
            d.free(b);
            long e = d.malloc(MiB);
            assertEquals(a - MiB, e, "the hole left by b is the highest range that fits, and e goes to its top");
        }
    }

    @Test
    void bottomUpPlacement() {
        try (SimulatedDevice d = SimulatedDevice.builder().addressOrder(AddressOrder.BOTTOM_UP)
                .topAddress(1L << 40).addressSpace(1L << 38).build()) {
            long a = d.malloc(4 * MiB);
            long b = d.malloc(4 * MiB);
            assertEquals((1L << 40) - (1L << 38), a);
            assertEquals(a + 4 * MiB, b);
        }
    }

    @Test
    void scriptedAddressesComeFirstThenTheOrder() {
        long x = TOP - 100 * MiB;
        try (SimulatedDevice d = SimulatedDevice.builder().scriptedAddresses(List.of(x, x + 4 * MiB)).build()) {
            assertEquals(x, d.malloc(4 * MiB));
            assertEquals(x + 4 * MiB, d.malloc(MiB));
            assertEquals(TOP - 2 * MiB, d.malloc(2 * MiB));
        }
    }

    @Test
    void aScriptedAddressThatIsTakenIsASetupError() {
        long x = TOP - 2 * MiB;
        try (SimulatedDevice d = SimulatedDevice.builder().scriptedAddresses(List.of(x, x)).build()) {
            d.malloc(2 * MiB);
            DeviceCounters before = d.counters();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.malloc(2 * MiB));
            assertTrue(e.getMessage().contains("not free"), e.getMessage());
            assertEquals(before, d.counters(), "a setup error changes nothing");
            assertThrows(IllegalArgumentException.class, () -> d.malloc(2 * MiB), "the bad address was not consumed");
        }
    }

    @Test
    void scriptedAddressesAreCheckedAtBuildAndForAlignment() {
        assertThrows(IllegalArgumentException.class, () -> SimulatedDevice.builder()
                .scriptedAddresses(List.of(Long.MAX_VALUE - 511)).build(), "outside the address space");
        assertThrows(IllegalArgumentException.class, () -> SimulatedDevice.builder()
                .scriptedAddresses(List.of(TOP - 1000)).build(), "misaligned");
        try (SimulatedDevice d = SimulatedDevice.builder().scriptedAddresses(List.of(TOP - 4 * MiB + 512)).build()) {
            VirtualMemory vm = d.virtualMemory().orElseThrow();
            assertThrows(IllegalArgumentException.class, () -> vm.reserve(2 * MiB),
                    "not granule-aligned for a reservation");
            assertEquals(TOP - 4 * MiB + 512, d.malloc(512), "still there for a malloc");
        }
    }

    @Test
    void theAddressSpaceMustStartAboveZeroAndHoldTheCapacity() {
        assertThrows(IllegalArgumentException.class, () -> SimulatedDevice.builder().topAddress(1L << 40)
                .addressSpace(1L << 40).build());
        assertThrows(IllegalArgumentException.class, () -> SimulatedDevice.builder().capacity(1L << 46).build());
    }

    @Test
    void capacityIsEnforcedAndFreedRangesCoalesce() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(10 * MiB)) {
            long a = d.malloc(4 * MiB);
            long b = d.malloc(4 * MiB);
            assertEquals(DeviceMemory.NULL, d.malloc(4 * MiB), "only 2 MiB left");
            d.free(a);
            d.free(b);
            long c = d.malloc(10 * MiB);
            assertEquals(TOP - 10 * MiB, c, "the two freed ranges and the rest merged back into one");
            DeviceCounters k = d.counters();
            assertEquals(4, k.mallocCalls());
            assertEquals(3, k.mallocs());
            assertEquals(1, k.failedMallocs());
            assertEquals(2, k.frees());
            assertEquals(10 * MiB, k.bytesInUse());
            assertEquals(10 * MiB, k.peakBytesInUse());
            assertEquals(18 * MiB, k.bytesMalloced());
        }
    }

    @Test
    void failTheNthMallocCall() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(1L << 30)) {
            d.failMallocCall(3);
            assertNotEquals(0, d.malloc(MiB));
            assertNotEquals(0, d.malloc(MiB));
            assertEquals(0, d.malloc(MiB), "third call fails");
            assertNotEquals(0, d.malloc(MiB), "fourth succeeds");
            assertThrows(IllegalArgumentException.class, () -> d.failMallocCall(2), "already happened");
            d.failNextMallocs(2);
            assertEquals(0, d.malloc(MiB));
            assertEquals(0, d.malloc(MiB));
            assertNotEquals(0, d.malloc(MiB));
        }
    }

    @Test
    void limitCapsBytesInUseAndZeroFailsEverything() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(1L << 30)) {
            d.setLimitBytes(3 * MiB);
            long a = d.malloc(2 * MiB);
            assertNotEquals(0, a);
            assertEquals(0, d.malloc(2 * MiB));
            d.setLimitBytes(0);
            assertEquals(0, d.malloc(512));
            d.setLimitBytes(Long.MAX_VALUE);
            assertNotEquals(0, d.malloc(2 * MiB));
            assertEquals(1L << 30, d.memoryInfo().totalBytes(), "the limit does not change the reported total");
            d.setLimitBytes(5 * MiB);
            assertEquals(MiB, d.memoryInfo().freeBytes(), "but it shows as less free memory");
        }
    }

    @Test
    void injectedDeviceErrorIsThrownOnceAndChangesNothing() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(1L << 30)) {
            DeviceException boom = new DeviceException("cudaErrorIllegalAddress");
            d.failNextMallocWith(boom);
            assertSame(boom, assertThrows(DeviceException.class, () -> d.malloc(MiB)));
            assertEquals(0, d.counters().bytesInUse());
            assertNotEquals(0, d.malloc(MiB));
        }
    }

    @Test
    void manualEventsCompleteWhenTheTestSaysOrSomeoneWaits() {
        try (SimulatedDevice d = SimulatedDevice.builder().eventCompletion(EventCompletion.MANUAL).build()) {
            DeviceStream s = d.createStream();
            DeviceEvent e1 = d.createEvent();
            DeviceEvent e2 = d.createEvent();
            DeviceEvent other = d.createEvent();
            d.recordEvent(e1, s);
            d.recordEvent(e2, s);
            d.recordEvent(other, DeviceStream.DEFAULT);
            assertFalse(d.isEventComplete(e1));
            assertEquals(3, d.pendingEvents());
            d.synchronizeEvent(e1);
            assertTrue(d.isEventComplete(e1));
            assertFalse(d.isEventComplete(e2), "work queued after e1 is still running");
            d.completeStream(s);
            assertTrue(d.isEventComplete(e2));
            assertFalse(d.isEventComplete(other), "other streams are independent");
            d.recordEvent(e1, s);
            assertFalse(d.isEventComplete(e1), "re-recording makes it pending again");
            d.synchronize();
            assertTrue(d.isEventComplete(e1));
            assertTrue(d.isEventComplete(other));
            assertEquals(0, d.pendingEvents());
        }
    }

    @Test
    void immediateEventsCompleteOnRecord() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(MiB)) {
            DeviceEvent e = d.createEvent();
            d.recordEvent(e, d.createStream());
            assertTrue(d.isEventComplete(e));
            assertThrows(IllegalArgumentException.class, () -> d.recordEvent(e, new DeviceStream(77)),
                    "unknown stream");
        }
    }

    @Test
    void virtualMemoryCountsAgainstCapacityAndLimit() {
        try (SimulatedDevice d = SimulatedDevice.builder().capacity(8 * MiB).recordHistory(true).build()) {
            VirtualMemory vm = d.virtualMemory().orElseThrow();
            long base = vm.reserve(64 * MiB);
            assertNotEquals(0, base, "reserving more than the capacity is fine: it is only address space");
            assertTrue(vm.map(base, 6 * MiB));
            assertFalse(vm.map(base + 6 * MiB, 4 * MiB), "only 2 MiB of physical memory left");
            assertEquals(0, d.malloc(4 * MiB), "mapped memory counts against malloc too");
            d.setLimitBytes(6 * MiB);
            assertFalse(vm.map(base + 6 * MiB, 2 * MiB), "the limit applies to maps");
            d.setLimitBytes(Long.MAX_VALUE);
            assertTrue(vm.map(base + 6 * MiB, 2 * MiB));
            vm.unmap(base, 8 * MiB);
            vm.release(base);
            assertEquals(List.of(DeviceOperation.Kind.RESERVE, DeviceOperation.Kind.MAP, DeviceOperation.Kind.MAP,
                    DeviceOperation.Kind.UNMAP, DeviceOperation.Kind.RELEASE),
                    d.history().stream().map(DeviceOperation::kind).toList());
            assertEquals(2, d.counters().maps());
            assertEquals(1, d.counters().unmaps());
        }
    }

    @Test
    void virtualMemoryCanBeTurnedOff() {
        try (SimulatedDevice d = SimulatedDevice.builder().virtualMemory(false).build()) {
            assertTrue(d.virtualMemory().isEmpty());
        }
    }

    @Test
    void historyRecordsMallocsAndFreesInOrder() {
        try (SimulatedDevice d = SimulatedDevice.builder().recordHistory(true).build()) {
            long a = d.malloc(20 * MiB);
            long b = d.malloc(1);
            d.free(a);
            assertEquals(List.of(new DeviceOperation(DeviceOperation.Kind.MALLOC, a, 20 * MiB),
                    new DeviceOperation(DeviceOperation.Kind.MALLOC, b, 512),
                    new DeviceOperation(DeviceOperation.Kind.FREE, a, 20 * MiB)), d.history());
        }
        try (SimulatedDevice quiet = SimulatedDevice.ofCapacity(MiB)) {
            quiet.malloc(1);
            assertTrue(quiet.history().isEmpty(), "history is off by default");
        }
    }

    @Test
    void deterministic() {
        for (int run = 0; run < 2; run++) {
            try (SimulatedDevice d = SimulatedDevice.ofCapacity(1L << 30)) {
                long a = d.malloc(3 * MiB);
                long b = d.malloc(5000);
                d.free(a);
                long c = d.malloc(MiB);
                assertEquals(List.of(TOP - 3 * MiB, TOP - 3 * MiB - 5120, TOP - MiB), List.of(a, b, c));
            }
        }
    }
}
