package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.VirtualMemory;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ObservedDeviceTest {

    private static final long MiB = 1L << 20;

    /** Records what the decorator reports, as text. */
    private static final class Recorder implements ObservedDevice.Listener {
        final List<String> calls = new ArrayList<>();

        @Override
        public void grew(long bytes, boolean map) {
            calls.add((map ? "map " : "malloc ") + bytes);
        }

        @Override
        public void shrank(long bytes, boolean unmap) {
            calls.add((unmap ? "unmap " : "free ") + bytes);
        }
    }

    @Test
    void countsAndReportsMallocsFreesMapsAndUnmapsOnceObserving() {
        Recorder recorder = new Recorder();
        try (ObservedDevice device = new ObservedDevice(SimulatedDevice.ofCapacity(64 * MiB), recorder)) {
            long before = device.malloc(2 * MiB);
            assertEquals(0, device.grows(), "not observing yet");
            device.startObserving();
            long a = device.malloc(4 * MiB);
            assertEquals(0, device.malloc(128 * MiB), "a refused malloc is passed through and not counted");
            device.free(before);
            device.free(a);
            VirtualMemory vm = device.virtualMemory().orElseThrow();
            long base = vm.reserve(8 * MiB);
            assertTrue(vm.map(base, 4 * MiB));
            vm.unmap(base, 2 * MiB);
            vm.unmap(base + 2 * MiB, 2 * MiB);
            vm.release(base);
            assertEquals(2, device.grows());
            assertEquals(4, device.shrinks());
            assertEquals(1, device.mallocs());
            assertEquals(2, device.frees());
            assertEquals(1, device.maps());
            assertEquals(2, device.unmaps());
        }
        assertEquals(List.of("malloc 4194304", "free 2097152", "free 4194304", "map 4194304", "unmap 2097152",
                "unmap 2097152"), recorder.calls);
    }

    /** The piece size reaches the device: a map in one 4 MiB piece cannot be unmapped half by half. */
    @Test
    void forwardsTheMapsPieceSize() {
        try (ObservedDevice device = new ObservedDevice(SimulatedDevice.ofCapacity(64 * MiB), new Recorder())) {
            device.startObserving();
            VirtualMemory vm = device.virtualMemory().orElseThrow();
            long base = vm.reserve(8 * MiB);
            assertTrue(vm.map(base, 4 * MiB, 4 * MiB));
            assertThrows(IllegalArgumentException.class, () -> vm.unmap(base, 2 * MiB), "half of the one piece");
            assertEquals(0, device.unmaps(), "a refused unmap is not counted");
            vm.unmap(base, 4 * MiB);
            vm.release(base);
            assertEquals(1, device.maps());
            assertEquals(1, device.unmaps());
        }
    }

    @Test
    void passesEverythingElseThrough() {
        SimulatedDevice sim = SimulatedDevice.ofCapacity(64 * MiB);
        try (ObservedDevice device = new ObservedDevice(sim, new Recorder())) {
            assertSame(sim, device.delegate());
            assertEquals(sim.descriptor(), device.descriptor());
            assertEquals(sim.alignment(), device.alignment());
            assertEquals(64 * MiB, device.memoryInfo().totalBytes());
            var stream = device.createStream();
            var event = device.createEvent();
            device.recordEvent(event, stream);
            assertTrue(device.isEventComplete(event));
            device.synchronizeEvent(event);
            device.destroyEvent(event);
            device.destroyStream(stream);
            device.synchronize();
            assertTrue(device.hostView(0, 0).isEmpty());
        }
        assertTrue(sim.counters().mallocs() >= 0);
    }
}
