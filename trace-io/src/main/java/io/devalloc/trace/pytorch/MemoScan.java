package io.devalloc.trace.pytorch;

import io.devalloc.api.collect.LongLongHashMap;
import java.io.IOException;
import java.util.BitSet;
import net.razorvine.pickle.Opcodes;

/**
 * Which memo entries of a pickle are ever read, and where each is read for the last time: found by walking the
 * pickle's opcodes once, building nothing, before it is loaded ({@link RestrictedUnpickler}). Python's pickler
 * memoizes every string, list and dict it writes, and an unpickler that keeps its whole memo keeps every object of
 * the file to the end; with this, the load memoizes only the keys a {@code GET}, {@code BINGET} or
 * {@code LONG_BINGET} reads ({@link #referenced()}), and drops each entry at the read after which nothing reads it
 * ({@link #lastRead(long)}): a PyTorch snapshot's frames list, shared by the few trace entries of one allocator call,
 * is then held from its first entry to its last, not to the end of the load.
 *
 * <p>Reads are numbered in the order the pickle makes them, every {@code GET}, {@code BINGET} and
 * {@code LONG_BINGET} counted (0, 1, 2, ...); the load numbers them the same way. The walk stops where the load
 * would fail (an opcode outside the allow-list, a length or line beyond the data) or at the first {@code STOP},
 * since the load reads nothing after that. Keys below {@link #limit()} are tracked; a key at or above it (only a
 * crafted pickle has one: a key is at most the count of objects, below the pickle's length) is kept whenever it is
 * set and never dropped. At most {@value #TRACKED} distinct keys are tracked for their last read (what that takes
 * is {@code 32} bytes a key while the scan runs); a key first read beyond that many is kept to the end of the load
 * once set, as before the last reads were known, so memory stays bounded by the pickle's length either way.
 *
 * <p>Immutable once made; the load only reads it.
 */
final class MemoScan {

    /** The most distinct keys whose last read is tracked. */
    static final int TRACKED = 1 << 24;
    /** GET's and PUT's decimal key: a line of at most this many bytes. */
    static final int KEY_LINE = 200;
    /** What the scan's readers return where the load would stop: not a key, nor any byte. */
    private static final long STOPPED = Long.MIN_VALUE;

    private final BitSet referenced;
    private final BitSet lastReads;
    private final int limit;

    private MemoScan(BitSet referenced, BitSet lastReads, int limit) {
        this.referenced = referenced;
        this.lastReads = lastReads;
        this.limit = limit;
    }

    /** A scan that found nothing: every key is kept whenever set and never dropped (for a pickle not scanned). */
    static MemoScan none() {
        return new MemoScan(new BitSet(), new BitSet(), 0);
    }

    /** The keys below {@link #limit()} that some opcode reads (a fresh copy, for tests). */
    BitSet referenced() {
        return (BitSet) referenced.clone();
    }

    /** Whether key {@code key}, below {@link #limit()}, is read by some opcode. */
    boolean isReferenced(int key) {
        return referenced.get(key);
    }

    /** Keys at or above this were not tracked: kept whenever set. */
    int limit() {
        return limit;
    }

    /** Whether read number {@code read} is the last read of its key: nothing reads that key after it. */
    boolean lastRead(long read) {
        return read < Integer.MAX_VALUE && lastReads.get((int) read);
    }

    /**
     * Walks {@code in} from its position to the first {@code STOP} (or to where the load would stop).
     *
     * @throws IOException when the file cannot be read
     */
    static MemoScan of(PickleInput in) throws IOException {
        int limit = (int) Math.min(in.length(), Integer.MAX_VALUE);
        BitSet used = new BitSet();
        BitSet last = new BitSet();
        // key + 1 -> the number of its latest read so far.
        LongLongHashMap latest = new LongLongHashMap();
        long reads = 0;
        while (true) {
            int op = in.read();
            if (op < 0) {
                break;
            }
            long key;
            switch (op) {
                case Opcodes.STOP -> {
                    return new MemoScan(used, last, limit);
                }
                case Opcodes.BINGET -> {
                    int b = in.read();
                    key = b < 0 ? STOPPED : b;
                }
                case Opcodes.LONG_BINGET -> {
                    long v = unsigned(in, 4);
                    key = v < 0 ? STOPPED : (int) v;
                }
                case Opcodes.GET -> key = textKey(in);
                default -> key = skipArgument(in, op);
            }
            if (key == STOPPED) {
                break;
            }
            if (op == Opcodes.BINGET || op == Opcodes.LONG_BINGET || op == Opcodes.GET) {
                long read = reads++;
                if (key >= 0 && key < limit) {
                    used.set((int) key);
                    track(latest, last, (int) key, read);
                }
            }
        }
        return new MemoScan(used, last, limit);
    }

    /** Marks {@code read} as the last read of {@code key} so far, unmarking its previous one. */
    private static void track(LongLongHashMap latest, BitSet last, int key, long read) {
        if (read >= Integer.MAX_VALUE || (latest.size() >= TRACKED && !latest.containsKey(key + 1L))) {
            return;
        }
        long previous = latest.put(key + 1L, read, -1);
        if (previous >= 0) {
            last.clear((int) previous);
        }
        last.set((int) read);
    }

    /**
     * Skips the argument of {@code op}, as {@link PickleOpcodes} describes it: 0, or {@link #STOPPED} when the pickle
     * ends first or the load refuses {@code op}.
     */
    private static long skipArgument(PickleInput in, int op) throws IOException {
        int width = PickleOpcodes.width(op);
        return switch (PickleOpcodes.argument(op)) {
            case PickleOpcodes.NO_ARGUMENT -> 0;
            case PickleOpcodes.FIXED -> skip(in, width);
            case PickleOpcodes.LINE -> skipLine(in);
            case PickleOpcodes.LENGTH_PREFIXED -> {
                long length = unsigned(in, width);
                yield length < 0 || length > in.remaining() ? STOPPED : skip(in, length);
            }
            default -> STOPPED; // refused by the load, which stops there
        };
    }

    /** Skips {@code n} bytes: 0, or {@link #STOPPED} when the pickle ends first. */
    private static long skip(PickleInput in, long n) throws IOException {
        return in.skip(n) == n ? 0 : STOPPED;
    }

    /** Skips a line through its newline: 0, or {@link #STOPPED} when the pickle ends first. */
    private static long skipLine(PickleInput in) throws IOException {
        for (int c = in.read(); c >= 0; c = in.read()) {
            if (c == '\n') {
                return 0;
            }
        }
        return STOPPED;
    }

    /** {@code width} (1, 4 or 8) bytes, little-endian; -1 when the pickle ends first or the value is below 0. */
    private static long unsigned(PickleInput in, int width) throws IOException {
        long v = 0;
        for (int i = 0; i < width; i++) {
            int b = in.read();
            if (b < 0) {
                return -1;
            }
            v |= (long) b << (8 * i);
        }
        return v;
    }

    /**
     * GET's and PUT's key, read as the load reads it: a decimal on a line of its own of at most {@value #KEY_LINE}
     * bytes, spaces around it allowed; {@link #STOPPED} when there is none (the load fails there).
     *
     * @throws IOException when the file cannot be read
     */
    private static long textKey(PickleInput in) throws IOException {
        String text = shortLine(in);
        if (text == null) {
            return STOPPED;
        }
        try {
            return Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            return STOPPED;
        }
    }

    /**
     * A line of at most {@value #KEY_LINE} bytes, its newline counted, read through the newline (not included in
     * what is returned); null when there is none that short.
     *
     * @throws IOException when the file cannot be read
     */
    static String shortLine(PickleInput in) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < KEY_LINE; i++) {
            int c = in.read();
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
