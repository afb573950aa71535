package io.devalloc.trace.text;

import static io.devalloc.trace.pytorch.PickleWriterTest.map;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.api.spi.PythonTuple;
import io.devalloc.trace.pytorch.PickleWriterTest;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonWriterTest {

    @Test
    void objectKeepsTheMembersInOrderWithNullValues() {
        Map<String, Object> o = JsonWriter.object("b", 1, "a", null, "c", JsonWriter.object());
        assertEquals(List.of("b", "a", "c"), List.copyOf(o.keySet()));
        assertEquals("{\"b\":1,\"a\":null,\"c\":{}}", JsonWriter.toString(o));
        o.put("d", 2); // callers add members that are there only sometimes
        assertEquals(2, o.get("d"));
    }

    @Test
    void objectRefusesAnOddCountANonStringNameAndANameGivenTwice() {
        assertThrows(IllegalArgumentException.class, () -> JsonWriter.object("a", 1, "b"));
        assertThrows(IllegalArgumentException.class, () -> JsonWriter.object(1, "a"));
        assertEquals("member 1: name 'a' given twice", assertThrows(IllegalArgumentException.class,
                () -> JsonWriter.object("a", 1, "a", 2)).getMessage());
    }

    @Test
    void scalars() {
        assertEquals("null", JsonWriter.toString(null));
        assertEquals("true", JsonWriter.toString(true));
        assertEquals("false", JsonWriter.toString(false));
        assertEquals("5", JsonWriter.toString(5));
        assertEquals("-1", JsonWriter.toString(-1L));
        assertEquals("7", JsonWriter.toString((short) 7));
        assertEquals("-8", JsonWriter.toString((byte) -8));
        assertEquals("1099511627776", JsonWriter.toString(1L << 40));
        assertEquals("9223372036854775807", JsonWriter.toString(Long.MAX_VALUE));
        assertEquals("-9223372036854775808", JsonWriter.toString(Long.MIN_VALUE));
        assertEquals("18446744073709551616", JsonWriter.toString(BigInteger.ONE.shiftLeft(64)));
    }

    @Test
    void floatsAlwaysHaveAFractionOrExponent() {
        assertEquals("1.5", JsonWriter.toString(1.5));
        assertEquals("1.0", JsonWriter.toString(1.0));
        assertEquals("-0.0", JsonWriter.toString(-0.0));
        assertEquals("1.0E10", JsonWriter.toString(1e10));
        assertEquals("1.0E-5", JsonWriter.toString(1e-5));
        assertEquals("4.9E-324", JsonWriter.toString(Double.MIN_VALUE));
        assertEquals("0.1", JsonWriter.toString(0.1f));
        assertEquals("[0.5,-2.0]", JsonWriter.toString(new double[] {0.5, -2.0}));
    }

    @Test
    void tuplesBecomeArrays() {
        assertEquals("[]", JsonWriter.toString(PythonTuple.of()));
        assertEquals("{\"segment_pool_id\":[0,0]}",
                JsonWriter.toString(map("segment_pool_id", PythonTuple.of(0L, 0L))));
        assertEquals("[[null],[1]]", JsonWriter.toString(PythonTuple.of(PythonTuple.of((Object) null), List.of(1))));
    }

    @Test
    void nonFiniteFloatsBecomeNull() {
        assertEquals("null", JsonWriter.toString(Double.NaN));
        assertEquals("null", JsonWriter.toString(Double.POSITIVE_INFINITY));
        assertEquals("null", JsonWriter.toString(Double.NEGATIVE_INFINITY));
        assertEquals("null", JsonWriter.toString(Float.NaN));
        assertEquals("null", JsonWriter.toString(Float.NEGATIVE_INFINITY));
        assertEquals("[null,1.0,null]", JsonWriter.toString(List.of(Double.NaN, 1.0, Double.POSITIVE_INFINITY)));
        assertEquals("{\"t\":null}", JsonWriter.toString(map("t", Double.NaN)));
    }

    @Test
    void stringEscaping() {
        assertEquals("\"\"", JsonWriter.toString(""));
        assertEquals("\"plain\"", JsonWriter.toString("plain"));
        assertEquals("\"q\\\"b\\\\s/\"", JsonWriter.toString("q\"b\\s/"));
        // every control character as \\u00XX (no short forms), DEL and non-ASCII kept as they are
        assertEquals("\"\\u0000\\u0001\\u0008\\u0009\\u000a\\u000c\\u000d\\u001f\u007f\"",
                JsonWriter.toString("\u0000\u0001\b\t\n\f\r\u001f\u007f"));
        assertEquals("\"é € 日本語 😀\"", JsonWriter.toString("é € 日本語 😀"));
        // U+2028/U+2029 escaped for JavaScript; lone surrogates escaped so the text stays valid UTF-16/UTF-8
        assertEquals("\"a\\u2028b\\u2029c\"", JsonWriter.toString("a\u2028b\u2029c"));
        assertEquals("\"x\\ud800y\\udc00\"", JsonWriter.toString("x\uD800y\uDC00"));
        assertEquals("\"\\udc00\ud83d\ude00\\ud83d\"", JsonWriter.toString("\uDC00\uD83D\uDE00\uD83D"));
        // keys are escaped the same way
        assertEquals("{\"k\\\"\\u000a\":1}", JsonWriter.toString(map("k\"\n", 1)));
    }

    @Test
    void nestingAndOrder() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("z", List.of(1, Arrays.asList(null, true), Map.of()));
        m.put("a", map("inner", List.of(), "n", -3));
        assertEquals("{\"z\":[1,[null,true],{}],\"a\":{\"inner\":[],\"n\":-3}}", JsonWriter.toString(m));
        assertEquals("[[],{},[[]]]", JsonWriter.toString(List.of(List.of(), Map.of(), List.of(List.of()))));
        assertEquals("[1,2,3]", JsonWriter.toString(new LinkedList<>(List.of(1, 2, 3))));
        assertEquals("[8589934592,-5]", JsonWriter.toString(new long[] {1L << 33, -5}));
        assertEquals("[1,70000]", JsonWriter.toString(new int[] {1, 70000}));
        assertEquals("[\"x\",null,2.5]", JsonWriter.toString(new Object[] {"x", null, 2.5}));
        assertEquals("[[1],[]]", JsonWriter.toString(new long[][] {{1}, {}}));
    }

    @Test
    void prettyOutputShape() {
        Object v = map("a", List.of(1, map("b", null)), "c", Map.of(), "d", List.of(), "e", "x");
        assertEquals("""
                {
                  "a": [
                    1,
                    {
                      "b": null
                    }
                  ],
                  "c": {},
                  "d": [],
                  "e": "x"
                }""", JsonWriter.toString(v, true));
        assertEquals("[]", JsonWriter.toString(List.of(), true));
        assertEquals("5", JsonWriter.toString(5, true));
        assertEquals("[\n  1,\n  2\n]", JsonWriter.toString(new int[] {1, 2}, true));
    }

    @Test
    void writeToAppendable() throws IOException {
        Object tree = PickleWriterTest.snapshotTree();
        StringWriter w = new StringWriter();
        JsonWriter.write(tree, w, false);
        assertEquals(JsonWriter.toString(tree), w.toString());
        StringBuilder sb = new StringBuilder("prefix:");
        JsonWriter.write(List.of(1), sb, true);
        assertEquals("prefix:[\n  1\n]", sb.toString());
    }

    @Test
    void appendableFailuresPropagate() {
        Appendable failing = new Appendable() {
            @Override
            public Appendable append(CharSequence csq) throws IOException {
                throw new IOException("closed");
            }

            @Override
            public Appendable append(CharSequence csq, int start, int end) throws IOException {
                throw new IOException("closed");
            }

            @Override
            public Appendable append(char c) throws IOException {
                throw new IOException("closed");
            }
        };
        IOException e = assertThrows(IOException.class, () -> JsonWriter.write(List.of("x"), failing, false));
        assertEquals("closed", e.getMessage());
    }

    @Test
    void unsupportedValuesAreRejectedWithTypeAndPath() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JsonWriter.toString(
                map("device_traces", List.of(List.of(map("frames", new HashSet<>(List.of(1)))))), true));
        assertTrue(e.getMessage().contains("unsupported type java.util.HashSet"), e.getMessage());
        assertTrue(e.getMessage().endsWith("at $.device_traces[0][0].frames"), e.getMessage());

        e = assertThrows(IllegalArgumentException.class, () -> JsonWriter.toString(map("x", Map.of(1L, 2))));
        assertTrue(e.getMessage().contains("java.lang.Long") && e.getMessage().endsWith("at $.x"), e.getMessage());

        Map<String, Object> nullKey = new LinkedHashMap<>();
        nullKey.put(null, 1);
        e = assertThrows(IllegalArgumentException.class, () -> JsonWriter.toString(nullKey));
        assertTrue(e.getMessage().contains("map key null"), e.getMessage());

        e = assertThrows(IllegalArgumentException.class, () -> JsonWriter.toString(List.of(Thread.State.NEW)));
        assertTrue(e.getMessage().contains("java.lang.Thread$State") && e.getMessage().endsWith("at $[0]"),
                e.getMessage());

        List<Object> cycle = new ArrayList<>();
        cycle.add(map("self", cycle));
        e = assertThrows(IllegalArgumentException.class, () -> JsonWriter.toString(cycle));
        assertTrue(e.getMessage().contains("nested deeper than"), e.getMessage());
    }

    /** Python's json module reads both renderings, and the pretty one is exactly {@code json.dumps(indent=2)}. */
    @Test
    void prettyOutputMatchesPythonIndent2(@TempDir Path dir) throws Exception {
        assumeTrue(PickleWriterTest.pythonAvailable(), "python3 not on PATH");
        // no floats (Python prints 1e-05 where Java prints 1.0E-5) and no control characters (Python prints \n)
        Object tree = map(
                "segments", List.of(map("address", 139_637_976_727_552L, "blocks", List.of(), "frames",
                        List.of(map("filename", "/opt/训练.py", "line", 3, "name", "<module> \"q\" \\")))),
                "device_traces", List.of(List.of(), List.of(map("action", "alloc", "addr", -(1L << 40)))),
                "allocator_settings", map("expandable_segments", true, "max_split_size", -1, "x", null),
                "empty", map());
        Path compact = dir.resolve("compact.json");
        Files.writeString(compact, JsonWriter.toString(tree), StandardCharsets.UTF_8);
        String pretty = JsonWriter.toString(tree, true);
        String python = PickleWriterTest.runPython(dir, """
                import json, sys
                with open(sys.argv[1], encoding='utf-8') as f:
                    sys.stdout.write(json.dumps(json.load(f), indent=2, ensure_ascii=False))
                """, List.of(compact.toString()));
        assertEquals(pretty, python);
    }
}
