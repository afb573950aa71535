package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The unpickler's memory rules (see {@link RestrictedUnpickler}): only memo keys read later are kept, numbered as
 * CPython numbers them; skipped keys' values are dropped, keeping only which list they were; lists grow by batches
 * without copying; short strings are shared. The byte sequences were checked against CPython's {@code pickle.loads}.
 */
class RestrictedUnpicklerTest {

    /** A pickle built opcode by opcode. */
    private static final class Pickle {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Pickle() {
            op(0x80, 4); // PROTO 4
        }

        Pickle op(int... bytes) {
            for (int b : bytes) {
                out.write(b);
            }
            return this;
        }

        /** SHORT_BINUNICODE. */
        Pickle str(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            op(0x8c, b.length);
            out.writeBytes(b);
            return this;
        }

        /** BINUNICODE (four-byte length). */
        Pickle longStr(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            op(0x58, b.length & 0xff, (b.length >>> 8) & 0xff, 0, 0);
            out.writeBytes(b);
            return this;
        }

        byte[] stop() {
            op('.');
            return out.toByteArray();
        }
    }

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
        return new Pickle().op(EMPTY_DICT, MEMOIZE, MARK)
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
        byte[] data = new Pickle().op(EMPTY_LIST, BINPUT, 5).str("x").op(MEMOIZE, APPEND, BINGET, 1, APPEND).stop();
        assertEquals(List.of("x", "x"), RestrictedUnpickler.load(data));
    }

    /** Keys at or beyond the pickle's length were not scanned: they are kept whenever set. */
    @Test
    void keysBeyondTheScannedRangeAreKept() throws Exception {
        byte[] data = new Pickle().op(EMPTY_LIST, LONG_BINPUT, 0x70, 0x11, 0x01, 0x00).str("y").op(APPEND)
                .op(LONG_BINGET, 0x70, 0x11, 0x01, 0x00, APPEND).stop();
        List<?> outer = (List<?>) RestrictedUnpickler.load(data);
        assertEquals(2, outer.size());
        assertSame(outer, outer.get(1), "the list refers to itself through key 70,000");
        assertTrue(RestrictedUnpickler.referencedMemoKeys(data).isEmpty());
    }

    @Test
    void aListBuiltInBatchesHasEveryItemInOrder() throws Exception {
        Pickle p = new Pickle().op(EMPTY_LIST, MEMOIZE);
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
        byte[] data = new Pickle().op(EMPTY_LIST, MARK)
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
        byte[] plain = new Pickle().op(EMPTY_LIST, MARK)
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
        byte[] data = new Pickle().op(EMPTY_LIST, MARK)
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
        byte[] data = new Pickle().op(EMPTY_DICT, EMPTY_LIST, BININT1, 1, SETITEM).stop();
        Exception e = assertThrows(Exception.class, () -> RestrictedUnpickler.load(data));
        assertTrue(e.getMessage().contains("a list as a dict key (unhashable in Python)"), e.getMessage());
    }

    @Test
    void setItemsWithAnOddNumberOfItemsIsMalformed() {
        byte[] data = new Pickle().op(EMPTY_DICT, MARK).str("k").op(SETITEMS).stop();
        Exception e = assertThrows(Exception.class, () -> RestrictedUnpickler.load(data));
        assertTrue(e.getMessage().contains("odd number of items"), e.getMessage());
    }

    @Test
    void theScanStopsWhereTheLoadIsRefused() {
        // BINGET 3 after a refused GLOBAL ('c') is never reached by the load, nor counted by the scan.
        byte[] data = new Pickle().op('c').op("os\nsystem\n".chars().toArray()).op(BINGET, 3).stop();
        assertTrue(RestrictedUnpickler.referencedMemoKeys(data).isEmpty());
        assertThrows(RestrictedUnpickler.Refused.class, () -> RestrictedUnpickler.load(data));
    }
}
