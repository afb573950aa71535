package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.api.spi.PythonTuple;
import io.devalloc.trace.text.JsonWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

public class PickleWriterTest {

    // ------------------------------------------------------------------------------------------------------------
    // Byte-exact encodings. Expected bytes computed with CPython 3.11.7 as
    //   pickletools.optimize(pickle.dumps(v, 2)).hex()
    // which equals the output of pickle.Pickler(f, 2) with fast = True (no memo): CPython's pickle.dumps adds a
    // BINPUT after every str/list/dict, which optimize() strips because nothing reads it back.
    // ------------------------------------------------------------------------------------------------------------

    private static void assertPickle(String expectedHex, Object value) {
        assertEquals(expectedHex, HexFormat.of().formatHex(PickleWriter.toBytes(value)), () -> "pickle of " + value);
    }

    @Test
    void smallIntegersMatchCPython() {
        assertPickle("80024b052e", 5);                     // pickle.dumps(5, 2)
        assertPickle("80024b052e", 5L);
        assertPickle("80024bff2e", 255);                   // BININT1
        assertPickle("80024d00012e", 256);                 // BININT2
        assertPickle("80024dffff2e", 65535);
        assertPickle("80024a000001002e", 65536);           // BININT
        assertPickle("80024affffff7f2e", Integer.MAX_VALUE);
        assertPickle("80024a000000802e", Integer.MIN_VALUE);
        assertPickle("80024affffffff2e", -1);              // pickle.dumps(-1, 2)
        assertPickle("80024affffffff2e", -1L);
        assertPickle("80024a01ffffff2e", -255);
        assertPickle("80024a00ffffff2e", -256);
        assertPickle("80024b052e", (short) 5);
        assertPickle("80024affffffff2e", (byte) -1);
    }

    @Test
    void longIntegersUseLong1LikeCPython() {
        assertPickle("80028a060000000000012e", 1L << 40);                 // pickle.dumps(2**40, 2)
        assertPickle("80028a0500000080002e", 1L << 31);                   // 2**31
        assertPickle("80028a05ffffff7fff2e", (long) Integer.MIN_VALUE - 1); // -2**31-1
        assertPickle("80028a0500000000012e", 1L << 32);                   // 2**32
        assertPickle("80028a060000000080002e", 1L << 39);                 // 2**39: needs a sign byte
        assertPickle("80028a0500000000802e", -(1L << 39));                // -2**39: does not
        assertPickle("80028a060000000000ff2e", -(1L << 40));
        assertPickle("80028a08ffffffffffffff7f2e", Long.MAX_VALUE);
        assertPickle("80028a0800000000000000802e", Long.MIN_VALUE);
        assertPickle("80028a090000000000000000012e", BigInteger.ONE.shiftLeft(64));           // 2**64
        assertPickle("80028a090000000000000000ff2e", BigInteger.ONE.shiftLeft(64).negate()); // -2**64
        assertPickle("80028a060000000000012e", BigInteger.ONE.shiftLeft(40));
        assertPickle("80024affffffff2e", BigInteger.valueOf(-1));
    }

    @Test
    void constantsFloatsAndStringsMatchCPython() {
        assertPickle("80024e2e", null);                                   // None
        assertPickle("8002882e", true);                                   // NEWTRUE
        assertPickle("8002892e", false);                                  // NEWFALSE
        assertPickle("8002473ff80000000000002e", 1.5);                    // BINFLOAT, big-endian
        assertPickle("8002473fb999999999999a2e", 0.1);
        assertPickle("8002473fb999999999999a2e", 0.1f);                   // shortest decimal of the float
        assertPickle("80024780000000000000002e", -0.0);
        assertPickle("8002477ff80000000000002e", Double.NaN);             // float('nan')
        assertPickle("800258000000002e", "");
        assertPickle("80025801000000612e", "a");
        assertPickle("80025809000000c3a9e282acf09f98802e", "é€😀");        // BINUNICODE, UTF-8
        assertPickle("8002580500000061eda080622e", "a\uD800b");           // lone surrogate: surrogatepass
    }

    @Test
    void containersMatchCPython() {
        assertPickle("80025d2e", List.of());                              // []
        assertPickle("80027d2e", Map.of());                               // {}
        assertPickle("80025d4b01612e", List.of(1));                       // one element: APPEND
        assertPickle("80027d58010000006b4b01732e", Map.of("k", 1));       // one entry: SETITEM
        assertPickle("80025d284b015d4b0261652e", List.of(1, List.of(2))); // [1, [2]]
        // pickle.dumps({'a': [1, None, True]}, 2)
        assertPickle("80027d5801000000615d284b014e8865732e", map("a", Arrays.asList(1, null, true)));
        // {'a': {}, 'b': []}
        assertPickle("80027d285801000000617d5801000000625d752e", map("a", Map.of(), "b", List.of()));
        // {'x': 1, 'y': 'z'}
        assertPickle("80027d285801000000784b0158010000007958010000007a752e", map("x", 1, "y", "z"));
    }

    @Test
    void tuplesMatchCPython() {
        // pickle.Pickler(f, 2) with fast = True, as CPython's save_tuple writes them
        assertPickle("8002292e", PythonTuple.of());                                  // ()
        assertPickle("80024b01852e", PythonTuple.of(1));                             // (1,)
        assertPickle("80024b004b00862e", PythonTuple.of(0L, 0L));                    // (0, 0)
        assertPickle("80024b014b024b03872e", PythonTuple.of(1, 2, 3));               // (1, 2, 3)
        assertPickle("8002284b014b024b034b04742e", PythonTuple.of(1, 2, 3, 4));      // (1, 2, 3, 4)
        assertPickle("80024e855d4b0161862e", PythonTuple.of(PythonTuple.of((Object) null), List.of(1)));
        // {'segment_pool_id': (0, 0)}
        assertPickle("80027d580f0000007365676d656e745f706f6f6c5f69644b004b0086732e",
                map("segment_pool_id", PyTorchSnapshots.DEFAULT_POOL_ID));
        // A list stays a list: only a PythonTuple is a tuple.
        assertPickle("80025d284b004b00652e", List.of(0, 0));
    }

    @Test
    void aTuplesItemsAreCopiedAndABadItemIsNamedByItsPath() {
        List<Object> items = new ArrayList<>(List.of(1, 2));
        PythonTuple t = new PythonTuple(items);
        items.add(3);
        assertEquals(2, t.size());
        assertThrows(UnsupportedOperationException.class, () -> t.items().add(4));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PickleWriter.toBytes(map("pool", PythonTuple.of(0, new Object()))));
        assertTrue(e.getMessage().endsWith("at $.pool[1]"), e.getMessage());
    }

    @Test
    void arraysAreWrittenAsLists() {
        byte[] expected = PickleWriter.toBytes(List.of(1L, -1L, 1L << 40));
        assertArrayEquals(expected, PickleWriter.toBytes(new long[] {1, -1, 1L << 40}));
        assertArrayEquals(expected, PickleWriter.toBytes(new Object[] {1, -1, 1L << 40}));
        assertArrayEquals(PickleWriter.toBytes(List.of(7, 300)), PickleWriter.toBytes(new int[] {7, 300}));
        assertArrayEquals(PickleWriter.toBytes(List.of(0.5, -2.0)), PickleWriter.toBytes(new double[] {0.5, -2.0}));
        assertArrayEquals(PickleWriter.toBytes(List.of(1, 2, 3)),
                PickleWriter.toBytes(new LinkedList<>(List.of(1, 2, 3))));
        assertPickle("80025d2e", new long[0]);
        assertArrayEquals(PickleWriter.toBytes(List.of(List.of(1), List.of())),
                PickleWriter.toBytes(new long[][] {{1}, {}}));
    }

    @Test
    void mapsKeepInsertionOrder() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("z", 1);
        m.put("a", 2);
        // {'z': 1, 'a': 2}
        assertPickle("80027d2858010000007a4b015801000000614b02752e", m);
    }

    @Test
    void listsAreBatchedByThousandAsCPython() {
        // CPython's batch_list_exact: MARK, 1000 items, APPENDS, MARK, the rest, APPENDS (even a last batch of 1).
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        expected.writeBytes(new byte[] {(byte) 0x80, 2, ']', '('});
        for (int i = 0; i < 1000; i++) {
            expected.writeBytes(new byte[] {'K', 0});
        }
        expected.writeBytes(new byte[] {'e', '(', 'K', 0, 'e', '.'});
        assertArrayEquals(expected.toByteArray(), PickleWriter.toBytes(Collections.nCopies(1001, 0)));
    }

    @Test
    void mapsAreBatchedByThousandAsCPython() {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < 2001; i++) {
            m.put("k" + i, null);
        }
        byte[] bytes = PickleWriter.toBytes(m);
        // dict of 2001: EMPTY_DICT MARK 1000 SETITEMS MARK 1000 SETITEMS MARK 1 SETITEMS
        assertEquals(3, countOpcode(bytes, 'u'));
        assertEquals(3, countOpcode(bytes, '('));
        assertEquals('u', bytes[bytes.length - 2]);
    }

    /** Counts an opcode in a pickle of strings and None only (whose argument bytes are printable "k…"). */
    private static int countOpcode(byte[] pickle, char op) {
        int n = 0;
        int i = 2;
        while (i < pickle.length) {
            int b = pickle[i] & 0xff;
            if (b == 'X') {
                int len = (pickle[i + 1] & 0xff) | (pickle[i + 2] & 0xff) << 8;
                i += 5 + len;
                continue;
            }
            if (b == op) {
                n++;
            }
            i++;
        }
        return n;
    }

    @Test
    void writeMatchesToBytesAndDoesNotClose() throws IOException {
        Object tree = snapshotTree();
        boolean[] closed = {false};
        ByteArrayOutputStream sink = new ByteArrayOutputStream() {
            @Override
            public void close() {
                closed[0] = true;
            }
        };
        PickleWriter.write(tree, sink);
        assertArrayEquals(PickleWriter.toBytes(tree), sink.toByteArray());
        assertTrue(sink.size() > 8192, "exercises the internal buffer");
        assertFalse(closed[0]);
    }

    @Test
    void longStringsLargerThanTheBufferAreWrittenWhole() {
        String s = "é".repeat(10_000);
        byte[] bytes = PickleWriter.toBytes(s);
        assertEquals(2 + 5 + 20_000 + 1, bytes.length);
        assertEquals(s, new String(bytes, 7, 20_000, StandardCharsets.UTF_8));
    }

    @Test
    void ioExceptionsPropagate() {
        OutputStream failing = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("disk full");
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                throw new IOException("disk full");
            }
        };
        IOException e = assertThrows(IOException.class, () -> PickleWriter.write(List.of(1), failing));
        assertEquals("disk full", e.getMessage());
    }

    @Test
    void unsupportedTypesAreRejectedWithTypeAndPath() {
        Map<String, Object> tree = map("segments",
                List.of(map("blocks", List.of(map("ok", 1), map("state", new HashSet<>(List.of("x")))))));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PickleWriter.toBytes(tree));
        assertTrue(e.getMessage().contains("unsupported type java.util.HashSet"), e.getMessage());
        assertTrue(e.getMessage().endsWith("at $.segments[0].blocks[1].state"), e.getMessage());

        e = assertThrows(IllegalArgumentException.class, () -> PickleWriter.toBytes(map("a b", List.of('c'))));
        assertTrue(e.getMessage().contains("java.lang.Character"), e.getMessage());
        assertTrue(e.getMessage().endsWith("at $[\"a b\"][0]"), e.getMessage());

        e = assertThrows(IllegalArgumentException.class, () -> PickleWriter.toBytes(new BigDecimal("1.5")));
        assertTrue(e.getMessage().contains("java.math.BigDecimal") && e.getMessage().endsWith("at $"), e.getMessage());

    }

    @Test
    void nonStringKeysAreRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PickleWriter.toBytes(map("outer", Map.of(1, "x"))));
        assertTrue(e.getMessage().contains("java.lang.Integer") && e.getMessage().endsWith("at $.outer"),
                e.getMessage());

        Map<String, Object> nullKey = new LinkedHashMap<>();
        nullKey.put(null, 1);
        e = assertThrows(IllegalArgumentException.class, () -> PickleWriter.toBytes(List.of(nullKey)));
        assertTrue(e.getMessage().contains("map key null") && e.getMessage().endsWith("at $[0]"), e.getMessage());
    }

    @Test
    void cyclesAndHugeIntegersAreRejected() {
        List<Object> cycle = new ArrayList<>();
        cycle.add(cycle);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PickleWriter.toBytes(cycle));
        assertTrue(e.getMessage().contains("nested deeper than " + PickleWriter.MAX_DEPTH), e.getMessage());

        e = assertThrows(IllegalArgumentException.class,
                () -> PickleWriter.toBytes(BigInteger.ONE.shiftLeft(255 * 8)));
        assertTrue(e.getMessage().contains("LONG1"), e.getMessage());
        PickleWriter.toBytes(BigInteger.ONE.shiftLeft(255 * 8 - 2)); // 255 bytes still fit
    }

    @Test
    void cyclesThroughMapsAndTuplesAreRejectedWithThePathWhereTheyClose() {
        Map<String, Object> self = new LinkedHashMap<>();
        self.put("ok", 1);
        self.put("self", self);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PickleWriter.toBytes(List.of(self)));
        assertTrue(e.getMessage().contains("a container that contains itself"), e.getMessage());
        assertTrue(e.getMessage().endsWith("at $[0].self"), e.getMessage());

        List<Object> viaTuple = new ArrayList<>();
        viaTuple.add(PythonTuple.of(1, viaTuple));
        e = assertThrows(IllegalArgumentException.class, () -> PickleWriter.toBytes(map("k", viaTuple)));
        assertTrue(e.getMessage().endsWith("at $.k[0][1]"), e.getMessage());
    }

    // ------------------------------------------------------------------------------------------------------------
    // Shared containers. Expected bytes computed with CPython 3.11.7 as pickletools.optimize(pickle.dumps(v, 2))
    // of the same object graph, built with no two strings the same object (CPython memoizes strings too), e.g.
    //   s = lambda x: ''.join(list(x)); F = [{s('filename'): s('f.py'), s('line'): 1}]
    // or, where this writer deliberately differs from CPython (empty containers and tuples are never shared), with
    // CPython's pickle._Pickler whose memoize() skips all but non-empty lists and dicts, then optimize().
    // ------------------------------------------------------------------------------------------------------------

    @Test
    void sharedContainersAreWrittenOnceAsCPythonDoes() {
        // {'device_traces': [[{'frames': F, 'action': 'alloc'}, {'frames': F, 'action': 'free'}]]}: BINPUT 0 after
        // F's EMPTY_LIST, BINGET 0 for the second entry's frames.
        List<Object> frames = List.of(map("filename", "f.py", "line", 1));
        assertPickle("80027d580d0000006465766963655f7472616365735d5d287d2858060000006672616d65735d71007d2858080000"
                + "0066696c656e616d655804000000662e707958040000006c696e654b0175615806000000616374696f6e5805000000"
                + "616c6c6f63757d2858060000006672616d657368005806000000616374696f6e580400000066726565756561732e",
                map("device_traces", List.of(List.of(map("frames", frames, "action", "alloc"),
                        map("frames", frames, "action", "free")))));
        // a = [1, 2]; d = {'xy': a}; [a, d, d, a]: keys in the order of the first writes, a dict shared too
        List<Object> a = List.of(1, 2);
        Map<String, Object> d = map("xy", a);
        assertPickle("80025d285d7100284b014b02657d71015802000000787968007368016800652e", List.of(a, d, d, a));
        // m = {'ab': [3]}; [m, [m]]
        Map<String, Object> m = map("ab", List.of(3));
        assertPickle("80025d287d7100580200000061625d4b0361735d680061652e", List.of(m, List.of(m)));
        // Arrays are shared as lists: a = [1, 2]; [a, a]
        String twice = "80025d285d7100284b014b02656800652e";
        long[] longs = {1, 2};
        assertPickle(twice, List.of(longs, longs));
        int[] ints = {1, 2};
        assertPickle(twice, new Object[] {ints, ints});
        Object[] objects = {1, 2};
        assertPickle(twice, List.of(objects, objects));
        assertPickle(twice, List.of(a, a));
    }

    @Test
    void emptyContainersAndTuplesAreNeverShared() {
        // [[], [], {}, {}] with four distinct objects: Java's List.of() and Map.of() are one object each
        assertPickle("80025d285d5d7d7d652e", List.of(List.of(), List.of(), Map.of(), Map.of()));
        assertPickle("80025d285d5d652e", List.of(new long[0], Collections.emptyList()));
        // [(0, 0), (0, 0)]: one PythonTuple in Java, written out twice (CPython would BINGET the second)
        assertPickle("80025d284b004b00864b004b0086652e",
                List.of(PyTorchSnapshots.DEFAULT_POOL_ID, PyTorchSnapshots.DEFAULT_POOL_ID));
        // L = [1]; t = (L,); [t, t]: the tuple twice, the list in it once
        PythonTuple t = PythonTuple.of(List.of(1));
        assertPickle("80025d285d71004b016185680085652e", List.of(t, t));
    }

    /** 300 lists each met twice: memo keys 0..255 take BINPUT/BINGET, 256..299 LONG_BINPUT/LONG_BINGET. */
    private static List<Object> threeHundredSharedLists() {
        List<Object> tree = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            List<Object> list = List.of(i);
            tree.add(list);
            tree.add(list);
        }
        return tree;
    }

    @Test
    void memoKeysFrom256OnTakeFourBytes() {
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        expected.writeBytes(new byte[] {(byte) 0x80, 2, ']', '('});
        for (int i = 0; i < 300; i++) {
            expected.write(']');
            if (i < 256) {
                expected.writeBytes(new byte[] {'q', (byte) i, 'K', (byte) i, 'a', 'h', (byte) i});
            } else {
                expected.writeBytes(new byte[] {'r', (byte) i, 1, 0, 0, 'M', (byte) i, 1, 'a', 'j', (byte) i, 1, 0, 0});
            }
        }
        expected.writeBytes(new byte[] {'e', '.'});
        assertArrayEquals(expected.toByteArray(), PickleWriter.toBytes(threeHundredSharedLists()));
    }

    /**
     * CPython's own pickle of the same lists (ints only, so CPython shares exactly what this writer shares) is the
     * same bytes, and CPython loads the shared frames of {@link #snapshotTree()} as one list.
     */
    @Test
    void cpythonWritesTheSameMemoAndLoadsSharedListsAsOneObject(@TempDir Path dir) throws Exception {
        assumeTrue(pythonAvailable(), "python3 not on PATH");
        Path lists = dir.resolve("lists.pickle");
        Files.write(lists, PickleWriter.toBytes(threeHundredSharedLists()));
        Path snapshot = dir.resolve("snapshot.pickle");
        Files.write(snapshot, PickleWriter.toBytes(snapshotTree()));
        String out = runPython(dir, """
                import pickle, pickletools, sys
                data = open(sys.argv[1], 'rb').read()
                x = [l for l in [[i] for i in range(300)] for _ in (0, 1)]
                print(pickletools.optimize(pickle.dumps(x, 2)) == data)
                y = pickle.loads(data)
                print(y == x, all(y[i] is y[i + 1] and y[i] is not y[i + 2] for i in range(0, 598, 2)))
                s = pickle.loads(open(sys.argv[2], 'rb').read())
                f = s['segments'][0]['blocks'][0]['frames']
                print(f is s['segments'][1]['frames'] and f is s['device_traces'][0][0]['frames'], len(f))
                # List.of() everywhere in Java: distinct empty lists in Python
                print(s['segments'][0]['frames'] is s['segments'][0]['blocks'][1]['frames'])
                """, List.of(lists.toString(), snapshot.toString()));
        assertEquals("True\nTrue True\nTrue 2\nFalse\n", out);
    }

    @Test
    void deepButFiniteTreesAreFine() {
        Object v = 1;
        for (int i = 0; i < PickleWriter.MAX_DEPTH; i++) {
            v = i % 2 == 0 ? List.of(v) : map("k", v);
        }
        // PROTO 2, K 1, STOP; per list EMPTY_LIST APPEND; per map EMPTY_DICT X len 'k' SETITEM
        assertEquals(5 + PickleWriter.MAX_DEPTH / 2 * (2 + 8), PickleWriter.toBytes(v).length);
    }

    @Test
    void concurrentWritersDoNotInterfere() {
        Object tree = snapshotTree();
        byte[] expected = PickleWriter.toBytes(tree);
        assertTrue(IntStream.range(0, 64).parallel()
                .allMatch(i -> Arrays.equals(expected, PickleWriter.toBytes(tree))));
    }

    // ------------------------------------------------------------------------------------------------------------
    // Round trip through CPython: pickle.load must yield the same plain tree, re-pickling it must give the same
    // bytes, and JsonWriter's output of the same tree must load to an equal (type-strict) tree.
    // ------------------------------------------------------------------------------------------------------------

    /** A snapshot-shaped tree with the awkward cases: big addresses, negatives, floats, unicode, empties, batches. */
    public static Map<String, Object> snapshotTree() {
        long base = 0x7F00_0000_0000L; // 139637976727552 > 2^32
        List<Object> frames = List.of(
                map("filename", "C:\\research\\DeComFL\\cezo_fl\\client.py", "line", 206, "name", "pull_model"),
                map("filename", "/opt/app/训练.py", "line", 1, "name", "<module>"));
        Map<String, Object> seg0 = map(
                "device", 0, "address", base, "total_size", 20_971_520L, "allocated_size", 2_359_296L,
                "active_size", 2_359_296L, "requested_size", 2_359_000L, "stream", 0L, "segment_type", "large",
                "segment_pool_id", PythonTuple.of(0L, 0L), "is_expandable", false, "frames", List.of(),
                "blocks", List.of(
                        map("address", base, "size", 2_359_296L, "requested_size", 2_359_000L,
                                "state", "active_allocated", "frames", frames),
                        map("address", base + 2_359_296L, "size", 18_612_224L, "requested_size", 0L,
                                "state", "inactive", "frames", List.of())));
        Map<String, Object> seg1 = map(
                "device", 0, "address", base + (1L << 30), "total_size", 2_097_152L, "allocated_size", 512L,
                "active_size", 1024L, "requested_size", 1000L, "stream", 94_251_745_943_040L, "segment_type", "small",
                "segment_pool_id", PythonTuple.of(1, 3), "is_expandable", true, "frames", frames,
                "blocks", List.of(
                        map("address", base + (1L << 30), "size", 512L, "requested_size", 500L,
                                "state", "active_pending_free", "frames", List.of())));
        List<Object> trace0 = List.of(
                map("action", "segment_alloc", "addr", base, "size", 20_971_520L, "stream", 0,
                        "time_us", 1_763_324_225_770_003L, "compile_context", "N/A", "user_metadata", "",
                        "frames", frames),
                map("action", "alloc", "addr", (1L << 40) + 512, "size", 2_359_000L, "stream", 0,
                        "time_us", 1_763_324_225_770_010L, "compile_context", "N/A", "user_metadata", "",
                        "frames", List.of()),
                map("action", "oom", "device_free", 81_920L, "size", 1L << 36, "stream", 0,
                        "time_us", 1_763_324_225_770_011L, "compile_context", "N/A", "frames", List.of()),
                map("action", "free_completed", "addr", (1L << 40) + 512, "size", 2_359_000L, "stream", 0,
                        "time_us", 1_763_324_225_770_012L, "compile_context", "N/A", "user_metadata", "",
                        "frames", List.of()));
        Map<String, Object> roundup = new LinkedHashMap<>();
        for (int i = 0; i < 16; i++) {
            roundup.put(Integer.toString(1 << i), i == 3 ? 4 : 0);
        }
        Map<String, Object> settings = map(
                "PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,max_split_size_mb:128",
                "max_split_size", -1L, "garbage_collection_threshold", 0.8, "expandable_segments", true,
                "pinned_num_register_threads", 1, "release_lock_on_cudamalloc", false,
                "roundup_power2_divisions", roundup);
        Map<String, Object> bigMap = new LinkedHashMap<>();
        for (int i = 0; i <= 1000; i++) {
            bigMap.put("k" + i, i);
        }
        Map<String, Object> misc = map(
                "ints", List.of(-1, -255, -256, -65536, Integer.MIN_VALUE, (long) Integer.MIN_VALUE - 1, -(1L << 40),
                        Long.MIN_VALUE, Long.MAX_VALUE, 1L << 32, (1L << 32) + 1, 255, 256, 65535, 65536,
                        Integer.MAX_VALUE, 1L << 31, BigInteger.ONE.shiftLeft(64)),
                "floats", List.of(0.0, -0.0, 1.5, 1e-5, 1e300, 0.1, Double.MIN_VALUE, Double.MAX_VALUE, 0.25f),
                "non_finite", List.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Float.NaN),
                "strings", List.of("", "quote\" backslash\\ tab\t newline\n nul\u0000 us\u001f del\u007f",
                        "line\u2028para\u2029", "lone\uD800high", "lone\uDC00low", "pair\uD83D\uDE00"),
                "empties", map("a", Map.of(), "b", List.of(), "c", List.of(List.of(), Map.of(), List.of(List.of()))),
                "none", Collections.singletonList(null),
                "single", map("only", List.of("x")),
                "arrays", map("long", new long[] {1L << 33, -5}, "int", new int[] {1, 70000}, "obj",
                        new Object[] {"x", null, 2.5}, "double", new double[] {Double.NaN, 3.0}),
                "big_list", IntStream.range(0, 2500).boxed().toList(),
                "tuples", List.of(PythonTuple.of(), PythonTuple.of(1), PythonTuple.of(0L, 0L),
                        PythonTuple.of(1, "b", 2.5), PythonTuple.of(1, 2, 3, 4),
                        PythonTuple.of(PythonTuple.of((Object) null), List.of(1))),
                "big_map", bigMap);
        return map(
                "segments", List.of(seg0, seg1),
                "device_traces", List.of(trace0, List.of()),
                "allocator_settings", settings,
                "external_annotations", List.of(map("name", "forward ✓ — 日本語 😀", "stage", "START", "device", 0,
                        "time_us", 1_763_324_225_770_000L)),
                "misc", misc);
    }

    /**
     * Loads argv[1] (our pickle) with a unpickler that refuses globals, checks its opcodes, re-pickles it with
     * CPython's protocol-2 pickler memoizing non-empty lists and dicts only (the pure-Python one, batching as the C
     * one does), drops the unread PUTs ({@code pickletools.optimize}) and compares the bytes, loads argv[2] (compact
     * JSON) and argv[3] (pretty JSON) and compares them type-strictly with the pickle (non-finite floats must be JSON
     * null), then prints {@code expr=ascii(eval(expr))} for each further argument, with the snapshot as {@code s}.
     */
    private static final String ROUND_TRIP_SCRIPT = """
            import io, json, math, pickle, pickletools, sys
            data = open(sys.argv[1], 'rb').read()
            class Safe(pickle.Unpickler):
                def find_class(self, module, name):
                    raise pickle.UnpicklingError('global %s.%s' % (module, name))
            s = Safe(io.BytesIO(data)).load()
            print('ops=' + ','.join(sorted({op.name for op, arg, pos in pickletools.genops(data)})))
            print('proto=' + str(data[1]))
            class ContainersOnly(pickle._Pickler):
                def memoize(self, obj):  # PickleWriter's memo: non-empty lists and dicts only
                    if type(obj) in (list, dict) and obj:
                        super().memoize(obj)
                # Batches as the C pickler writes them (the Python one ends with APPEND/SETITEM for a last one).
                def _batch_appends(self, items, *rest):
                    self.batches(list(items), pickle.APPEND, pickle.APPENDS, self.save)
                def _batch_setitems(self, items, *rest):
                    self.batches(list(items), pickle.SETITEM, pickle.SETITEMS, lambda kv: [self.save(x) for x in kv])
                def batches(self, items, one, many, save):
                    if len(items) == 1:
                        save(items[0])
                        self.write(one)
                        return
                    for i in range(0, len(items), 1000):
                        self.write(pickle.MARK)
                        for item in items[i:i + 1000]:
                            save(item)
                        self.write(many)
            buf = io.BytesIO()
            ContainersOnly(buf, 2).dump(s)
            print('redump_equal=' + str(pickletools.optimize(buf.getvalue()) == data))
            def same(a, b, path):
                if isinstance(a, float) and not math.isfinite(a):
                    assert b is None, (path, a, b)
                    return
                if isinstance(a, tuple):  # JSON has no tuples: an array
                    assert type(b) is list and len(a) == len(b), (path, type(b), len(a), len(b))
                    for i, (x, y) in enumerate(zip(a, b)):
                        same(x, y, '%s[%d]' % (path, i))
                    return
                assert type(a) is type(b), (path, type(a), type(b))
                if isinstance(a, dict):
                    assert list(a) == list(b), (path, list(a), list(b))
                    for k in a:
                        same(a[k], b[k], path + '.' + k)
                elif isinstance(a, list):
                    assert len(a) == len(b), (path, len(a), len(b))
                    for i, (x, y) in enumerate(zip(a, b)):
                        same(x, y, '%s[%d]' % (path, i))
                elif isinstance(a, float):
                    assert a == b and math.copysign(1, a) == math.copysign(1, b), (path, a, b)
                else:
                    assert a == b, (path, a, b)
            with open(sys.argv[2], encoding='utf-8') as f:
                same(s, json.load(f), '$')
            with open(sys.argv[3], encoding='utf-8') as f:
                same(s, json.load(f), '$')
            print('json_equal=True')
            for expr in sys.argv[4:]:
                print(expr + '=' + ascii(eval(expr, {'s': s, 'math': math})))
            """;

    @Test
    void roundTripsThroughCPython(@TempDir Path dir) throws Exception {
        assumeTrue(pythonAvailable(), "python3 not on PATH");
        Map<String, Object> tree = snapshotTree();
        Path pickle = dir.resolve("snapshot.pickle");
        Path json = dir.resolve("snapshot.json");
        Path pretty = dir.resolve("snapshot.pretty.json");
        try (OutputStream out = Files.newOutputStream(pickle)) {
            PickleWriter.write(tree, out);
        }
        Files.writeString(json, JsonWriter.toString(tree), StandardCharsets.UTF_8);
        Files.writeString(pretty, JsonWriter.toString(tree, true), StandardCharsets.UTF_8);

        Map<String, String> probes = new LinkedHashMap<>();
        probes.put("list(s)", "['segments', 'device_traces', 'allocator_settings', 'external_annotations', 'misc']");
        probes.put("list(s['segments'][0])", "['device', 'address', 'total_size', 'allocated_size', 'active_size',"
                + " 'requested_size', 'stream', 'segment_type', 'segment_pool_id', 'is_expandable', 'frames',"
                + " 'blocks']");
        probes.put("s['segments'][0]['address']", "139637976727552");
        probes.put("s['segments'][1]['blocks'][0]['address']", "139639050469376");
        probes.put("s['segments'][1]['stream']", "94251745943040");
        probes.put("s['segments'][0]['segment_pool_id']", "(0, 0)");
        probes.put("[s['segments'][0]['segment_pool_id']].count((0, 0))", "1"); // Python's == (0, 0)
        probes.put("s['segments'][1]['segment_pool_id']", "(1, 3)");
        probes.put("s['misc']['tuples']", "[(), (1,), (0, 0), (1, 'b', 2.5), (1, 2, 3, 4), ((None,), [1])]");
        probes.put("s['segments'][0]['blocks'][0]['frames'][1]", "{'filename': '/opt/app/\\u8bad\\u7ec3.py',"
                + " 'line': 1, 'name': '<module>'}");
        probes.put("s['segments'][0]['blocks'][0]['frames'][0]['filename']",
                "'C:\\\\research\\\\DeComFL\\\\cezo_fl\\\\client.py'");
        probes.put("s['device_traces'][0][1]['addr']", "1099511628288");
        probes.put("type(s['device_traces'][0][1]['addr']).__name__", "'int'");
        probes.put("s['device_traces'][0][2]['device_free']", "81920");
        probes.put("s['device_traces'][1]", "[]");
        probes.put("s['allocator_settings']['garbage_collection_threshold']", "0.8");
        probes.put("s['allocator_settings']['max_split_size']", "-1");
        probes.put("type(s['allocator_settings']['expandable_segments']).__name__", "'bool'");
        probes.put("s['allocator_settings']['roundup_power2_divisions']['8']", "4");
        probes.put("list(s['allocator_settings']['roundup_power2_divisions'])[-1]", "'32768'");
        probes.put("s['external_annotations'][0]['name']",
                "'forward \\u2713 \\u2014 \\u65e5\\u672c\\u8a9e \\U0001f600'");
        probes.put("s['misc']['ints']", "[-1, -255, -256, -65536, -2147483648, -2147483649, -1099511627776,"
                + " -9223372036854775808, 9223372036854775807, 4294967296, 4294967297, 255, 256, 65535, 65536,"
                + " 2147483647, 2147483648, 18446744073709551616]");
        probes.put("s['misc']['floats']", "[0.0, -0.0, 1.5, 1e-05, 1e+300, 0.1, 5e-324, 1.7976931348623157e+308,"
                + " 0.25]");
        probes.put("s['misc']['non_finite']", "[nan, inf, -inf, nan]");
        probes.put("s['misc']['strings']", "['', 'quote\" backslash\\\\ tab\\t newline\\n nul\\x00 us\\x1f"
                + " del\\x7f', 'line\\u2028para\\u2029', 'lone\\ud800high', 'lone\\udc00low', 'pair\\U0001f600']");
        probes.put("s['misc']['empties']", "{'a': {}, 'b': [], 'c': [[], {}, [[]]]}");
        probes.put("s['misc']['none']", "[None]");
        probes.put("s['misc']['single']", "{'only': ['x']}");
        probes.put("s['misc']['arrays']", "{'long': [8589934592, -5], 'int': [1, 70000], 'obj': ['x', None, 2.5],"
                + " 'double': [nan, 3.0]}");
        probes.put("(len(s['misc']['big_list']), s['misc']['big_list'][999], s['misc']['big_list'][-1])",
                "(2500, 999, 2499)");
        probes.put("(len(s['misc']['big_map']), list(s['misc']['big_map'].items())[1000])", "(1001, ('k1000', 1000))");

        List<String> args = new ArrayList<>(List.of(pickle.toString(), json.toString(), pretty.toString()));
        args.addAll(probes.keySet());
        String out = runPython(dir, ROUND_TRIP_SCRIPT, args);

        Map<String, String> got = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            int eq = line.indexOf('=');
            // probe expressions contain no "=": the first one separates expression and value
            got.put(line.substring(0, eq), line.substring(eq + 1));
        }
        // Only opcodes that both CPython and memory_viz's JavaScript unpickler read; BINPUT and BINGET for the
        // frames list that three entries share.
        assertEquals("APPEND,APPENDS,BINFLOAT,BINGET,BININT,BININT1,BININT2,BINPUT,BINUNICODE,EMPTY_DICT,EMPTY_LIST,"
                + "EMPTY_TUPLE,LONG1,MARK,NEWFALSE,NEWTRUE,NONE,PROTO,SETITEM,SETITEMS,STOP,TUPLE,TUPLE1,TUPLE2,TUPLE3",
                got.get("ops"), out);
        assertEquals("2", got.get("proto"), out);
        assertEquals("True", got.get("redump_equal"), "CPython re-pickles the loaded tree to the same bytes\n" + out);
        assertEquals("True", got.get("json_equal"), out);
        for (Map.Entry<String, String> probe : probes.entrySet()) {
            assertEquals(probe.getValue(), got.get(probe.getKey()), probe.getKey());
        }
    }

    @Test
    void sharedPickleToCsvReadsTheSnapshot(@TempDir Path dir) throws Exception {
        assumeTrue(pythonAvailable(), "python3 not on PATH");
        Path script = Path.of(System.getProperty("devalloc.shared.dir", "../../shared"), "traces", "pickle_to_csv.py");
        assumeTrue(Files.isRegularFile(script),
                () -> script + " is absent: the shared traces are not checked out here");
        Path pickle = dir.resolve("snapshot.pickle");
        Files.write(pickle, PickleWriter.toBytes(snapshotTree()));
        String csv = runPython(dir,
                "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
                List.of(script.toString(), pickle.toString(), "--device", "0"));
        assertEquals("""
                seq,action,addr,size,stream,time_us
                0,segment_alloc,139637976727552,20971520,0,1763324225770003
                1,alloc,1099511628288,2359000,0,1763324225770010
                2,oom,,81920,0,1763324225770011
                3,free_completed,1099511628288,2359000,0,1763324225770012
                """, csv);
    }

    public static boolean pythonAvailable() {
        try {
            Process p = new ProcessBuilder("python3", "-c", "import sys; print(sys.version_info[0])")
                    .redirectErrorStream(true).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0 && new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                    .strip().equals("3");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Runs {@code python3 -c script args…}; fails the test unless it exits with 0; returns its stdout. */
    public static String runPython(Path dir, String script, List<String> args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("python3", "-c", script));
        command.addAll(args);
        Path stdout = Files.createTempFile(dir, "python", ".out");
        Path stderr = Files.createTempFile(dir, "python", ".err");
        ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
        pb.environment().put("PYTHONIOENCODING", "utf-8");
        Process p = pb.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("python3 timed out");
        }
        String out = Files.readString(stdout, StandardCharsets.UTF_8);
        String err = Files.readString(stderr, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), () -> "python3 failed:\n" + err + "\nstdout:\n" + out);
        return out;
    }

    /** An insertion-ordered map from alternating keys and values. */
    public static Map<String, Object> map(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }
}
