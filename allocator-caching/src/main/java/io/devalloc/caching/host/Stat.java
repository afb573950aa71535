package io.devalloc.caching.host;

/**
 * c10's {@code Stat}: a current value, its peak, and the totals added and removed.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class Stat {

    long current;
    long peak;
    long allocated;
    long freed;

    void increase(long n) {
        current += n;
        peak = Math.max(peak, current);
        allocated += n;
    }

    void decrease(long n) {
        current -= n;
        freed += n;
    }

    void resetAccumulated() {
        allocated = 0;
        freed = 0;
    }

    void resetPeak() {
        peak = current;
    }
}
