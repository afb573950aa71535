package io.devalloc.api.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.devalloc.api.observe.MemoryGauge;
import io.devalloc.api.observe.ThresholdListener;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

class ThresholdWatchTest {

    /** Crossings as "up 100 @150". */
    static final class Told implements ThresholdListener {
        final List<String> events = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void crossedUp(MemoryGauge gauge, long level, long bytes) {
            events.add("up " + level + " @" + bytes);
        }

        @Override
        public void crossedDown(MemoryGauge gauge, long level, long bytes) {
            events.add("down " + level + " @" + bytes);
        }

        List<String> take() {
            List<String> out = List.copyOf(events);
            events.clear();
            return out;
        }
    }

    private final Told told = new Told();
    private final ThresholdWatch watch = new ThresholdWatch(MemoryGauge.ALLOCATED, told, 300, 100, 200);

    private void at(long bytes) {
        watch.update(() -> bytes);
    }

    @Test
    void eachCrossingIsToldOnceInEachDirectionAndNothingElse() {
        watch.start(0);
        at(50);
        at(99);
        assertEquals(List.of(), told.take(), "below the first level");
        at(100);
        assertEquals(List.of("up 100 @100"), told.take(), "at the level counts as above");
        at(150);
        at(199);
        assertEquals(List.of(), told.take(), "within a band");
        at(99);
        assertEquals(List.of("down 100 @99"), told.take());
        at(350);
        assertEquals(List.of("up 100 @350", "up 200 @350", "up 300 @350"), told.take(), "several levels, low first");
        at(0);
        assertEquals(List.of("down 300 @0", "down 200 @0", "down 100 @0"), told.take(), "down, high first");
        for (int i = 0; i < 3; i++) {
            at(250);
            at(150);
        }
        assertEquals(List.of("up 100 @250", "up 200 @250", "down 200 @150", "up 200 @250", "down 200 @150",
                "up 200 @250", "down 200 @150"), told.take(), "oscillation over one level");
    }

    @Test
    void startingAboveALevelTellsNothingUntilItIsCrossed() {
        watch.start(250);
        at(260);
        assertEquals(List.of(), told.take());
        at(150);
        assertEquals(List.of("down 200 @150"), told.take());
    }

    @Test
    void levelsAreCheckedAndCopiesStartAfresh() {
        assertThrows(IllegalArgumentException.class, () -> new ThresholdWatch(MemoryGauge.RESERVED, told));
        assertThrows(IllegalArgumentException.class, () -> new ThresholdWatch(MemoryGauge.RESERVED, told, 0));
        assertThrows(IllegalArgumentException.class, () -> new ThresholdWatch(MemoryGauge.RESERVED, told, 5, 5));
        watch.start(500);
        ThresholdWatch copy = watch.copy();
        copy.start(0);
        copy.update(() -> 120);
        assertEquals(List.of("up 100 @120"), told.take());
    }

    @Test
    void aListenerThatThrowsIsIgnoredAndTheBandStillMoves() {
        ThresholdWatch w = new ThresholdWatch(MemoryGauge.RESERVED, new ThresholdListener() {
            @Override
            public void crossedUp(MemoryGauge gauge, long level, long bytes) {
                throw new IllegalStateException("broken");
            }

            @Override
            public void crossedDown(MemoryGauge gauge, long level, long bytes) {
                told.crossedDown(gauge, level, bytes);
            }
        }, 10);
        w.start(0);
        w.update(() -> 20);
        w.update(() -> 20);
        w.update(() -> 5);
        assertEquals(List.of("down 10 @5"), told.take(), "the up was not told twice, the down once");
    }

    /** A figure that reads as the values given, one per read, then stays at the last. */
    private static LongSupplier reads(long... values) {
        int[] next = {0};
        return () -> values[Math.min(next[0]++, values.length - 1)];
    }

    @Test
    void aStaleFigureIsReadAgainInsideTheLock() {
        // This thread read 150 after its call, but another thread's free brought the figure to 50 (and found the
        // band unchanged) before this update took the lock: nothing may be told, and the band must stay below 100.
        watch.start(0);
        watch.update(reads(150, 50));
        assertEquals(List.of(), told.take());
        at(50);
        assertEquals(List.of(), told.take());
        at(150);
        assertEquals(List.of("up 100 @150"), told.take(), "the band stayed where the figure was");
    }

    @Test
    void aFigureMovedWhileTheBandMovedIsCaughtUpAfterwards() {
        // The figure fell back to 50 just after this update moved the band up for 150: it reads the figure once more
        // and moves the band back, so that the crossings net out to the figure.
        watch.start(0);
        watch.update(reads(150, 150, 50));
        assertEquals(List.of("up 100 @150", "down 100 @50"), told.take());
        at(50);
        assertEquals(List.of(), told.take());
    }

    /**
     * Threads move one shared figure and each updates the watch with it, as decorated calls do: every crossing is
     * told once (ups and downs of a level alternate in number, so they net to the final band), and once the threads
     * stop the band is the figure's, even when a thread's update ran on a figure another thread had moved since.
     */
    @Test
    void underConcurrencyTheCrossingsNetOutToTheFinalFigure() throws Exception {
        AtomicLong figure = new AtomicLong();
        ThresholdWatch w = new ThresholdWatch(MemoryGauge.ALLOCATED, told, 100, 200, 300);
        w.start(0);
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CyclicBarrier start = new CyclicBarrier(threads);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long step = 37 + 11 * t;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 20_000; i++) {
                        figure.addAndGet(i % 2 == 0 ? step : -step);
                        w.update(figure::get);
                    }
                    figure.addAndGet(step * 2);
                    w.update(figure::get);
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        long finalFigure = figure.get();
        for (long level : new long[] {100, 200, 300}) {
            long ups = told.events.stream().filter(e -> e.startsWith("up " + level + " ")).count();
            long downs = told.events.stream().filter(e -> e.startsWith("down " + level + " ")).count();
            assertEquals(finalFigure >= level ? 1 : 0, ups - downs, "level " + level + " at " + finalFigure + ": "
                    + ups + " up, " + downs + " down");
        }
    }
}
