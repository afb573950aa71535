package io.devalloc.trace.pytorch;

import io.devalloc.api.snapshot.PythonTuple;
import io.devalloc.trace.text.JsonWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.RandomAccess;

/**
 * Writes a tree of plain Java values as a Python pickle, protocol 2, that {@code pickle.load} in CPython 3 reads
 * into plain {@code dict}, {@code list}, {@code str}, {@code int}, {@code float}, {@code bool} and {@code None}: the
 * shape of {@code torch.cuda.memory._snapshot()} as {@code torch.cuda.memory._dump_snapshot()} stores it, so that
 * PyTorch's memory visualiser (https://pytorch.org/memory_viz, whose JavaScript unpickler knows only a fixed set of
 * opcodes) and Python tools can load it.
 *
 * <h2>Mapping</h2>
 * <table>
 *   <caption>Java value to pickle opcode</caption>
 *   <tr><th>Java</th><th>Python</th><th>opcodes</th></tr>
 *   <tr><td>{@code null}</td><td>{@code None}</td><td>{@code NONE}</td></tr>
 *   <tr><td>{@link Boolean}</td><td>{@code bool}</td><td>{@code NEWTRUE} / {@code NEWFALSE}</td></tr>
 *   <tr><td>{@link Byte}, {@link Short}, {@link Integer}, {@link Long}, {@link BigInteger}</td><td>{@code int}</td>
 *       <td>{@code BININT1} (0..255), {@code BININT2} (256..65535), {@code BININT} (other 32-bit values),
 *       {@code LONG1} (anything else, e.g. device addresses above 2<sup>31</sup>)</td></tr>
 *   <tr><td>{@link Double}, {@link Float}</td><td>{@code float}</td><td>{@code BINFLOAT} (big-endian IEEE 754;
 *       NaN and the infinities are kept)</td></tr>
 *   <tr><td>{@link String}</td><td>{@code str}</td><td>{@code BINUNICODE} (UTF-8)</td></tr>
 *   <tr><td>{@link List}, {@code Object[]}, {@code long[]}, {@code int[]}, {@code double[]}</td><td>{@code list}</td>
 *       <td>{@code EMPTY_LIST}, then {@code APPEND} for one element or {@code MARK} … {@code APPENDS} batches of at
 *       most 1000</td></tr>
 *   <tr><td>{@link PythonTuple}</td><td>{@code tuple}</td><td>{@code EMPTY_TUPLE} for none; the items, then
 *       {@code TUPLE1}, {@code TUPLE2} or {@code TUPLE3} for one to three; {@code MARK}, the items, {@code TUPLE}
 *       for more</td></tr>
 *   <tr><td>{@link Map} with {@link String} keys</td><td>{@code dict} (iteration order kept)</td>
 *       <td>{@code EMPTY_DICT}, then {@code SETITEM} for one entry or {@code MARK} … {@code SETITEMS} batches of at
 *       most 1000</td></tr>
 * </table>
 *
 * <p>The output is exactly what CPython's own pickler writes for the loaded object with protocol 2 and its memo
 * switched off ({@code Pickler.fast = True}; equivalently {@code pickletools.optimize(pickle.dumps(obj, 2))} when
 * no object is shared): {@code PROTO 2}, the value, {@code STOP}, with no {@code BINPUT}/{@code BINGET}. Repeated
 * strings are therefore written out each time; a loader never needs a memo.
 *
 * <p>Details:
 * <ul>
 *   <li>A {@link Float} is written as the double nearest its shortest decimal form ({@link Float#toString}), so
 *       {@code 0.1f} becomes Python's {@code 0.1}, not {@code 0.10000000149011612}; {@link JsonWriter} prints the
 *       same digits.</li>
 *   <li>Strings are UTF-8; an unpaired surrogate is written as its 3-byte form, as CPython does
 *       ({@code surrogatepass}), so it loads back as the same lone surrogate instead of {@code '?'}.</li>
 *   <li>A {@link BigInteger} must fit {@code LONG1} (255 bytes); {@code LONG4} is never written because
 *       memory_viz cannot read it.</li>
 *   <li>A tuple is only written for a {@link PythonTuple}; a {@link List} or array is always a {@code list}.
 *       PyTorch writes {@code segment_pool_id} and a trace entry's {@code pool_id} as 2-tuples ({@code TUPLE2}),
 *       which memory_viz's unpickler reads (as an array) as well as CPython.</li>
 *   <li>Anything else (sets, records, enums, {@code char}, {@code BigDecimal}, maps with non-{@code String} or
 *       {@code null} keys, …) is rejected with an {@link IllegalArgumentException} that names the type and the
 *       path of the value, e.g. {@code $.segments[0].blocks[3].state}. Nesting deeper than {@link #MAX_DEPTH}
 *       containers (in practice: a container that contains itself) is rejected the same way.</li>
 * </ul>
 *
 * <p>The class is stateless and thread-safe; each call works on its own buffers. The value tree must not be
 * modified while it is written.
 */
public final class PickleWriter {

    /** Containers nested deeper than this are rejected (a cycle would otherwise overflow the stack). */
    public static final int MAX_DEPTH = JsonWriter.MAX_DEPTH;

    /** Items per {@code APPENDS}/{@code SETITEMS} batch, as CPython's {@code _BATCHSIZE}. */
    static final int BATCH_SIZE = 1000;

    // Opcodes (names as in CPython's pickle module).
    private static final int MARK = '(';
    private static final int STOP = '.';
    private static final int BINFLOAT = 'G';
    private static final int BININT = 'J';
    private static final int BININT1 = 'K';
    private static final int BININT2 = 'M';
    private static final int NONE = 'N';
    private static final int BINUNICODE = 'X';
    private static final int APPEND = 'a';
    private static final int EMPTY_DICT = '}';
    private static final int APPENDS = 'e';
    private static final int EMPTY_LIST = ']';
    private static final int SETITEM = 's';
    private static final int SETITEMS = 'u';
    private static final int PROTO = 0x80;
    private static final int NEWTRUE = 0x88;
    private static final int NEWFALSE = 0x89;
    private static final int LONG1 = 0x8a;
    private static final int EMPTY_TUPLE = ')';
    private static final int TUPLE = 't';
    /** {@code TUPLE1}, {@code TUPLE2}, {@code TUPLE3} by item count. */
    private static final int[] TUPLE_OF_SIZE = {EMPTY_TUPLE, 0x85, 0x86, 0x87};

    private PickleWriter() {
    }

    /**
     * Writes {@code value} as one protocol-2 pickle to {@code out}. The stream is flushed, not closed. If the tree
     * holds an unsupported value, the exception is thrown after part of the pickle may already have reached
     * {@code out}; use {@link #toBytes(Object)} to get all or nothing.
     *
     * @throws IllegalArgumentException if the tree holds an unsupported type, a non-{@code String} map key or is
     *     nested deeper than {@link #MAX_DEPTH}; the message names the type and the path
     * @throws IOException if {@code out} fails
     */
    public static void write(Object value, OutputStream out) throws IOException {
        Objects.requireNonNull(out, "out");
        Encoder encoder = new Encoder(out);
        encoder.op(PROTO);
        encoder.op(2);
        try {
            encoder.value(value, 0);
        } catch (BadValue e) {
            throw e.toIllegalArgument(); // what is still in the buffer is dropped
        }
        encoder.op(STOP);
        encoder.flush();
        out.flush();
    }

    /**
     * Returns {@code value} as one protocol-2 pickle.
     *
     * @throws IllegalArgumentException as {@link #write(Object, OutputStream)}
     */
    public static byte[] toBytes(Object value) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            write(value, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return bytes.toByteArray();
    }

    /** One write: a buffer in front of the caller's stream. */
    private static final class Encoder {
        private final OutputStream out;
        private final byte[] buf = new byte[8192];
        private int pos;

        Encoder(OutputStream out) {
            this.out = out;
        }

        void value(Object value, int depth) throws IOException {
            switch (value) {
                case null -> op(NONE);
                case String s -> string(s);
                case Boolean b -> op(b ? NEWTRUE : NEWFALSE);
                case Integer i -> integer(i);
                case Long l -> integer(l);
                case Short s -> integer(s);
                case Byte b -> integer(b);
                case BigInteger big -> bigInteger(big);
                case Double d -> binfloat(d);
                case Float f -> binfloat(Double.parseDouble(Float.toString(f)));
                case Map<?, ?> map -> map(map, depth + 1);
                case List<?> list -> list(list, depth + 1);
                case PythonTuple tuple -> tuple(tuple.items(), depth + 1);
                case Object[] array -> list(Arrays.asList(array), depth + 1);
                case long[] array -> {
                    enter(depth + 1);
                    sequence(array.length, i -> integer(array[i]));
                }
                case int[] array -> {
                    enter(depth + 1);
                    sequence(array.length, i -> integer(array[i]));
                }
                case double[] array -> {
                    enter(depth + 1);
                    sequence(array.length, i -> binfloat(array[i]));
                }
                default -> throw new BadValue("unsupported type " + value.getClass().getName());
            }
        }

        private static void enter(int depth) {
            if (depth > MAX_DEPTH) {
                throw new BadValue("containers nested deeper than " + MAX_DEPTH + " levels (a cycle?)");
            }
        }

        private void list(List<?> list, int depth) throws IOException {
            enter(depth);
            List<?> indexed = list instanceof RandomAccess ? list : new ArrayList<>(list);
            sequence(indexed.size(), i -> value(indexed.get(i), depth));
        }

        /**
         * A tuple as CPython's {@code save_tuple} writes it with protocol 2 and no memo: {@code EMPTY_TUPLE}; up to
         * three items followed by {@code TUPLE1}..{@code TUPLE3}; else {@code MARK}, the items, {@code TUPLE}.
         */
        private void tuple(List<Object> items, int depth) throws IOException {
            enter(depth);
            int size = items.size();
            boolean small = size < TUPLE_OF_SIZE.length;
            if (!small) {
                op(MARK);
            }
            for (int i = 0; i < size; i++) {
                element(j -> value(items.get(j), depth), i);
            }
            op(small ? TUPLE_OF_SIZE[size] : TUPLE);
        }

        /** {@code EMPTY_LIST} and the elements, batched as CPython's {@code batch_list_exact}. */
        private void sequence(int size, Element element) throws IOException {
            op(EMPTY_LIST);
            if (size == 0) {
                return;
            }
            if (size == 1) {
                element(element, 0);
                op(APPEND);
                return;
            }
            for (int start = 0; start < size; start += BATCH_SIZE) {
                op(MARK);
                int end = Math.min(size, start + BATCH_SIZE);
                for (int i = start; i < end; i++) {
                    element(element, i);
                }
                op(APPENDS);
            }
        }

        private static void element(Element element, int index) throws IOException {
            try {
                element.write(index);
            } catch (BadValue e) {
                throw e.at("[" + index + "]");
            }
        }

        /** {@code EMPTY_DICT} and the entries in iteration order, batched as CPython's {@code batch_dict_exact}. */
        private void map(Map<?, ?> map, int depth) throws IOException {
            enter(depth);
            op(EMPTY_DICT);
            int size = map.size();
            if (size == 0) {
                return;
            }
            if (size == 1) {
                entry(map.entrySet().iterator().next(), depth);
                op(SETITEM);
                return;
            }
            op(MARK);
            int inBatch = 0;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (inBatch == BATCH_SIZE) {
                    op(SETITEMS);
                    op(MARK);
                    inBatch = 0;
                }
                entry(e, depth);
                inBatch++;
            }
            op(SETITEMS);
        }

        private void entry(Map.Entry<?, ?> entry, int depth) throws IOException {
            if (!(entry.getKey() instanceof String key)) {
                Object k = entry.getKey();
                throw new BadValue("map key " + (k == null ? "null" : "of type " + k.getClass().getName()
                        + " (" + k + ")") + "; only String keys are supported");
            }
            string(key);
            try {
                value(entry.getValue(), depth);
            } catch (BadValue e) {
                throw e.at(BadValue.keySegment(key));
            }
        }

        private void integer(long v) throws IOException {
            if (v >= 0 && v <= 0xff) {
                op(BININT1);
                op((int) v);
            } else if (v >= 0 && v <= 0xffff) {
                op(BININT2);
                op((int) v);
                op((int) (v >>> 8));
            } else if (v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE) {
                op(BININT);
                int32(v);
            } else {
                int n = 5; // |v| >= 2^31: at least 5 bytes of two's complement
                while (n < 8 && ((v << (64 - 8 * n)) >> (64 - 8 * n)) != v) {
                    n++;
                }
                op(LONG1);
                op(n);
                for (int i = 0; i < n; i++) {
                    op((int) (v >>> (8 * i)));
                }
            }
        }

        private void bigInteger(BigInteger v) throws IOException {
            if (v.bitLength() < 64) {
                integer(v.longValue());
                return;
            }
            byte[] bigEndian = v.toByteArray(); // minimal two's complement, as CPython's encode_long
            if (bigEndian.length > 255) {
                throw new BadValue("integer of " + bigEndian.length + " bytes; LONG1 holds at most 255"
                        + " (memory_viz cannot read LONG4)");
            }
            op(LONG1);
            op(bigEndian.length);
            for (int i = bigEndian.length - 1; i >= 0; i--) {
                op(bigEndian[i]);
            }
        }

        private void binfloat(double d) throws IOException {
            long bits = Double.doubleToLongBits(d); // NaN canonicalised to 0x7ff8000000000000, as CPython's nan
            op(BINFLOAT);
            for (int shift = 56; shift >= 0; shift -= 8) {
                op((int) (bits >>> shift));
            }
        }

        private void string(String s) throws IOException {
            byte[] utf8 = utf8SurrogatePass(s);
            op(BINUNICODE);
            int32(utf8.length);
            bytes(utf8);
        }

        private void int32(long v) throws IOException {
            op((int) v);
            op((int) (v >>> 8));
            op((int) (v >>> 16));
            op((int) (v >>> 24));
        }

        void op(int b) throws IOException {
            if (pos == buf.length) {
                flush();
            }
            buf[pos++] = (byte) b;
        }

        private void bytes(byte[] b) throws IOException {
            if (b.length > buf.length - pos) {
                flush();
                if (b.length > buf.length) {
                    out.write(b);
                    return;
                }
            }
            System.arraycopy(b, 0, buf, pos, b.length);
            pos += b.length;
        }

        void flush() throws IOException {
            if (pos > 0) {
                out.write(buf, 0, pos);
                pos = 0;
            }
        }
    }

    /** UTF-8 with CPython's {@code surrogatepass}: a lone surrogate becomes its 3-byte form instead of '?'. */
    private static byte[] utf8SurrogatePass(String s) {
        int n = s.length();
        long length = 0;
        boolean loneSurrogate = false;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                length += 1;
            } else if (c < 0x800) {
                length += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                length += 4;
                i++;
            } else {
                loneSurrogate |= Character.isSurrogate(c);
                length += 3;
            }
        }
        if (length > Integer.MAX_VALUE - 16) {
            throw new BadValue("string of " + length + " UTF-8 bytes is too long");
        }
        if (!loneSurrogate) {
            return s.getBytes(StandardCharsets.UTF_8);
        }
        byte[] out = new byte[(int) length];
        int p = 0;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                out[p++] = (byte) c;
            } else if (c < 0x800) {
                out[p++] = (byte) (0xc0 | (c >> 6));
                out[p++] = (byte) (0x80 | (c & 0x3f));
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                out[p++] = (byte) (0xf0 | (cp >> 18));
                out[p++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
                out[p++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
                out[p++] = (byte) (0x80 | (cp & 0x3f));
            } else {
                out[p++] = (byte) (0xe0 | (c >> 12));
                out[p++] = (byte) (0x80 | ((c >> 6) & 0x3f));
                out[p++] = (byte) (0x80 | (c & 0x3f));
            }
        }
        return out;
    }

    @FunctionalInterface
    private interface Element {
        void write(int index) throws IOException;
    }

    /**
     * An unsupported value, thrown from where it is found; each enclosing container adds its path segment on the way
     * out, so the happy path builds no path strings.
     */
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
                    "cannot pickle: " + getMessage() + " at $" + String.join("", path));
        }
    }
}
