package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.PythonTuple;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The caching allocator's snapshot in PyTorch's shape: {@code device_traces} indexed by device, a block whose free
 * waits on events keeping its request, the tuples, and the settings in both {@code snapshotDict()} and
 * {@code snapshot()}.
 */
class CachingSnapshotExportTest {

    private static final long MiB = 1L << 20;

    /** A second simulated GPU whose events complete only when the test says so. */
    static SimulatedDevice secondGpu() {
        return SimulatedDevice.builder().index(1).capacity(8L << 30).eventCompletion(EventCompletion.MANUAL).build();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> segments(Map<String, Object> dict) {
        return (List<Map<String, Object>>) dict.get("segments");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> blockAt(Map<String, Object> dict, long address) {
        for (Map<String, Object> seg : segments(dict)) {
            for (Object b : (List<Object>) seg.get("blocks")) {
                if (((Map<String, Object>) b).get("address").equals(address)) {
                    return (Map<String, Object>) b;
                }
            }
        }
        throw new AssertionError("no block at " + address);
    }

    @Test
    void deviceTracesHasOneListPerDeviceIndexTheDevicesOwnLast() {
        SimulatedDevice d = secondGpu();
        try (CachingAllocator a = new CachingAllocatorProvider().create(d, "")) {
            a.recordHistory(100);
            long x = a.malloc(1000, DeviceStream.DEFAULT);
            Map<String, Object> dict = a.snapshotDict();
            List<?> traces = (List<?>) dict.get("device_traces");
            assertEquals(2, traces.size(), "device_traces[1] is device 1's");
            assertEquals(List.of(), traces.get(0));
            List<?> own = (List<?>) traces.get(1);
            assertEquals(List.of("segment_alloc", "alloc"),
                    own.stream().map(t -> ((Map<?, ?>) t).get("action")).toList());
            assertEquals(1, segments(dict).getFirst().get("device"));
            a.free(x);
        }
    }

    @Test
    void aPendingFreeBlockKeepsItsRequestAndItsSegmentCountsIt() {
        SimulatedDevice d = secondGpu();
        try (CachingAllocator a = new CachingAllocatorProvider().create(d, "")) {
            DeviceStream side = d.createStream();
            long live = a.malloc(700, DeviceStream.DEFAULT);
            long pending = a.malloc(1000, DeviceStream.DEFAULT);
            a.recordStream(pending, side);
            a.free(pending); // waits for the side stream's event

            Map<String, Object> dict = a.snapshotDict();
            Map<String, Object> block = blockAt(dict, pending);
            assertEquals("active_pending_free", block.get("state"));
            assertEquals(1000L, block.get("requested_size"));
            Map<String, Object> seg = segments(dict).getFirst();
            assertEquals(1700L, seg.get("requested_size"), "PyTorch counts the pending block's request");
            assertEquals(1024L, seg.get("allocated_size"));
            assertEquals(2048L, seg.get("active_size"));

            MemorySnapshot snapshot = a.snapshot();
            BlockSnapshot b = snapshot.segments().getFirst().blocks().stream()
                    .filter(x -> x.address() == pending).findFirst().orElseThrow();
            assertEquals(BlockState.PENDING_FREE, b.state());
            assertEquals(1000, b.requestedSize());
            // The same figures through the generic export.
            Map<String, Object> generic = PyTorchSnapshots.toDict(snapshot);
            assertEquals(1000L, blockAt(generic, pending).get("requested_size"));
            assertEquals(1700L, segments(generic).getFirst().get("requested_size"));

            d.completeAll();
            a.free(live);
            a.emptyCache();
            SegmentSnapshot after = a.snapshot().segments().stream().findFirst().orElse(null);
            assertEquals(null, after, "the pending block was freed once its event completed");
        }
    }

    @Test
    void poolIdsAreTuplesAndSettingsArePyTorchsInBothSnapshots() {
        SimulatedDevice d = secondGpu();
        try (CachingAllocator a = new CachingAllocatorProvider().create(d, "max_split_size_mb:40")) {
            a.recordHistory(100);
            long x = a.malloc(3 * MiB, DeviceStream.DEFAULT);
            Map<String, Object> dict = a.snapshotDict();
            assertEquals(PythonTuple.of(0L, 0L), segments(dict).getFirst().get("segment_pool_id"));
            List<?> own = (List<?>) ((List<?>) dict.get("device_traces")).get(1);
            for (Object t : own) {
                assertEquals(PythonTuple.of(0L, 0L), ((Map<?, ?>) t).get("pool_id"));
            }
            assertEquals(a.options().allocatorSettings(), dict.get("allocator_settings"));

            MemorySnapshot snapshot = a.snapshot();
            assertEquals(a.options().allocatorSettings(), snapshot.settings());
            assertEquals(List.copyOf(a.options().allocatorSettings().keySet()),
                    List.copyOf(snapshot.settings().keySet()), "PyTorch's key order");
            Map<String, Object> generic = PyTorchSnapshots.toDict(snapshot);
            assertEquals(dict.get("allocator_settings"), generic.get("allocator_settings"));
            assertEquals(41_943_040L, ((Map<?, ?>) generic.get("allocator_settings")).get("max_split_size"));
            assertTrue(((Map<?, ?>) generic.get("allocator_settings")).containsKey("roundup_power2_divisions"));
            a.free(x);
        }
    }
}
