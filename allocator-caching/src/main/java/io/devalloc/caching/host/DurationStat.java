package io.devalloc.caching.host;

/**
 * c10's {@code DurationStat}, in microseconds: total, count, max and min (min 0 means "no call yet").
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class DurationStat {

    long total;
    long max;
    long min;
    long count;

    void increase(long micros) {
        total += micros;
        count++;
        max = Math.max(max, micros);
        min = min == 0 ? micros : Math.min(min, micros);
    }

    void resetAccumulated() {
        total = 0;
        count = 0;
    }

    void resetPeak() {
        min = 0;
        max = 0;
    }
}
