package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The unpickler's memory rules (see {@link RestrictedUnpickler}): only memo keys read later are kept, numbered as
 * CPython numbers them; skipped keys' values are dropped; lists grow by batches without copying; short strings are
 * shared. The byte sequences were checked against CPython's {@code pickle.loads}.
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
    void aSharedObjectIsStillSharedAndSkippedKeysHoldAnEmptyList() throws Exception {
        Map<?, ?> all = (Map<?, ?>) RestrictedUnpickler.load(sharedListAndFrames());
        assertEquals(Map.of("a", List.of(7), "b", List.of(7), "frames", List.of("a")), all);
        assertSame(all.get("a"), all.get("b"), "BINGET returns the memoized list itself");

        Map<?, ?> read = (Map<?, ?>) RestrictedUnpickler.load(sharedListAndFrames(), Set.of("frames"));
        assertEquals(Map.of("a", List.of(7), "b", List.of(7), "frames", List.of()), read);
        assertSame(read.get("a"), read.get("b"));
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
        assertEquals(List.of(), read.get("frames"));
        assertSame(read.get("a"), read.get("b"));
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
