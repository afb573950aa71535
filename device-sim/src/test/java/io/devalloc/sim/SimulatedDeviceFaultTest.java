package io.devalloc.sim;

import static io.devalloc.api.units.ByteSize.MiB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import org.junit.jupiter.api.Test;

/** Issue 15, defect 6: the simulator's faults reach every kind of device call, and each only its own kind. */
class SimulatedDeviceFaultTest {

    private static final long G = SimulatedDevice.VM_GRANULARITY;

    @Test
    void refusalsOfTheCallsThatCanRunOutReturnNoMemoryAndChangeNothing() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(1L << 30)) {
            VirtualMemory vm = d.virtualMemory().orElseThrow();
            d.failNextCalls(DeviceCall.RESERVE, 1);
            assertEquals(0, vm.reserve(8 * G), "the armed reserve runs out");
            long base = vm.reserve(8 * G);
            assertNotEquals(0, base, "one call only");
            d.failCall(DeviceCall.MAP, d.calls(DeviceCall.MAP) + 2);
            assertTrue(vm.map(base, G));
            assertFalse(vm.map(base + G, G), "the second map from now runs out");
            assertEquals(G, vm.mappedBytes(), "a refused map maps nothing");
            assertTrue(vm.map(base + G, G));
            assertEquals(2, d.counters().maps());
            assertEquals(3, d.calls(DeviceCall.MAP));
        }
    }

    @Test
    void refusalsOfCallsWithoutANoMemoryResultAreDeviceErrors() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(1L << 30)) {
            d.failNextCalls(DeviceCall.CREATE_EVENT, 1);
            DeviceException e = assertThrows(DeviceException.class, d::createEvent);
            assertTrue(e.getMessage().contains("out of memory"), e.getMessage());
            DeviceEvent ev = d.createEvent();
            d.failNextCalls(DeviceCall.RECORD_EVENT, 1);
            assertThrows(DeviceException.class, () -> d.recordEvent(ev, DeviceStream.DEFAULT));
            d.recordEvent(ev, DeviceStream.DEFAULT);
        }
    }

    @Test
    void anArmedFaultAppliesOnlyToItsOwnKind() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(1L << 30)) {
            VirtualMemory vm = d.virtualMemory().orElseThrow();
            d.failNextMallocs(1);
            long base = vm.reserve(4 * G);
            assertTrue(vm.map(base, G), "a malloc fault does not fire on a map");
            assertEquals(0, d.malloc(MiB), "it stays armed for the next malloc");
            d.failNextCalls(DeviceCall.MAP, 1);
            assertNotEquals(0, d.malloc(MiB), "a map fault does not fire on a malloc");
            assertFalse(vm.map(base + G, G));
        }
    }

    @Test
    void deviceErrorsOnEveryKindAreThrownOnceAndChangeNothing() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(1L << 30)) {
            VirtualMemory vm = d.virtualMemory().orElseThrow();
            DeviceStream s = d.createStream();
            DeviceEvent ev = d.createEvent();
            long base = vm.reserve(4 * G);
            vm.map(base, G);
            long spare = vm.reserve(2 * G);
            long a = d.malloc(MiB);
            long inUse = d.counters().bytesInUse();
            for (DeviceCall kind : DeviceCall.values()) {
                if (kind == DeviceCall.UNMAP) {
                    continue;
                }
                RuntimeException boom = new DeviceException("injected " + kind);
                d.failNextCallWith(kind, boom);
                RuntimeException thrown = assertThrows(RuntimeException.class,
                        () -> call(d, vm, kind, base, spare, a, ev, s),
                        kind.name());
                assertSame(boom, thrown, kind.name());
                assertEquals(inUse, d.counters().bytesInUse(), kind + " changed nothing");
                assertEquals(G, vm.mappedBytes(), kind + " changed nothing");
            }
            assertEquals(1, d.liveAllocations(), "the failed free left the allocation live");
            d.free(a);
            vm.release(spare);
        }
    }

    @Test
    void aFailedUnmapLeavesTheRangeUnmappedAsThePortSays() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(1L << 30)) {
            VirtualMemory vm = d.virtualMemory().orElseThrow();
            long base = vm.reserve(4 * G);
            vm.map(base, 2 * G);
            DeviceException boom = new DeviceException("injected unmap failure");
            d.failNextCallWith(DeviceCall.UNMAP, boom);
            assertSame(boom, assertThrows(DeviceException.class, () -> vm.unmap(base, G)));
            assertEquals(G, vm.mappedBytes());
            assertFalse(d.isMapped(base, G));
            assertTrue(d.isMapped(base + G, G));
            vm.unmap(base + G, G);
            vm.release(base);
        }
    }

    @Test
    void badArgumentsAreRefusedBeforeAnArmedFaultIsUsed() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(1L << 30)) {
            VirtualMemory vm = d.virtualMemory().orElseThrow();
            d.failNextCalls(DeviceCall.MAP, 1);
            assertThrows(IllegalArgumentException.class, () -> vm.map(12345, G));
            assertEquals(0, d.calls(DeviceCall.MAP), "a refused argument is no call");
            long base = vm.reserve(2 * G);
            assertFalse(vm.map(base, G), "the fault is still armed");
            assertThrows(IllegalArgumentException.class, () -> d.failCall(DeviceCall.MAP, 1), "already happened");
            d.failNextCalls(DeviceCall.SYNCHRONIZE, 2);
            d.clearFaults();
            d.synchronize();
        }
    }

    private static void call(SimulatedDevice d, VirtualMemory vm, DeviceCall kind, long base, long spare, long a,
            DeviceEvent ev, DeviceStream s) {
        switch (kind) {
            case MALLOC -> d.malloc(MiB);
            case FREE -> d.free(a);
            case RESERVE -> vm.reserve(2 * G);
            case MAP -> vm.map(base + 2 * G, G);
            case UNMAP -> vm.unmap(base, G);
            case RELEASE -> vm.release(spare);
            case CREATE_EVENT -> d.createEvent();
            case RECORD_EVENT -> d.recordEvent(ev, s);
            case SYNCHRONIZE -> d.synchronizeEvent(ev);
        }
    }
}
