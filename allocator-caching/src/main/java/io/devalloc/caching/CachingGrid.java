package io.devalloc.caching;

import io.devalloc.api.units.ByteSize;
import java.util.ArrayList;
import java.util.List;

/**
 * The caching allocator's default grid for {@code devalloc advise}
 * ({@link CachingAllocatorProvider#defaultGrid(long)}): the keys of {@code PYTORCH_CUDA_ALLOC_CONF} that change
 * how much memory a workload needs, at values that span what users try.
 *
 * <ol>
 *   <li>the defaults (the empty text);</li>
 *   <li>{@code expandable_segments:True}, the setting PyTorch's out-of-memory message suggests (pytorch#113481);</li>
 *   <li>{@code max_split_size_mb} at 20 (its smallest legal value), then at 32, 64, 128, ... up to the first power
 *       of two above the largest request: a threshold above every request changes only which cached blocks a
 *       request may take, so one value past the largest is enough;</li>
 *   <li>{@code roundup_power2_divisions} at 2, 4 and 8, and the per-interval list
 *       {@code [256:1,512:2,1024:4,>:8]};</li>
 *   <li>{@code garbage_collection_threshold} at 0.6 and 0.8, each with {@code per_process_memory_fraction:0.99}
 *       (the collector only runs when a fraction below 1 is set: pytorch#106660; 0.99 costs 1% of the device);</li>
 *   <li>combinations seen in practice: expandable segments with 4 divisions, a split threshold with 4 divisions,
 *       and a split threshold with garbage collection.</li>
 * </ol>
 * The split threshold of the combinations is the largest power of two (at least 32) at or below the largest
 * request, 128 when the largest request is not known.
 */
final class CachingGrid {

    private static final long MiB = ByteSize.MiB;
    /** The smallest {@code max_split_size_mb} PyTorch accepts. */
    private static final long SMALLEST_SPLIT_MB = 20;
    private static final String GC = "per_process_memory_fraction:0.99";

    private CachingGrid() {
    }

    static List<String> of(long largestRequestBytes) {
        if (largestRequestBytes < 0) {
            throw new IllegalArgumentException("largest request must be >= 0 bytes, got " + largestRequestBytes);
        }
        long largestMb = Math.ceilDiv(largestRequestBytes, MiB);
        List<String> grid = new ArrayList<>();
        grid.add("");
        grid.add("expandable_segments:True");
        grid.add("max_split_size_mb:" + SMALLEST_SPLIT_MB);
        // Powers of two from 32 MiB until one lies above the largest request (at least 32 and 64 when unknown).
        long top = Math.max(largestMb, largestRequestBytes == 0 ? 64 : 0);
        for (long mb = 32; ; mb *= 2) {
            grid.add("max_split_size_mb:" + mb);
            if (mb > top || mb > Long.MAX_VALUE / 4 / MiB) {
                break;
            }
        }
        for (int divisions : new int[] {2, 4, 8}) {
            grid.add("roundup_power2_divisions:" + divisions);
        }
        grid.add("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]");
        grid.add("garbage_collection_threshold:0.6," + GC);
        grid.add("garbage_collection_threshold:0.8," + GC);
        long split = comboSplitMb(largestMb);
        grid.add("expandable_segments:True,roundup_power2_divisions:4");
        grid.add("max_split_size_mb:" + split + ",roundup_power2_divisions:4");
        grid.add("max_split_size_mb:" + split + ",garbage_collection_threshold:0.8," + GC);
        return List.copyOf(grid);
    }

    /** The largest power of two (at least 32) at or below the largest request in MiB; 128 when unknown. */
    private static long comboSplitMb(long largestMb) {
        if (largestMb == 0) {
            return 128;
        }
        return Math.max(32, Long.highestOneBit(largestMb));
    }
}
