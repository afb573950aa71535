package io.devalloc.trace.record;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.DevallocException;
import io.devalloc.api.spi.ForwardingDeviceAllocator;
import io.devalloc.trace.TraceRecorder;
import io.devalloc.trace.pytorch.PyTorchCsvRecorder;
import io.devalloc.trace.rmm.RmmCsvRecorder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link DeviceAllocator} that passes every call to another one and records the allocations, failures, frees
 * and {@code recordStream} calls to a {@link TraceRecorder}: capture a workload in production, replay it later
 * through any allocator and configuration ({@code devalloc replay}), or hand it to RMM's {@code REPLAY_BENCH}.
 * <pre>{@code
 * try (DeviceAllocator allocator = RecordingAllocator.wrap(
 *         DeviceAllocators.open("cuda:0", "caching", ""), Path.of("run.csv"), RecordingAllocator.Format.RMM_CSV)) {
 *     runWorkload(allocator);
 * }   // closes the allocator (and its device) and flushes and closes run.csv
 * }</pre>
 * or {@code DeviceAllocators.builder().device("cuda:0").allocator("caching").decorate(RecordingAllocator.to(path,
 * Format.RMM_CSV)).build()}.
 *
 * <h2>What is recorded</h2>
 * <ul>
 *   <li>{@link #malloc} (and so {@link #allocate}) that returns an address: {@link TraceRecorder#allocate}.</li>
 *   <li>{@link #malloc} that throws a {@link DevallocException} (out of memory, device error):
 *       {@link TraceRecorder#allocateFailure} with the requested size; the exception is rethrown unchanged.</li>
 *   <li>{@link #free(long)}, {@link #free(long, long)} (handles) that succeed: {@link TraceRecorder#free} with the
 *       allocation's requested size and stream.</li>
 *   <li>{@link #recordStream} that succeeds: {@link TraceRecorder#recordStream}.</li>
 * </ul>
 * Not recorded: zero-byte allocations and {@code free(0)} (they hold no memory), calls rejected as invalid
 * (negative sizes, unknown addresses, double frees, calls on a closed allocator), frees of allocations made
 * before the recorder was attached (their allocation is not in the trace either, so the trace stays
 * self-consistent), and what the delegate does inside (device mallocs, cache releases), which a decorator cannot
 * see. Stats, snapshots, {@link #releaseCachedMemory()} and {@link #resetPeakStats()} go to the delegate unrecorded.
 *
 * <h2>Order</h2>
 * Rows are written in an order that replays: a free is always written before an allocation that reuses its address,
 * even when the two run on different threads, and timestamps never decrease. The delegate is never called under
 * the recording lock (so callbacks the delegate runs under its own lock may use this allocator without deadlock).
 * A free finds the allocation under the lock, frees it in the delegate, then writes the row under the lock; if an
 * allocation that reuses the address is recorded in between, that allocation writes the pending free first.
 *
 * <h2>Threads and cost</h2>
 * Thread-safe, as every allocator. Recording is serialized on one lock: each {@code malloc} takes it once and each
 * {@code free} twice, for a hash-table update and a formatted line (about 40–80 bytes) into a 64 KiB buffer. The
 * delegate's own work still runs concurrently, but recording threads queue on that lock, so expect a few hundred
 * nanoseconds more per call and little scaling beyond one thread's recording rate (measured on a busy two-core
 * machine: about 0.15 µs per malloc-and-free pair for the decorator itself, with the clock reads, plus about
 * 0.1–0.2 µs per row formatted, before the disk): fine for capturing a workload, not meant to stay on in a
 * latency-critical hot path. The raw path ({@code malloc}/{@code free} on {@code long} addresses) is not
 * allocation-free as the delegate's is: the timestamp (an {@link Instant}), the occasional growth of the address
 * table and the writer's buffers may allocate, and each row is one CSV line.
 *
 * <h2>Ownership</h2>
 * This allocator owns both the delegate and the recorder: {@link #close()} flushes and closes the recorder, then
 * closes the delegate (which closes its device if it owns it, as allocators from
 * {@link io.devalloc.api.DeviceAllocators} do). Do not use or close the delegate directly while it is
 * wrapped: calls that bypass this decorator are not recorded.
 *
 * <h2>Errors</h2>
 * The recorder never fails an allocation. If it throws an {@link IOException} (disk full, say) or any unchecked
 * exception (kept as the cause of an {@link IOException}), recording stops, a warning is logged, the allocator
 * keeps working unrecorded, {@link #recordingFailure()} returns the failure, {@link #flush()} throws it and
 * {@link #close()} throws it as an {@link UncheckedIOException} after closing everything.
 */
public final class RecordingAllocator extends ForwardingDeviceAllocator {

    private static final Logger LOG = LoggerFactory.getLogger(RecordingAllocator.class);

    /** The trace formats the built-in recorders write. */
    public enum Format {
        /** RMM's replay log: {@code Thread,Time,Action,Pointer,Size,Stream} ({@link RmmCsvRecorder}). */
        RMM_CSV,
        /**
         * The project's PyTorch trace CSV: {@code seq,action,addr,size,stream,time_us} ({@link PyTorchCsvRecorder}).
         */
        PYTORCH_CSV;

        /** Creates (or truncates) {@code file} and returns a recorder writing this format to it. */
        public TraceRecorder open(Path file) throws IOException {
            Objects.requireNonNull(file, "file");
            return switch (this) {
                case RMM_CSV -> new RmmCsvRecorder(file);
                case PYTORCH_CSV -> new PyTorchCsvRecorder(file);
            };
        }
    }

    private final DeviceAllocator delegate;
    private final TraceRecorder recorder;
    private final InstantSource clock;
    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by {@link #lock}. */
    private final LiveTable live = new LiveTable();
    /** Written under {@link #lock}; read without it for the unrecorded fast path. */
    private volatile boolean recording = true;
    private IOException failure;
    private boolean closed;
    private long events;
    private long lastMicros = Long.MIN_VALUE;

    /**
     * Records the calls on {@code delegate} to {@code file} in {@code format}. The returned allocator owns both
     * (see {@link #close()}). If the file cannot be created the delegate is left as it was, still the caller's.
     *
     * @throws IOException if {@code file} cannot be created
     */
    public static RecordingAllocator wrap(DeviceAllocator delegate, Path file, Format format) throws IOException {
        Objects.requireNonNull(delegate, "delegate");
        Objects.requireNonNull(format, "format");
        return new RecordingAllocator(delegate, format.open(file));
    }

    /**
     * A decoration for {@code DeviceAllocators.builder().decorate(...)}: records every call on the built allocator
     * to {@code file} (created or truncated when the allocator is built) in {@code format}.
     * <pre>{@code
     * DeviceAllocator a = DeviceAllocators.builder().device("cuda:0").allocator("caching")
     *         .decorate(RecordingAllocator.to(Path.of("run.csv"), RecordingAllocator.Format.RMM_CSV))
     *         .build();
     * }</pre>
     * If the file cannot be created the build fails with an {@link UncheckedIOException} and closes what it built.
     */
    public static UnaryOperator<DeviceAllocator> to(Path file, Format format) {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(format, "format");
        return delegate -> {
            try {
                return wrap(delegate, file, format);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create recording file " + file, e);
            }
        };
    }

    /** Records the calls on {@code delegate} to {@code recorder}, with the system clock; owns both. */
    public RecordingAllocator(DeviceAllocator delegate, TraceRecorder recorder) {
        this(delegate, recorder, InstantSource.system());
    }

    /**
     * Records the calls on {@code delegate} to {@code recorder}, timestamped by {@code clock}; owns both.
     *
     * @param clock the wall clock of the rows (a fixed clock in tests)
     */
    public RecordingAllocator(DeviceAllocator delegate, TraceRecorder recorder, InstantSource clock) {
        super(delegate);
        this.delegate = delegate;
        this.recorder = Objects.requireNonNull(recorder, "recorder");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** The allocator that does the work. */
    @Override
    public DeviceAllocator delegate() {
        return delegate;
    }

    /** The recorder the calls go to. */
    public TraceRecorder recorder() {
        return recorder;
    }

    /** The number of events passed to the recorder so far (a free counts once, however many rows it writes). */
    public long recordedEvents() {
        lock.lock();
        try {
            return events;
        } finally {
            lock.unlock();
        }
    }

    /** Whether calls are still being recorded (false after a recorder failure or {@link #close()}). */
    public boolean isRecording() {
        return recording;
    }

    /** The recorder's failure that stopped the recording, if any. */
    public Optional<IOException> recordingFailure() {
        lock.lock();
        try {
            return Optional.ofNullable(failure);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes the rows recorded so far to the file (the recorder buffers them), so that a crash loses nothing
     * recorded before this call.
     *
     * @throws IOException the recorder's failure, now or earlier
     */
    public void flush() throws IOException {
        lock.lock();
        try {
            if (failure != null) {
                throw failure;
            }
            if (closed) {
                return;
            }
            try {
                recorder.flush();
            } catch (IOException | RuntimeException e) {
                throw stop(e);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long malloc(long bytes, DeviceStream stream) {
        Objects.requireNonNull(stream, "stream");
        long address;
        try {
            address = delegate.malloc(bytes, stream);
        } catch (DevallocException e) {
            if (bytes > 0 && recording) {
                recordMalloc(DeviceMemory.NULL, bytes, stream.handle(), e);
            }
            throw e;
        }
        if (address != DeviceMemory.NULL && recording) {
            recordMalloc(address, bytes, stream.handle(), null);
        }
        return address;
    }

    @Override
    public void free(long address) {
        free(address, 0, false);
    }

    @Override
    public void free(long address, long allocationId) {
        free(address, allocationId, true);
    }

    /** A free, of the allocation {@code allocationId} where {@code checked} (else of whatever is at the address). */
    private void free(long address, long allocationId, boolean checked) {
        if (address == DeviceMemory.NULL || !recording) {
            delegateFree(address, allocationId, checked);
            return;
        }
        long thread = Thread.currentThread().threadId();
        long generation = beginFree(address, thread);
        if (generation == 0) {
            delegateFree(address, allocationId, checked); // not allocated through this recorder: nothing to record
            return;
        }
        try {
            delegateFree(address, allocationId, checked);
        } catch (RuntimeException | Error e) {
            endFree(address, generation, thread, false);
            throw e;
        }
        endFree(address, generation, thread, true);
    }

    private void delegateFree(long address, long allocationId, boolean checked) {
        if (checked) {
            delegate.free(address, allocationId);
        } else {
            delegate.free(address);
        }
    }

    @Override
    public void recordStream(long address, DeviceStream stream) {
        delegate.recordStream(address, stream);
        if (address == DeviceMemory.NULL || !recording) {
            return;
        }
        long thread = Thread.currentThread().threadId();
        lock.lock();
        try {
            int slot = live.find(address);
            if (recording && slot >= 0) {
                try {
                    long now = now();
                    recorder.recordStream(thread, now, address, live.size[slot], live.stream[slot], stream.handle());
                    events++;
                } catch (IOException | RuntimeException e) {
                    stop(e);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Flushes and closes the recorder, then closes the delegate (and so its device, if the delegate owns it).
     * Idempotent. Allocations still live are freed by the delegate's close and not recorded.
     *
     * @throws UncheckedIOException if the recorder failed, now or earlier (after everything is closed)
     * @throws RuntimeException     the delegate's close failure, with any recorder failure suppressed
     */
    @Override
    public void close() {
        IOException recorderFailure = null;
        lock.lock();
        try {
            if (!closed) {
                closed = true;
                recording = false;
                live.clear();
                try {
                    recorder.close();
                } catch (IOException | RuntimeException e) {
                    stop(e);
                }
                recorderFailure = failure;
            }
        } finally {
            lock.unlock();
        }
        try {
            delegate.close();
        } catch (RuntimeException | Error e) {
            if (recorderFailure != null) {
                e.addSuppressed(recorderFailure);
            }
            throw e;
        }
        if (recorderFailure != null) {
            throw new UncheckedIOException("recording to " + recorder + " failed", recorderFailure);
        }
    }

    @Override
    public String toString() {
        return delegate + ", recorded by " + recorder;
    }

    // ------------------------------------------------------------------------------------------------ recording

    /** A malloc's row: its allocation at {@code address}, or where it threw, its {@code failure}. */
    private void recordMalloc(long address, long bytes, long stream, DevallocException failure) {
        long thread = Thread.currentThread().threadId();
        lock.lock();
        try {
            if (!recording) {
                return;
            }
            try {
                // Inside the try: a clock that throws stops the recording, never replaces the malloc's own outcome.
                long now = now();
                if (failure != null) {
                    recorder.allocateFailure(thread, now, bytes, stream, failure);
                    events++;
                    return;
                }
                int previous = live.find(address);
                if (previous >= 0) {
                    // The allocation that held this address was freed in the delegate (which is why it could hand
                    // the address out again) and its free is not written yet: write it first, for its thread.
                    long freer = live.freer[previous];
                    recorder.free(freer != 0 ? freer : thread, now, address, live.size[previous],
                            live.stream[previous]);
                    events++;
                    live.remove(address, previous);
                }
                live.add(address, bytes, stream);
                recorder.allocate(thread, now, address, bytes, stream);
                events++;
            } catch (IOException | RuntimeException e) {
                stop(e);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Marks the allocation at {@code address} as being freed by {@code thread}; its generation, or 0 if unknown. */
    private long beginFree(long address, long thread) {
        lock.lock();
        try {
            int slot = live.find(address);
            if (!recording || slot < 0) {
                return 0;
            }
            live.freer[slot] = thread;
            return live.generation[slot];
        } finally {
            lock.unlock();
        }
    }

    /**
     * After the delegate's free of the allocation of {@code generation} that {@code thread} began: where it
     * {@code freed} it, writes the free (unless an allocation that reused the address already did); where it refused,
     * the allocation stays live and is no longer being freed by {@code thread}.
     */
    private void endFree(long address, long generation, long thread, boolean freed) {
        lock.lock();
        try {
            int slot = live.find(address, generation);
            if (slot < 0) {
                return;
            }
            if (!freed) {
                if (live.freer[slot] == thread) {
                    live.freer[slot] = 0;
                }
                return;
            }
            if (!recording) {
                return;
            }
            try {
                recorder.free(thread, now(), address, live.size[slot], live.stream[slot]);
                events++;
            } catch (IOException | RuntimeException e) {
                stop(e);
                return;
            }
            live.remove(address, slot);
        } finally {
            lock.unlock();
        }
    }

    /** Wall-clock microseconds, never less than the previous row's. Under {@link #lock}. */
    private long now() {
        Instant t = clock.instant();
        long micros = Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1_000);
        if (micros < lastMicros) {
            micros = lastMicros; // the wall clock stepped back: keep the rows in order
        }
        lastMicros = micros;
        return micros;
    }

    /**
     * Stops recording after the recorder threw {@code e} (an unchecked exception from a custom recorder counts as
     * a failure too, wrapped in an {@link IOException}); returns the failure to report. Under {@link #lock}.
     */
    @SuppressWarnings("ReferenceEquality") // a throwable cannot suppress itself
    private IOException stop(Exception e) {
        IOException io = e instanceof IOException x ? x : new IOException(recorder + " failed", e);
        if (failure == null) {
            failure = io;
            LOG.warn("Recording of {} stopped: the recorder failed; the allocator keeps working unrecorded", delegate,
                    e);
        } else if (failure != e) {
            failure.addSuppressed(e);
        }
        recording = false;
        live.clear();
        return failure;
    }

    /**
     * The live allocations made through this recorder: address → slot in parallel arrays (requested size, stream,
     * generation, freeing thread). A slot's generation is unique over the recorder's life, so a late free can tell
     * its allocation from a newer one at the same address. Not thread-safe: guarded by the recording lock.
     */
    private static final class LiveTable {
        private static final long ABSENT = -1;

        private final LongLongHashMap slots = new LongLongHashMap(1024);
        long[] size = new long[1024];
        long[] stream = new long[1024];
        long[] generation = new long[1024];
        /** The thread freeing the allocation now (between {@code beginFree} and {@code endFree}), or 0. */
        long[] freer = new long[1024];
        private int[] freeSlots = new int[1024];
        private int freeCount;
        private int used;
        private long nextGeneration = 1;

        int find(long address) {
            return (int) slots.get(address, ABSENT);
        }

        /** The slot of the allocation at {@code address} if it is still the one of {@code allocationGeneration}. */
        int find(long address, long allocationGeneration) {
            int slot = find(address);
            return slot >= 0 && generation[slot] == allocationGeneration ? slot : -1;
        }

        void add(long address, long bytes, long onStream) {
            int slot;
            if (freeCount > 0) {
                slot = freeSlots[--freeCount];
            } else {
                if (used == size.length) {
                    int capacity = used * 2;
                    size = Arrays.copyOf(size, capacity);
                    stream = Arrays.copyOf(stream, capacity);
                    generation = Arrays.copyOf(generation, capacity);
                    freer = Arrays.copyOf(freer, capacity);
                }
                slot = used++;
            }
            size[slot] = bytes;
            stream[slot] = onStream;
            generation[slot] = nextGeneration++;
            freer[slot] = 0;
            slots.put(address, slot, ABSENT);
        }

        void remove(long address, int slot) {
            slots.remove(address, ABSENT);
            if (freeCount == freeSlots.length) {
                freeSlots = Arrays.copyOf(freeSlots, freeCount * 2);
            }
            freeSlots[freeCount++] = slot;
        }

        void clear() {
            slots.clear();
            freeCount = 0;
            used = 0;
        }
    }
}
