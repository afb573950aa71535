package io.devalloc.trace.pytorch;

import java.math.BigInteger;
import java.util.Map;

/**
 * A trace entry of a snapshot (a dict of {@code device_traces[i]}) kept as what {@link PyTorchSnapshotFile} and
 * {@link PyTorchPickleReader} read of it, in 64 bytes: its action, {@code addr}, {@code size}, {@code stream} and
 * {@code device_free} as numbers (each present or not), and the identity of its skipped {@code frames}. The load
 * turns each entry dict into one as soon as the dict is appended to its device's list ({@link RestrictedUnpickler}),
 * so that a million entries never are a million dicts (about 250 bytes each with their boxed numbers, more with
 * their other keys, which nothing reads: {@code time_us}, {@code compile_context}, {@code user_metadata},
 * {@code pool_id}).
 *
 * <p>Only an entry that reads exactly as its dict would becomes a row ({@link #of}): a known action, and every one of
 * those four numbers absent or a Python int in the range the reader accepts. Any other entry stays a dict, so that
 * the reader's checks and messages for it are what they always were.
 *
 * @param action     the entry's {@code action}
 * @param addr       its {@code addr}, unsigned, when {@link #ADDR} is present
 * @param size       its {@code size}, below 2^63, when {@link #SIZE} is present
 * @param stream     its {@code stream}, unsigned, when {@link #STREAM} is present
 * @param deviceFree its {@code device_free}, below 2^63, when {@link #DEVICE_FREE} is present
 * @param frames     the {@link SkippedValue#identity()} of its {@code frames}; {@link SkippedValue#NO_IDENTITY} when
 *                   it has none (no key, an empty list, not a list)
 * @param present    which of {@link #ADDR}, {@link #SIZE}, {@link #STREAM}, {@link #DEVICE_FREE} the dict had
 */
record EntryRow(PyTorchAction action, long addr, long size, long stream, long deviceFree, long frames, byte present) {

    /** {@link #present()} bits. */
    static final int ADDR = 1;
    static final int SIZE = 2;
    static final int STREAM = 4;
    static final int DEVICE_FREE = 8;

    private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);

    /**
     * The row of trace entry {@code entry}, or null when it must stay a dict: an action that is not a known string,
     * a number out of range or of another type, or {@code frames} that were not skipped.
     */
    static EntryRow of(Map<?, ?> entry) {
        PyTorchAction action = entry.get("action") instanceof String text ? PyTorchAction.of(text) : null;
        if (action == null) {
            return null;
        }
        // Four look-ups, each in a local: this runs once per trace entry, without an array or a box.
        Object a = entry.get("addr");
        Object s = entry.get("size");
        Object t = entry.get("stream");
        Object d = entry.get("device_free");
        int present = presence(entry, "addr", a, ADDR, false) | presence(entry, "size", s, SIZE, true)
                | presence(entry, "stream", t, STREAM, false) | presence(entry, "device_free", d, DEVICE_FREE, true);
        if (present < 0) {
            return null;
        }
        long frames = SkippedValue.NO_IDENTITY;
        Object f = entry.get("frames");
        if (f instanceof SkippedValue skipped) {
            frames = skipped.identity();
        } else if (f != null || entry.containsKey("frames")) {
            return null;
        }
        return new EntryRow(action, number(a), number(s), number(t), number(d), frames, (byte) present);
    }

    /**
     * What the entry's {@code key}, whose value is {@code v}, adds to {@link #present()}: 0 when there is no such key,
     * {@code bit} for an int in range (below 2^63 for a {@code size}), else -1 (the entry stays a dict).
     */
    private static int presence(Map<?, ?> entry, String key, Object v, int bit, boolean size) {
        if (v == null && !entry.containsKey(key)) {
            return 0;
        }
        if (!isUnsigned(v) || (size && ((Number) v).longValue() < 0)) {
            return -1;
        }
        return bit;
    }

    /** A present field's value as an unsigned long; 0 for an absent one. */
    private static long number(Object v) {
        return v instanceof Number n ? n.longValue() : 0;
    }

    /** A Python int in [0, 2^64): a non-negative {@code int} or {@code long}, or a {@link BigInteger} in range. */
    private static boolean isUnsigned(Object v) {
        if (v instanceof Integer i) {
            return i >= 0;
        }
        if (v instanceof Long l) {
            return l >= 0;
        }
        return v instanceof BigInteger b && b.signum() >= 0 && b.compareTo(TWO_TO_64) < 0;
    }

    /** Whether the entry had {@code bit} ({@link #ADDR}, {@link #SIZE}, {@link #STREAM}, {@link #DEVICE_FREE}). */
    boolean has(int bit) {
        return (present & bit) != 0;
    }

    /** The value of {@code bit}; meaningful when {@link #has} it. */
    long value(int bit) {
        return switch (bit) {
            case ADDR -> addr;
            case SIZE -> size;
            case STREAM -> stream;
            case DEVICE_FREE -> deviceFree;
            default -> throw new IllegalArgumentException("not a field bit: " + bit);
        };
    }
}
