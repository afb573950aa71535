package io.devalloc.benchmarks;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.units.ByteSize;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * One precomputed sequence of RAPIDS RMM's {@code random_allocations} benchmark
 * ({@code cpp/benchmarks/random_allocations/random_allocations.cpp}, function {@code random_allocation_free}),
 * as plain arrays so that replaying it creates no Java objects.
 *
 * <p>The rules are RMM's, step for step: {@code 2N} steps; each draws a size uniform in
 * {@code [1, maxMiB MiB]} bytes; when allocations are live it also draws a percentage and allocates only if it is
 * below 73, fewer than {@code N} allocations were made and the live bytes plus the size stay below 16000 MiB;
 * otherwise it frees the live allocation at index {@code uniform(0, N-1) % live} of the list of live allocations
 * in allocation order, removing it from the list as {@code std::vector::erase} does. What is still live after the
 * last step is freed at the end, in allocation order. The random engine differs (a seeded {@link SplittableRandom}
 * instead of {@code std::default_random_engine}), so the distribution is RMM's and the exact sequence is not.
 *
 * <p>RMM also treats an allocation that throws {@code bad_alloc} as a free step; here allocation never fails
 * (live bytes stay below 16000 MiB on an 80 GiB device), and a failure would end the benchmark with the error.
 */
final class RandomAllocationsPlan {

    /** RMM's allocation probability, in percent. */
    static final int ALLOCATION_PROBABILITY = 73;
    /** RMM's default cap on live bytes: 16000 MiB. */
    static final long MAX_USAGE = 16_000 * ByteSize.MiB;

    /** The {@code N} of the benchmark: allocations to make (at most, RMM's {@code num_allocations}). */
    final int n;
    /** Per step: bytes to allocate into {@code slot[i]}, or 0 to free the allocation in {@code slot[i]}. */
    final long[] size;
    /** Per step: the allocation (numbered in allocation order) that the step makes or frees. */
    final int[] slot;
    /** Allocations still live after the last step, freed at the end of the sequence, in allocation order. */
    final int[] leftover;
    /** Allocations made in the sequence; every one is freed, so the sequence has twice as many operations. */
    final int allocations;
    /** The most bytes live at once. */
    final long peakLiveBytes;
    /** Where replays put the addresses, by slot. */
    private final long[] address;

    private RandomAllocationsPlan(int n, long[] size, int[] slot, int[] leftover, int allocations, long peakLiveBytes) {
        this.n = n;
        this.size = size;
        this.slot = slot;
        this.leftover = leftover;
        this.allocations = allocations;
        this.peakLiveBytes = peakLiveBytes;
        this.address = new long[allocations];
    }

    /** The sequence for {@code n} allocations of up to {@code maxMiB} MiB, from {@code seed}. */
    static RandomAllocationsPlan generate(int n, int maxMiB, long seed) {
        if (n < 1 || maxMiB < 1) {
            throw new IllegalArgumentException("n and maxMiB must be >= 1, got " + n + ", " + maxMiB);
        }
        SplittableRandom random = new SplittableRandom(seed);
        long maxSize = maxMiB * ByteSize.MiB;
        int steps = 2 * n;
        long[] size = new long[steps];
        int[] slot = new int[steps];
        // RMM allocates without checking the count when nothing is live, so up to 2N allocations are possible.
        long[] slotSize = new long[steps];
        int[] live = new int[steps];
        int active = 0;
        int made = 0;
        long liveBytes = 0;
        long peak = 0;
        for (int i = 0; i < steps; i++) {
            long bytes = random.nextLong(1, maxSize + 1);
            boolean allocate = true;
            if (active > 0) {
                int chance = random.nextInt(100);
                allocate = chance < ALLOCATION_PROBABILITY && made < n && liveBytes + bytes < MAX_USAGE;
            }
            if (allocate) {
                size[i] = bytes;
                slot[i] = made;
                slotSize[made] = bytes;
                live[active++] = made;
                made++;
                liveBytes += bytes;
                peak = Math.max(peak, liveBytes);
            } else {
                int index = random.nextInt(n) % active;
                int s = live[index];
                System.arraycopy(live, index + 1, live, index, active - index - 1);
                active--;
                size[i] = 0;
                slot[i] = s;
                liveBytes -= slotSize[s];
            }
        }
        return new RandomAllocationsPlan(n, size, slot, Arrays.copyOf(live, active), made, peak);
    }

    /** Operations (allocations plus frees) in one replay. */
    long operations() {
        return 2L * allocations;
    }

    /**
     * Replays the whole sequence on {@code allocator}, then frees what is left, through the raw-address path.
     * Creates no Java objects itself. Returns a value that depends on every address, for the benchmark to consume.
     */
    long replay(DeviceAllocator allocator, DeviceStream stream) {
        long[] sizes = size;
        int[] slots = slot;
        long[] addresses = address;
        long sum = 0;
        for (int i = 0; i < sizes.length; i++) {
            long bytes = sizes[i];
            if (bytes != 0) {
                long p = allocator.malloc(bytes, stream);
                addresses[slots[i]] = p;
                sum += p;
            } else {
                allocator.free(addresses[slots[i]]);
            }
        }
        int[] rest = leftover;
        for (int i = 0; i < rest.length; i++) {
            allocator.free(addresses[rest[i]]);
        }
        return sum;
    }
}
