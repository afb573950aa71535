package io.devalloc.trace.pytorch;

import io.devalloc.api.spi.PythonTuple;
import io.devalloc.trace.text.JsonWriter;
import io.devalloc.trace.text.SnapshotTreeVisitor;
import io.devalloc.trace.text.SnapshotTreeWalker;
import io.devalloc.trace.text.UnwritableValueException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

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
 *   <tr><td>a non-empty {@link List}, {@link Map} or array met again (the same object)</td><td>the same
 *       {@code list} or {@code dict} object</td><td>{@code BINGET} (memo keys 0..255) or {@code LONG_BINGET}
 *       (see below)</td></tr>
 * </table>
 *
 * <h2>Shared containers</h2>
 * A non-empty {@link List}, {@link Map}, {@code Object[]}, {@code long[]}, {@code int[]} or {@code double[]} that
 * occurs more than once in the tree, by identity, is written once and loads as one Python object: at its first
 * occurrence {@code BINPUT} (or {@code LONG_BINPUT} for memo keys from 256 on) follows its {@code EMPTY_LIST} or
 * {@code EMPTY_DICT}, before its items, as in CPython's pickler, and every later occurrence is a {@code BINGET} (or
 * {@code LONG_BINGET}) of that key. Memo keys are 0, 1, 2, … in the order the shared containers are first written,
 * and a container that occurs once gets no {@code PUT}. That is what {@code pickletools.optimize} makes of
 * CPython's pickle of the loaded object (it drops the {@code PUT}s that no {@code GET} reads and renumbers the
 * rest), except that CPython also memoizes strings and tuples: this writer shares only the containers above.
 * The reason is PyTorch's own snapshots: {@code py_symbolize} gives every trace entry recorded by one allocator
 * call (one {@code CapturedTraceback}) the same Python list of stack frames, so a reader can tell which entries
 * came from one call by the identity of {@code frames}, and a tree built that way in Java keeps that sharing
 * when written. memory_viz's JavaScript unpickler reads {@code BINPUT}, {@code LONG_BINPUT}, {@code BINGET} and
 * {@code LONG_BINGET}, as CPython does. Not shared, whatever their identity:
 * <ul>
 *   <li>Empty containers: Java hands out one immutable empty list or map ({@code List.of()},
 *       {@code Collections.emptyList()}, {@code Map.of()}) wherever one is asked for, which says nothing about the
 *       Python objects (devalloc's snapshot builders give every entry without frames {@code List.of()}); each is
 *       written as its own {@code EMPTY_LIST} or {@code EMPTY_DICT}, which is also shorter than a
 *       {@code BINGET}.</li>
 *   <li>{@link PythonTuple}s: a Python tuple cannot change, so its identity means nothing, and Java shares tuple
 *       constants such as {@link PythonTuple#DEFAULT_POOL_ID} among all segments; a tuple is written in full at
 *       each occurrence (a shared container inside it is still shared).</li>
 * </ul>
 * A tree without shared containers is therefore written exactly as CPython's own pickler writes the loaded object
 * with protocol 2 and its memo switched off ({@code Pickler.fast = True}): {@code PROTO 2}, the value,
 * {@code STOP}, with no {@code BINPUT}/{@code BINGET}; repeated strings are written out each time. The sharing is
 * found by a first walk over the tree that notes each container the first and the second time it is met (an
 * {@link IdentityHashMap} entry per non-empty container, for the duration of the call); the write then follows.
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
 *       containers is rejected the same way, and so is a container that contains itself (a cycle): CPython could
 *       pickle it through the memo, but JSON cannot hold it and no snapshot has one.</li>
 * </ul>
 *
 * <p>The class is stateless and thread-safe; each call works on its own buffers. The value tree must not be
 * modified while it is written.
 */
public final class PickleWriter {

    /** Containers nested deeper than this are rejected (the writer recurses once per level). */
    public static final int MAX_DEPTH = SnapshotTreeWalker.MAX_DEPTH;

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
    private static final int BINPUT = 'q';
    private static final int LONG_BINPUT = 'r';
    private static final int BINGET = 'h';
    private static final int LONG_BINGET = 'j';
    /** {@code TUPLE1}, {@code TUPLE2}, {@code TUPLE3} by item count. */
    private static final int[] TUPLE_OF_SIZE = {EMPTY_TUPLE, 0x85, 0x86, 0x87};

    private PickleWriter() {
    }

    /**
     * Writes {@code value} as one protocol-2 pickle to {@code out}. The stream is flushed, not closed. If the tree
     * holds an unsupported value, the exception is thrown after part of the pickle may already have reached
     * {@code out}; use {@link #toBytes(Object)} to get all or nothing.
     *
     * @throws IllegalArgumentException if the tree holds an unsupported type, a non-{@code String} map key or a
     *     cycle, or is nested deeper than {@link #MAX_DEPTH}; the message names the type and the path
     * @throws IOException if {@code out} fails
     */
    public static void write(Object value, OutputStream out) throws IOException {
        Objects.requireNonNull(out, "out");
        Encoder encoder = new Encoder(out, Sharing.of(value));
        encoder.op(PROTO);
        encoder.op(2);
        // A rejected tree's exception leaves what is still in the buffer unwritten.
        SnapshotTreeWalker.walk(value, encoder, "cannot pickle");
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

    /** The memo key of a shared container, once written; open while its items are written. */
    private static final class Memo {
        int key = -1;
        boolean open;
    }

    /**
     * The non-empty containers of one tree that occur more than once in it by identity: found before the write,
     * since the first occurrence needs its {@code PUT} before the second is reached.
     */
    private static final class Sharing {
        /** A container met once so far; the second meeting replaces it with a {@link Memo}. */
        private static final Object ONCE = new Object();
        private final IdentityHashMap<Object, Object> seen = new IdentityHashMap<>();

        /**
         * Walks the tree without recursion (it may be deeper than the writer accepts: the write then fails at the
         * right path), opening each list, map and array once, so the walk is linear in the tree's size and ends on
         * a cycle. Unsupported values are left for the write to reject.
         */
        static Sharing of(Object root) {
            Sharing sharing = new Sharing();
            Deque<Object> toOpen = new ArrayDeque<>();
            sharing.meet(root, toOpen);
            while (!toOpen.isEmpty()) {
                switch (toOpen.pop()) {
                    case Map<?, ?> map -> map.values().forEach(v -> sharing.meet(v, toOpen));
                    case List<?> list -> list.forEach(v -> sharing.meet(v, toOpen));
                    case PythonTuple tuple -> tuple.items().forEach(v -> sharing.meet(v, toOpen));
                    case Object[] array -> Arrays.asList(array).forEach(v -> sharing.meet(v, toOpen));
                    default -> throw new AssertionError("only containers with items are opened");
                }
            }
            return sharing;
        }

        /**
         * Notes one occurrence of {@code value}; queues its items the first time. A tuple is not shared but written
         * in full each time, so its items are queued at every occurrence (a list in a tuple met twice is met twice).
         */
        private void meet(Object value, Deque<Object> toOpen) {
            if (value instanceof PythonTuple) {
                toOpen.push(value);
                return;
            }
            if (!sharable(value)) {
                return;
            }
            Object mark = seen.putIfAbsent(value, ONCE);
            if (mark == null) {
                if (value instanceof Map<?, ?> || value instanceof List<?> || value instanceof Object[]) {
                    toOpen.push(value);
                }
            } else if (mark == ONCE) {
                seen.put(value, new Memo());
            }
        }

        /** Whether {@code value} is a non-empty list, map or array: the containers that may be shared. */
        private static boolean sharable(Object value) {
            return switch (value) {
                case Map<?, ?> map -> !map.isEmpty();
                case List<?> list -> !list.isEmpty();
                case Object[] array -> array.length > 0;
                case long[] array -> array.length > 0;
                case int[] array -> array.length > 0;
                case double[] array -> array.length > 0;
                case null, default -> false;
            };
        }

        /** The memo of a container that occurs more than once, or {@code null}. */
        Memo memo(Object container) {
            return seen.get(container) instanceof Memo memo ? memo : null;
        }
    }

    /** One write: a buffer in front of the caller's stream. */
    private static final class Encoder implements SnapshotTreeVisitor {
        private final OutputStream out;
        private final Sharing sharing;
        private final byte[] buf = new byte[8192];
        private int pos;
        private int nextMemoKey;

        Encoder(OutputStream out, Sharing sharing) {
            this.out = out;
            this.sharing = sharing;
        }

        @Override
        public void nullValue() throws IOException {
            op(NONE);
        }

        @Override
        public void bool(boolean value) throws IOException {
            op(value ? NEWTRUE : NEWFALSE);
        }

        @Override
        public void float32(float value) throws IOException {
            float64(Double.parseDouble(Float.toString(value)));
        }

        /**
         * For a shared container written before, its {@code BINGET} or {@code LONG_BINGET}; true if written. One
         * still being written contains itself: rejected, as {@link JsonWriter} rejects it.
         */
        @Override
        public boolean reference(Object container) throws IOException {
            Memo memo = sharing.memo(container);
            if (memo == null || memo.key < 0) {
                return false;
            }
            if (memo.open) {
                throw new UnwritableValueException("a container that contains itself (a cycle: nested deeper than "
                        + MAX_DEPTH + " levels, without end)");
            }
            memoOp(BINGET, LONG_BINGET, memo.key);
            return true;
        }

        /** Right after a shared container's opening opcode, at its first write: its {@code PUT}, the next key. */
        private void put(Object container) throws IOException {
            Memo memo = sharing.memo(container);
            if (memo != null) {
                memo.key = nextMemoKey++;
                memo.open = true;
                memoOp(BINPUT, LONG_BINPUT, memo.key);
            }
        }

        private void close(Object container) {
            Memo memo = sharing.memo(container);
            if (memo != null) {
                memo.open = false;
            }
        }

        /** A memo opcode with a one-byte key below 256, else its four-byte (little-endian) form. */
        private void memoOp(int oneByte, int fourBytes, int key) throws IOException {
            if (key < 256) {
                op(oneByte);
                op(key);
            } else {
                op(fourBytes);
                int32(key);
            }
        }

        // A tuple as CPython's save_tuple writes it with protocol 2 and no memo (a tuple is never shared, see the
        // class documentation): EMPTY_TUPLE; up to three items followed by TUPLE1..TUPLE3; else MARK, the items,
        // TUPLE.
        // A list: EMPTY_LIST, its PUT if shared, and the elements, batched as CPython's batch_list_exact (one
        // element: APPEND; more: MARK ... APPENDS per batch).
        // A map: EMPTY_DICT, its PUT if shared, and the entries in iteration order, batched as CPython's
        // batch_dict_exact (one entry: SETITEM; more: MARK ... SETITEMS per batch).

        @Override
        public void start(Container kind, Object container, int size) throws IOException {
            switch (kind) {
                case TUPLE -> {
                    if (size >= TUPLE_OF_SIZE.length) {
                        op(MARK);
                    }
                }
                case LIST -> {
                    op(EMPTY_LIST);
                    put(container);
                }
                case MAP -> {
                    op(EMPTY_DICT);
                    put(container);
                }
            }
        }

        /** Before item {@code index} of a list or a map: the {@code MARK} that opens each batch. */
        @Override
        public void item(Container kind, int index, int size, int depth) throws IOException {
            if (kind != Container.TUPLE && size > 1 && index % BATCH_SIZE == 0) {
                if (index > 0) {
                    op(closeBatch(kind));
                }
                op(MARK);
            }
        }

        @Override
        public void mapKey(String key) throws IOException {
            string(key);
        }

        /** After the items: a tuple's opcode; a list's or a map's single-item opcode or the close of its last batch. */
        @Override
        public void end(Container kind, Object container, int size, int depth) throws IOException {
            if (kind == Container.TUPLE) {
                op(size < TUPLE_OF_SIZE.length ? TUPLE_OF_SIZE[size] : TUPLE);
                return;
            }
            if (size == 1) {
                op(kind == Container.LIST ? APPEND : SETITEM);
            } else if (size > 1) {
                op(closeBatch(kind));
            }
            close(container);
        }

        /** The opcode that closes a batch of a list's elements or of a map's entries. */
        private static int closeBatch(Container kind) {
            return kind == Container.LIST ? APPENDS : SETITEMS;
        }

        @Override
        public void integer(long v) throws IOException {
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

        @Override
        public void bigInteger(BigInteger v) throws IOException {
            if (v.bitLength() < 64) {
                integer(v.longValue());
                return;
            }
            byte[] bigEndian = v.toByteArray(); // minimal two's complement, as CPython's encode_long
            if (bigEndian.length > 255) {
                throw new UnwritableValueException("integer of " + bigEndian.length + " bytes; LONG1 holds at most 255"
                        + " (memory_viz cannot read LONG4)");
            }
            op(LONG1);
            op(bigEndian.length);
            for (int i = bigEndian.length - 1; i >= 0; i--) {
                op(bigEndian[i]);
            }
        }

        @Override
        public void float64(double d) throws IOException {
            long bits = Double.doubleToLongBits(d); // NaN canonicalised to 0x7ff8000000000000, as CPython's nan
            op(BINFLOAT);
            for (int shift = 56; shift >= 0; shift -= 8) {
                op((int) (bits >>> shift));
            }
        }

        @Override
        public void string(String s) throws IOException {
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
            throw new UnwritableValueException("string of " + length + " UTF-8 bytes is too long");
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
}
