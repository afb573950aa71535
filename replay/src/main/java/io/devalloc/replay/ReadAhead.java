package io.devalloc.replay;

import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceReader;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * The replay pass's reader: a thread of its own reads and parses the trace ahead of the replay and hands the events
 * over in batches of primitive arrays, so that parsing (about as costly as the allocator itself on a large CSV) runs
 * on one core while the allocator runs on another. The replay sees the events in the file's order, and a reading
 * failure (a malformed line, an I/O error) in the same place as with a plain reader: after every event before it.
 *
 * <p>Memory stays constant: {@value #BATCHES} batches of {@value #BATCH_EVENTS} events circulate between the two
 * threads, refilled as they are replayed.
 *
 * <p>Thread safety: one consumer thread calls {@link #next()} and {@link #close()}; the reading thread is internal.
 * {@link #close()} stops the reading thread, closes the reader and waits for both, also when the replay stops early.
 */
final class ReadAhead implements AutoCloseable {

    static final int BATCH_EVENTS = 4096;
    static final int BATCHES = 4;

    private static final TraceEvent.Kind[] KINDS = TraceEvent.Kind.values();

    /** Events handed over at once; the consumer reads {@code count} of them. */
    static final class Batch {
        final byte[] kind = new byte[BATCH_EVENTS];
        final long[] key = new long[BATCH_EVENTS];
        final long[] size = new long[BATCH_EVENTS];
        final long[] stream = new long[BATCH_EVENTS];
        int count;
        /** The trace ended after these events. */
        boolean last;
        /** Reading failed after these events: thrown once they have been replayed. */
        Throwable failure;

        TraceEvent.Kind kind(int i) {
            return KINDS[kind[i]];
        }

        /**
         * Throws the reading failure that followed this batch's events, as the reader threw it.
         *
         * @throws IOException for a malformed trace or an I/O error
         */
        void throwFailure() throws IOException {
            Throwable t = failure;
            if (t == null) {
                return;
            }
            if (t instanceof IOException e) {
                throw e;
            }
            if (t instanceof RuntimeException e) {
                throw e;
            }
            if (t instanceof Error e) {
                throw e;
            }
            throw new IOException("reading the trace failed", t);
        }
    }

    /** Read by the reading thread only, once started ({@link #format()} excepted: a constant of the reader). */
    private final TraceReader reader;
    private final long sourceBytes;
    /** Events read and the reader's position after them, published together after each batch for progress. */
    private record Progress(long events, long bytes) {
    }

    private volatile Progress progress = new Progress(0, -1);
    private final BlockingQueue<Batch> filled = new ArrayBlockingQueue<>(BATCHES + 1);
    private final BlockingQueue<Batch> free = new ArrayBlockingQueue<>(BATCHES);
    private final Thread thread;
    private volatile boolean stopped;
    private Batch current;
    private boolean ended;

    /**
     * Opens {@code source} on this thread and starts reading it on a new daemon thread named after {@code trace}.
     *
     * @throws IOException if the source cannot be opened
     */
    ReadAhead(TraceSource source, String trace) throws IOException {
        this.sourceBytes = source.sizeBytes();
        this.reader = source.open();
        for (int i = 0; i < BATCHES; i++) {
            free.add(new Batch());
        }
        try {
            thread = Thread.ofPlatform().daemon().name("devalloc-read-ahead " + trace).unstarted(this::read);
            thread.start();
        } catch (RuntimeException | Error e) {
            try {
                reader.close();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** The format of the trace being read. */
    TraceFormat format() {
        return reader.format();
    }

    /**
     * The next batch of events, or null after the last; the previous batch may be refilled from now on. A batch
     * with a {@link Batch#failure} is the last one.
     *
     * @throws InterruptedIOException if this thread is interrupted while it waits
     */
    Batch next() throws InterruptedIOException {
        if (ended) {
            current = null;
            return null;
        }
        if (current != null) {
            free.add(current);
            current = null;
        }
        try {
            current = filled.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the trace's next events");
        }
        ended = current.last;
        return current;
    }

    /**
     * An estimate of the trace's events, for the progress bar of a replay that does not know them: the events read
     * so far scaled by the file's size over the bytes read, never below {@code done}; -1 when the source or the
     * reader cannot tell sizes.
     */
    long estimatedEvents(long done) {
        Progress p = progress;
        if (sourceBytes <= 0 || p.bytes() <= 0) {
            return -1;
        }
        return Math.max(done, (long) ((double) p.events() * sourceBytes / p.bytes()));
    }

    /**
     * The reading thread: fills batches until the trace ends, reading fails, or the consumer stops it. The reader is
     * closed before the last batch is handed over, so that a failure to close it follows the last events as any
     * reading failure does.
     */
    private void read() {
        Batch batch = null;
        boolean closed = false;
        long events = 0;
        try {
            while (!stopped) {
                batch = free.take();
                batch.count = 0;
                batch.last = false;
                batch.failure = null;
                TraceEvent e = null;
                while (batch.count < BATCH_EVENTS && (e = reader.next()) != null) {
                    int n = batch.count;
                    batch.kind[n] = (byte) e.kind().ordinal();
                    batch.key[n] = e.key();
                    batch.size[n] = e.size();
                    batch.stream[n] = e.stream();
                    batch.count = n + 1;
                }
                events += batch.count;
                progress = new Progress(events, reader.bytesRead());
                if (e == null) {
                    batch.last = true;
                    closed = true;
                    reader.close();
                }
                Batch done = batch;
                batch = null;
                filled.put(done);
                if (done.last) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            // Stopped by close(): nobody reads what is left.
        } catch (Throwable t) {
            if (stopped) {
                return; // after close(): nobody waits
            }
            if (!closed) {
                closed = true;
                closeQuietly(t);
            }
            // The events read before the failure go first; the failure follows them (filled has room for every
            // batch, so this never waits).
            Batch failed = batch != null ? batch : new Batch();
            failed.last = true;
            failed.failure = t;
            filled.add(failed);
        } finally {
            if (!closed) {
                closeQuietly(null);
            }
        }
    }

    /**
     * Closes the reader on a path that already fails or was stopped: anything thrown here (an {@link Error} too) is
     * added to {@code cause}, so that the failure is still handed over; after a stop there is nobody to tell.
     */
    @SuppressWarnings("ReferenceEquality") // a throwable cannot suppress itself
    private void closeQuietly(Throwable cause) {
        try {
            reader.close();
        } catch (Throwable e) {
            if (cause != null && cause != e) {
                cause.addSuppressed(e);
            }
        }
    }

    /** Stops the reading thread (if it still runs), which closes the reader, and waits for it. */
    @Override
    public void close() {
        stopped = true;
        thread.interrupt();
        boolean interrupted = false;
        while (true) {
            try {
                thread.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
