package io.devalloc.trace.text;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Decimal numbers read eight ASCII bytes at a time ("SIMD within a register"): the fused fast paths of the text
 * readers, which parse a row while they look for its end. Each call loads whole 8-byte words, so the caller
 * guarantees at least 24 readable bytes after {@code from} ({@link TextLines#peek(int)} gives that slack).
 *
 * <p>Why: parsing is about half of a replay's work on large CSV traces, and byte-at-a-time digit loops were most of
 * it. A word of eight bytes is tested for digits with two masks, its first non-digit found with one
 * {@code numberOfTrailingZeros}, and its digits converted with three multiplications (the method of Lemire's
 * fast_float, written here afresh).
 *
 * <p>Not thread-safe: the value read last is kept in the instance, so that a read returns one {@code int} and needs
 * no allocation.
 */
public final class SwarDigits {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ZEROS = 0x3030303030303030L;
    private static final long HIGH_NIBBLES = 0xF0F0F0F0F0F0F0F0L;
    private static final long[] POWERS_OF_TEN = {1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000,
        100_000_000};

    /** The eight bytes at {@code b[i]}, the first one lowest: for matching a column's text against a constant. */
    public static long word(byte[] b, int i) {
        return (long) LONGS.get(b, i);
    }

    /** The most digits {@link #read} takes: 18 cannot overflow a signed {@code long}. */
    public static final int MAX_DIGITS = 18;

    private long value;

    /** The number {@link #read} read last. */
    public long value() {
        return value;
    }

    /**
     * Reads the ASCII digits starting at {@code from} into {@link #value()}; returns where they end, or -1 when
     * there are none or more than {@value #MAX_DIGITS}. Needs 24 readable bytes from {@code from}.
     */
    public int read(byte[] b, int from) {
        long x = (long) LONGS.get(b, from);
        long others = nonDigits(x);
        if (others != 0) {
            int n = Long.numberOfTrailingZeros(others) >>> 3;
            if (n == 0) {
                return -1;
            }
            value = leading(x, n);
            return from + n;
        }
        long v = leading(x, 8);
        x = (long) LONGS.get(b, from + 8);
        others = nonDigits(x);
        if (others != 0) {
            int n = Long.numberOfTrailingZeros(others) >>> 3;
            value = n == 0 ? v : v * POWERS_OF_TEN[n] + leading(x, n);
            return from + 8 + n;
        }
        v = v * 100_000_000L + leading(x, 8);
        x = (long) LONGS.get(b, from + 16);
        // All eight digits (numberOfTrailingZeros(0) = 64) or more than two: beyond 18.
        int n = Long.numberOfTrailingZeros(nonDigits(x)) >>> 3;
        if (n > MAX_DIGITS - 16) {
            return -1;
        }
        value = n == 0 ? v : v * POWERS_OF_TEN[n] + leading(x, n);
        return from + 16 + n;
    }

    /**
     * Like {@link #read} without the value: where the 1 to {@value #MAX_DIGITS} ASCII digits starting at
     * {@code from} end, or -1. For columns that are checked but not kept.
     */
    public static int skip(byte[] b, int from) {
        long others = nonDigits((long) LONGS.get(b, from));
        if (others != 0) {
            int n = Long.numberOfTrailingZeros(others) >>> 3;
            return n == 0 ? -1 : from + n;
        }
        others = nonDigits((long) LONGS.get(b, from + 8));
        if (others != 0) {
            return from + 8 + (Long.numberOfTrailingZeros(others) >>> 3);
        }
        int n = Long.numberOfTrailingZeros(nonDigits((long) LONGS.get(b, from + 16))) >>> 3;
        return n > MAX_DIGITS - 16 ? -1 : from + 16 + n;
    }

    /**
     * Per byte of {@code x}: zero where the byte is an ASCII digit (high nibble 3, and still 3 after adding 6). An
     * addition that carries out of a non-digit byte can only spoil the bytes after it, never the first non-digit.
     */
    public static long nonDigits(long x) {
        return ((x & HIGH_NIBBLES) ^ ZEROS) | (((x + 0x0606060606060606L) & HIGH_NIBBLES) ^ ZEROS);
    }

    /**
     * The value of the first {@code n} (1 to 8) bytes of {@code x}, all ASCII digits, the first one the most
     * significant. Shifting the other bytes out leaves zeros in front, which are leading zeros; a borrow from a
     * non-digit byte only reaches the bytes after it, which are shifted out.
     */
    public static long leading(long x, int n) {
        long v = (x - ZEROS) << (64 - 8 * n);
        v = v * 10 + (v >>> 8);
        return ((v & 0x000000FF000000FFL) * (100 + (1_000_000L << 32))
                + ((v >>> 16) & 0x000000FF000000FFL) * (1 + (10_000L << 32))) >>> 32;
    }
}
