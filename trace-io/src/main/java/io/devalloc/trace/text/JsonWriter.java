package io.devalloc.trace.text;

import io.devalloc.api.spi.PythonTuple;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.RandomAccess;

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
    public static final int MAX_DEPTH = 500;

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
        try {
            new Encoder(out, pretty).value(value, 0);
        } catch (BadValue e) {
            throw e.toIllegalArgument();
        }
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

    private static final class Encoder {
        private final Appendable out;
        private final boolean pretty;

        Encoder(Appendable out, boolean pretty) {
            this.out = out;
            this.pretty = pretty;
        }

        void value(Object value, int depth) throws IOException {
            switch (value) {
                case null -> out.append("null");
                case String s -> string(s);
                case Boolean b -> out.append(b ? "true" : "false");
                case Integer i -> out.append(Integer.toString(i));
                case Long l -> out.append(Long.toString(l));
                case Short s -> out.append(Short.toString(s));
                case Byte b -> out.append(Byte.toString(b));
                case BigInteger big -> out.append(big.toString());
                case Double d -> number(d);
                case Float f -> out.append(Float.isFinite(f) ? Float.toString(f) : "null");
                case Map<?, ?> map -> map(map, depth + 1);
                case List<?> list -> list(list, depth + 1);
                case PythonTuple tuple -> list(tuple.items(), depth + 1);
                case Object[] array -> list(Arrays.asList(array), depth + 1);
                case long[] array -> {
                    enter(depth + 1);
                    array(array.length, depth + 1, i -> out.append(Long.toString(array[i])));
                }
                case int[] array -> {
                    enter(depth + 1);
                    array(array.length, depth + 1, i -> out.append(Integer.toString(array[i])));
                }
                case double[] array -> {
                    enter(depth + 1);
                    array(array.length, depth + 1, i -> number(array[i]));
                }
                default -> throw new BadValue("unsupported type " + value.getClass().getName());
            }
        }

        private static void enter(int depth) {
            if (depth > MAX_DEPTH) {
                throw new BadValue("containers nested deeper than " + MAX_DEPTH + " levels (a cycle?)");
            }
        }

        private void number(double d) throws IOException {
            out.append(Double.isFinite(d) ? Double.toString(d) : "null");
        }

        private void list(List<?> list, int depth) throws IOException {
            enter(depth);
            List<?> indexed = list instanceof RandomAccess ? list : new ArrayList<>(list);
            array(indexed.size(), depth, i -> value(indexed.get(i), depth));
        }

        private void array(int size, int depth, Element element) throws IOException {
            out.append('[');
            for (int i = 0; i < size; i++) {
                if (i > 0) {
                    out.append(',');
                }
                newline(depth);
                try {
                    element.write(i);
                } catch (BadValue e) {
                    throw e.at("[" + i + "]");
                }
            }
            if (size > 0) {
                newline(depth - 1);
            }
            out.append(']');
        }

        private void map(Map<?, ?> map, int depth) throws IOException {
            enter(depth);
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!(e.getKey() instanceof String key)) {
                    Object k = e.getKey();
                    throw new BadValue("map key " + (k == null ? "null" : "of type " + k.getClass().getName()
                            + " (" + k + ")") + "; only String keys are supported");
                }
                if (!first) {
                    out.append(',');
                }
                first = false;
                newline(depth);
                string(key);
                out.append(pretty ? ": " : ":");
                try {
                    value(e.getValue(), depth);
                } catch (BadValue bad) {
                    throw bad.at(BadValue.keySegment(key));
                }
            }
            if (!first) {
                newline(depth - 1);
            }
            out.append('}');
        }

        private void newline(int depth) throws IOException {
            if (pretty) {
                out.append('\n');
                for (int i = 0; i < depth; i++) {
                    out.append(INDENT);
                }
            }
        }

        private void string(String s) throws IOException {
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

    @FunctionalInterface
    private interface Element {
        void write(int index) throws IOException;
    }

    /** An unsupported value; each enclosing container adds its path segment on the way out. */
    private static final class BadValue extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final ArrayDeque<String> path = new ArrayDeque<>();

        BadValue(String problem) {
            super(problem, null, false, false);
        }

        BadValue at(String segment) {
            path.addFirst(segment);
            return this;
        }

        static String keySegment(String key) {
            if (!key.isEmpty() && Character.isJavaIdentifierStart(key.charAt(0))
                    && key.chars().allMatch(Character::isJavaIdentifierPart)) {
                return "." + key;
            }
            return "[\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"]";
        }

        IllegalArgumentException toIllegalArgument() {
            return new IllegalArgumentException(
                    "cannot write JSON: " + getMessage() + " at $" + String.join("", path));
        }
    }
}
