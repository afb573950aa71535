package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.RecordComponent;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The unpickler's memory rules (see {@link RestrictedUnpickler}): only memo keys read later are kept, numbered as
 * CPython numbers them; skipped keys' values are dropped, keeping only which list they were; lists grow by batches
 * without copying; short strings are shared. The byte sequences were checked against CPython's {@code pickle.loads}.
 */
class RestrictedUnpicklerTest {

    private static final int EMPTY_DICT = '}';
    private static final int EMPTY_LIST = ']';
    private static final int MEMOIZE = 0x94;
    private static final int MARK = '(';
    private static final int APPEND = 'a';
    private static final int APPENDS = 'e';
    private static final int SETITEM = 's';
    private static final int SETITEMS = 'u';
    private static final int BINGET = 'h';
    private static final int BINPUT = 'q';
    private static final int LONG_BINGET = 'j';
    private static final int LONG_BINPUT = 'r';
    private static final int BININT1 = 'K';
    private static final int BININT2 = 'M';

    /** {'a': [7], 'b': <the same list>, 'frames': ['a']}, memoized the way CPython's pickler does. */
    private static byte[] sharedListAndFrames() {
        return new PickleBytes().op(EMPTY_DICT, MEMOIZE, MARK)
                .str("a").op(MEMOIZE, EMPTY_LIST, MEMOIZE, BININT1, 7, APPEND)
                .str("b").op(MEMOIZE, BINGET, 2)
                .str("frames").op(MEMOIZE, EMPTY_LIST, MEMOIZE, BINGET, 1, APPEND)
                .op(SETITEMS).stop();
    }

    @Test
    void onlyTheMemoKeysReadLaterAreFound() {
        byte[] data = sharedListAndFrames();
        BitSet expected = new BitSet();
        expected.set(1);
        expected.set(2);
        assertEquals(expected, RestrictedUnpickler.referencedMemoKeys(data));
    }

    @Test
    void aSharedObjectIsStillSharedAndSkippedKeysHoldASkippedValue() throws Exception {
        Map<?, ?> all = (Map<?, ?>) RestrictedUnpickler.load(sharedListAndFrames());
        assertEquals(Map.of("a", List.of(7), "b", List.of(7), "frames", List.of("a")), all);
        assertSame(all.get("a"), all.get("b"), "BINGET returns the memoized list itself");

        Map<?, ?> read = (Map<?, ?>) RestrictedUnpickler.load(sharedListAndFrames(), Set.of("frames"));
        assertEquals(List.of("a", "b", "frames"), List.copyOf(read.keySet()));
        assertEquals(List.of(7), read.get("a"));
        assertSame(read.get("a"), read.get("b"));
        SkippedValue frames = assertInstanceOf(SkippedValue.class, read.get("frames"));
        assertEquals("a skipped value", frames.toString(), "names nothing of Java");
    }

    /**
     * MEMOIZE takes the key len(memo), the count of keys set so far, not one past the highest: after BINPUT 5 the
     * next MEMOIZE sets key 1 (CPython reads this pickle as ['x', 'x']).
     */
    @Test
    void memoizeNumbersKeysAsCPythonDoes() throws Exception {
        byte[] data = new PickleBytes().op(EMPTY_LIST, BINPUT, 5).str("x").op(MEMOIZE, APPEND, BINGET, 1, APPEND)
                .stop();
        assertEquals(List.of("x", "x"), RestrictedUnpickler.load(data));
    }

    /** Keys at or beyond the pickle's length were not scanned: they are kept whenever set. */
    @Test
    void keysBeyondTheScannedRangeAreKept() throws Exception {
        byte[] data = new PickleBytes().op(EMPTY_LIST, LONG_BINPUT, 0x70, 0x11, 0x01, 0x00).str("y").op(APPEND)
                .op(LONG_BINGET, 0x70, 0x11, 0x01, 0x00, APPEND).stop();
        List<?> outer = (List<?>) RestrictedUnpickler.load(data);
        assertEquals(2, outer.size());
        assertSame(outer, outer.get(1), "the list refers to itself through key 70,000");
        assertTrue(RestrictedUnpickler.referencedMemoKeys(data).isEmpty());
    }

    @Test
    void aListBuiltInBatchesHasEveryItemInOrder() throws Exception {
        PickleBytes p = new PickleBytes().op(EMPTY_LIST, MEMOIZE);
        List<Integer> expected = new ArrayList<>();
        for (int batch = 0; batch < 5; batch++) {
            p.op(MARK);
            for (int i = 0; i < 1000; i++) {
                int v = batch * 1000 + i;
                p.op(BININT2, v & 0xff, v >>> 8);
                expected.add(v);
            }
            p.op(APPENDS);
        }
        assertEquals(expected, RestrictedUnpickler.load(p.stop()));
    }

    @Test
    void equalShortStringsAreOneObject() throws Exception {
        // [{'addr': 1}, {'addr': 2}, 'addr' as BINUNICODE], nothing memoized (devalloc's own writer's way).
        byte[] data = new PickleBytes().op(EMPTY_LIST, MARK)
                .op(EMPTY_DICT).str("addr").op(BININT1, 1, SETITEM)
                .op(EMPTY_DICT).str("addr").op(BININT1, 2, SETITEM)
                .longStr("addr").longStr("é" + "x".repeat(80))
                .op(APPENDS).stop();
        List<?> list = (List<?>) RestrictedUnpickler.load(data);
        String first = (String) ((Map<?, ?>) list.get(0)).keySet().iterator().next();
        String second = (String) ((Map<?, ?>) list.get(1)).keySet().iterator().next();
        assertEquals("addr", first);
        assertSame(first, second);
        assertSame(first, list.get(2));
        assertEquals("é" + "x".repeat(80), list.get(3), "a long string decodes as UTF-8, unshared");
    }

    /**
     * {@code a = [7, 's']; pickle.dumps({'a': a, 'b': a, 'frames': [a]}, protocol=p)} from CPython: protocol 0 (MARK
     * DICT, text PUT and GET), 2 (BINPUT, BINGET, BINUNICODE) and 4 (FRAME, MEMOIZE, SHORT_BINUNICODE).
     */
    @ParameterizedTest
    @CsvSource({
        "286470300a56610a70310a286c70320a49370a6156730a70330a617356620a70340a67320a73566672616d65730a70350a286c7036"
            + "0a67320a61732e",
        "80027d71002858010000006171015d7102284b075801000000737103655801000000627104680258060000006672616d6573710"
            + "55d7106680261752e",
        "80049527000000000000007d94288c0161945d94284b078c017394658c01629468028c066672616d6573945d94680261752e"})
    void readsWhatCPythonWritesWithEveryKindOfMemo(String hex) throws Exception {
        byte[] data = HexFormat.of().parseHex(hex);
        BitSet two = new BitSet();
        two.set(2);
        assertEquals(two, RestrictedUnpickler.referencedMemoKeys(data), "only the list [7, 's'] is read again");
        Map<?, ?> all = (Map<?, ?>) RestrictedUnpickler.load(data);
        assertEquals(List.of(7, "s"), all.get("a"));
        assertSame(all.get("a"), all.get("b"));
        assertSame(all.get("a"), ((List<?>) all.get("frames")).get(0));
        assertEquals(List.of("a", "b", "frames"), List.copyOf(all.keySet()), "a Python dict's order");
        Map<?, ?> read = (Map<?, ?>) RestrictedUnpickler.load(data, Set.of("frames"));
        assertInstanceOf(SkippedValue.class, read.get("frames"));
        assertSame(read.get("a"), read.get("b"));
    }

    /** The skipped values of {@code load(data, {"frames"})}'s top-level list of dicts, in order. */
    private static List<SkippedValue> skippedFrames(byte[] data) throws Exception {
        List<SkippedValue> frames = new ArrayList<>();
        for (Object entry : (List<?>) RestrictedUnpickler.load(data, Set.of("frames"))) {
            frames.add(assertInstanceOf(SkippedValue.class, ((Map<?, ?>) entry).get("frames")));
        }
        return frames;
    }

    /**
     * {@code F = [{'name': 'f', 'line': 1}]; G = [{'name': 'g', 'line': 2}]; pickle.dumps([{'action': 'a',
     * 'frames': F}, {'action': 'b', 'frames': F}, {'action': 'c', 'frames': G}], protocol=p)} from CPython 3.11:
     * protocol 0 (text PUT and GET), 2 (BINPUT, BINGET) and 4 (MEMOIZE, BINGET). F is memoized and read again; G is
     * memoized but never read.
     */
    @ParameterizedTest
    @CsvSource({
        "286c70300a286470310a56616374696f6e0a70320a56610a70330a73566672616d65730a70340a286c70350a286470360a566e616d"
            + "650a70370a56660a70380a73566c696e650a70390a49310a7361736128647031300a67320a56620a7031310a7367340a67350a"
            + "736128647031320a67320a56630a7031330a7367340a286c7031340a28647031350a67370a56670a7031360a7367390a49320a"
            + "736173612e",
        "80025d7100287d7101285806000000616374696f6e7102580100000061710358060000006672616d657371045d71057d71062858"
            + "040000006e616d657107580100000066710858040000006c696e6571094b017561757d710a286802580100000062710b680468"
            + "05757d710c286802580100000063710d68045d710e7d710f286807580100000067711068094b02756175652e",
        "80049565000000000000005d94287d94288c06616374696f6e948c0161948c066672616d6573945d947d94288c046e616d65948c"
            + "0166948c046c696e65944b017561757d942868028c01629468046805757d942868028c01639468045d947d942868078c0167"
            + "9468094b02756175652e"})
    void entriesSharingAFramesListHaveOneIdentity(String hex) throws Exception {
        byte[] data = HexFormat.of().parseHex(hex);
        List<?> all = (List<?>) RestrictedUnpickler.load(data);
        assertSame(((Map<?, ?>) all.get(0)).get("frames"), ((Map<?, ?>) all.get(1)).get("frames"));

        List<SkippedValue> frames = skippedFrames(data);
        assertEquals(frames.get(0).identity(), frames.get(1).identity(), "F, read again through the memo");
        assertSame(frames.get(0), frames.get(1), "one instance per shared list");
        assertNotEquals(frames.get(0).identity(), frames.get(2).identity(), "G is another list");
        assertNotEquals(frames.get(0), frames.get(2));
    }

    /**
     * {@code pickle.dumps([{'frames': [1]}, {'frames': [1]}], protocol=2)} from CPython: two equal lists, each
     * memoized (BINPUT 3, BINPUT 5) but never read again, and not one object.
     */
    @Test
    void equalButDistinctListsHaveIdentitiesOfTheirOwn() throws Exception {
        byte[] data = HexFormat.of().parseHex(
                "80025d7100287d710158060000006672616d657371025d71034b0161737d710468025d71054b016173652e");
        List<SkippedValue> frames = skippedFrames(data);
        assertNotEquals(frames.get(0).identity(), frames.get(1).identity());
        // A list built without any memo opcode (devalloc's own writer's way for one that is not shared) too.
        byte[] plain = new PickleBytes().op(EMPTY_LIST, MARK)
                .op(EMPTY_DICT).str("frames").op(EMPTY_LIST, BININT1, 1, APPEND, SETITEM)
                .op(EMPTY_DICT).str("frames").op(EMPTY_LIST, BININT1, 1, APPEND, SETITEM)
                .op(APPENDS).stop();
        frames = skippedFrames(plain);
        assertNotEquals(frames.get(0), frames.get(1));
    }

    /**
     * Identity is the object's, not the memo key's: key 0 is set to one list, read, then set to another and read
     * (CPython loads this as {@code x[0]['frames'] is x[1]['frames']}, {@code x[2]['frames'] is x[3]['frames']}, and
     * not {@code x[0]['frames'] is x[2]['frames']}). Values other than lists get an identity of their own each time,
     * even a string read twice through the memo.
     */
    @Test
    void aMemoKeySetAgainNamesAnotherList() throws Exception {
        byte[] data = new PickleBytes().op(EMPTY_LIST, MARK)
                .op(EMPTY_DICT).str("frames").op(EMPTY_LIST, BINPUT, 0).str("f").op(APPEND, SETITEM)
                .op(EMPTY_DICT).str("frames").op(BINGET, 0, SETITEM)
                .op(EMPTY_DICT).str("frames").op(EMPTY_LIST, BINPUT, 0).str("g").op(APPEND, SETITEM)
                .op(EMPTY_DICT).str("frames").op(BINGET, 0, SETITEM)
                .op(EMPTY_DICT).str("frames").str("s").op(BINPUT, 1, SETITEM)
                .op(EMPTY_DICT).str("frames").op(BINGET, 1, SETITEM)
                .op(APPENDS).stop();
        List<SkippedValue> frames = skippedFrames(data);
        assertEquals(frames.get(0), frames.get(1));
        assertEquals(frames.get(2), frames.get(3));
        assertNotEquals(frames.get(0), frames.get(2));
        // Identity is tracked for lists only: a string tells nothing of which call recorded the entry.
        assertEquals(SkippedValue.NONE, frames.get(4));
        assertEquals(SkippedValue.NONE, frames.get(5));
        assertEquals(3, new HashSet<>(List.of(frames.get(0), frames.get(2), frames.get(4))).size());
    }

    /** devalloc's own writer shares a list that occurs twice through BINPUT and BINGET: the reader sees it so. */
    @Test
    void pickleWritersSharedFramesHaveOneIdentity() throws Exception {
        List<Object> f = List.of(PickleWriterTest.map("name", "f", "line", 1));
        List<Object> g = List.of(PickleWriterTest.map("name", "g", "line", 2));
        List<Object> unshared = List.of(PickleWriterTest.map("name", "h", "line", 3));
        byte[] data = PickleWriter.toBytes(List.of(PickleWriterTest.map("action", "a", "frames", f),
                PickleWriterTest.map("action", "b", "frames", f), PickleWriterTest.map("action", "c", "frames", g),
                PickleWriterTest.map("action", "d", "frames", unshared), PickleWriterTest.map("action", "e",
                        "frames", g), PickleWriterTest.map("action", "f", "frames", List.of()),
                PickleWriterTest.map("action", "g", "frames", List.of())));
        List<SkippedValue> frames = skippedFrames(data);
        assertEquals(frames.get(0), frames.get(1));
        assertEquals(frames.get(2), frames.get(4));
        assertEquals(3, new HashSet<>(List.of(frames.get(0), frames.get(2), frames.get(3))).size(),
                "f, g and the unshared list are distinct");
        // An empty list (Java's List.of() is one object wherever a writer used it) tells nothing: no identity.
        assertEquals(SkippedValue.NONE, frames.get(5));
        assertEquals(SkippedValue.NONE, frames.get(6));
    }

    /** A skipped value keeps a number and nothing else: not the list, which is garbage once its entry is built. */
    @Test
    void aSkippedValueHoldsOnlyItsIdentity() {
        RecordComponent[] components = SkippedValue.class.getRecordComponents();
        assertEquals(1, components.length);
        assertEquals(long.class, components[0].getType());
    }

    /** A list as a dict key: Python refuses it (unhashable); so does this reader, before hashing anything. */
    @Test
    void aListAsADictKeyIsRefused() {
        byte[] data = new PickleBytes().op(EMPTY_DICT, EMPTY_LIST, BININT1, 1, SETITEM).stop();
        Exception e = assertThrows(Exception.class, () -> RestrictedUnpickler.load(data));
        assertTrue(e.getMessage().contains("a list as a dict key (unhashable in Python)"), e.getMessage());
    }

    @Test
    void setItemsWithAnOddNumberOfItemsIsMalformed() {
        byte[] data = new PickleBytes().op(EMPTY_DICT, MARK).str("k").op(SETITEMS).stop();
        Exception e = assertThrows(Exception.class, () -> RestrictedUnpickler.load(data));
        assertTrue(e.getMessage().contains("odd number of items"), e.getMessage());
    }

    @Test
    void theScanStopsWhereTheLoadIsRefused() {
        // BINGET 3 after a refused GLOBAL ('c') is never reached by the load, nor counted by the scan.
        byte[] data = new PickleBytes().op('c').op("os\nsystem\n".chars().toArray()).op(BINGET, 3).stop();
        assertTrue(RestrictedUnpickler.referencedMemoKeys(data).isEmpty());
        assertThrows(RestrictedUnpickler.Refused.class, () -> RestrictedUnpickler.load(data));
    }

    // ---- the last read of a memo key, reading from a file, trace entries kept as rows ----

    /**
     * {@code [L, L, 'x', 'x']} with the list L memoized under key 0 and read twice, and 'x' under key 1 read once:
     * reads 0 and 1 read key 0, read 2 key 1; the last of each is known, and the load gives CPython's value.
     */
    @Test
    void theLastReadOfEachKeyIsKnown() throws Exception {
        byte[] data = new PickleBytes().op(EMPTY_LIST, MARK)
                .op(EMPTY_LIST, BINPUT, 0, BININT1, 7, APPEND)
                .op(BINGET, 0)
                .str("x").op(BINPUT, 1)
                .op(BINGET, 1)
                .op(APPENDS, BINGET, 0, APPEND).stop();
        MemoScan scan = MemoScan.of(PickleInput.of(data));
        assertFalse(scan.lastRead(0), "key 0 is read again by read 3");
        assertTrue(scan.lastRead(1), "the only read of key 1");
        assertTrue(scan.lastRead(2), "the last read of key 0");
        assertFalse(scan.lastRead(3));
        List<?> all = (List<?>) RestrictedUnpickler.load(data);
        assertEquals(List.of(List.of(7), List.of(7), "x", "x", List.of(7)), all);
        assertSame(all.get(0), all.get(4));
    }

    /**
     * A key set again after its last read is not kept (nothing reads it), and a key read before anything was set
     * under it is refused with where: CPython says "Memo value not found at index 0".
     */
    @Test
    void aKeySetAfterItsLastReadIsNotNeededAndAnUnsetKeyIsRefused() throws Exception {
        byte[] data = new PickleBytes().op(EMPTY_LIST).str("a").op(BINPUT, 0, APPEND, BINGET, 0, APPEND)
                .str("b").op(BINPUT, 0, APPEND).stop();
        assertEquals(List.of("a", "a", "b"), RestrictedUnpickler.load(data));
        byte[] unset = new PickleBytes().op(EMPTY_LIST, BINGET, 0, APPEND).stop();
        Exception e = assertThrows(Exception.class, () -> RestrictedUnpickler.load(unset));
        assertEquals("byte 3: memo key 0 is read, but no object was memoized under it", e.getMessage());
    }

    /** Read from a file (twice: the scan, then the load), each of CPython's pickles loads as from its bytes. */
    @ParameterizedTest
    @CsvSource({
        "286470300a56610a70310a286c70320a49370a6156730a70330a617356620a70340a67320a73566672616d65730a70350a286c7036"
            + "0a67320a61732e",
        "80027d71002858010000006171015d7102284b075801000000737103655801000000627104680258060000006672616d6573710"
            + "55d7106680261752e",
        "80049527000000000000007d94288c0161945d94284b078c017394658c01629468028c066672616d6573945d94680261752e"})
    void aFileLoadsAsItsBytes(String hex, @TempDir Path dir) throws Exception {
        byte[] data = HexFormat.of().parseHex(hex);
        Path file = dir.resolve("p.pickle");
        Files.write(file, data);
        Map<?, ?> read = (Map<?, ?>) RestrictedUnpickler.load(file, Set.of("frames"), null, null);
        assertEquals(List.of(7, "s"), read.get("a"));
        assertSame(read.get("a"), read.get("b"));
        assertInstanceOf(SkippedValue.class, read.get("frames"));
        assertEquals(RestrictedUnpickler.load(data), RestrictedUnpickler.load(file, Set.of(), null, null));
    }

    /**
     * Strings that cross the file buffer's boundary, and one longer than the buffer, load whole; so does a text
     * GET key split by the boundary.
     */
    @Test
    void stringsAcrossTheBufferBoundaryLoadWhole(@TempDir Path dir) throws Exception {
        PickleBytes p = new PickleBytes().op(EMPTY_LIST, MARK);
        List<Object> expected = new ArrayList<>();
        for (int i = 0; i < 700; i++) {
            String text = "é" + Integer.toString(i).repeat(97 + i % 7);
            p.longStr(text);
            expected.add(text);
        }
        String huge = "z".repeat(3 * PickleInput.BUFFER + 5);
        byte[] b = huge.getBytes(StandardCharsets.UTF_8);
        p.op(0x58, b.length & 0xff, (b.length >>> 8) & 0xff, (b.length >>> 16) & 0xff, 0).raw(b);
        expected.add(huge);
        p.op(APPENDS);
        byte[] data = p.stop();
        assertTrue(data.length > 4 * PickleInput.BUFFER);
        Path file = dir.resolve("long.pickle");
        Files.write(file, data);
        assertEquals(expected, RestrictedUnpickler.load(file, Set.of(), null, null));
    }

    /** A file that ends early fails with where it ends, as the same bytes do. */
    @Test
    void aTruncatedFileSaysWhereItEnds(@TempDir Path dir) throws Exception {
        byte[] data = new PickleBytes().op(EMPTY_LIST).str("abc").op(APPEND).bytes();
        Path file = dir.resolve("short.pickle");
        Files.write(file, data);
        Exception e = assertThrows(Exception.class, () -> RestrictedUnpickler.load(file, Set.of(), null, null));
        assertEquals("byte 9: the pickle ends before its STOP opcode", e.getMessage());
        assertEquals(e.getMessage(), assertThrows(Exception.class, () -> RestrictedUnpickler.load(data))
                .getMessage());
    }

    private static Map<String, Object> traceEntry(String action, Object addr, Object size, List<Object> frames) {
        Map<String, Object> e = PickleWriterTest.map("action", action, "addr", addr, "size", size, "stream", 0,
                "time_us", 17, "compile_context", "N/A", "user_metadata", "");
        e.put("frames", frames);
        return e;
    }

    /**
     * The dicts of {@code device_traces[i]} become {@link EntryRow}s as they are appended, with what the reader
     * reads of them; a dict that something else reaches (shared through the memo), an entry with a value the
     * reader refuses, and dicts elsewhere (segments, {@code host_traces}) stay dicts.
     */
    @Test
    void traceEntriesBecomeRowsWhereNothingElseReachesThem() throws Exception {
        List<Object> frames = List.of(PickleWriterTest.map("name", "f", "line", 1));
        Map<String, Object> shared = traceEntry("alloc", 96, 32, List.of());
        Map<String, Object> segment = PickleWriterTest.map("address", 0, "total_size", 1024, "stream", 0,
                "blocks", List.of(PickleWriterTest.map("action", "alloc", "address", 0, "size", 64)));
        Map<String, Object> snapshot = PickleWriterTest.map(
                "segments", List.of(segment),
                "device_traces", List.of(List.of(
                        traceEntry("alloc", 0, 64, frames),
                        traceEntry("free_completed", new BigInteger("18446744073709551615"), 64, frames),
                        shared, shared,
                        traceEntry("alloc", 128, "64", List.of()),
                        traceEntry("malloc", 256, 64, List.of()))),
                "host_traces", List.of(List.of(traceEntry("alloc", 0, 8, List.of()))));
        byte[] data = PickleWriter.toBytes(snapshot);
        Map<?, ?> read = (Map<?, ?>) RestrictedUnpickler.load(data, Set.of("frames"), "device_traces", EntryRow::of);
        List<?> trace = (List<?>) ((List<?>) read.get("device_traces")).get(0);
        EntryRow first = assertInstanceOf(EntryRow.class, trace.get(0));
        assertEquals(PyTorchAction.ALLOC, first.action());
        assertEquals(0, first.addr());
        assertEquals(64, first.size());
        assertTrue(first.has(EntryRow.ADDR) && first.has(EntryRow.SIZE) && first.has(EntryRow.STREAM));
        assertFalse(first.has(EntryRow.DEVICE_FREE));
        EntryRow second = assertInstanceOf(EntryRow.class, trace.get(1));
        assertEquals(-1L, second.addr(), "2^64 - 1, unsigned");
        assertEquals(first.frames(), second.frames(), "one frames list, one identity");
        assertNotEquals(SkippedValue.NO_IDENTITY, first.frames());
        assertInstanceOf(PickleDict.class, trace.get(2), "memoized and read again");
        assertSame(trace.get(2), trace.get(3));
        assertInstanceOf(PickleDict.class, trace.get(4), "a size that is a string: the reader's message for it");
        assertInstanceOf(PickleDict.class, trace.get(5), "an unknown action: the reader's message for it");
        Object block = ((List<?>) ((Map<?, ?>) ((List<?>) read.get("segments")).get(0)).get("blocks")).get(0);
        assertInstanceOf(PickleDict.class, block);
        Object host = ((List<?>) ((List<?>) read.get("host_traces")).get(0)).get(0);
        assertInstanceOf(PickleDict.class, host);
        // Without the compactor, the same graph with dicts.
        Map<?, ?> plain = (Map<?, ?>) RestrictedUnpickler.load(data, Set.of("frames"));
        Map<?, ?> dict = (Map<?, ?>) ((List<?>) ((List<?>) plain.get("device_traces")).get(0)).get(0);
        assertEquals(17, dict.get("time_us"));
    }

    /** A list of the device's list that is memoized (something else may read it) keeps its dicts. */
    @Test
    void aDeviceListThatIsReadAgainKeepsItsDicts() throws Exception {
        List<Object> trace = new ArrayList<>(List.of(traceEntry("alloc", 0, 64, List.of())));
        Map<String, Object> snapshot = PickleWriterTest.map("device_traces", List.of(trace), "other", trace);
        byte[] data = PickleWriter.toBytes(snapshot);
        Map<?, ?> read = (Map<?, ?>) RestrictedUnpickler.load(data, Set.of("frames"), "device_traces", EntryRow::of);
        List<?> device = (List<?>) ((List<?>) read.get("device_traces")).get(0);
        assertInstanceOf(PickleDict.class, device.get(0));
        assertSame(device, read.get("other"));
    }
}
