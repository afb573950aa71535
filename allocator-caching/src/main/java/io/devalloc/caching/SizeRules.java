package io.devalloc.caching;

import io.devalloc.api.units.ByteSize;
import java.util.Objects;

/**
 * The size arithmetic of the caching allocator: PyTorch's constants ({@code kMinBlockSize}, {@code kSmallSize},
 * {@code kSmallBuffer}, {@code kMinLargeAlloc}, {@code kRoundLarge}, {@code kLargeBuffer}), {@code round_size}
 * ({@link #roundSize}) with its {@code roundup_power2_divisions} lookup ({@link #divisionsFor}), and
 * {@code get_allocation_size} ({@link #allocationSize}), for the {@code roundup_power2_divisions} and
 * {@code large_segment_size_mb} of one {@link CachingOptions}. The constants are the one home of these figures in
 * this module.
 *
 * <p>Immutable and thread-safe. Every method is arithmetic on primitives, with no allocation: the allocator calls
 * them on every malloc.
 */
public final class SizeRules {

    private static final long MiB = ByteSize.MiB;

    /** kMinBlockSize: every request is rounded to at least this, and to a multiple of it. */
    public static final long MIN_BLOCK_SIZE = 512;
    /** kSmallSize: rounded requests up to this go to the small pool. */
    public static final long SMALL_SIZE = MiB;
    /** kSmallBuffer: the segment size of the small pool (and the page of its expandable segments). */
    public static final long SMALL_BUFFER = 2 * MiB;
    /** kMinLargeAlloc: large requests under this get a {@code largeSegmentSize} segment. */
    public static final long MIN_LARGE_ALLOC = 10 * MiB;
    /** kRoundLarge: larger segments are rounded up to a multiple of this. */
    public static final long ROUND_LARGE = 2 * MiB;
    /** kLargeBuffer: the default {@code large_segment_size}, and the minimum {@code max_split_size}. */
    public static final long LARGE_BUFFER = 20 * MiB;
    /** Requests of at least 2^60 bytes are refused by the allocator (PyTorch: "more than 1EB memory"). */
    public static final long MAX_REQUEST = 1L << 60;
    /** The number of {@code roundup_power2_divisions} entries: 1 MiB .. 64 GiB in powers of two. */
    public static final int ROUNDUP_INTERVALS = 16;

    private final int[] roundupPower2Divisions;
    private final long largeSegmentSize;

    /** The rules of {@code options}: its {@code roundup_power2_divisions} and {@code large_segment_size}. */
    public SizeRules(CachingOptions options) {
        Objects.requireNonNull(options, "options");
        this.roundupPower2Divisions = options.roundupPower2Divisions();
        this.largeSegmentSize = options.largeSegmentSize();
    }

    /** Whether a rounded request of this size is served by the small pool (PyTorch: {@code size <= kSmallSize}). */
    public static boolean isSmall(long rounded) {
        return rounded <= SMALL_SIZE;
    }

    /**
     * The entry of {@link CachingOptions#roundupPower2Divisions()} for {@code size}: index = floor(log2 size) - 20
     * clamped to 0..15, so index 0 covers sizes under 2 MiB, index k covers [2^(20+k), 2^(21+k)) and index 15 covers
     * 32 GiB and more. A size of 0 uses index 0.
     *
     * @throws IllegalArgumentException if {@code size} is negative
     */
    public int divisionsFor(long size) {
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
        int log = 63 - Long.numberOfLeadingZeros(size); // -1 for 0
        int index = Math.min(Math.max(log - 20, 0), ROUNDUP_INTERVALS - 1);
        return roundupPower2Divisions[index];
    }

    /**
     * PyTorch's {@code round_size}: under 512 B &rarr; 512; otherwise, with d = {@link #divisionsFor}(size), if d
     * &gt; 1 and size &gt; 512&middot;d, the power-of-two division rule (a power of two is unchanged; else step =
     * floor-power-of-two / d and the size is rounded up to a multiple of step, or to the next power of two when the
     * step is 0); else the next multiple of 512. Divisions 0 and 1 both mean plain 512-byte rounding.
     *
     * @return the rounded size, at most {@link #MAX_REQUEST}
     * @throws IllegalArgumentException if {@code size} is negative or at least {@link #MAX_REQUEST} (2^60), which
     *                                  the allocator refuses before rounding (the arithmetic would overflow near
     *                                  {@link Long#MAX_VALUE})
     */
    public long roundSize(long size) {
        if (size < 0 || size >= MAX_REQUEST) {
            throw new IllegalArgumentException("size must be in [0, 2^60), got " + size);
        }
        if (size < MIN_BLOCK_SIZE) {
            return MIN_BLOCK_SIZE;
        }
        int divisions = divisionsFor(size);
        if (divisions > 1 && size > MIN_BLOCK_SIZE * divisions) {
            return roundupPower2NextDivision(size, divisions);
        }
        return ceilTo(size, MIN_BLOCK_SIZE);
    }

    private static long roundupPower2NextDivision(long size, int divisions) {
        if (Long.bitCount(size) == 1) {
            return size;
        }
        long floor = Long.highestOneBit(size);
        long step = floor >>> Integer.numberOfTrailingZeros(divisions); // divisions is a power of two
        if (step == 0) {
            return floor << 1;
        }
        long down = size & -step;
        return down == size ? size : down + step;
    }

    /**
     * PyTorch's {@code get_allocation_size}: the segment size for a rounded request: up to 1 MiB &rarr; 2 MiB
     * (small pool); under 10 MiB &rarr; {@link CachingOptions#largeSegmentSize()}; otherwise rounded up to a
     * multiple of 2 MiB.
     *
     * @throws IllegalArgumentException if {@code rounded} is negative or above {@link #MAX_REQUEST}
     */
    public long allocationSize(long rounded) {
        if (rounded < 0 || rounded > MAX_REQUEST) {
            throw new IllegalArgumentException("size must be in [0, 2^60], got " + rounded);
        }
        if (isSmall(rounded)) {
            return SMALL_BUFFER;
        }
        if (rounded < MIN_LARGE_ALLOC) {
            return largeSegmentSize;
        }
        return ceilTo(rounded, ROUND_LARGE);
    }

    private static long ceilTo(long size, long multiple) {
        return (size + multiple - 1) / multiple * multiple;
    }
}
