package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.Events;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import net.razorvine.pickle.Pickler;
import net.razorvine.pickle.Unpickler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PyTorchPickleReaderTest {

    @TempDir
    Path dir;

    /**
     * A small snapshot that exercises every rule of {@code pickle_to_csv.py}, as Python 3.11 pickles it (protocol
     * 4: FRAME, MEMOIZE, SHORT_BINUNICODE ...): device 0 has a segment allocated in the trace (5000), one freed in it
     * (3000), an expandable one whose end was unmapped, then mapped further (9000: 3072 B at the start, 4096 B at
     * the end), one whose whole mapping happened in the trace (20000), a
     * block live before the trace and never touched (1000), one freed without an alloc (2000), an oom and a snapshot
     * entry; device 1 has one segment and no events. {@link #snapshot()} builds the same dicts in Java.
     */
    private static final String PROTOCOL_4_SNAPSHOT = """
            gASVlQMAAAAAAAB9lCiMCHNlZ21lbnRzlF2UKH2UKIwGZGV2aWNllEsAjAdhZGRyZXNzlE3oA4wKdG90YWxfc2l6ZZRNkAGMBnN0\
            cmVhbZRLAIwGYmxvY2tzlF2UKH2UKGgFTegDjARzaXpllEtkjAVzdGF0ZZSMEGFjdGl2ZV9hbGxvY2F0ZWSUjA5yZXF1ZXN0ZWRf\
            c2l6ZZRLWnV9lChoBU1MBGgLS2RoDGgNaA5LZHV9lChoBU2wBGgLS8hoDIwIaW5hY3RpdmWUdWV1fZQoaARLAGgFTYgTaAZNLAFo\
            B0sHaAhdlH2UKGgFTYgTaAtNLAFoDIwTYWN0aXZlX3BlbmRpbmdfZnJlZZRoDkv6dWF1fZQoaARLAGgFTSgjaAZNABBoB0sAaAhd\
            lIwNaXNfZXhwYW5kYWJsZZSIdX2UKGgESwBoBU0gTmgGTQACaAdLAGgYiHV9lChoBEsBaAVNWBtoBktkaAdLAGgIXZR9lChoBU1Y\
            G2gLS2RoDGgNaA5LPHVhdWWMDWRldmljZV90cmFjZXOUXZQoXZQofZQojAZhY3Rpb26UjAVhbGxvY5SMBGFkZHKUTUwEaAtLZGgH\
            SwCMB3RpbWVfdXOUSwp1fZQoaCGMDmZyZWVfY29tcGxldGVklGgjTdAHaAtLQGgHSwNoJEsLdX2UKGghjAxzZWdtZW50X2ZyZWWU\
            aCNNuAtoC01YAmgHSwBoJEsMdX2UKGghjA1zZWdtZW50X2FsbG9jlGgjTYgTaAtNLAFoB0sHaCRLDXV9lChoIWgiaCNNiBNoC0v6\
            aAdLB2gkSw51fZQoaCGMDmZyZWVfcmVxdWVzdGVklGgjTUwEaAtLZGgHSwBoJEsPdX2UKIwGYWN0aW9ulIwNc2VnbWVudF91bm1h\
            cJSMBGFkZHKUTSgrjARzaXpllE0ABIwGc3RyZWFtlEsAjAd0aW1lX3VzlEsQdX2UKGgvjAtzZWdtZW50X21hcJRoMU0oK2gyTQAI\
            aDNLAGg0SxF1fZQoaCGMC3NlZ21lbnRfbWFwlGgjTSBOaAtNAAJoB0sAaCRLEnV9lChoIYwDb29tlIwLZGV2aWNlX2ZyZWWUTTkw\
            aAtN5wNoB0sAaCRLE3V9lChoIYwIc25hcHNob3SUaCNLAGgLSwBoB0sAaCRLFHV9lChoIWgiaCNNFAVoC0sKaAdLAGgkSxV1fZQo\
            aCFoJmgjTRQFaAtLCmgHSwBoJEsWdWVdlGV1Lg==""";

    /** What {@code pickle_to_csv.py --prepend-segments --prepend-live} writes for that snapshot, device 0. */
    private static final String CSV_DEVICE_0 = """
            seq,action,addr,size,stream,time_us
            0,presegment,1000,400,0,10
            1,presegment,3000,600,0,10
            2,presegment,9000,3072,0,10
            3,prealloc,2000,64,3,10
            4,prealloc,1000,90,0,10
            5,alloc,1100,100,0,10
            6,free_completed,2000,64,3,11
            7,segment_free,3000,600,0,12
            8,segment_alloc,5000,300,7,13
            9,alloc,5000,250,7,14
            10,free_requested,1100,100,0,15
            11,segment_unmap,11048,1024,0,16
            12,segment_map,11048,2048,0,17
            13,segment_map,20000,512,0,18
            14,oom,,12345,0,19
            15,snapshot,0,0,0,20
            16,alloc,1300,10,0,21
            17,free_completed,1300,10,0,22
            """;

    /** The same with {@code --device 1}. */
    private static final String CSV_DEVICE_1 = """
            seq,action,addr,size,stream,time_us
            0,presegment,7000,100,0,
            1,prealloc,7000,60,0,
            """;

    private static Map<String, Object> block(int address, int size, String state, Integer requested) {
        Map<String, Object> b = new HashMap<>();
        b.put("address", address);
        b.put("size", size);
        b.put("state", state);
        if (requested != null) {
            b.put("requested_size", requested);
        }
        return b;
    }

    private static Map<String, Object> segment(int device, int address, int total, int stream,
                                               List<Object> blocks) {
        Map<String, Object> s = new HashMap<>();
        s.put("device", device);
        s.put("address", address);
        s.put("total_size", total);
        s.put("stream", stream);
        if (blocks != null) {
            s.put("blocks", blocks);
        }
        return s;
    }

    private static Map<String, Object> expandable(Map<String, Object> segment) {
        segment.put("is_expandable", true);
        return segment;
    }

    private static Map<String, Object> entry(String action, int addr, int size, int stream, int time) {
        Map<String, Object> e = new HashMap<>();
        e.put("action", action);
        e.put("addr", addr);
        e.put("size", size);
        e.put("stream", stream);
        e.put("time_us", time);
        e.put("frames", new ArrayList<>(List.of(Map.of("filename", "train.py", "line", 12, "name", "step"))));
        return e;
    }

    /** The snapshot of {@link #PROTOCOL_4_SNAPSHOT}, built in Java. */
    private static Map<String, Object> snapshot() {
        List<Object> segments = new ArrayList<>(List.of(
                segment(0, 1000, 400, 0, new ArrayList<>(List.of(block(1000, 100, "active_allocated", 90),
                        block(1100, 100, "active_allocated", 100), block(1200, 200, "inactive", null)))),
                segment(0, 5000, 300, 7, new ArrayList<>(List.of(block(5000, 300, "active_pending_free", 250)))),
                expandable(segment(0, 9000, 4096, 0, new ArrayList<>())),
                expandable(segment(0, 20000, 512, 0, null)),
                segment(1, 7000, 100, 0, new ArrayList<>(List.of(block(7000, 100, "active_allocated", 60))))));
        Map<String, Object> oom = new HashMap<>();
        oom.put("action", "oom");
        oom.put("device_free", 12345);
        oom.put("size", 999);
        oom.put("stream", 0);
        oom.put("time_us", 19);
        List<Object> trace = new ArrayList<>(List.of(
                entry("alloc", 1100, 100, 0, 10),
                entry("free_completed", 2000, 64, 3, 11),
                entry("segment_free", 3000, 600, 0, 12),
                entry("segment_alloc", 5000, 300, 7, 13),
                entry("alloc", 5000, 250, 7, 14),
                entry("free_requested", 1100, 100, 0, 15),
                entry("segment_unmap", 11048, 1024, 0, 16),
                entry("segment_map", 11048, 2048, 0, 17),
                entry("segment_map", 20000, 512, 0, 18),
                oom,
                entry("snapshot", 0, 0, 0, 20),
                entry("alloc", 1300, 10, 0, 21),
                entry("free_completed", 1300, 10, 0, 22)));
        Map<String, Object> snapshot = new LinkedHashMap<>();
        snapshot.put("segments", segments);
        snapshot.put("device_traces", new ArrayList<>(List.of(trace, new ArrayList<>())));
        snapshot.put("allocator_settings", Map.of("expandable_segments", false, "garbage_collection_threshold", 0.0));
        return snapshot;
    }

    private static byte[] pickle(Object o) throws IOException {
        return new Pickler().dumps(o);
    }

    private static List<TraceEvent> read(byte[] pickle, int device) throws IOException {
        return Events.readAll(new PyTorchPickleReader(new ByteArrayInputStream(pickle), "s.pickle", device));
    }

    private static List<TraceEvent> csv(String text) throws IOException {
        return Events.readAll(new PyTorchCsvReader(new StringReader(text), "s.csv"));
    }

    @Test
    void thePickleGivesTheEventsOfTheCsvPickleToCsvMakesOfIt() throws IOException {
        byte[] python = Base64.getDecoder().decode(PROTOCOL_4_SNAPSHOT);
        List<TraceEvent> events = read(python, PyTorchPickleReader.ONLY_DEVICE);
        assertEquals(List.of(
                new TraceEvent(Kind.PRESEGMENT, 1000, 400, 0, 0, 1),
                new TraceEvent(Kind.PRESEGMENT, 3000, 600, 0, 0, 2),
                new TraceEvent(Kind.PRESEGMENT, 9000, 3072, 0, 0, 3),
                new TraceEvent(Kind.PREALLOC, 2000, 64, 3, 0, 4),
                new TraceEvent(Kind.PREALLOC, 1000, 90, 0, 0, 5),
                new TraceEvent(Kind.ALLOC, 1100, 100, 0, 0, 6),
                new TraceEvent(Kind.FREE, 2000, 64, 3, 0, 7),
                new TraceEvent(Kind.SEGMENT_FREE, 3000, 600, 0, 0, 8),
                new TraceEvent(Kind.SEGMENT_ALLOC, 5000, 300, 7, 0, 9),
                new TraceEvent(Kind.ALLOC, 5000, 250, 7, 0, 10),
                new TraceEvent(Kind.SEGMENT_UNMAP, 11048, 1024, 0, 0, 12),
                new TraceEvent(Kind.SEGMENT_MAP, 11048, 2048, 0, 0, 13),
                new TraceEvent(Kind.SEGMENT_MAP, 20000, 512, 0, 0, 14),
                new TraceEvent(Kind.OOM, 12345, 999, 0, 0, 15),
                new TraceEvent(Kind.ALLOC, 1300, 10, 0, 0, 17),
                new TraceEvent(Kind.FREE, 1300, 10, 0, 0, 18)), events);
        assertEquals(Events.withoutLines(csv(CSV_DEVICE_0)), asTheCsv(events));
        assertEquals(Events.withoutLines(csv(CSV_DEVICE_1)), asTheCsv(read(python, 1)));
    }

    /**
     * The events as the CSV that {@code pickle_to_csv.py} makes of the pickle gives them: without lines, and an oom's
     * request unknown (the script writes the device's free bytes in the size column and drops the request).
     */
    private static List<String> asTheCsv(List<TraceEvent> events) {
        List<TraceEvent> csv = new ArrayList<>();
        for (TraceEvent e : events) {
            csv.add(e.kind() == Kind.OOM ? new TraceEvent(Kind.OOM, e.key(), 0, e.stream(), e.thread(), e.line()) : e);
        }
        return Events.withoutLines(csv);
    }

    @Test
    void aPickleWrittenByPyroliteReadsTheSameAsPythons() throws IOException {
        byte[] java = pickle(snapshot());
        assertEquals(Events.withoutLines(csv(CSV_DEVICE_0)), asTheCsv(read(java, PyTorchPickleReader.ONLY_DEVICE)));
        assertEquals(Events.withoutLines(csv(CSV_DEVICE_1)), asTheCsv(read(java, 1)));
    }

    @Test
    void fromAFileTheOnlyDeviceWithAHistoryIsReadAndSkippedEntriesAreCounted() throws IOException {
        Path file = dir.resolve("snapshot.pickle");
        Files.write(file, Base64.getDecoder().decode(PROTOCOL_4_SNAPSHOT));
        PyTorchPickleReader reader = new PyTorchPickleReader(file);
        assertEquals(TraceFormat.PYTORCH_PICKLE, reader.format());
        assertEquals(0, reader.device());
        assertEquals(16, Events.readAll(reader).size());
        assertEquals(2, reader.skipped());
        assertEquals(1, new PyTorchPickleReader(file, 1).device());
    }

    /**
     * A file is read through a buffer, never whole, and its trace entries kept as rows as they load: every device
     * reads exactly as from the same bytes in memory, for Python's pickle and Pyrolite's.
     */
    @Test
    void aFileReadsAsItsBytesInMemory() throws IOException {
        for (byte[] pickle : List.of(Base64.getDecoder().decode(PROTOCOL_4_SNAPSHOT), pickle(snapshot()))) {
            Path file = dir.resolve("same.pickle");
            Files.write(file, pickle);
            for (int device : new int[] {0, 1}) {
                assertEquals(read(pickle, device), Events.readAll(new PyTorchPickleReader(file, device)));
            }
        }
    }

    /** A file that cannot be read is an I/O error, not a malformed trace. */
    @Test
    void aMissingFileIsAnIoErrorNotAFormatError() {
        IOException e = assertThrows(IOException.class, () -> PyTorchSnapshotFile.read(dir.resolve("gone.pickle")));
        assertFalse(e instanceof TraceFormatException, e.toString());
        assertTrue(e instanceof NoSuchFileException, e.toString());
    }

    @Test
    void aSnapshotWithAHistoryOnSeveralDevicesIsReadDeviceByDeviceNoneChosenSilently() throws IOException {
        Map<String, Object> snapshot = new HashMap<>();
        List<Object> one = new ArrayList<>(List.of(entry("alloc", 1, 2, 0, 0)));
        List<Object> two = new ArrayList<>(List.of(entry("alloc", 3, 4, 0, 0), entry("free_completed", 3, 4, 0, 0)));
        List<Object> alsoTwo = new ArrayList<>(List.of(entry("alloc", 5, 6, 0, 0), entry("alloc", 7, 8, 0, 0)));
        snapshot.put("device_traces", new ArrayList<>(List.of(one, two, alsoTwo, new ArrayList<>())));
        byte[] pickle = pickle(snapshot);
        TraceFormatException several = assertThrows(TraceFormatException.class,
                () -> new PyTorchPickleReader(new ByteArrayInputStream(pickle), "b.pickle",
                        PyTorchPickleReader.ONLY_DEVICE));
        assertTrue(several.getMessage().contains("a history on 3 devices (0, 1 and 2)"), several.getMessage());
        PyTorchSnapshotFile file = PyTorchSnapshotFile.read(new ByteArrayInputStream(pickle), "b.pickle");
        assertEquals(List.of(new SnapshotDevice(0, 1, 1, 0, 0), new SnapshotDevice(1, 2, 2, 0, 0),
                new SnapshotDevice(2, 2, 2, 0, 0)), file.devices());
        assertEquals(List.of(3), file.unusedDevices(), "an empty list on a device without segments: never used");
        assertEquals(List.of(new TraceEvent(Kind.ALLOC, 3, 4, 0, 0, 1), new TraceEvent(Kind.FREE, 3, 4, 0, 0, 2)),
                Events.readAll(file.reader(1)));
        assertEquals(List.of(new TraceEvent(Kind.ALLOC, 1, 2, 0, 0, 1)), Events.readAll(file.reader(0)));
        assertThrows(IllegalStateException.class, () -> file.reader(1), "a device's entries go as they are read");
        TraceFormatException absent = assertThrows(TraceFormatException.class, () -> file.reader(4));
        assertTrue(absent.getMessage().contains("device 4 is not in the snapshot: it holds devices 0, 1 and 2"),
                absent.getMessage());
        assertFalse(absent.getMessage().contains(":0:"), "no line for the file as a whole: " + absent.getMessage());
        TraceFormatException unused = assertThrows(TraceFormatException.class, () -> file.reader(3));
        assertTrue(unused.getMessage().contains("device 3 is unused in the snapshot (an empty trace list and no"
                + " segment"), unused.getMessage());
    }

    // ---- expandable segments: mapped ranges walked back as intervals ----

    private static final int M = 1 << 21; // a 2 MiB page
    private static final int A = 64 * M;

    /** Expandable segments at the end (address, size) on device 0, stream 0, and a device 0 trace. */
    private static Map<String, Object> expandableSnapshot(int[][] endRanges, List<Object> trace) {
        List<Object> segments = new ArrayList<>();
        for (int[] r : endRanges) {
            segments.add(expandable(segment(0, r[0], r[1], 0, new ArrayList<>())));
        }
        Map<String, Object> snapshot = new LinkedHashMap<>();
        snapshot.put("segments", segments);
        snapshot.put("device_traces", new ArrayList<>(List.of(trace)));
        return snapshot;
    }

    private static List<TraceEvent> presegments(Map<String, Object> snapshot) throws IOException {
        return read(pickle(snapshot), 0).stream().filter(e -> e.kind() == Kind.PRESEGMENT).toList();
    }

    private static TraceEvent pre(long address, long size, long record) {
        return new TraceEvent(Kind.PRESEGMENT, address, size, 0, 0, record);
    }

    @Test
    void anUnmapThatSplitARangeIsUndoneIntoOneRange() throws IOException {
        // [A, A+6M) mapped when recording began; empty_cache unmapped its middle.
        Map<String, Object> s = expandableSnapshot(new int[][] {{A, 2 * M}, {A + 4 * M, 2 * M}}, new ArrayList<>(
                List.of(entry("segment_unmap", A + 2 * M, 2 * M, 0, 1))));
        assertEquals(List.of(pre(A, 6 * M, 1)), presegments(s));
    }

    @Test
    void aMapJustBelowARangeIsUndoneByMovingItsStartBack() throws IOException {
        // [A+2M, A+4M) mapped when recording began; a map of [A, A+2M) grew it downwards.
        Map<String, Object> s = expandableSnapshot(new int[][] {{A, 4 * M}}, new ArrayList<>(
                List.of(entry("segment_map", A, 2 * M, 0, 1))));
        assertEquals(List.of(pre(A + 2 * M, 2 * M, 1)), presegments(s));
    }

    @Test
    void aMapThatFilledTheGapBetweenTwoRangesIsUndoneIntoTwoRanges() throws IOException {
        Map<String, Object> s = expandableSnapshot(new int[][] {{A, 6 * M}}, new ArrayList<>(
                List.of(entry("segment_map", A + 2 * M, 2 * M, 0, 1))));
        assertEquals(List.of(pre(A, 2 * M, 1), pre(A + 4 * M, 2 * M, 2)), presegments(s));
    }

    @Test
    void aHistoryFromEmptyStartsWithNoSegmentWhereTheScriptInventsOne() throws IOException {
        // One map of 6 MiB, then its middle unmapped: the script (undo on the largest base at or below the
        // address) grows the lower half back to 4 MiB, takes the 6 MiB map off it, and keeps the upper half as a
        // 2 MiB "presegment" at A+4M that never existed.
        List<Object> trace = new ArrayList<>(List.of(
                entry("segment_map", A, 6 * M, 0, 1),
                entry("segment_unmap", A + 2 * M, 2 * M, 0, 2)));
        Map<String, Object> s = expandableSnapshot(new int[][] {{A, 2 * M}, {A + 4 * M, 2 * M}}, trace);
        assertEquals(List.of(), presegments(s));
    }

    /** Adjacent ranges merge only on the same stream (PyTorch has an expandable segment per stream). */
    @Test
    void rangesOfDifferentStreamsStayApartAndOrdinarySegmentsAreAsBefore() throws IOException {
        Map<String, Object> s = expandableSnapshot(new int[][] {{A, 2 * M}}, new ArrayList<>(List.of(
                entry("segment_unmap", A + 2 * M, 2 * M, 7, 1),
                entry("segment_free", 1000, 512, 0, 2))));
        @SuppressWarnings("unchecked")
        List<Object> segments = (List<Object>) s.get("segments");
        segments.add(segment(0, 5000, 512, 0, new ArrayList<>())); // is_expandable absent: an ordinary segment
        assertEquals(List.of(pre(1000, 512, 1), pre(5000, 512, 2), pre(A, 2 * M, 3),
                new TraceEvent(Kind.PRESEGMENT, A + 2 * M, 2 * M, 7, 0, 4)), presegments(s));
    }

    /** An expandable segment at the end of the given pool ({@code segment_type}). */
    private static Map<String, Object> typed(int address, int size, String type) {
        Map<String, Object> s = expandable(segment(0, address, size, 0, new ArrayList<>()));
        s.put("segment_type", type);
        return s;
    }

    /**
     * Two expandable segments of one stream can lie side by side (the small and the large pool's, or a second one
     * after a small reserve filled): their ranges are two presegments even where they touch.
     */
    @Test
    void rangesOfTwoSegmentsThatTouchStayTwoPresegments() throws IOException {
        Map<String, Object> s = expandableSnapshot(new int[0][], new ArrayList<>(List.of(
                entry("segment_unmap", A + 6 * M, 2 * M, 0, 1))));
        @SuppressWarnings("unchecked")
        List<Object> segments = (List<Object>) s.get("segments");
        segments.add(typed(A, 2 * M, "small"));
        segments.add(typed(A + 2 * M, 4 * M, "large"));
        segments.add(typed(A + 8 * M, 2 * M, "large"));
        segments.add(typed(A + 10 * M, 2 * M, "large"));
        // The unmapped [A+6M, A+8M) rejoins the large range below it and the one above (one segment: nothing says
        // otherwise), but not the touching large segment above that, nor the small one.
        assertEquals(List.of(pre(A, 2 * M, 1), pre(A + 2 * M, 8 * M, 2), pre(A + 10 * M, 2 * M, 3)),
                presegments(s));

        // An unmap that would span the point where two segments meet cannot be undone.
        Map<String, Object> spanning = expandableSnapshot(new int[0][], new ArrayList<>(List.of(
                entry("segment_unmap", A, 4 * M, 0, 1),
                entry("segment_map", A, 2 * M, 0, 2),
                entry("segment_map", A + 2 * M, 2 * M, 0, 3))));
        @SuppressWarnings("unchecked")
        List<Object> ends = (List<Object>) spanning.get("segments");
        ends.add(typed(A, 2 * M, "large"));
        ends.add(typed(A + 2 * M, 2 * M, "large"));
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> presegments(spanning));
        assertTrue(e.getMessage().contains("device_traces[0][0]: segment_unmap of 8388608 B at " + A + " cannot be"
                + " undone: that range overlaps memory still mapped after it, spans the boundary between two"
                + " expandable segments that touch in the snapshot"), e.getMessage());
    }

    @Test
    void aMapOrUnmapThatDoesNotFitTheSegmentsIsAFormatError() throws IOException {
        // Undoing the map needs [A+2M, A+4M) mapped after it, but the segments end at A+2M.
        Map<String, Object> notMapped = expandableSnapshot(new int[][] {{A, 2 * M}}, new ArrayList<>(List.of(
                entry("alloc", 1, 2, 0, 0),
                entry("segment_map", A + 2 * M, 2 * M, 0, 1))));
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> presegments(notMapped));
        assertEquals(0, e.line());
        assertTrue(e.getMessage().contains("device_traces[0][1]: segment_map of 4194304 B at " + (A + 2 * M)
                + " cannot be undone: that range is not mapped as a whole"), e.getMessage());
        // Undoing the unmap would map [A, A+2M) again, but it is still mapped after it.
        Map<String, Object> stillMapped = expandableSnapshot(new int[][] {{A, 4 * M}}, new ArrayList<>(List.of(
                entry("segment_unmap", A, 2 * M, 0, 1))));
        e = assertThrows(TraceFormatException.class, () -> presegments(stillMapped));
        assertTrue(e.getMessage().contains("device_traces[0][0]: segment_unmap of 4194304 B at " + A
                + " cannot be undone: that range overlaps memory still mapped after it"), e.getMessage());
        Map<String, Object> notABool = expandableSnapshot(new int[][] {{A, 2 * M}}, new ArrayList<>());
        @SuppressWarnings("unchecked")
        Map<String, Object> seg = (Map<String, Object>) ((List<Object>) notABool.get("segments")).getFirst();
        seg.put("is_expandable", 1);
        e = assertThrows(TraceFormatException.class, () -> presegments(notABool));
        assertTrue(e.getMessage().contains("segments[0]: 'is_expandable': expected a bool, got 1"), e.getMessage());
    }

    // ---- newer snapshots ----

    @Test
    void poolIdsAndHostSegmentsAndTracesAreReadPast() throws IOException {
        Map<String, Object> snapshot = snapshot();
        @SuppressWarnings("unchecked")
        List<Object> trace = (List<Object>) ((List<Object>) snapshot.get("device_traces")).getFirst();
        for (Object t : trace) {
            @SuppressWarnings("unchecked")
            Map<String, Object> e = (Map<String, Object>) t;
            e.put("pool_id", new Object[] {0, 0}); // Pyrolite pickles an Object[] as a tuple
        }
        Map<String, Object> host = segment(-1, 90000, 4096, 0, new ArrayList<>(List.of(
                block(90000, 4096, "active_allocated", 4096))));
        host.put("segment_pool_id", new Object[] {0, 0});
        snapshot.put("host_segments", new ArrayList<>(List.of(host)));
        snapshot.put("host_traces", new ArrayList<>(List.of(entry("alloc", 90000, 4096, 0, 1))));
        // user annotations (newest "annotate", older "user_defined") have no address or size and are skipped
        Map<String, Object> annotate = new LinkedHashMap<>();
        annotate.put("action", "annotate");
        annotate.put("time_us", 5L);
        annotate.put("user_metadata", "phase=forward");
        Map<String, Object> userDefined = new LinkedHashMap<>(annotate);
        userDefined.put("action", "user_defined");
        trace.add(1, annotate);
        trace.add(userDefined);
        assertEquals(Events.withoutLines(csv(CSV_DEVICE_0)),
                asTheCsv(read(pickle(snapshot), PyTorchPickleReader.ONLY_DEVICE)));
    }

    @Test
    void withoutDeviceTracesTheEventsAreTheWarmStartRowsOfTheSegments() throws IOException {
        Map<String, Object> snapshot = snapshot();
        snapshot.remove("device_traces"); // _snapshot(include_traces=False)
        PyTorchPickleReader reader = new PyTorchPickleReader(new ByteArrayInputStream(pickle(snapshot)), "s.pickle",
                PyTorchPickleReader.ONLY_DEVICE);
        assertEquals(0, reader.device(), "the lowest device among the segments");
        assertEquals(List.of(
                new TraceEvent(Kind.PRESEGMENT, 1000, 400, 0, 0, 1),
                new TraceEvent(Kind.PRESEGMENT, 5000, 300, 7, 0, 2),
                new TraceEvent(Kind.PRESEGMENT, 9000, 4096, 0, 0, 3),
                new TraceEvent(Kind.PRESEGMENT, 20000, 512, 0, 0, 4),
                new TraceEvent(Kind.PREALLOC, 1000, 90, 0, 0, 5),
                new TraceEvent(Kind.PREALLOC, 1100, 100, 0, 0, 6),
                new TraceEvent(Kind.PREALLOC, 5000, 250, 7, 0, 7)), Events.readAll(reader));
        assertEquals(List.of(new TraceEvent(Kind.PRESEGMENT, 7000, 100, 0, 0, 1),
                new TraceEvent(Kind.PREALLOC, 7000, 60, 0, 0, 2)), read(pickle(snapshot), 1));
        // An empty list of traces is the same; a device the snapshot does not hold is refused, naming those it holds.
        snapshot.put("device_traces", new ArrayList<>());
        assertEquals(7, read(pickle(snapshot), PyTorchPickleReader.ONLY_DEVICE).size());
        byte[] withoutTraces = pickle(snapshot);
        TraceFormatException absent = assertThrows(TraceFormatException.class, () -> read(withoutTraces, 3));
        assertTrue(absent.getMessage().contains("device 3 is not in the snapshot: it holds devices 0 and 1"),
                absent.getMessage());
        // Only devices 1 and 2: the default is the lowest of them.
        Map<String, Object> later = new HashMap<>();
        later.put("segments", new ArrayList<>(List.of(segment(2, 100, 512, 0, null), segment(1, 7000, 512, 0, null))));
        PyTorchPickleReader second = new PyTorchPickleReader(new ByteArrayInputStream(pickle(later)), "l.pickle",
                PyTorchPickleReader.ONLY_DEVICE);
        assertEquals(1, second.device());
        assertEquals(List.of(new TraceEvent(Kind.PRESEGMENT, 7000, 512, 0, 0, 1)), Events.readAll(second));
    }

    // ---- the restriction: no class, no function, nothing but plain data ----

    private static byte[] bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return b;
    }

    private static TraceFormatException refused(byte[] pickle) {
        return assertThrows(TraceFormatException.class,
                () -> new PyTorchPickleReader(new ByteArrayInputStream(pickle), "hostile.pickle",
                        PyTorchPickleReader.ONLY_DEVICE));
    }

    @Test
    void aGlobalIsRefused() {
        // python3 -c 'import pickle; print(list(pickle.dumps(object(), protocol=2)))'
        byte[] object = bytes(-128, 2, 99, 95, 95, 98, 117, 105, 108, 116, 105, 110, 95, 95, 10, 111, 98, 106, 101,
                99, 116, 10, 113, 0, 41, -127, 113, 1, 46);
        TraceFormatException e = refused(object);
        assertEquals("hostile.pickle", e.file());
        assertEquals(0, e.line());
        assertTrue(e.getMessage().contains("byte 2: refused pickle opcode GLOBAL (__builtin__.object)"),
                e.getMessage());
        assertTrue(e.getMessage().contains("constructs no class and calls no function"), e.getMessage());
    }

    @Test
    void aStackGlobalIsRefused() {
        // python3 -c 'import pickle; print(list(pickle.dumps(object(), protocol=4)))'
        byte[] object = bytes(-128, 4, -107, 26, 0, 0, 0, 0, 0, 0, 0, -116, 8, 98, 117, 105, 108, 116, 105, 110,
                115, -108, -116, 6, 111, 98, 106, 101, 99, 116, -108, -109, -108, 41, -127, -108, 46);
        TraceFormatException e = refused(object);
        assertTrue(e.getMessage().contains("byte 31: refused pickle opcode STACK_GLOBAL (builtins.object)"),
                e.getMessage());
    }

    @Test
    void theClassicOsSystemPayloadIsRefusedBeforeAnythingRuns() {
        TraceFormatException e = refused("cos\nsystem\n(S'echo pwned'\ntR.".getBytes(StandardCharsets.ISO_8859_1));
        assertTrue(e.getMessage().contains("byte 0: refused pickle opcode GLOBAL (os.system)"), e.getMessage());
    }

    @Test
    void anObjectDeepInsideASnapshotIsRefused() {
        // {"device_traces": [[{"action": "alloc", "addr": 1, "size": 2, "frames": [object()]}]]}, protocol 4
        byte[] nested = bytes(-128, 4, -107, 102, 0, 0, 0, 0, 0, 0, 0, 125, -108, -116, 13, 100, 101, 118, 105, 99,
                101, 95, 116, 114, 97, 99, 101, 115, -108, 93, -108, 93, -108, 125, -108, 40, -116, 6, 97, 99, 116, 105,
                111, 110, -108, -116, 5, 97, 108, 108, 111, 99, -108, -116, 4, 97, 100, 100, 114, -108, 75, 1, -116, 4,
                115, 105, 122, 101, -108, 75, 2, -116, 6, 102, 114, 97, 109, 101, 115, -108, 93, -108, -116, 8, 98,
                117, 105, 108, 116, 105, 110, 115, -108, -116, 6, 111, 98, 106, 101, 99, 116, -108, -109, -108, 41,
                -127, -108, 97, 117, 97, 97, 115, 46);
        assertTrue(refused(nested).getMessage().contains("refused pickle opcode STACK_GLOBAL (builtins.object)"));
    }

    @Test
    void noRegisteredConstructorIsEverCalled() {
        AtomicBoolean constructed = new AtomicBoolean();
        Unpickler.registerConstructor("devalloc_test_canary", "Canary", args -> {
            constructed.set(true);
            return "constructed";
        });
        // GLOBAL devalloc_test_canary.Canary, EMPTY_TUPLE, REDUCE, STOP: plain Pyrolite would call the constructor.
        byte[] payload = "cdevalloc_test_canary\nCanary\n)R.".getBytes(StandardCharsets.ISO_8859_1);
        TraceFormatException e = refused(payload);
        assertTrue(e.getMessage().contains("GLOBAL (devalloc_test_canary.Canary)"), e.getMessage());
        assertFalse(constructed.get(), "the constructor ran");
    }

    @Test
    void setsBytesAndCallsAreRefusedToo() {
        // pickle.dumps({1, 2}, protocol=4): EMPTY_SET
        assertTrue(refused(bytes(-128, 4, -107, 9, 0, 0, 0, 0, 0, 0, 0, -113, -108, 40, 75, 1, 75, 2, -112, 46))
                .getMessage().contains("refused pickle opcode EMPTY_SET"));
        // pickle.dumps(b'ab', protocol=4): SHORT_BINBYTES
        assertTrue(refused(bytes(-128, 4, -107, 6, 0, 0, 0, 0, 0, 0, 0, 67, 2, 97, 98, -108, 46))
                .getMessage().contains("refused pickle opcode SHORT_BINBYTES"));
        // a REDUCE on plain data (no global needed to reach it): ( ) ) R .
        assertTrue(refused(bytes(-128, 2, 41, 41, 82, 46)).getMessage().contains("refused pickle opcode REDUCE"));
        // BUILD, PERSID
        assertTrue(refused(bytes(-128, 2, 125, 125, 98, 46)).getMessage().contains("refused pickle opcode BUILD"));
        assertTrue(refused("P1\n.".getBytes(StandardCharsets.ISO_8859_1)).getMessage()
                .contains("refused pickle opcode PERSID"));
        assertTrue(refused(bytes(-128, 2, 0xff, 46)).getMessage().contains("byte 2: unknown pickle opcode 0xff"));
    }

    // ---- malformed pickles and snapshots ----

    @Test
    void aLengthBeyondTheEndOfTheDataIsRefusedBeforeAnythingIsAllocated() {
        // BINUNICODE declaring 2 GiB - 1 bytes in a 12-byte file.
        TraceFormatException e = refused(bytes(-128, 2, 88, 0xff, 0xff, 0xff, 0x7f, 97, 98, 46));
        assertTrue(e.getMessage().contains("byte 2: BINUNICODE declares 2147483651 bytes but only 7 are left"),
                e.getMessage());
    }

    @Test
    void aTruncatedPickleIsAFormatError() throws IOException {
        byte[] whole = Base64.getDecoder().decode(PROTOCOL_4_SNAPSHOT);
        TraceFormatException e = refused(Arrays.copyOf(whole, whole.length / 2));
        assertEquals(0, e.line());
        assertTrue(e.getMessage().startsWith("hostile.pickle: not a readable pickle"), e.getMessage());
    }

    @Test
    void aPickleThatIsNotASnapshotIsAFormatError() throws IOException {
        assertTrue(refused(pickle(List.of(1, 2))).getMessage().contains("the snapshot: expected a dict, got a list"));
        // A snapshot taken without traces still has its segments; a dict with neither is something else.
        assertTrue(refused(pickle(Map.of("allocator_settings", Map.of()))).getMessage()
                .contains("not a memory snapshot: the dict has neither device_traces nor segments"));
        assertTrue(refused(pickle(Map.of("device_traces", "x"))).getMessage()
                .contains("device_traces: expected a list, got a str"));
        TraceFormatException device = assertThrows(TraceFormatException.class,
                () -> new PyTorchPickleReader(new ByteArrayInputStream(pickle(snapshot())), "s.pickle", 2));
        assertTrue(device.getMessage().contains("device 2 is not in the snapshot: it holds devices 0 and 1"),
                device.getMessage());
    }

    /** The error of a snapshot whose third entry is {@code bad}, the same from a file as from bytes in memory. */
    private TraceFormatException badEntry(Map<String, Object> bad) throws IOException {
        Map<String, Object> snapshot = new HashMap<>();
        snapshot.put("device_traces", new ArrayList<>(List.of(new ArrayList<>(List.of(
                entry("alloc", 1, 2, 0, 0), entry("alloc", 3, 4, 0, 0), bad)))));
        byte[] pickle = pickle(snapshot);
        TraceFormatException inMemory = assertThrows(TraceFormatException.class, () -> read(pickle, 0));
        Path file = dir.resolve("s.pickle");
        Files.write(file, pickle);
        TraceFormatException fromFile = assertThrows(TraceFormatException.class,
                () -> Events.readAll(new PyTorchPickleReader(file, 0)));
        assertEquals(inMemory.getMessage().replace("s.pickle", file.toString()), fromFile.getMessage());
        assertEquals(inMemory.line(), fromFile.line());
        return inMemory;
    }

    @Test
    void aMalformedTraceEntryGivesItsRecordAndWhatWasExpected() throws IOException {
        Map<String, Object> noAction = entry("alloc", 5, 6, 0, 0);
        noAction.remove("action");
        TraceFormatException e = badEntry(noAction);
        assertEquals(3, e.line());
        assertTrue(e.getMessage().contains("device_traces[0][2]: unknown action None: expected one of presegment"),
                e.getMessage());

        assertTrue(badEntry(entry("malloc", 5, 6, 0, 0)).getMessage().contains("unknown action 'malloc'"));

        Map<String, Object> noSize = entry("free_requested", 5, 6, 0, 0);
        noSize.remove("size");
        TraceFormatException missing = badEntry(noSize);
        assertEquals(3, missing.line());
        assertTrue(missing.getMessage().contains("device_traces[0][2]: 'size' is missing"), missing.getMessage());

        Map<String, Object> textAddress = entry("alloc", 5, 6, 0, 0);
        textAddress.put("addr", "0x5");
        assertTrue(badEntry(textAddress).getMessage()
                .contains("'addr': expected a non-negative integer below 2^64, got '0x5'"));

        Map<String, Object> negative = entry("segment_alloc", 5, 6, 0, 0);
        negative.put("size", -6);
        assertTrue(badEntry(negative).getMessage()
                .contains("'size': expected a non-negative integer below 2^64, got -6"));

        Map<String, Object> bool = entry("alloc", 5, 6, 0, 0);
        bool.put("stream", true);
        assertTrue(badEntry(bool).getMessage().contains(
                "'stream': expected a non-negative integer below 2^64, got true"));

        Map<String, Object> huge = entry("alloc", 5, 6, 0, 0);
        huge.put("size", new BigInteger("9223372036854775808"));
        assertTrue(badEntry(huge).getMessage().contains("'size': expected a size below 2^63"));
    }

    @Test
    void anEntryThatIsNotADictIsAFormatError() throws IOException {
        Map<String, Object> snapshot = new HashMap<>();
        snapshot.put("device_traces", new ArrayList<>(List.of(new ArrayList<>(List.of(entry("alloc", 1, 2, 0, 0),
                "alloc")))));
        byte[] pickle = pickle(snapshot);
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> read(pickle, 0));
        assertTrue(e.getMessage().contains("device_traces[0][1]: expected a dict, got a str"), e.getMessage());
    }

    @Test
    void aFreeOfAnUnknownAddressIsAPreallocNotAFormatError() throws IOException {
        Map<String, Object> snapshot = new HashMap<>();
        snapshot.put("device_traces", new ArrayList<>(List.of(new ArrayList<>(List.of(
                entry("free_completed", 77, 8, 0, 0))))));
        assertEquals(List.of(new TraceEvent(Kind.PREALLOC, 77, 8, 0, 0, 1), new TraceEvent(Kind.FREE, 77, 8, 0, 0, 2)),
                read(pickle(snapshot), 0));
    }

    @Test
    void unsignedAddressesAboveTwoToThe63AreKeptAsUnsigned() throws IOException {
        Map<String, Object> e = entry("alloc", 0, 16, 0, 0);
        e.put("addr", new BigInteger("18446744073709551615"));
        Map<String, Object> snapshot = new HashMap<>();
        snapshot.put("device_traces", new ArrayList<>(List.of(new ArrayList<>(List.of(e)))));
        assertEquals(List.of(new TraceEvent(Kind.ALLOC, -1L, 16, 0, 0, 1)), read(pickle(snapshot), 0));
    }
}
