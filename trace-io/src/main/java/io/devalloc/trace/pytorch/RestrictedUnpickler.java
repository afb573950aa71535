package io.devalloc.trace.pytorch;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import net.razorvine.pickle.Opcodes;
import net.razorvine.pickle.PickleException;
import net.razorvine.pickle.Unpickler;

/**
 * Pyrolite's unpickler behind an allow-list of opcodes: only those that build {@code None}, booleans, integers,
 * floats, strings, lists, tuples and dicts (and the stack, mark, memo and framing opcodes that assemble them) run.
 * Every opcode that names a global ({@code GLOBAL}, {@code STACK_GLOBAL}, {@code INST}), calls or constructs
 * ({@code REDUCE}, {@code BUILD}, {@code OBJ}, {@code NEWOBJ}, {@code NEWOBJ_EX}, {@code EXT1/2/4}), looks up a
 * persistent id or an out-of-band buffer, or makes bytes or sets is refused before Pyrolite sees it, so a hostile
 * file cannot reach any class or function: none of Pyrolite's registered constructors is ever called.
 *
 * <p>The whole pickle is in memory (a pickle is one object graph and cannot be streamed), so every length that an
 * opcode declares is checked against the bytes left before anything is allocated for it.
 *
 * <p><b>Memory.</b> Python's pickler memoizes every string, list and dict it writes, and an unpickler that keeps its
 * whole memo keeps every object of the file alive to the end, whether or not anything refers to it again: for a
 * PyTorch snapshot, every stack frame of every trace entry (most of the file). So the bytes are scanned once first
 * for the memo keys that a {@code GET}, {@code BINGET} or {@code LONG_BINGET} reads ({@link #referencedMemoKeys});
 * the load then memoizes only those, numbering {@code MEMOIZE}'s keys as Python does (the count of keys set so far).
 * And dict entries under a key the caller names as skipped (the snapshot reader's {@code frames}) hold a
 * {@link SkippedValue} in place of the value, so that a stack trace is garbage as soon as its entry is built; the
 * skipped value keeps only which list of the pickle it was (its identity), since PyTorch shares one frames list
 * among the trace entries of one allocator call. For that, a list that the load memoizes (one that a later opcode
 * reads) is noted with its skipped value while the load runs; those lists are held by the memo anyway, so the note
 * keeps nothing else alive. (Only the memo puts one object in two places: {@code DUP} copies the top of the stack,
 * but a key must come between two values of a dict.) Dicts are {@link PickleDict}s (half a {@link HashMap}'s
 * memory for a small dict). What the load returns is the same graph but for those values.
 */
final class RestrictedUnpickler extends Unpickler {

    /** Raised for a refused or impossible opcode; the message says which and where. */
    static final class Refused extends PickleException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    private static final boolean[] ALLOWED = new boolean[256];
    private static final Map<Integer, String> NAMES = new HashMap<>();

    static {
        short[] allowed = {
            Opcodes.PROTO, Opcodes.FRAME, Opcodes.STOP, Opcodes.MARK, Opcodes.POP, Opcodes.POP_MARK, Opcodes.DUP,
            Opcodes.NONE, Opcodes.NEWTRUE, Opcodes.NEWFALSE,
            Opcodes.INT, Opcodes.BININT, Opcodes.BININT1, Opcodes.BININT2, Opcodes.LONG, Opcodes.LONG1, Opcodes.LONG4,
            Opcodes.FLOAT, Opcodes.BINFLOAT,
            Opcodes.STRING, Opcodes.BINSTRING, Opcodes.SHORT_BINSTRING,
            Opcodes.UNICODE, Opcodes.BINUNICODE, Opcodes.SHORT_BINUNICODE, Opcodes.BINUNICODE8,
            Opcodes.EMPTY_LIST, Opcodes.APPEND, Opcodes.APPENDS, Opcodes.LIST,
            Opcodes.EMPTY_TUPLE, Opcodes.TUPLE, Opcodes.TUPLE1, Opcodes.TUPLE2, Opcodes.TUPLE3,
            Opcodes.EMPTY_DICT, Opcodes.DICT, Opcodes.SETITEM, Opcodes.SETITEMS,
            Opcodes.GET, Opcodes.BINGET, Opcodes.LONG_BINGET, Opcodes.PUT, Opcodes.BINPUT, Opcodes.LONG_BINPUT,
            Opcodes.MEMOIZE,
        };
        for (short op : allowed) {
            ALLOWED[op] = true;
        }
        for (Field f : Opcodes.class.getFields()) {
            if (f.getType() == short.class && Modifier.isStatic(f.getModifiers())) {
                try {
                    NAMES.put((int) f.getShort(null), f.getName());
                } catch (IllegalAccessException e) {
                    throw new ExceptionInInitializerError(e);
                }
            }
        }
    }

    /**
     * The pickle's bytes, with the read position visible. Reads without {@link ByteArrayInputStream}'s lock: one
     * thread loads a pickle, and Pyrolite reads every opcode and argument with a call of its own.
     */
    private static final class Bytes extends ByteArrayInputStream {
        Bytes(byte[] data) {
            super(data);
        }

        @Override
        @SuppressWarnings("UnsynchronizedOverridesSynchronized") // confined to the loading thread
        public int read() {
            return pos < count ? buf[pos++] & 0xff : -1;
        }

        @Override
        @SuppressWarnings("UnsynchronizedOverridesSynchronized") // confined to the loading thread
        public int read(byte[] b, int off, int len) {
            Objects.checkFromIndexSize(off, len, b.length);
            if (pos >= count) {
                return -1;
            }
            int n = Math.min(len, count - pos);
            System.arraycopy(buf, pos, b, off, n);
            pos += n;
            return n;
        }

        int position() {
            return pos;
        }

        byte[] buf() {
            return buf;
        }

        int remaining() {
            return count - pos;
        }

        int peek(int offset) {
            return buf[pos + offset] & 0xff;
        }
    }

    private final Bytes bytes;
    /** The memo keys below {@link #scanned} that a later opcode reads; keys at or above it are always kept. */
    private final BitSet referenced;
    private final int scanned;
    private final Set<String> skippedKeys;
    /** The memo keys set so far (what Python's len(memo) counts), below {@link #scanned} and beyond it. */
    private final BitSet assigned = new BitSet();
    private final Set<Integer> assignedBeyond = new HashSet<>();
    private int assignedCount;
    /** Distinct short strings kept for sharing; beyond this many, new ones are not kept. */
    private static final int SHARED_STRINGS = 4096;
    /** Longer strings are not shared. */
    private static final int SHARED_LENGTH = 64;
    private final Map<String, String> sharedStrings = new HashMap<>();
    /**
     * The skipped value of each list that may be met again (memoized and read later), so that every dict entry
     * skipping it gets the same identity; filled only when some keys are skipped.
     */
    private final IdentityHashMap<Object, SkippedValue> listIdentities = new IdentityHashMap<>();
    /** The next identity of a {@link SkippedValue}: one per list, unique within the load. */
    private long nextIdentity;

    private RestrictedUnpickler(Bytes bytes, BitSet referenced, int scanned, Set<String> skippedKeys) {
        this.bytes = bytes;
        this.referenced = referenced;
        this.scanned = scanned;
        this.skippedKeys = skippedKeys;
    }

    /**
     * Unpickles plain data, all of it.
     *
     * @throws Refused        for an opcode outside the allow-list, or a length beyond the end of the data
     * @throws PickleException for any other malformed pickle (Pyrolite's own checks)
     * @throws IOException    when the data ends early
     */
    static Object load(byte[] data) throws IOException {
        return load(data, Set.of());
    }

    /**
     * Unpickles plain data, with every dict entry whose key is one of {@code skippedKeys} holding a
     * {@link SkippedValue} in place of its value: the same identity for entries that held the same list of the
     * pickle, a new one for any other (see the class documentation).
     *
     * @throws Refused        for an opcode outside the allow-list, or a length beyond the end of the data
     * @throws PickleException for any other malformed pickle (Pyrolite's own checks)
     * @throws IOException    when the data ends early
     */
    static Object load(byte[] data, Set<String> skippedKeys) throws IOException {
        Bytes in = new Bytes(data);
        RestrictedUnpickler u = new RestrictedUnpickler(in, referencedMemoKeys(data), data.length, skippedKeys);
        try {
            return u.load(in);
        } finally {
            u.close();
        }
    }

    /**
     * The memo keys below {@code data.length} that a {@code GET}, {@code BINGET} or {@code LONG_BINGET} of the
     * pickle reads, found by walking its opcodes without building anything. The walk stops where the load would
     * fail (an opcode outside the allow-list, a length or line beyond the data), since the load reads nothing
     * after that; a key at or above {@code data.length} is kept whenever it is set, unscanned.
     */
    static BitSet referencedMemoKeys(byte[] data) {
        BitSet used = new BitSet();
        int n = data.length;
        long p = 0;
        while (p < n) {
            int at = (int) p;
            int op = data[at] & 0xff;
            p++;
            switch (op) {
                case Opcodes.STOP -> {
                    return used;
                }
                case Opcodes.PROTO, Opcodes.BININT1, Opcodes.BINPUT -> p += 1;
                case Opcodes.BININT2 -> p += 2;
                case Opcodes.BININT, Opcodes.LONG_BINPUT -> p += 4;
                case Opcodes.BINFLOAT, Opcodes.FRAME -> p += 8;
                case Opcodes.BINGET -> {
                    if (p < n) {
                        use(used, data[(int) p] & 0xff, n);
                    }
                    p += 1;
                }
                case Opcodes.LONG_BINGET -> {
                    if (p + 4 <= n) {
                        use(used, (int) littleEndian(data, (int) p, 4), n);
                    }
                    p += 4;
                }
                case Opcodes.GET, Opcodes.INT, Opcodes.LONG, Opcodes.FLOAT, Opcodes.STRING, Opcodes.UNICODE,
                     Opcodes.PUT -> {
                    int end = lineEnd(data, (int) p);
                    if (end < 0) {
                        return used;
                    }
                    if (op == Opcodes.GET) {
                        try {
                            use(used, Integer.parseInt(new String(data, (int) p, end - (int) p,
                                    StandardCharsets.US_ASCII).strip()), n);
                        } catch (NumberFormatException e) {
                            return used;
                        }
                    }
                    p = end + 1L;
                }
                case Opcodes.SHORT_BINSTRING, Opcodes.SHORT_BINUNICODE, Opcodes.LONG1 -> {
                    if (p >= n) {
                        return used;
                    }
                    p += 1 + (data[(int) p] & 0xff);
                }
                case Opcodes.BINSTRING, Opcodes.BINUNICODE, Opcodes.LONG4 -> {
                    if (p + 4 > n) {
                        return used;
                    }
                    p += 4 + littleEndian(data, (int) p, 4);
                }
                case Opcodes.BINUNICODE8 -> {
                    if (p + 8 > n) {
                        return used;
                    }
                    long length = littleEndian(data, (int) p, 8);
                    if (length < 0 || length > n) {
                        return used;
                    }
                    p += 8 + length;
                }
                case Opcodes.MARK, Opcodes.POP, Opcodes.POP_MARK, Opcodes.DUP, Opcodes.NONE, Opcodes.NEWTRUE,
                     Opcodes.NEWFALSE, Opcodes.EMPTY_LIST, Opcodes.APPEND, Opcodes.APPENDS, Opcodes.LIST,
                     Opcodes.EMPTY_TUPLE, Opcodes.TUPLE, Opcodes.TUPLE1, Opcodes.TUPLE2, Opcodes.TUPLE3,
                     Opcodes.EMPTY_DICT, Opcodes.DICT, Opcodes.SETITEM, Opcodes.SETITEMS, Opcodes.MEMOIZE -> {
                    // No argument.
                }
                default -> {
                    return used; // refused by the load, which stops there
                }
            }
        }
        return used;
    }

    private static void use(BitSet used, int key, int limit) {
        if (key >= 0 && key < limit) {
            used.set(key);
        }
    }

    /** {@code width} bytes at {@code at}, little-endian, unsigned for widths below 8. */
    private static long littleEndian(byte[] data, int at, int width) {
        long v = 0;
        for (int i = width - 1; i >= 0; i--) {
            v = (v << 8) | (data[at + i] & 0xff);
        }
        return v;
    }

    /** The index of the first newline at or after {@code from}, or -1. */
    private static int lineEnd(byte[] data, int from) {
        for (int i = from; i < data.length; i++) {
            if (data[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    @Override
    protected Object dispatch(short key) throws PickleException, IOException {
        int at = bytes.position() - 1;
        if (key < 0 || key > 255 || !ALLOWED[key]) {
            String name = NAMES.get((int) key);
            if (name == null) {
                throw new Refused("byte " + at + ": unknown pickle opcode 0x" + Integer.toHexString(key));
            }
            throw new Refused("byte " + at + ": refused pickle opcode " + name + global(key)
                    + ": a PyTorch snapshot holds only dicts, lists, tuples, strings, numbers, booleans and None,"
                    + " and this reader constructs no class and calls no function");
        }
        long declared = declaredLength(key);
        if (declared > bytes.remaining()) {
            throw new Refused("byte " + at + ": " + NAMES.get((int) key) + " declares " + declared
                    + " bytes but only " + bytes.remaining() + " are left");
        }
        switch (key) {
            case Opcodes.MEMOIZE -> memoize(assignedCount);
            case Opcodes.BINPUT -> memoize(readByte(at));
            case Opcodes.LONG_BINPUT -> memoize(readInt32(at));
            case Opcodes.PUT -> memoize(putIndex(at));
            case Opcodes.EMPTY_DICT -> stack.add(new PickleDict());
            case Opcodes.SHORT_BINUNICODE -> stack.add(string(readByte(at)));
            // declaredLength checked the length against the bytes left: it is below 2^31.
            case Opcodes.BINUNICODE -> stack.add(string(readInt32(at)));
            case Opcodes.APPENDS -> {
                // Pyrolite's APPENDS trims the list to its size after every batch (Python writes a batch per 1,000
                // items), copying the whole list each time: quadratic in a list of a million trace entries.
                List<Object> items = stack.pop_all_since_marker();
                @SuppressWarnings("unchecked")
                List<Object> list = (List<Object>) stack.peek();
                list.addAll(items);
            }
            case Opcodes.SETITEM -> {
                Object value = stack.pop();
                Object k = stack.pop();
                setItem(dictOnStack(), k, value, at);
            }
            case Opcodes.SETITEMS -> {
                List<Object> items = itemPairs("SETITEMS", at);
                Map<Object, Object> dict = dictOnStack();
                for (int i = 0; i < items.size(); i += 2) {
                    setItem(dict, items.get(i), items.get(i + 1), at);
                }
            }
            case Opcodes.DICT -> {
                List<Object> items = itemPairs("DICT", at);
                PickleDict dict = new PickleDict();
                for (int i = 0; i < items.size(); i += 2) {
                    setItem(dict, items.get(i), items.get(i + 1), at);
                }
                stack.add(dict);
            }
            default -> {
                return super.dispatch(key);
            }
        }
        return NO_RETURN_VALUE;
    }

    /** Sets memo key {@code index} to the top of the stack, if a later opcode reads it (Python's memo otherwise). */
    private void memoize(int index) {
        Object top = stack.peek();
        if (index >= 0 && index < scanned) {
            if (!assigned.get(index)) {
                assigned.set(index);
                assignedCount++;
            }
            if (!referenced.get(index)) {
                return;
            }
        } else if (assignedBeyond.add(index)) {
            assignedCount++;
        }
        memo.put(index, top);
        noteList(top);
    }

    /** Gives a list that may be met again its skipped value now, if any key is skipped. */
    private void noteList(Object value) {
        if (value instanceof List<?> && !skippedKeys.isEmpty()) {
            listIdentities.computeIfAbsent(value, list -> new SkippedValue(nextIdentity++));
        }
    }

    /**
     * A skipped value for {@code value}: the list's noted one, or a new identity; {@link SkippedValue#NONE} for an
     * empty list or a value that is not a list, which tells nothing of where it came from (Java's {@code List.of()}
     * is one object wherever a writer used it for "no frames").
     */
    private SkippedValue skipped(Object value) {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            return SkippedValue.NONE;
        }
        SkippedValue noted = listIdentities.get(value);
        return noted != null ? noted : new SkippedValue(nextIdentity++);
    }

    /** The items since the mark, which must come in key, value pairs. */
    private List<Object> itemPairs(String opcode, int at) {
        List<Object> items = stack.pop_all_since_marker();
        if (items.size() % 2 != 0) {
            throw new PickleException("byte " + at + ": " + opcode + " with an odd number of items (" + items.size()
                    + ")");
        }
        return items;
    }

    @SuppressWarnings("unchecked")
    private Map<Object, Object> dictOnStack() {
        return (Map<Object, Object>) stack.peek();
    }

    /**
     * Puts an entry into {@code dict}, a skipped key's value replaced by its {@link SkippedValue}. A list or dict key
     * is refused, as Python refuses it (unhashable): hashing one nested through the memo could take exponential time.
     */
    private void setItem(Map<Object, Object> dict, Object k, Object value, int at) {
        if (k instanceof List<?> || k instanceof Map<?, ?>) {
            throw new PickleException("byte " + at + ": a " + (k instanceof List<?> ? "list" : "dict")
                    + " as a dict key (unhashable in Python)");
        }
        dict.put(k, k instanceof String name && skippedKeys.contains(name) ? skipped(value) : value);
    }

    /**
     * The UTF-8 string of the next {@code length} bytes (SHORT_BINUNICODE's and BINUNICODE's), as Pyrolite decodes
     * it; up to {@value #SHARED_LENGTH} bytes, the same {@link String} for equal text while fewer than
     * {@value #SHARED_STRINGS} distinct ones have been seen: a pickler that does not memoize strings (devalloc's own
     * writes every dict key again) would otherwise leave a String per key of every trace entry.
     */
    private String string(int length) {
        String text = new String(bytes.buf(), bytes.position(), length, StandardCharsets.UTF_8);
        bytes.skip(length);
        if (length > SHARED_LENGTH) {
            return text;
        }
        String shared = sharedStrings.get(text);
        if (shared != null) {
            return shared;
        }
        if (sharedStrings.size() < SHARED_STRINGS) {
            sharedStrings.put(text, text);
        }
        return text;
    }

    /** A signed little-endian 32-bit integer, as Pyrolite reads LONG_BINPUT's and LONG_BINGET's keys. */
    private int readInt32(int at) {
        return readByte(at) | readByte(at) << 8 | readByte(at) << 16 | readByte(at) << 24;
    }

    private int readByte(int at) {
        int b = bytes.read();
        if (b < 0) {
            throw new PickleException("byte " + at + ": the pickle ends inside an opcode");
        }
        return b;
    }

    /** PUT's decimal key, on a line of its own. */
    private int putIndex(int at) {
        String text = line();
        if (text == null) {
            throw new PickleException("byte " + at + ": PUT without a decimal key on a line of its own (at most 200"
                    + " bytes) before the pickle ends");
        }
        try {
            return Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new PickleException("byte " + at + ": PUT with a key that is not a number: '" + text + "'");
        }
    }

    /** The bytes that a length-prefixed opcode reads after itself (its prefix included), or 0 for the others. */
    private long declaredLength(short key) {
        return switch (key) {
            case Opcodes.BINSTRING, Opcodes.BINUNICODE, Opcodes.LONG4 -> prefixed(4);
            case Opcodes.BINUNICODE8 -> prefixed(8);
            case Opcodes.SHORT_BINSTRING, Opcodes.SHORT_BINUNICODE, Opcodes.LONG1 -> prefixed(1);
            // FRAME's length only announces what follows; it reads its 8-byte prefix and nothing more.
            case Opcodes.FRAME -> 8;
            default -> 0;
        };
    }

    /** The little-endian length after the opcode plus the prefix's own width; beyond any data when impossible. */
    private long prefixed(int width) {
        if (bytes.remaining() < width) {
            return Long.MAX_VALUE;
        }
        long length = 0;
        for (int i = width - 1; i >= 0; i--) {
            length = (length << 8) | bytes.peek(i);
        }
        if (length < 0 || (width == 4 && length > Integer.MAX_VALUE)) {
            return Long.MAX_VALUE;
        }
        return width + length;
    }

    /** For GLOBAL, INST and STACK_GLOBAL, the {@code module.name} they would have looked up, for the message. */
    private String global(short key) {
        String module = null;
        String name = null;
        if (key == Opcodes.GLOBAL || key == Opcodes.INST) {
            module = line();
            name = line();
        } else if (key == Opcodes.STACK_GLOBAL && stack.size() >= 2) {
            Object n = stack.pop();
            Object m = stack.pop();
            module = m instanceof String text ? text : null;
            name = n instanceof String text ? text : null;
        }
        return module == null || name == null ? "" : " (" + module + "." + name + ")";
    }

    /** A short text line from the data (at most 200 bytes), or null. */
    private String line() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            int c = bytes.read();
            if (c < 0) {
                return null;
            }
            if (c == '\n') {
                return sb.toString();
            }
            sb.append((char) c);
        }
        return null;
    }
}
