package io.devalloc.replay.bounds;

/**
 * Sorts interval indices by two {@code long} keys, both descending, then by index ascending: a total order, so the
 * result is the same on every run and every JVM. A bottom-up merge sort over {@code int} arrays: no boxing and no
 * comparator object per comparison, O(n log n) whatever the input.
 *
 * <p>Static and allocation-bounded (two {@code int} arrays of n): thread-safe.
 */
final class IndexOrder {

    /** Runs of this many are insertion-sorted before the merges start. */
    private static final int RUN = 32;

    private IndexOrder() {
    }

    /** The indices {@code 0 .. primary.length - 1} ordered by {@code primary} desc, {@code secondary} desc, index. */
    static int[] sorted(long[] primary, long[] secondary) {
        int n = primary.length;
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
        }
        for (int lo = 0; lo < n; lo += RUN) {
            insertionSort(a, lo, Math.min(lo + RUN, n), primary, secondary);
        }
        int[] b = new int[n];
        for (int width = RUN; width < n; width *= 2) {
            for (int lo = 0; lo < n; lo += 2 * width) {
                int mid = Math.min(lo + width, n);
                int hi = Math.min(lo + 2 * width, n);
                merge(a, b, lo, mid, hi, primary, secondary);
            }
            int[] t = a;
            a = b;
            b = t;
        }
        return a;
    }

    private static void insertionSort(int[] a, int lo, int hi, long[] primary, long[] secondary) {
        for (int i = lo + 1; i < hi; i++) {
            int x = a[i];
            int j = i - 1;
            while (j >= lo && before(x, a[j], primary, secondary)) {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = x;
        }
    }

    private static void merge(int[] from, int[] to, int lo, int mid, int hi, long[] primary, long[] secondary) {
        int i = lo;
        int j = mid;
        for (int k = lo; k < hi; k++) {
            if (j >= hi || (i < mid && !before(from[j], from[i], primary, secondary))) {
                to[k] = from[i++];
            } else {
                to[k] = from[j++];
            }
        }
    }

    /** Whether {@code x} comes before {@code y}. */
    static boolean before(int x, int y, long[] primary, long[] secondary) {
        if (primary[x] != primary[y]) {
            return primary[x] > primary[y];
        }
        if (secondary[x] != secondary[y]) {
            return secondary[x] > secondary[y];
        }
        return x < y;
    }
}
