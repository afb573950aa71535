package io.devalloc.trace.pytorch;

import static io.devalloc.trace.pytorch.PickleWriterTest.map;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.PythonTuple;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.trace.record.FakeDevice;
import io.devalloc.trace.text.JsonWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PyTorch's {@code _snapshot()} structure from any allocator's {@link MemorySnapshot}: a hand-built snapshot with
 * every block state, pool and an unmapped range, the direct allocator's own snapshot, and both loaded by CPython.
 */
class PyTorchSnapshotsTest {

    private static final long MiB = 1 << 20;
    private static final long BASE = 0x7f00_0000_0000L;
    private static final long STREAM = 0x5581_d2a0L;

    private static AllocatorStats zeroStats() {
        return new AllocatorStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, Long.MAX_VALUE);
    }

    /**
     * Four segments, given out of address order: a "region" (BFC's pool name) with an allocated, a pending-free
     * and a free block on a stream; a "small" one; a virtual-memory one with an unmapped hole; one all unmapped.
     */
    static MemorySnapshot handBuilt() {
        SegmentSnapshot region = new SegmentSnapshot(BASE + 0x1000_0000L, 2 * MiB, STREAM, "region", List.of(
                new BlockSnapshot(BASE + 0x1000_0000L, MiB, 1_000_000, BlockState.ALLOCATED),
                new BlockSnapshot(BASE + 0x1000_0000L + MiB, MiB / 2, 500_000, BlockState.PENDING_FREE),
                new BlockSnapshot(BASE + 0x1000_0000L + 3 * MiB / 2, MiB / 2, 0, BlockState.FREE)));
        SegmentSnapshot small = new SegmentSnapshot(BASE, 2 * MiB, 0, "small", List.of(
                new BlockSnapshot(BASE, 512, 500, BlockState.ALLOCATED),
                new BlockSnapshot(BASE + 512, 2 * MiB - 512, 0, BlockState.FREE)));
        long v = BASE + 0x2000_0000L;
        SegmentSnapshot expandable = new SegmentSnapshot(v, 8 * MiB, 0, "large", List.of(
                new BlockSnapshot(v, 2 * MiB, 2 * MiB, BlockState.ALLOCATED),
                new BlockSnapshot(v + 2 * MiB, 2 * MiB, 0, BlockState.UNMAPPED),
                new BlockSnapshot(v + 4 * MiB, 2 * MiB, 0, BlockState.FREE),
                new BlockSnapshot(v + 6 * MiB, 2 * MiB, 1, BlockState.ALLOCATED)));
        SegmentSnapshot unmapped = new SegmentSnapshot(BASE + 0x3000_0000L, 2 * MiB, 0, "large", List.of(
                new BlockSnapshot(BASE + 0x3000_0000L, 2 * MiB, 0, BlockState.UNMAPPED)));
        return new MemorySnapshot("bfc", new DeviceDescriptor("sim", 2, "sim", DeviceKind.SIMULATED, 80L << 30),
                List.of(expandable, region, unmapped, small), zeroStats());
    }

    private static Map<String, Object> block(long address, long size, long requested, String state) {
        return map("address", address, "size", size, "requested_size", requested, "state", state,
                "frames", List.of());
    }

    private static Map<String, Object> segment(int device, long address, long total, long allocated, long active,
                                               long requested, long stream, String type, boolean expandable,
                                               List<Object> blocks) {
        return map("device", device, "address", address, "total_size", total, "allocated_size", allocated,
                "active_size", active, "requested_size", requested, "stream", stream, "segment_type", type,
                "segment_pool_id", PythonTuple.of(0L, 0L), "is_expandable", expandable, "frames", List.of(),
                "blocks", blocks);
    }

    @Test
    void everyFieldOfAHandBuiltSnapshot() {
        long v = BASE + 0x2000_0000L;
        Map<String, Object> expected = map(
                "segments", List.of(
                        segment(2, BASE, 2 * MiB, 512, 512, 500, 0, "small", false, List.of(
                                block(BASE, 512, 500, "active_allocated"),
                                block(BASE + 512, 2 * MiB - 512, 0, "inactive"))),
                        segment(2, BASE + 0x1000_0000L, 2 * MiB, MiB, 3 * MiB / 2, 1_500_000, STREAM, "large", false,
                                List.of(block(BASE + 0x1000_0000L, MiB, 1_000_000, "active_allocated"),
                                        block(BASE + 0x1000_0000L + MiB, MiB / 2, 500_000, "active_pending_free"),
                                        block(BASE + 0x1000_0000L + 3 * MiB / 2, MiB / 2, 0, "inactive"))),
                        segment(2, v, 2 * MiB, 2 * MiB, 2 * MiB, 2 * MiB, 0, "large", true, List.of(
                                block(v, 2 * MiB, 2 * MiB, "active_allocated"))),
                        segment(2, v + 4 * MiB, 4 * MiB, 2 * MiB, 2 * MiB, 1, 0, "large", true, List.of(
                                block(v + 4 * MiB, 2 * MiB, 0, "inactive"),
                                block(v + 6 * MiB, 2 * MiB, 1, "active_allocated")))),
                "device_traces", List.of(List.of(), List.of(), List.of()),
                "allocator_settings", Map.of(),
                "external_annotations", List.of());
        Map<String, Object> dict = PyTorchSnapshots.toDict(handBuilt());
        assertEquals(expected, dict);
        assertEquals(List.of("segments", "device_traces", "allocator_settings", "external_annotations"),
                new ArrayList<>(dict.keySet()));
        @SuppressWarnings("unchecked")
        Map<String, Object> first = (Map<String, Object>) ((List<Object>) dict.get("segments")).getFirst();
        assertEquals(List.of("device", "address", "total_size", "allocated_size", "active_size", "requested_size",
                "stream", "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"),
                new ArrayList<>(first.keySet()), "PyTorch's key order");
        assertInstanceOf(Integer.class, first.get("device"));
        assertInstanceOf(Long.class, first.get("address"));
        // The tree is the caller's to extend.
        dict.put("allocator_settings", new LinkedHashMap<>(Map.of("expandable_segments", true)));
        // Both writers take it, and the convenience methods write the same as the writers on toDict.
        assertEquals(JsonWriter.toString(PyTorchSnapshots.toDict(handBuilt())), PyTorchSnapshots.json(handBuilt()));
        assertEquals(JsonWriter.toString(PyTorchSnapshots.toDict(handBuilt()), true),
                PyTorchSnapshots.json(handBuilt(), true));
    }

    @Test
    void theSnapshotsSettingsAreItsAllocatorSettingsAsAMutableCopyInTheirOrder() {
        Map<String, Object> roundup = map("1", 4L, "2", 0L);
        MemorySnapshot withSettings = new MemorySnapshot("caching", new FakeDevice(MiB).descriptor(), List.of(),
                zeroStats(), map("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", "max_split_size", -1L,
                        "garbage_collection_threshold", 0.0, "expandable_segments", true,
                        "roundup_power2_divisions", roundup));
        Map<String, Object> dict = PyTorchSnapshots.toDict(withSettings);
        @SuppressWarnings("unchecked")
        Map<String, Object> settings = (Map<String, Object>) dict.get("allocator_settings");
        assertEquals(withSettings.settings(), settings);
        assertEquals(List.of("PYTORCH_CUDA_ALLOC_CONF", "max_split_size", "garbage_collection_threshold",
                "expandable_segments", "roundup_power2_divisions"), new ArrayList<>(settings.keySet()));
        assertEquals("{\"segments\":[],\"device_traces\":[[]],\"allocator_settings\":{\"PYTORCH_CUDA_ALLOC_CONF\":"
                + "\"expandable_segments:True\",\"max_split_size\":-1,\"garbage_collection_threshold\":0.0,"
                + "\"expandable_segments\":true,\"roundup_power2_divisions\":{\"1\":4,\"2\":0}},"
                + "\"external_annotations\":[]}", PyTorchSnapshots.json(withSettings));
        // The tree is the caller's: changing it leaves the snapshot as it was.
        settings.put("extra", 1L);
        @SuppressWarnings("unchecked")
        Map<String, Object> nested = (Map<String, Object>) settings.get("roundup_power2_divisions");
        nested.put("4", 2L);
        assertEquals(5, withSettings.settings().size());
        assertEquals(roundup, withSettings.settings().get("roundup_power2_divisions"));
    }

    @Test
    void aDeviceOfIndexOneHasAnEmptyTraceListForDeviceZero() {
        MemorySnapshot second = new MemorySnapshot("direct", new DeviceDescriptor("sim", 1, "sim",
                DeviceKind.SIMULATED, MiB), List.of(), zeroStats());
        assertEquals(List.of(List.of(), List.of()), PyTorchSnapshots.toDict(second).get("device_traces"));
    }

    @Test
    void anEmptySnapshotHasTheFourKeys() {
        MemorySnapshot empty = new MemorySnapshot("direct", new FakeDevice(MiB).descriptor(), List.of(), zeroStats());
        assertEquals("{\"segments\":[],\"device_traces\":[[]],\"allocator_settings\":{},\"external_annotations\":[]}",
                PyTorchSnapshots.json(empty));
    }

    @Test
    void theDirectAllocatorsSnapshot() throws IOException {
        try (DeviceAllocator direct = new DirectAllocatorProvider().create(new FakeDevice(64 * MiB), "")) {
            DeviceStream s = direct.device().createStream();
            long a = direct.malloc(1000);
            long b = direct.malloc(3 * MiB, s);
            Map<String, Object> expected = map(
                    "segments", List.of(
                            segment(0, a, 1024, 1024, 1024, 1000, 0, "large", false,
                                    List.of(block(a, 1024, 1000, "active_allocated"))),
                            segment(0, b, 3 * MiB, 3 * MiB, 3 * MiB, 3 * MiB, s.handle(), "large", false,
                                    List.of(block(b, 3 * MiB, 3 * MiB, "active_allocated")))),
                    "device_traces", List.of(List.of()),
                    "allocator_settings", Map.of("memory_limit_bytes", -1L),
                    "external_annotations", List.of());
            assertEquals(expected, PyTorchSnapshots.toDict(direct.snapshot()));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            PyTorchSnapshots.writePickle(direct.snapshot(), out);
            assertEquals(0, Arrays.compare(PickleWriter.toBytes(expected), out.toByteArray()));
        }
    }

    // ------------------------------------------------------------------------------------------------ CPython

    /**
     * Loads argv[1] with an unpickler that refuses every global, checks that json.load of argv[2] gives the same
     * tree, checks what memory_viz relies on (blocks tile each segment from its address, the sums), and prints
     * {@code expr=ascii(eval(expr))} for each further argument, with the snapshot as {@code s}.
     */
    private static final String LOAD_SCRIPT = """
            import io, json, pickle, sys
            class Safe(pickle.Unpickler):
                def find_class(self, module, name):
                    raise pickle.UnpicklingError('global %s.%s' % (module, name))
            s = Safe(io.BytesIO(open(sys.argv[1], 'rb').read())).load()
            def as_json(v):
                if isinstance(v, dict):
                    return {k: as_json(x) for k, x in v.items()}
                if isinstance(v, (list, tuple)):
                    return [as_json(x) for x in v]
                return v
            with open(sys.argv[2], encoding='utf-8') as f:
                assert json.load(f) == as_json(s)  # JSON has arrays where the pickle has tuples
            for seg in s['segments']:
                cursor = seg['address']
                for b in seg['blocks']:
                    assert b['address'] == cursor, (seg['address'], b)
                    cursor += b['size']
                assert cursor == seg['address'] + seg['total_size'], seg['address']
                active = [b for b in seg['blocks'] if b['state'].startswith('active')]
                assert seg['active_size'] == sum(b['size'] for b in active)
                assert seg['requested_size'] == sum(b['requested_size'] for b in active)
                assert seg['allocated_size'] == sum(b['size'] for b in seg['blocks']
                                                    if b['state'] == 'active_allocated')
            addresses = [seg['address'] for seg in s['segments']]
            assert addresses == sorted(addresses)
            print('checks=ok')
            for expr in sys.argv[3:]:
                print(expr + '=' + ascii(eval(expr, {'s': s})))
            """;

    @Test
    void cpythonLoadsTheHandBuiltSnapshot(@TempDir Path dir) throws Exception {
        assumeTrue(PickleWriterTest.pythonAvailable(), "python3 not on PATH");
        Path pickle = dir.resolve("snapshot.pickle");
        Path json = dir.resolve("snapshot.json");
        try (OutputStream out = Files.newOutputStream(pickle)) {
            PyTorchSnapshots.writePickle(handBuilt(), out);
        }
        Files.writeString(json, PyTorchSnapshots.json(handBuilt(), true), StandardCharsets.UTF_8);
        Map<String, String> probes = new LinkedHashMap<>();
        probes.put("list(s)", "['segments', 'device_traces', 'allocator_settings', 'external_annotations']");
        probes.put("len(s['segments'])", "4");
        probes.put("[seg['segment_type'] for seg in s['segments']]", "['small', 'large', 'large', 'large']");
        probes.put("[seg['is_expandable'] for seg in s['segments']]", "[False, False, True, True]");
        probes.put("[seg['device'] for seg in s['segments']]", "[2, 2, 2, 2]");
        probes.put("s['segments'][1]['stream']", Long.toString(STREAM));
        probes.put("s['segments'][1]['address']", Long.toString(BASE + 0x1000_0000L));
        probes.put("[b['state'] for b in s['segments'][1]['blocks']]",
                "['active_allocated', 'active_pending_free', 'inactive']");
        probes.put("s['segments'][0]['segment_pool_id']", "(0, 0)");
        // What Python code compares: seg['segment_pool_id'] == (0, 0)
        probes.put("[seg['segment_pool_id'] for seg in s['segments']].count((0, 0))", "4");
        probes.put("s['segments'][1]['requested_size']", "1500000");
        probes.put("s['segments'][0]['frames']", "[]");
        probes.put("s['device_traces']", "[[], [], []]");
        probes.put("(s['allocator_settings'], s['external_annotations'])", "({}, [])");
        String out = runPython(dir, pickle, json, probes);
        assertTrue(out.contains("checks=ok"), out);
    }

    @Test
    void cpythonLoadsTheDirectAllocatorsSnapshot(@TempDir Path dir) throws Exception {
        assumeTrue(PickleWriterTest.pythonAvailable(), "python3 not on PATH");
        try (DeviceAllocator direct = new DirectAllocatorProvider().create(new FakeDevice(64 * MiB), "")) {
            long a = direct.malloc(1000);
            direct.malloc(3 * MiB, direct.device().createStream());
            Path pickle = dir.resolve("direct.pickle");
            Path json = dir.resolve("direct.json");
            try (OutputStream out = Files.newOutputStream(pickle)) {
                PyTorchSnapshots.writePickle(direct.snapshot(), out);
            }
            Files.writeString(json, PyTorchSnapshots.json(direct.snapshot()), StandardCharsets.UTF_8);
            Map<String, String> probes = new LinkedHashMap<>();
            probes.put("[seg['total_size'] for seg in s['segments']]", "[1024, 3145728]");
            probes.put("s['segments'][0]['blocks'][0]['address']", Long.toString(a));
            probes.put("s['segments'][0]['blocks'][0]['requested_size']", "1000");
            String out = runPython(dir, pickle, json, probes);
            assertTrue(out.contains("checks=ok"), out);

            // The project's converter turns any allocator's snapshot into a warm start: a presegment row per
            // segment and a prealloc row per live block.
            Path script = Path.of(System.getProperty("devalloc.shared.dir", "../../shared"), "traces",
                    "pickle_to_csv.py");
            assumeTrue(Files.isRegularFile(script),
                    () -> script + " is absent: the shared traces are not checked out here");
            String csv = PickleWriterTest.runPython(dir,
                    "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
                    List.of(script.toString(), pickle.toString(), "--device", "0", "--prepend-segments",
                            "--prepend-live"));
            long b = a + 1024;
            long stream = FakeDevice.FIRST_STREAM;
            assertEquals("seq,action,addr,size,stream,time_us\n"
                    + "0,presegment," + a + ",1024,0,\n"
                    + "1,presegment," + b + ",3145728," + stream + ",\n"
                    + "2,prealloc," + a + ",1000,0,\n"
                    + "3,prealloc," + b + ",3145728," + stream + ",\n", csv);
        }
    }

    private static String runPython(Path dir, Path pickle, Path json, Map<String, String> probes) throws Exception {
        List<String> args = new ArrayList<>(List.of(pickle.toString(), json.toString()));
        args.addAll(probes.keySet());
        String out = PickleWriterTest.runPython(dir, LOAD_SCRIPT, args);
        Map<String, String> got = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            int eq = line.indexOf('=');
            got.put(line.substring(0, eq), line.substring(eq + 1));
        }
        for (Map.Entry<String, String> probe : probes.entrySet()) {
            assertEquals(probe.getValue(), got.get(probe.getKey()), probe.getKey() + "\n" + out);
        }
        return out;
    }
}
