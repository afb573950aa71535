package io.devalloc.trace.text;

import io.devalloc.api.spi.PythonTuple;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Writes the same value trees as {@link io.devalloc.trace.pytorch.PickleWriter} as JSON text (RFC 8259), for tools and
 * browsers that do not read pickles. {@code json.load} in Python reads it back into the same
 * {@code dict}/{@code list}/{@code str}/{@code int}/{@code float}/{@code bool}/{@code None} tree as the pickle, with
 * one exception: see NaN below.
 *
 * <h2>Mapping</h2>
 * <ul>
 *   <li>{@code null} → {@code null}; {@link Boolean} → {@code true}/{@code false}.</li>
 *   <li>{@link Byte}, {@link Short}, {@link Integer}, {@link Long}, {@link BigInteger} → an integer literal, all
 *       digits (no exponent, no rounding): {@code 1099511627776}. A JavaScript reader loses precision above
 *       2<sup>53</sup>, a Python reader does not.</li>
 *   <li>{@link Double}, {@link Float} → {@link Double#toString}/{@link Float#toString}, which always has a
 *       fraction or exponent ({@code 1.0}, {@code 1.0E10}, {@code -0.0}), so readers keep it a float.
 *       <b>NaN and ±Infinity are written as {@code null}</b>, because JSON has no literal for them (Python's
 *       {@code json.dumps} would write the non-standard {@code NaN}/{@code Infinity}). The pickle keeps them.</li>
 *   <li>{@link String} → a string: {@code "} and {@code \} escaped with a backslash, every control character
 *       U+0000–U+001F as <code>&#92;u00XX</code>, U+2028/U+2029 as <code>&#92;u2028</code>/<code>&#92;u2029</code>
 *       (so the text can be embedded in JavaScript) and an unpaired surrogate as its <code>&#92;u</code> escape
 *       (D800 to DFFF) (so the text stays encodable; Python reads it back as the same lone surrogate). All other
 *       characters, non-ASCII included, are written as they are: encode the output as UTF-8.</li>
 *   <li>{@link List}, {@code Object[]}, {@code long[]}, {@code int[]}, {@code double[]} and a {@link PythonTuple}
 *       (JSON has no tuples: {@code segment_pool_id} reads {@code [0, 0]}) → an array;
 *       {@link Map} with {@link String} keys → an object in iteration order.</li>
 *   <li>Anything else, a non-{@code String} or {@code null} key, or nesting deeper than
 *       {@link #MAX_DEPTH} → {@link IllegalArgumentException} naming the type and the path
 *       ({@code $.segments[0].blocks[3]}).</li>
 * </ul>
 *
 * <p>Compact output has no whitespace at all. Pretty output indents by two spaces, puts each element and member
 * on its own line, separates names from values by {@code ": "}, writes empty containers as {@code []}/{@code {}}
 * and ends without a newline, like Python's {@code json.dumps(value, indent=2)}.
 *
 * <p>The class is stateless and thread-safe. The value tree must not be modified while it is written.
 */
public final class JsonWriter {

    /** The deepest nesting of containers written (a cycle in the tree would be infinite), as the pickle writer's. */
    public static final int MAX_DEPTH = SnapshotTreeWalker.MAX_DEPTH;

    private static final String INDENT = "  ";
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private JsonWriter() {
    }

    /**
     * Appends {@code value} as JSON to {@code out}. If the tree holds an unsupported value, part of the text may
     * already have been appended when the exception is thrown.
     *
     * @param pretty indent with two spaces and one element per line; otherwise no whitespace
     * @throws IllegalArgumentException if the tree holds an unsupported type, a non-{@code String} map key or is
     *     nested deeper than {@link #MAX_DEPTH}; the message names the type and the path
     * @throws IOException if {@code out} fails
     */
    public static void write(Object value, Appendable out, boolean pretty) throws IOException {
        Objects.requireNonNull(out, "out");
        SnapshotTreeWalker.walk(value, new Encoder(out, pretty), "cannot write JSON");
    }

    /** Returns {@code value} as compact JSON. */
    public static String toString(Object value) {
        return toString(value, false);
    }

    /** Returns {@code value} as JSON, pretty-printed if {@code pretty}. */
    public static String toString(Object value, boolean pretty) {
        StringBuilder sb = new StringBuilder();
        try {
            write(value, sb, pretty);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringBuilder does not fail
        }
        return sb.toString();
    }

    /**
     * A JSON object's members in the order given, as name, value, name, value, ...: an ordered map of what
     * {@link #write} writes as an object. Unlike {@link Map#of}, values may be null; the map may be added to.
     *
     * @throws IllegalArgumentException for an odd count, a name that is not a {@link String}, or a name given twice
     */
    public static Map<String, Object> object(Object... namesAndValues) {
        if (namesAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("names and values come in pairs, got " + namesAndValues.length);
        }
        Map<String, Object> members = LinkedHashMap.newLinkedHashMap(namesAndValues.length / 2);
        for (int i = 0; i < namesAndValues.length; i += 2) {
            if (!(namesAndValues[i] instanceof String name)) {
                throw new IllegalArgumentException("member " + i / 2 + " has no name: " + namesAndValues[i]);
            }
            if (members.containsKey(name)) {
                throw new IllegalArgumentException("member " + i / 2 + ": name '" + name + "' given twice");
            }
            members.put(name, namesAndValues[i + 1]);
        }
        return members;
    }

    /** One write: JSON text for the nodes the walker meets. */
    private static final class Encoder implements SnapshotTreeVisitor {
        private final Appendable out;
        private final boolean pretty;

        Encoder(Appendable out, boolean pretty) {
            this.out = out;
            this.pretty = pretty;
        }

        @Override
        public void nullValue() throws IOException {
            out.append("null");
        }

        @Override
        public void bool(boolean value) throws IOException {
            out.append(value ? "true" : "false");
        }

        @Override
        public void integer(long value) throws IOException {
            out.append(Long.toString(value));
        }

        @Override
        public void bigInteger(BigInteger value) throws IOException {
            out.append(value.toString());
        }

        @Override
        public void float64(double value) throws IOException {
            out.append(Double.isFinite(value) ? Double.toString(value) : "null");
        }

        @Override
        public void float32(float value) throws IOException {
            out.append(Float.isFinite(value) ? Float.toString(value) : "null");
        }

        /** A tuple is an array: JSON has no tuples. */
        @Override
        public void start(Container kind, Object container, int size) throws IOException {
            out.append(kind == Container.MAP ? '{' : '[');
        }

        /** The separator before item {@code index}, and in pretty output its own line, indented to {@code depth}. */
        @Override
        public void item(Container kind, int index, int size, int depth) throws IOException {
            if (index > 0) {
                out.append(',');
            }
            newline(depth);
        }

        @Override
        public void mapKey(String key) throws IOException {
            string(key);
            out.append(pretty ? ": " : ":");
        }

        @Override
        public void end(Container kind, Object container, int size, int depth) throws IOException {
            if (size > 0) {
                newline(depth - 1);
            }
            out.append(kind == Container.MAP ? '}' : ']');
        }

        private void newline(int depth) throws IOException {
            if (pretty) {
                out.append('\n');
                for (int i = 0; i < depth; i++) {
                    out.append(INDENT);
                }
            }
        }

        @Override
        public void string(String s) throws IOException {
            out.append('"');
            int n = s.length();
            int run = 0; // start of the pending run of characters that need no escape
            for (int i = 0; i < n; i++) {
                char c = s.charAt(i);
                String escape = null;
                if (c == '"') {
                    escape = "\\\"";
                } else if (c == '\\') {
                    escape = "\\\\";
                } else if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                    escape = unicodeEscape(c);
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++; // a valid pair: written as is
                } else if (Character.isSurrogate(c)) {
                    escape = unicodeEscape(c);
                }
                if (escape != null) {
                    out.append(s, run, i).append(escape);
                    run = i + 1;
                }
            }
            out.append(s, run, n).append('"');
        }

        private static String unicodeEscape(char c) {
            return new String(new char[] {
                '\\', 'u', HEX[c >> 12], HEX[(c >> 8) & 0xf], HEX[(c >> 4) & 0xf], HEX[c & 0xf]});
        }
    }
}
