package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.DeviceOperation;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * With {@code virtual_memory:true} every extension is mapped as one piece, as TensorFlow's
 * {@code GpuVirtualMemAllocator::Alloc} backs it with one {@code cuMemCreate} handle, and the arena only ever unmaps
 * whole regions, which after coalescing span several extensions' pieces. The simulator enforces the pieces, so an
 * extension mapped in granules, or an unmap of part of one, would show here.
 */
class VirtualRegionPiecesTest {

    private static final long MiB = ByteSize.MiB;

    @Test
    void eachExtensionIsOnePieceAndACoalescedRegionIsUnmappedWhole() {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(ByteSize.GiB).recordHistory(true).build();
             BfcArena a = (BfcArena) new BfcAllocatorProvider(Map.of()).create(device,
                     "virtual_memory:true,allow_growth:true,memory_limit_mb:512")) {
            List<Long> ptrs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                ptrs.add(a.malloc(4 * MiB, 1, DeviceStream.DEFAULT));
            }
            List<DeviceOperation> maps = ops(device, DeviceOperation.Kind.MAP);
            assertTrue(maps.size() >= 2, "the arena extended more than once: " + maps);
            assertEquals(1, a.regionCount(), "the extensions coalesced into one region");

            VirtualMemory vm = device.virtualMemory().orElseThrow();
            long granule = vm.granularity();
            DeviceOperation first = maps.getFirst();
            assertTrue(first.bytes() > granule, "an extension of more than one granule: " + first);
            assertThrows(IllegalArgumentException.class, () -> vm.unmap(first.address(), granule),
                    "one granule of an extension mapped as one piece");
            assertThrows(IllegalArgumentException.class, () -> vm.unmap(first.address(), first.bytes() + granule),
                    "the first extension and one granule of the second");

            for (long p : ptrs) {
                a.free(p);
            }
            assertTrue(a.deallocateFreeRegions());
            long mapped = maps.stream().mapToLong(DeviceOperation::bytes).sum();
            assertEquals(List.of(new DeviceOperation(DeviceOperation.Kind.UNMAP, first.address(), mapped)),
                    ops(device, DeviceOperation.Kind.UNMAP), "one unmap of the whole region, over every extension");
            assertEquals(0, vm.mappedBytes());
        }
    }

    private static List<DeviceOperation> ops(SimulatedDevice device, DeviceOperation.Kind kind) {
        return device.history().stream().filter(op -> op.kind() == kind).toList();
    }
}
