package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ReadAheadTest {

    /** A reader of {@code n} events (alternately alloc and free of key i / 2), then {@code failure} if not null. */
    private static class CountingReader implements TraceReader {
        private final long n;
        private final Throwable failure;
        private final AtomicBoolean closed;
        private final AtomicReference<Thread> readingThread;
        private long i;

        CountingReader(long n, Throwable failure, AtomicBoolean closed, AtomicReference<Thread> readingThread) {
            this.n = n;
            this.failure = failure;
            this.closed = closed;
            this.readingThread = readingThread;
        }

        @Override
        public TraceFormat format() {
            return TraceFormat.RMM_CSV;
        }

        @Override
        public TraceEvent next() throws IOException {
            readingThread.set(Thread.currentThread());
            if (i == n) {
                if (failure instanceof IOException e) {
                    throw e;
                }
                if (failure instanceof RuntimeException e) {
                    throw e;
                }
                return null;
            }
            long k = i++;
            return new TraceEvent(k % 2 == 0 ? Kind.ALLOC : Kind.FREE, k / 2, k + 1, k % 3, 0, k + 2);
        }

        long position() {
            return i;
        }

        @Override
        public void close() {
            closed.set(true);
        }
    }

    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicReference<Thread> readingThread = new AtomicReference<>();

    private TraceSource source(long n, Throwable failure) {
        return () -> new CountingReader(n, failure, closed, readingThread);
    }

    /** Every event, in order, from the batches; rethrows a batch's failure after its events, as the replay does. */
    private static List<long[]> drain(ReadAhead ahead, List<long[]> into) throws IOException {
        for (ReadAhead.Batch b = ahead.next(); b != null; b = ahead.next()) {
            for (int k = 0; k < b.count; k++) {
                into.add(new long[] {b.kind(k).ordinal(), b.key[k], b.size[k], b.stream[k]});
            }
            b.throwFailure();
        }
        return into;
    }

    private static void assertEvents(long n, List<long[]> events) {
        assertEquals(n, events.size());
        for (int k = 0; k < n; k++) {
            long[] e = events.get(k);
            assertEquals(k % 2 == 0 ? Kind.ALLOC.ordinal() : Kind.FREE.ordinal(), e[0], "kind of event " + k);
            assertEquals(k / 2, e[1], "key of event " + k);
            assertEquals(k + 1, e[2], "size of event " + k);
            assertEquals(k % 3, e[3], "stream of event " + k);
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 1, ReadAhead.BATCH_EVENTS - 1, ReadAhead.BATCH_EVENTS, 2 * ReadAhead.BATCH_EVENTS,
        25_000})
    void handsOverEveryEventInOrderOnAnotherThreadAndClosesTheReader(long n) throws Exception {
        List<long[]> events = new ArrayList<>();
        try (ReadAhead ahead = new ReadAhead(source(n, null), "t")) {
            drain(ahead, events);
            assertNull(ahead.next(), "stays at the end");
        }
        assertEvents(n, events);
        assertTrue(closed.get(), "the reader was closed");
        assertFalse(readingThread.get() == Thread.currentThread(), "read on a thread of its own");
        assertFalse(readingThread.get().isAlive(), "the reading thread ended");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 5, ReadAhead.BATCH_EVENTS, 10_000})
    void aReadingFailureComesAfterTheEventsBeforeIt(long n) throws Exception {
        TraceFormatException failure = new TraceFormatException("t.csv", n + 2, "expected 6 columns, got 2");
        List<long[]> events = new ArrayList<>();
        try (ReadAhead ahead = new ReadAhead(source(n, failure), "t")) {
            TraceFormatException thrown = assertThrows(TraceFormatException.class, () -> drain(ahead, events));
            assertSame(failure, thrown, "the reader's own exception, unchanged");
            assertNull(ahead.next(), "nothing after the failure");
        }
        assertEvents(n, events);
        assertTrue(closed.get());
    }

    @Test
    void aFailureToCloseTheReaderFollowsTheLastEvents() throws Exception {
        IOException failure = new IOException("close failed");
        TraceSource failingClose = () -> new CountingReader(5000, null, closed, readingThread) {
            @Override
            public void close() {
                super.close();
                throw new UncheckedIOException(failure);
            }
        };
        List<long[]> events = new ArrayList<>();
        try (ReadAhead ahead = new ReadAhead(failingClose, "t")) {
            UncheckedIOException thrown = assertThrows(UncheckedIOException.class,
                    () -> drain(ahead, events));
            assertSame(failure, thrown.getCause());
        }
        assertEvents(5000, events);
    }

    @Test
    void anErrorClosingTheReaderAfterAFailureIsAddedToIt() {
        IOException failure = new IOException("bad line");
        AssertionError closing = new AssertionError("close broke");
        TraceSource broken = () -> new CountingReader(10, failure, closed, readingThread) {
            @Override
            public void close() {
                super.close();
                throw closing;
            }
        };
        Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            try (ReadAhead ahead = new ReadAhead(broken, "t")) {
                IOException thrown = assertThrows(IOException.class, () -> drain(ahead, new ArrayList<>()));
                assertSame(failure, thrown);
                assertSame(closing, thrown.getSuppressed()[0]);
            }
        });
    }

    @Test
    void aRuntimeFailureKeepsItsType() throws Exception {
        IllegalStateException failure = new IllegalStateException("broken reader");
        try (ReadAhead ahead = new ReadAhead(source(3, failure), "t")) {
            assertSame(failure, assertThrows(IllegalStateException.class, () -> drain(ahead, new ArrayList<>())));
        }
    }

    @Test
    void aSourceThatCannotBeOpenedFailsAtOnceOnTheCallersThread() {
        IOException failure = new IOException("no such file");
        assertSame(failure, assertThrows(IOException.class, () -> new ReadAhead(() -> {
            throw failure;
        }, "t")));
    }

    @Test
    void estimatesTheEventsFromTheBytesReadAndTheSourcesSize() throws Exception {
        // 10,000 events, 50 bytes each as the reader tells it, in a source of 500,000 bytes.
        TraceSource sized = new TraceSource() {
            @Override
            public TraceReader open() {
                return new CountingReader(10_000, null, closed, readingThread) {
                    @Override
                    public long bytesRead() {
                        return 50 * position();
                    }
                };
            }

            @Override
            public long sizeBytes() {
                return 500_000;
            }
        };
        try (ReadAhead ahead = new ReadAhead(sized, "t")) {
            ReadAhead.Batch first = ahead.next();
            assertEquals(10_000, ahead.estimatedEvents(first.count));
            drain(ahead, new ArrayList<>());
            assertEquals(10_000, ahead.estimatedEvents(10_000));
        }
        try (ReadAhead unsized = new ReadAhead(source(10, null), "t")) {
            unsized.next();
            assertEquals(-1, unsized.estimatedEvents(10), "no size, no estimate");
        }
    }

    @Test
    void closingEarlyStopsTheReadingThreadAndClosesTheReader() throws Exception {
        // An endless trace: the reading thread fills every batch and waits for the consumer.
        ReadAhead ahead = new ReadAhead(source(Long.MAX_VALUE, null), "t");
        ReadAhead.Batch first = ahead.next();
        assertEquals(ReadAhead.BATCH_EVENTS, first.count);
        ahead.close();
        assertTrue(closed.get(), "the reader was closed");
        assertFalse(readingThread.get().isAlive(), "the reading thread ended");
    }

    @Test
    void closingWhileTheReaderIsBlockedInsideNextStopsIt() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        TraceSource blocking = () -> new TraceReader() {
            @Override
            public TraceFormat format() {
                return TraceFormat.RMM_CSV;
            }

            @Override
            public TraceEvent next() throws IOException {
                inside.countDown();
                try {
                    Thread.sleep(TimeUnit.MINUTES.toMillis(5));
                } catch (InterruptedException e) {
                    interrupted.set(true);
                    throw new InterruptedIOException("interrupted");
                }
                return null;
            }

            @Override
            public void close() {
                closed.set(true);
            }
        };
        ReadAhead ahead = new ReadAhead(blocking, "t");
        assertTrue(inside.await(10, TimeUnit.SECONDS));
        ahead.close();
        assertTrue(interrupted.get(), "close() interrupts a reader that waits");
        assertTrue(closed.get());
    }
}
