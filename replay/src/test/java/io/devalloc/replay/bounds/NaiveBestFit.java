package io.devalloc.replay.bounds;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The best-fit heap written the way XLA's {@code GlobalDecreasingSizeBestFitHeap::FindChunkCandidate} is written, for
 * tests: for each interval, every placed interval that overlaps it in time, sorted by offset, then the smallest gap
 * (or the room up to the heap's height) that holds it. O(n²), with objects and a comparator: a reference for
 * {@link HeapPlacement}'s index, never fast.
 */
final class NaiveBestFit {

    private NaiveBestFit() {
    }

    /** The offsets of every interval, placed in {@code order}; the last element is the heap's height. */
    static long[] place(LiveIntervals iv, long[] sizes, PlanOrder order) {
        int n = iv.count();
        List<Integer> sequence = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            sequence.add(i);
        }
        Comparator<Integer> bySize = Comparator.comparingLong((Integer i) -> -sizes[i]);
        Comparator<Integer> byLifetime = Comparator.comparingLong((Integer i) -> iv.startEvent(i) - iv.endEvent(i));
        Comparator<Integer> compare = order == PlanOrder.BY_SIZE
                ? bySize.thenComparing(byLifetime) : byLifetime.thenComparing(bySize);
        sequence.sort(compare.thenComparingInt(i -> i));
        long[] offsets = new long[n + 1];
        boolean[] placed = new boolean[n];
        long heap = 0;
        for (int i : sequence) {
            long size = sizes[i];
            if (size == 0) {
                continue;
            }
            List<long[]> chunks = new ArrayList<>();
            for (int j = 0; j < n; j++) {
                boolean overlaps = iv.startEvent(j) < iv.endEvent(i) && iv.startEvent(i) < iv.endEvent(j);
                if (placed[j] && overlaps) {
                    chunks.add(new long[] {offsets[j], offsets[j] + sizes[j]});
                }
            }
            chunks.sort(Comparator.comparingLong((long[] c) -> c[0]));
            long best = -1;
            long bestBytes = Long.MAX_VALUE;
            long covered = 0;
            for (long[] c : chunks) {
                if (c[0] > covered && c[0] - covered >= size && c[0] - covered < bestBytes) {
                    best = covered;
                    bestBytes = c[0] - covered;
                }
                covered = Math.max(covered, c[1]);
            }
            if (heap - covered >= size && heap - covered < bestBytes) {
                best = covered;
            }
            offsets[i] = best >= 0 ? best : covered;
            placed[i] = true;
            heap = Math.max(heap, offsets[i] + size);
        }
        offsets[n] = heap;
        return offsets;
    }
}
