package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.spi.PythonTuple;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.Events;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Snapshots written by devalloc, read back by devalloc's own readers ({@link RestrictedUnpickler},
 * {@link PyTorchPickleReader}) and, when {@code python3} is on the PATH, by CPython's {@code pickle}: one history
 * list per device index, the pool ids as tuples, a pending free keeping its request, every allocator's settings, and
 * a snapshot without {@code device_traces}.
 */
class SnapshotExportRoundTripTest {

    private static final long MiB = 1L << 20;

    /** What the caching allocator on a second GPU wrote, and the figures it should have. */
    record Written(byte[] pickle, Map<String, Object> dict, long live, long pending) {
    }

    /**
     * The caching allocator on a simulated GPU of index 1 with its history on: a live block of 700 B and one of
     * 1000 B whose free waits for a side stream's event (so it is {@code active_pending_free}).
     */
    static Written secondGpuWithAPendingFree() {
        SimulatedDevice d = SimulatedDevice.builder().index(1).capacity(1L << 30)
                .eventCompletion(EventCompletion.MANUAL).build();
        try (CachingAllocator a = new CachingAllocatorProvider().create(d, "max_split_size_mb:64")) {
            a.recordHistory(1000);
            DeviceStream side = d.createStream();
            long live = a.malloc(700, DeviceStream.DEFAULT);
            long pending = a.malloc(1000, DeviceStream.DEFAULT);
            a.recordStream(pending, side);
            a.free(pending);
            Map<String, Object> dict = a.snapshotDict();
            byte[] pickle = PickleWriter.toBytes(dict);
            d.completeAll();
            a.free(live);
            return new Written(pickle, dict, live, pending);
        }
    }

    /** Numbers as Long and tuples (Pyrolite: Object[]) as PythonTuple, so that written and read trees compare. */
    static Object canonical(Object v) {
        return switch (v) {
            case Map<?, ?> m -> {
                Map<Object, Object> out = new LinkedHashMap<>();
                m.forEach((k, x) -> out.put(k, canonical(x)));
                yield out;
            }
            case List<?> l -> l.stream().map(SnapshotExportRoundTripTest::canonical).toList();
            case Object[] tuple -> new PythonTuple(Arrays.stream(tuple).map(SnapshotExportRoundTripTest::canonical)
                    .toList());
            case PythonTuple t -> new PythonTuple(t.items().stream().map(SnapshotExportRoundTripTest::canonical)
                    .toList());
            case Integer i -> (long) i;
            case BigInteger b -> b.longValueExact();
            case null, default -> v;
        };
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> first(Object segments) {
        return (Map<String, Object>) ((List<Object>) segments).getFirst();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> blockAt(Map<String, Object> segment, long address) {
        for (Object b : (List<Object>) segment.get("blocks")) {
            Map<String, Object> block = (Map<String, Object>) b;
            if (((Number) block.get("address")).longValue() == address) {
                return block;
            }
        }
        throw new AssertionError("no block at " + address);
    }

    @Test
    void theCachingSnapshotReadsBackAsWrittenWithPyTorchsShapes() throws IOException {
        Written w = secondGpuWithAPendingFree();
        Object read = RestrictedUnpickler.load(w.pickle());
        assertEquals(canonical(w.dict()), canonical(read), "what the reader reads is what was written");

        Map<?, ?> snapshot = (Map<?, ?>) read;
        // Item 1: device_traces[i] is device i's history.
        List<?> traces = (List<?>) snapshot.get("device_traces");
        assertEquals(2, traces.size());
        assertEquals(List.of(), traces.get(0));
        assertEquals(List.of("segment_alloc", "alloc", "alloc", "free_requested"),
                ((List<?>) traces.get(1)).stream().map(t -> ((Map<?, ?>) t).get("action")).toList());
        // Item 3: the pool ids are tuples.
        Map<String, Object> segment = first(snapshot.get("segments"));
        assertInstanceOf(Object[].class, segment.get("segment_pool_id"), "a tuple, not a list");
        assertEquals(List.of(0, 0), Arrays.asList((Object[]) segment.get("segment_pool_id")));
        for (Object t : (List<?>) traces.get(1)) {
            assertEquals(List.of(0, 0), Arrays.asList((Object[]) ((Map<?, ?>) t).get("pool_id")));
        }
        // Item 2: the pending free keeps its request, and its segment counts it.
        Map<String, Object> pending = blockAt(segment, w.pending());
        assertEquals("active_pending_free", pending.get("state"));
        assertEquals(1000, pending.get("requested_size"));
        assertEquals(1700, segment.get("requested_size"));
        assertEquals(67_108_864, ((Map<?, ?>) snapshot.get("allocator_settings")).get("max_split_size"));

        // The trace reader: device 1 is the only one with a history; the state at the end is explained by the trace.
        PyTorchPickleReader reader = new PyTorchPickleReader(new ByteArrayInputStream(w.pickle()), "gpu1.pickle",
                PyTorchPickleReader.ONLY_DEVICE);
        assertEquals(1, reader.device());
        List<TraceEvent> events = Events.readAll(reader);
        assertEquals(List.of(Kind.SEGMENT_ALLOC, Kind.ALLOC, Kind.ALLOC),
                events.stream().map(TraceEvent::kind).toList());
        assertEquals(List.of(700L, 1000L), events.stream().filter(e -> e.kind() == Kind.ALLOC).map(TraceEvent::size)
                .toList());
        PyTorchSnapshotFile file = PyTorchSnapshotFile.read(new ByteArrayInputStream(w.pickle()), "gpu1.pickle");
        assertEquals(List.of(1), file.devices().stream().map(SnapshotDevice::index).toList());
        assertEquals(List.of(0), file.unusedDevices(), "device 0 has no history and no segment: never used");
    }

    @ParameterizedTest
    @ValueSource(strings = {"direct", "bfc", "caching", "caching-host"})
    void everyAllocatorsSettingsReadBackAsAllocatorSettings(String allocator) throws IOException {
        try (DeviceAllocator a = DeviceAllocators.builder().device("sim:1GiB").allocator(allocator).build()) {
            long x = a.malloc(3 * MiB);
            MemorySnapshot snapshot = a.snapshot();
            assertTrue(!snapshot.settings().isEmpty(), allocator + " reports its settings");
            Map<?, ?> read =
                    (Map<?, ?>) RestrictedUnpickler.load(PickleWriter.toBytes(PyTorchSnapshots.toDict(snapshot)));
            // Compared without regard to order: the keys' order is checked where the tree is built.
            assertEquals(canonical(snapshot.settings()), canonical(read.get("allocator_settings")));
            a.free(x);
        }
    }

    @Test
    void aSnapshotWithoutTracesReadsAsItsWarmStartRows() throws IOException {
        Written w = secondGpuWithAPendingFree();
        Map<String, Object> withoutTraces = new LinkedHashMap<>(w.dict());
        withoutTraces.remove("device_traces"); // as _snapshot(include_traces=False)
        List<TraceEvent> events = Events.readAll(new PyTorchPickleReader(
                new ByteArrayInputStream(PickleWriter.toBytes(withoutTraces)), "state.pickle",
                PyTorchPickleReader.ONLY_DEVICE));
        long segment = ((Number) first(w.dict().get("segments")).get("address")).longValue();
        assertEquals(List.of(new TraceEvent(Kind.PRESEGMENT, segment, 2 * MiB, 0, 0, 1),
                new TraceEvent(Kind.PREALLOC, w.live(), 700, 0, 0, 2),
                new TraceEvent(Kind.PREALLOC, w.pending(), 1000, 0, 0, 3)), events);
    }

    // ------------------------------------------------------------------------------------------------ CPython

    /**
     * Loads argv[1] with CPython's pickle (globals refused) and asserts what Python code relies on; prints "ok".
     */
    private static final String PYTHON_CHECKS = """
            import io, pickle, sys
            class Safe(pickle.Unpickler):
                def find_class(self, module, name):
                    raise pickle.UnpicklingError('global %s.%s' % (module, name))
            s = Safe(io.BytesIO(open(sys.argv[1], 'rb').read())).load()
            live, pending = int(sys.argv[2]), int(sys.argv[3])
            traces = s['device_traces']
            assert len(traces) == 2, traces
            assert traces[0] == [], traces[0]
            assert len(traces[1]) > 0, traces[1]
            assert all(type(t['pool_id']) is tuple and t['pool_id'] == (0, 0) for t in traces[1]), traces[1]
            for seg in s['segments']:
                assert type(seg['segment_pool_id']) is tuple, type(seg['segment_pool_id'])
                assert seg['segment_pool_id'] == (0, 0), seg['segment_pool_id']
                assert seg['device'] == 1, seg['device']
            seg = s['segments'][0]
            block = next(b for b in seg['blocks'] if b['address'] == pending)
            assert block['state'] == 'active_pending_free', block
            assert block['requested_size'] == 1000, block
            assert seg['requested_size'] == 1700, seg['requested_size']
            assert s['allocator_settings']['max_split_size'] == 64 * 1024 * 1024, s['allocator_settings']
            print('ok')
            """;

    @Test
    void cpythonSeesTuplesOneHistoryPerDeviceAndThePendingRequest(@TempDir Path dir) throws Exception {
        assumeTrue(pythonAvailable(), "python3 is not on the PATH: CPython's view of the pickle is not checked");
        Written w = secondGpuWithAPendingFree();
        Path pickle = dir.resolve("gpu1.pickle");
        Files.write(pickle, w.pickle());
        Process p = new ProcessBuilder("python3", "-c", PYTHON_CHECKS, pickle.toString(), Long.toString(w.live()),
                Long.toString(w.pending())).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "python3 timed out");
        assertEquals(0, p.exitValue(), out);
        assertEquals("ok", out.strip());
    }

    static boolean pythonAvailable() {
        try {
            Process p = new ProcessBuilder("python3", "-c", "import sys; print(sys.version_info[0])")
                    .redirectErrorStream(true).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0
                    && new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip().equals("3");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
