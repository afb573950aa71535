package io.devalloc.trace.pytorch;

import io.devalloc.api.config.UntrustedText;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import net.razorvine.pickle.Opcodes;
import net.razorvine.pickle.PickleException;
import net.razorvine.pickle.PickleUtils;
import net.razorvine.pickle.Unpickler;

/**
 * Pyrolite's unpickler behind an allow-list of opcodes: only those that build {@code None}, booleans, integers,
 * floats, strings, lists, tuples and dicts (and the stack, mark, memo and framing opcodes that assemble them) run.
 * Every opcode that names a global ({@code GLOBAL}, {@code STACK_GLOBAL}, {@code INST}), calls or constructs
 * ({@code REDUCE}, {@code BUILD}, {@code OBJ}, {@code NEWOBJ}, {@code NEWOBJ_EX}, {@code EXT1/2/4}), looks up a
 * persistent id or an out-of-band buffer, or makes bytes or sets is refused before Pyrolite sees it, so a hostile
 * file cannot reach any class or function: none of Pyrolite's registered constructors is ever called.
 *
 * <p>The pickle is read forward from a {@link PickleInput}: a file through a buffer, never whole in memory, or an
 * array. Its length is known, so every length that an opcode declares is checked against the bytes left before
 * anything is allocated for it. Errors name the byte where the opcode starts.
 *
 * <p><b>Memory.</b> Python's pickler memoizes every string, list and dict it writes, and an unpickler that keeps its
 * whole memo keeps every object of the file alive to the end, whether or not anything refers to it again: for a
 * PyTorch snapshot, every stack frame of every trace entry (most of the file). So the pickle is scanned once first
 * ({@link MemoScan}) for the memo keys that a {@code GET}, {@code BINGET} or {@code LONG_BINGET} reads and for the
 * read of each that is its last; the load memoizes only those keys, numbering {@code MEMOIZE}'s keys as Python does
 * (the count of keys set so far), and drops each at its last read (a PyTorch frames list, shared by the trace
 * entries of one allocator call, is held from the first of them to the last, not to the end). Dict entries under a
 * key the caller names as skipped (the snapshot reader's {@code frames}) hold a {@link SkippedValue} in place of the
 * value, so that a stack trace is garbage as soon as its entry is built; the skipped value keeps only which list of
 * the pickle it was (its identity), since PyTorch shares one frames list among the trace entries of one allocator
 * call. For that, a list that the load memoizes (one that a later opcode reads) is given its skipped value when it
 * is memoized ({@link PickleList}). Dicts are {@link PickleDict}s (half a {@link HashMap}'s memory for a small
 * dict), lists {@link PickleList}s. And with a {@link EntryCompactor}, the dicts appended to the lists that the root
 * dict holds under a named key's list ({@code device_traces[i]}) are handed to it as they are appended, and it may
 * store something smaller in their place ({@link EntryRow}): a dict is final once appended, unless something else
 * can reach it (the memo keeps it, or {@code DUP} copied it: {@link PickleDict#shared()}), and then it is left as
 * it is. What the load returns is the same graph but for those values.
 *
 * <p>Not thread-safe: one load per instance, on one thread.
 */
final class RestrictedUnpickler extends Unpickler {

    /** Raised for a refused or impossible opcode; the message says which and where. */
    static final class Refused extends PickleException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    /**
     * What may store something smaller in place of a dict appended to a list the root dict holds under a named key's
     * list: called on the loading thread, once per such dict, with a dict nothing else can reach.
     */
    interface EntryCompactor {
        /** What to store in place of {@code entry}, or null to store the dict itself. */
        Object compact(PickleDict entry);
    }

    /** Distinct short strings kept for sharing; beyond this many, new ones are not kept. */
    private static final int SHARED_STRINGS = 4096;
    /** CPython's default limit on the digits of an integer read from text ({@code sys.get_int_max_str_digits()}). */
    static final int INTEGER_DIGITS = 4300;
    /** LONG's line at that limit: a sign, the digits, Python 2's {@code L} and blanks around them. */
    private static final int INTEGER_LINE = INTEGER_DIGITS + 8;
    /** Longer strings are not shared. */
    private static final int SHARED_LENGTH = 64;
    /** The most keys of the root dict before the compacted key, in one SETITEMS batch, for the context check. */
    private static final int ROOT_KEYS = 64;
    /** The most lists looked past below the one being filled, for the context check (a batch is 1,000 items). */
    private static final int SIBLINGS = 1024;
    /**
     * Dicts, lists and tuples a load may make before the budget per byte applies: a million, 40 to 140 MB of heap
     * at the most even for empty ones.
     */
    static final long CONTAINERS_ALLOWED = 1 << 20;
    /**
     * The bytes of file each dict, list or tuple beyond {@link #CONTAINERS_ALLOWED} needs. Real snapshots make one
     * per 50 to 180 bytes over the whole file (a trace entry and its frames, a block of a segment), and never more
     * than a handful ahead of one per 16 bytes at any point of it. A file of 1-byte {@code EMPTY_DICT}s makes one per
     * byte: 40 to 140 times its size in heap.
     */
    static final int BYTES_PER_CONTAINER = 8;

    private final PickleInput in;
    private final PickleStack values;
    private final MemoScan scan;
    private final MemoTable table = new MemoTable();
    private final Set<String> skippedKeys;
    /** The root dict's key whose lists' dicts go to {@link #compactor}; null for none. */
    private final String compactedKey;
    private final EntryCompactor compactor;
    /** The memo keys set so far (what Python's len(memo) counts), below the scan's limit and beyond it. */
    private final BitSet assigned = new BitSet();
    private final Set<Integer> assignedBeyond = new HashSet<>();
    private int assignedCount;
    /** The keys read for the last time: a later PUT of one is never read, so it is not kept. */
    private final BitSet released = new BitSet();
    /** The memo reads so far, numbered as {@link MemoScan} numbers them. */
    private long reads;
    private final Map<String, String> sharedStrings = new HashMap<>();
    /** What ends the load when its objects fill the heap. */
    private final HeapGuard heap;
    /** Opcodes left before the next look at the heap. */
    private int untilHeapCheck = HeapGuard.EVERY;
    /** The next identity of a {@link SkippedValue}: one per list, unique within the load. */
    private long nextIdentity;
    /** The dicts, lists and tuples made so far, against {@link #CONTAINERS_ALLOWED} and the bytes read. */
    private long containers;

    private RestrictedUnpickler(PickleInput in, MemoScan scan, Set<String> skippedKeys, String compactedKey,
                                EntryCompactor compactor) {
        this.in = in;
        this.heap = HeapGuard.ofThisHeap();
        this.values = new PickleStack(in);
        this.scan = scan;
        this.skippedKeys = skippedKeys;
        this.compactedKey = compactedKey;
        this.compactor = compactor;
    }

    /**
     * Unpickles plain data, all of it.
     *
     * @throws Refused        for an opcode outside the allow-list, or a length beyond the end of the data
     * @throws PickleException for any other malformed pickle
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
     * @throws PickleException for any other malformed pickle
     * @throws IOException    when the data ends early
     */
    static Object load(byte[] data, Set<String> skippedKeys) throws IOException {
        return load(data, skippedKeys, null, null);
    }

    /**
     * As {@link #load(byte[], Set)}, with the dicts appended to the lists of the root dict's {@code compactedKey}
     * list handed to {@code compactor} (see the class documentation).
     *
     * @throws Refused        for an opcode outside the allow-list, or a length beyond the end of the data
     * @throws PickleException for any other malformed pickle
     * @throws IOException    when the data ends early
     */
    static Object load(byte[] data, Set<String> skippedKeys, String compactedKey, EntryCompactor compactor)
            throws IOException {
        MemoScan scan = MemoScan.of(PickleInput.of(data));
        return new RestrictedUnpickler(PickleInput.of(data), scan, skippedKeys, compactedKey, compactor).run();
    }

    /**
     * As {@link #load(byte[], Set, String, EntryCompactor)}, from a file read twice through a buffer (the memo scan,
     * then the load), never whole in memory.
     *
     * @throws Refused        for an opcode outside the allow-list, or a length beyond the end of the data
     * @throws PickleException for any other malformed pickle
     * @throws IOException    when the file cannot be read, or ends early
     */
    static Object load(Path file, Set<String> skippedKeys, String compactedKey, EntryCompactor compactor)
            throws IOException {
        MemoScan scan;
        try (PickleInput first = PickleInput.open(file)) {
            scan = MemoScan.of(first);
        }
        try (PickleInput second = PickleInput.open(file)) {
            return new RestrictedUnpickler(second, scan, skippedKeys, compactedKey, compactor).run();
        }
    }

    /** The memo keys below {@code data.length} that a GET, BINGET or LONG_BINGET reads ({@link MemoScan}). */
    static BitSet referencedMemoKeys(byte[] data) {
        try {
            return MemoScan.of(PickleInput.of(data)).referenced();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // an array is never short of its own bytes
        }
    }

    private Object run() throws IOException {
        try {
            return load(in);
        } catch (OutOfMemoryError e) {
            // What the load built is dropped first, so that the message (and the caller) have a heap to work in.
            values.clear();
            table.clear();
            throw new Refused(HeapGuard.exhausted(in.position()));
        } finally {
            close();
            table.clear();
        }
    }

    /** Reads opcodes from {@code stream} (this load's input) until {@code STOP}, on this unpickler's own stack. */
    @SuppressWarnings("ReferenceEquality") // Pyrolite's "no value yet" is one object, compared by identity as it does
    @Override
    public Object load(InputStream stream) throws IOException {
        stack = values;
        input = stream;
        while (true) {
            int key = input.read();
            if (key < 0) {
                throw new PickleException("byte " + in.position() + ": the pickle ends before its STOP opcode");
            }
            Object value = dispatch((short) key);
            if (value != NO_RETURN_VALUE) {
                return value;
            }
        }
    }

    @Override
    protected Object dispatch(short key) throws PickleException, IOException {
        long at = in.position() - 1;
        values.opcodeAt(at);
        if (--untilHeapCheck == 0) {
            untilHeapCheck = HeapGuard.EVERY;
            if (heap.exhausted()) {
                throw new Refused(HeapGuard.exhausted(at));
            }
        }
        byte argument = key < 0 || key > 255 ? PickleOpcodes.REFUSED : PickleOpcodes.argument(key);
        if (argument == PickleOpcodes.REFUSED) {
            String name = PickleOpcodes.name(key);
            if (name == null) {
                throw new Refused("byte " + at + ": unknown pickle opcode 0x" + Integer.toHexString(key));
            }
            throw new Refused("byte " + at + ": refused pickle opcode " + name + global(key)
                    + ": a PyTorch snapshot holds only dicts, lists, tuples, strings, numbers, booleans and None,"
                    + " and this reader constructs no class and calls no function");
        }
        if (makesContainer(key) && ++containers > CONTAINERS_ALLOWED + in.position() / BYTES_PER_CONTAINER) {
            throw new Refused(String.format(Locale.ROOT, "byte %d: the pickle has made %d dicts, lists and tuples"
                    + " by this byte; a PyTorch snapshot makes one per 50 bytes or more (this reader allows %d, and"
                    + " one per %d bytes of file after them), so the file is built to fill memory", at, containers,
                    CONTAINERS_ALLOWED, BYTES_PER_CONTAINER));
        }
        long declared = declaredLength(key, argument);
        if (declared > in.remaining()) {
            throw new Refused("byte " + at + ": " + PickleOpcodes.name(key) + " declares " + declared
                    + " bytes but only " + in.remaining() + " are left");
        }
        switch (key) {
            case Opcodes.MEMOIZE -> memoize(assignedCount);
            case Opcodes.BINPUT -> memoize(readByte(at));
            case Opcodes.LONG_BINPUT -> memoize(readInt32(at));
            case Opcodes.PUT -> memoize(textKey(at, "PUT"));
            case Opcodes.BINGET -> get(readByte(at), at);
            case Opcodes.LONG_BINGET -> get(readInt32(at), at);
            case Opcodes.GET -> get(textKey(at, "GET"), at);
            case Opcodes.DUP -> {
                Object top = values.peek();
                share(top);
                values.add(top);
            }
            case Opcodes.LONG -> values.add(PickleUtils.optimizeBigint(textLong(at)));
            case Opcodes.EMPTY_DICT -> values.add(new PickleDict());
            case Opcodes.EMPTY_LIST -> values.add(new PickleList());
            case Opcodes.SHORT_BINUNICODE -> values.add(string(readByte(at)));
            // declaredLength checked the length against the bytes left: it is below 2^31.
            case Opcodes.BINUNICODE -> values.add(string(readInt32(at)));
            case Opcodes.APPEND -> {
                Object item = values.pop();
                List<Object> list = listOnStack("APPEND", at);
                if (compacting(list)) {
                    item = compacted(item);
                }
                list.add(item);
            }
            case Opcodes.APPENDS -> {
                // Not Pyrolite's APPENDS, which trims the list to its size after every batch (Python writes a batch
                // per 1,000 items), copying the whole list each time: quadratic in a list of a million trace entries.
                List<Object> items = values.pop_all_since_marker();
                List<Object> list = listOnStack("APPENDS", at);
                if (compacting(list)) {
                    for (int i = 0; i < items.size(); i++) {
                        items.set(i, compacted(items.get(i)));
                    }
                }
                list.addAll(items);
            }
            case Opcodes.SETITEM -> {
                Object value = values.pop();
                Object k = values.pop();
                setItem(dictOnStack("SETITEM", at), k, value, at);
            }
            case Opcodes.SETITEMS -> {
                List<Object> items = itemPairs("SETITEMS", at);
                Map<Object, Object> dict = dictOnStack("SETITEMS", at);
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
                values.add(dict);
            }
            default -> {
                return super.dispatch(key);
            }
        }
        return NO_RETURN_VALUE;
    }

    /** Whether opcode {@code key} makes a new dict, list or tuple (what the budget per byte counts). */
    private static boolean makesContainer(short key) {
        return switch (key) {
            case Opcodes.EMPTY_DICT, Opcodes.DICT, Opcodes.EMPTY_LIST, Opcodes.LIST, Opcodes.EMPTY_TUPLE,
                 Opcodes.TUPLE, Opcodes.TUPLE1, Opcodes.TUPLE2, Opcodes.TUPLE3 -> true;
            default -> false;
        };
    }

    /**
     * Sets memo key {@code index} to the top of the stack, if a later opcode reads it (Python's memo otherwise): not
     * a key below the scan's limit that nothing reads, nor one whose last read is past.
     */
    private void memoize(int index) {
        Object top = values.peek();
        if (index >= 0 && index < scan.limit()) {
            if (!assigned.get(index)) {
                assigned.set(index);
                assignedCount++;
            }
            if (!scan.isReferenced(index) || released.get(index)) {
                return;
            }
        } else if (assignedBeyond.add(index)) {
            assignedCount++;
        }
        table.put(index, top);
        share(top);
        if (top instanceof PickleList list && !skippedKeys.isEmpty() && list.skipped() == null) {
            // A list that may be met again: one skipped value wherever it is skipped.
            list.skipAs(new SkippedValue(nextIdentity++));
        }
    }

    /** Notes that a list or dict may be reached from elsewhere than its container. */
    private static void share(Object value) {
        if (value instanceof PickleList list) {
            list.share();
        } else if (value instanceof PickleDict dict) {
            dict.share();
        }
    }

    /** Pushes what memo key {@code key} holds; drops the key at its last read (the scan's). */
    private void get(int key, long at) {
        long read = reads++;
        if (!table.containsKey(key)) {
            throw new PickleException("byte " + at + ": memo key " + key + " is read, but no object was memoized"
                    + " under it");
        }
        values.add(table.get(key));
        if (key >= 0 && key < scan.limit() && scan.lastRead(read)) {
            table.remove(key);
            released.set(key);
        }
    }

    /**
     * A skipped value for {@code value}: the list's own when the memo kept it, or a new identity;
     * {@link SkippedValue#NONE} for an empty list or a value that is not a list, which tells nothing of where it came
     * from (Java's {@code List.of()} is one object wherever a writer used it for "no frames").
     */
    private SkippedValue skipped(Object value) {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            return SkippedValue.NONE;
        }
        SkippedValue noted = value instanceof PickleList pickled ? pickled.skipped() : null;
        return noted != null ? noted : new SkippedValue(nextIdentity++);
    }

    /** The list at the top of the stack, for {@code opcode}. */
    @SuppressWarnings("unchecked")
    private List<Object> listOnStack(String opcode, long at) {
        Object top = values.peek();
        if (!(top instanceof List<?>)) {
            throw new PickleException("byte " + at + ": " + opcode + " onto " + SnapshotValues.pythonType(top)
                    + ", not a list");
        }
        return (List<Object>) top;
    }

    /**
     * Whether the dicts appended to {@code list}, at the top of the stack, go to the compactor: a list of the root
     * dict's {@link #compactedKey} list, where nothing but its container can reach it or that list. The stack then
     * holds, from the bottom, the root dict, its entries so far in a SETITEM or SETITEMS shape, the key, the list
     * (being filled: by APPEND with this list above it, or by APPENDS with a MARK and this list's complete siblings
     * above it), and this list. The shapes Python's and devalloc's picklers write; for any other, nothing is
     * compacted.
     */
    private boolean compacting(List<Object> list) {
        if (compactor == null || !(list instanceof PickleList own) || own.shared()) {
            return false;
        }
        int top = values.size() - 1;
        int floor = Math.max(-1, top - 1 - SIBLINGS);
        int below = top - 1;
        while (below > floor && values.at(below) instanceof PickleList) {
            below--;
        }
        int outer;
        if (below > floor && values.isMark(values.at(below))) {
            outer = below - 1;
        } else if (below == top - 2) {
            outer = top - 1;
        } else {
            return false;
        }
        int k = outer - 1;
        if (k < 1 || k > ROOT_KEYS || !(values.at(outer) instanceof PickleList traces) || traces.shared()
                || !compactedKey.equals(values.at(k)) || !(values.at(0) instanceof PickleDict root) || root.shared()) {
            return false;
        }
        if (k == 1) {
            return true; // SETITEM: root, key, list
        }
        if (!values.isMark(values.at(1)) || (k - 2) % 2 != 0) {
            return false;
        }
        for (int i = 2; i < k; i++) {
            if (values.isMark(values.at(i))) {
                return false; // inside something else being built
            }
        }
        return true;
    }

    /** What goes into a compacted list in place of {@code item}: the compactor's row for a dict no one else reaches. */
    private Object compacted(Object item) {
        if (item instanceof PickleDict dict && !dict.shared()) {
            Object row = compactor.compact(dict);
            if (row != null) {
                return row;
            }
        }
        return item;
    }

    /** The items since the mark, which must come in key, value pairs. */
    private List<Object> itemPairs(String opcode, long at) {
        List<Object> items = values.pop_all_since_marker();
        if (items.size() % 2 != 0) {
            throw new PickleException("byte " + at + ": " + opcode + " with an odd number of items (" + items.size()
                    + ")");
        }
        return items;
    }

    /** The dict at the top of the stack, for {@code opcode}. */
    @SuppressWarnings("unchecked")
    private Map<Object, Object> dictOnStack(String opcode, long at) {
        Object top = values.peek();
        if (!(top instanceof Map<?, ?>)) {
            throw new PickleException("byte " + at + ": " + opcode + " into " + SnapshotValues.pythonType(top)
                    + ", not a dict");
        }
        return (Map<Object, Object>) top;
    }

    /**
     * Puts an entry into {@code dict}, a skipped key's value replaced by its {@link SkippedValue}. A list or dict key
     * is refused, as Python refuses it (unhashable): hashing one nested through the memo could take exponential time.
     */
    private void setItem(Map<Object, Object> dict, Object k, Object value, long at) {
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
    private String string(int length) throws IOException {
        String text = in.utf8(length);
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
    private int readInt32(long at) throws IOException {
        return readByte(at) | readByte(at) << 8 | readByte(at) << 16 | readByte(at) << 24;
    }

    private int readByte(long at) throws IOException {
        int b = in.read();
        if (b < 0) {
            throw new PickleException("byte " + at + ": the pickle ends inside an opcode");
        }
        return b;
    }

    /**
     * LONG's decimal integer, on a line of its own, with or without Python 2's {@code L}: at most
     * {@value #INTEGER_DIGITS} digits, CPython's limit on converting a string of digits to an int (since 3.11, for
     * CVE-2020-10735), which it applies to this opcode as well. The conversion is quadratic in the digits: three
     * million of them take minutes, and no snapshot holds an integer of more than 20.
     */
    private BigInteger textLong(long at) throws IOException {
        StringBuilder text = new StringBuilder();
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new PickleException("byte " + at + ": the pickle ends inside LONG's integer");
            }
            if (c == '\n') {
                break;
            }
            if (text.length() == INTEGER_LINE) {
                throw tooManyDigits(at);
            }
            text.append((char) c);
        }
        int end = text.length() > 0 && text.charAt(text.length() - 1) == 'L' ? text.length() - 1 : text.length();
        String digits = text.substring(0, end).strip();
        try {
            if (digits.length() - (digits.startsWith("-") || digits.startsWith("+") ? 1 : 0) > INTEGER_DIGITS) {
                throw tooManyDigits(at);
            }
            return new BigInteger(digits);
        } catch (NumberFormatException e) {
            throw new PickleException("byte " + at + ": LONG with a value that is not an integer: '"
                    + UntrustedText.excerpt(digits) + "'");
        }
    }

    private static Refused tooManyDigits(long at) {
        return new Refused("byte " + at + ": LONG with an integer of more than " + INTEGER_DIGITS + " digits: it"
                + " exceeds the limit (" + INTEGER_DIGITS + " digits) for integer string conversion that Python"
                + " applies when it loads a pickle, and no snapshot holds one");
    }

    /** PUT's and GET's decimal key, on a line of its own, read as {@link MemoScan} reads it. */
    private int textKey(long at, String opcode) throws IOException {
        String text = MemoScan.shortLine(in);
        if (text == null) {
            throw new PickleException("byte " + at + ": " + opcode + " without a decimal key on a line of its own (at"
                    + " most " + MemoScan.KEY_LINE + " bytes) before the pickle ends");
        }
        try {
            return Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            // The line is the file's bytes, control characters and all: quoted as untrusted text.
            throw new PickleException("byte " + at + ": " + opcode + " with a key that is not a number: '"
                    + UntrustedText.excerpt(text) + "'");
        }
    }

    /**
     * The bytes that a length-prefixed opcode reads after itself (its prefix included), FRAME's 8, or 0 for the
     * others: Pyrolite reads a fixed argument itself and fails on a short one.
     */
    private long declaredLength(short key, byte argument) throws IOException {
        if (argument == PickleOpcodes.LENGTH_PREFIXED) {
            return prefixed(PickleOpcodes.width(key));
        }
        // FRAME's length only announces what follows; it reads its 8-byte prefix and nothing more.
        return key == Opcodes.FRAME ? PickleOpcodes.width(key) : 0;
    }

    /** The little-endian length after the opcode plus the prefix's own width; beyond any data when impossible. */
    private long prefixed(int width) throws IOException {
        if (in.remaining() < width) {
            return Long.MAX_VALUE;
        }
        long length = 0;
        for (int i = width - 1; i >= 0; i--) {
            length = (length << 8) | in.peek(i);
        }
        if (length < 0 || (width == 4 && length > Integer.MAX_VALUE)) {
            return Long.MAX_VALUE;
        }
        return width + length;
    }

    /** For GLOBAL, INST and STACK_GLOBAL, the {@code module.name} they would have looked up, for the message. */
    private String global(short key) throws IOException {
        String module = null;
        String name = null;
        if (key == Opcodes.GLOBAL || key == Opcodes.INST) {
            module = MemoScan.shortLine(in);
            name = MemoScan.shortLine(in);
        } else if (key == Opcodes.STACK_GLOBAL && values.size() >= 2) {
            Object n = values.pop();
            Object m = values.pop();
            module = m instanceof String text ? text : null;
            name = n instanceof String text ? text : null;
        }
        // Quoted as untrusted text: the names are the file's bytes (an escape sequence, a megabyte of name).
        return module == null || name == null ? "" : " (" + UntrustedText.excerpt(module + "." + name) + ")";
    }
}
