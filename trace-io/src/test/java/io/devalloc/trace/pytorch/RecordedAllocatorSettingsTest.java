package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.razorvine.pickle.Pickler;
import org.junit.jupiter.api.Test;

/** {@code allocator_settings} of a snapshot, and the {@code --config} text made from it. */
class RecordedAllocatorSettingsTest {

    private static final long MiB = 1L << 20;

    /** PyTorch's dict at its defaults, as a 2025 snapshot has it. */
    private static Map<String, Object> defaults() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("PYTORCH_CUDA_ALLOC_CONF", "");
        d.put("max_split_size", -1);
        d.put("garbage_collection_threshold", 0.0);
        d.put("expandable_segments", false);
        d.put("pinned_num_register_threads", 1);
        d.put("release_lock_on_cudamalloc", false);
        d.put("pinned_use_cuda_host_register", false);
        d.put("graph_capture_record_stream_reuse", false);
        Map<String, Object> divisions = new LinkedHashMap<>();
        for (int i = 0; i < 16; i++) {
            divisions.put(Long.toString(1L << i), 0);
        }
        d.put("roundup_power2_divisions", divisions);
        return d;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> divisions(Map<String, Object> settings) {
        return (Map<String, Object>) settings.get("roundup_power2_divisions");
    }

    @Test
    void theDefaultsGiveAnEmptyConfiguration() {
        RecordedAllocatorSettings s = RecordedAllocatorSettings.of(defaults());
        assertEquals("", s.config());
        assertTrue(s.recorded());
        assertEquals(List.of(), s.notes());
        assertEquals(-1L, s.values().get("max_split_size"), "ints read as longs");
    }

    @Test
    void everyCarriedKeyBecomesItsConfigurationEntry() {
        Map<String, Object> d = defaults();
        d.put("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,max_split_size_mb:512");
        d.put("max_split_size", (int) (512 * MiB));
        d.put("garbage_collection_threshold", 0.6);
        d.put("expandable_segments", true);
        d.put("pinned_num_register_threads", 8);
        d.put("release_lock_on_cudamalloc", true);
        d.put("max_round_threshold", 64 * MiB);
        d.put("max_cached_size", -1L);
        for (String k : divisions(d).keySet()) {
            divisions(d).put(k, 4);
        }
        RecordedAllocatorSettings s = RecordedAllocatorSettings.of(d);
        assertEquals("max_split_size_mb:512,garbage_collection_threshold:0.6,expandable_segments:True,"
                + "pinned_num_register_threads:8,release_lock_on_cudamalloc:True,roundup_power2_divisions:4,"
                + "pinned_max_round_threshold_mb:64", s.config());
        assertEquals(List.of(), s.notes());
    }

    @Test
    void divisionsThatDifferByIntervalGiveTheListForm() {
        Map<String, Object> d = defaults();
        // PyTorch's test list [64:8,128:2,256:2,512:2,1024:1,>:1]: intervals 0..6 are 8 (the first key fills
        // the lower ones), 7..9 are 2, 10..15 are 1.
        long[] values = {8, 8, 8, 8, 8, 8, 8, 2, 2, 2, 1, 1, 1, 1, 1, 1};
        for (int i = 0; i < 16; i++) {
            divisions(d).put(Long.toString(1L << i), values[i]);
        }
        assertEquals("roundup_power2_divisions:[1:8,2:8,4:8,8:8,16:8,32:8,64:8,128:2,256:2,512:2,1024:1,2048:1,"
                + "4096:1,8192:1,16384:1,32768:1]", RecordedAllocatorSettings.of(d).config());

        Map<String, Object> sparse = defaults();
        divisions(sparse).put("256", 4);
        assertEquals("roundup_power2_divisions:[1:0,256:4]", RecordedAllocatorSettings.of(sparse).config(),
                "zero intervals stay zero: only the first key fills the lower ones");
    }

    @Test
    void theStringsOtherKeysAreCopiedAndItsCarriedKeysAreNot() {
        Map<String, Object> d = defaults();
        d.put("PYTORCH_CUDA_ALLOC_CONF", " max_split_size_mb:128, per_process_memory_fraction:0.9 ,"
                + "roundup_power2_divisions:[256:1,>:4],large_segment_size_mb:40");
        d.put("max_split_size", 128 * MiB);
        RecordedAllocatorSettings s = RecordedAllocatorSettings.of(d);
        // The divisions come from the dict (all 0 here: the values the allocator ran with), not the string.
        assertEquals("max_split_size_mb:128,per_process_memory_fraction:0.9,large_segment_size_mb:40", s.config());
    }

    @Test
    void whatCannotBeCarriedOverIsNoted() {
        Map<String, Object> d = defaults();
        d.put("max_split_size", 3 * MiB + 1);
        d.put("expandable_segments", "yes");
        d.put("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:[20");
        RecordedAllocatorSettings s = RecordedAllocatorSettings.of(d);
        assertEquals("", s.config());
        assertEquals(3, s.notes().size(), s.notes().toString());
        assertTrue(s.notes().get(0).contains("not a whole number of MiB"), s.notes().toString());
        assertTrue(s.notes().get(1).contains("allocator_settings['expandable_segments'] is a str (yes), not a bool"),
                s.notes().toString());
        assertTrue(s.notes().get(2).contains("does not split into key:value entries"), s.notes().toString());
    }

    @Test
    void theReaderGivesTheSnapshotsSettingsOrTheDefaultsWithANote() throws IOException {
        Map<String, Object> settings = defaults();
        settings.put("expandable_segments", true);
        Map<String, Object> snapshot = new LinkedHashMap<>();
        snapshot.put("segments", List.of());
        snapshot.put("device_traces", List.of(List.of()));
        snapshot.put("allocator_settings", settings);
        RecordedAllocatorSettings read = new PyTorchPickleReader(
                new ByteArrayInputStream(new Pickler().dumps(snapshot)), "s.pickle", 0).recordedSettings();
        assertEquals("expandable_segments:True", read.config());

        snapshot.remove("allocator_settings");
        RecordedAllocatorSettings none = new PyTorchPickleReader(
                new ByteArrayInputStream(new Pickler().dumps(snapshot)), "s.pickle", 0).recordedSettings();
        assertFalse(none.recorded());
        assertEquals("", none.config());
        assertTrue(none.notes().getFirst().contains("no allocator_settings"), none.notes().toString());
    }

    @Test
    void theSharedPicklesWereRecordedWithTheDefaults() throws IOException {
        String dir = System.getProperty("devalloc.shared.dir");
        assumeTrue(dir != null && !dir.isBlank(), "system property devalloc.shared.dir is not set");
        Path pickle = Path.of(dir, "traces", "pt-opt-zeroth-order-fl", "memory.pickle");
        assumeTrue(Files.isReadable(pickle), pickle + " is absent: the shared traces are not checked out here");
        RecordedAllocatorSettings s = new PyTorchPickleReader(pickle).recordedSettings();
        assertTrue(s.recorded());
        assertEquals("", s.config());
        assertEquals(List.of(), s.notes());
    }
}
