package io.devalloc.replay;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.trace.TraceEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * Applies a trace's events to the allocator under replay, one at a time, and counts what it did: allocations and
 * frees by the trace's keys (a {@link KeyMap} from key to our address), the trace's streams as streams created on
 * the device, and, when asked, {@code releaseCachedMemory()} where the recorded program called
 * {@code torch.cuda.empty_cache()}. The rules are the package's (see {@link io.devalloc.replay}).
 *
 * <p>It is the replay's hot loop: {@link #apply} creates no objects and boxes nothing, and allocates only through
 * the allocator and, once per new trace stream, a device stream. One replay owns one dispatch per device it opens
 * (a warm start that reopens the device starts a new one). Not thread-safe: the replaying thread only.
 */
final class EventDispatch {

    /** Live-key map value: the key is not live. */
    static final long MISSING = Long.MIN_VALUE + 1;
    /** Live-key map value: the key's allocation ran out of memory. */
    static final long FAILED = Long.MIN_VALUE;

    private static final TraceEvent.Kind[] KINDS = TraceEvent.Kind.values();

    private final DeviceAllocator allocator;
    private final ObservedDevice device;
    /** Told of every successful allocation, or null. */
    private final Replayer.AllocationHook allocationHook;

    private final KeyMap live = new KeyMap(4096);
    private final LongLongHashMap streamIndex = new LongLongHashMap();
    private final List<DeviceStream> streams = new ArrayList<>();
    private long lastStreamKey;
    private DeviceStream lastStream = DeviceStream.DEFAULT;

    /** The warm state was restored: {@code prealloc} rows are already live. */
    private boolean warmStateRestored;
    private boolean emptyCacheAtSegmentFree;
    /** Reproduce what the recorded allocator did on its own: its cache flushes and its out-of-memory errors. */
    private boolean reproduce;
    /** The previous event was a {@code segment_free} or {@code segment_unmap} row. */
    private boolean inSegmentFreeRun;
    /** Events applied so far: the 1-based number of the one being applied. */
    private long event;
    /** The first events of the recorded allocator's own flushes, ascending, and their rows ({@link FlushRuns}). */
    private long[] allocatorFlushStarts = new long[0];
    private long[] allocatorFlushRows = new long[0];
    private int nextAllocatorFlush;
    /** The device refuses to grow until the allocation the reproduced flush was made for. */
    private boolean armed;

    private long allocs;
    private long frees;
    private long ooms;
    /** The bytes the last allocation that failed with out of memory asked for. */
    private long lastOomRequest;
    private long unknownFrees;
    private long failedFrees;
    private long reallocations;
    private long emptyCacheCalls;
    /** The trace's own out-of-memory failures (PyTorch {@code oom}, RMM {@code allocate failure} rows). */
    private long traceOoms;
    /** The trace's oom rows that carry the request that failed. */
    private long oomRequests;
    private long reproducedFlushes;
    private long reproducedOoms;
    private long oomsNotReproduced;
    private long failedRequestsServed;

    EventDispatch(DeviceAllocator allocator, ObservedDevice device, Replayer.AllocationHook allocationHook) {
        this.allocator = allocator;
        this.device = device;
        this.allocationHook = allocationHook;
    }

    /**
     * Sets how the events that follow are applied: whether the warm state was restored (then {@code prealloc} rows
     * are already live and are skipped; otherwise they are allocated as {@code alloc} rows), and whether the first
     * row of each run of {@code segment_free} or {@code segment_unmap} rows calls {@code releaseCachedMemory()}.
     */
    void start(boolean warmStateRestored, boolean emptyCacheAtSegmentFree) {
        start(warmStateRestored, emptyCacheAtSegmentFree, false, null);
    }

    /**
     * {@link #start(boolean, boolean)}, and how the trace's cache flushes and out-of-memory rows are applied: a run
     * of segment frees that {@code flushes} says the recorded allocator made on its own is reproduced when
     * {@code reproduce} (the device refuses growth until as many segments went: see
     * {@link ObservedDevice#refuseGrowthUntilShrinks}) and left to the allocator otherwise (it flushes where its own
     * pressure makes it); only the other runs, the program's {@code empty_cache()}, call
     * {@code releaseCachedMemory()} (with {@code emptyCacheAtSegmentFree}). An {@code oom} row with its request is
     * reproduced when {@code reproduce} (the request fails on a device that refuses to grow), and asked for again
     * otherwise (freed at once when it succeeds: the program never had it).
     *
     * @param flushes the trace's runs, decided; null when they were not told apart (every run is the program's)
     */
    void start(boolean warmStateRestored, boolean emptyCacheAtSegmentFree, boolean reproduce, FlushRuns flushes) {
        this.warmStateRestored = warmStateRestored;
        this.emptyCacheAtSegmentFree = emptyCacheAtSegmentFree;
        this.reproduce = reproduce;
        if (flushes != null) {
            allocatorFlushStarts = flushes.allocatorStarts();
            allocatorFlushRows = flushes.allocatorRows();
        }
    }

    /** The trace key → our address map (what a warm start fills with the restored blocks). */
    KeyMap live() {
        return live;
    }

    /**
     * Applies one event, given by its columns (the kind as the ordinal of {@link TraceEvent.Kind}), and returns its
     * kind.
     */
    TraceEvent.Kind apply(byte kindOrdinal, long key, long size, long traceStream) {
        TraceEvent.Kind kind = KINDS[kindOrdinal];
        event++;
        switch (kind) {
            case ALLOC -> {
                alloc(key, size, traceStream);
                if (armed) {
                    // A reproduced flush lasts until the allocation it was made for.
                    device.stopRefusing();
                    armed = false;
                }
            }
            case FREE -> free(key);
            case PREALLOC -> {
                if (!warmStateRestored) {
                    alloc(key, size, traceStream);
                }
            }
            case SEGMENT_FREE, SEGMENT_UNMAP -> {
                if (!inSegmentFreeRun) {
                    flushRun();
                }
            }
            case OOM -> {
                traceOoms++;
                if (size > 0) {
                    oomRequests++;
                    failedRequest(size, traceStream);
                }
            }
            default -> {
                // Presegments were seeded (or cannot be); segment allocs and maps are ground truth.
            }
        }
        inSegmentFreeRun = kind == TraceEvent.Kind.SEGMENT_FREE || kind == TraceEvent.Kind.SEGMENT_UNMAP;
        return kind;
    }

    /**
     * The first row of a run of segment frees or unmaps: the recorded allocator's own flush (reproduced, or left to
     * the allocator), or the program's {@code empty_cache()}, which frees whole segments or unmaps expandable ones'
     * free pages.
     */
    private void flushRun() {
        long[] starts = allocatorFlushStarts;
        while (nextAllocatorFlush < starts.length && starts[nextAllocatorFlush] < event) {
            nextAllocatorFlush++;
        }
        if (nextAllocatorFlush < starts.length && starts[nextAllocatorFlush] == event) {
            if (reproduce) {
                device.refuseGrowthUntilShrinks(allocatorFlushRows[nextAllocatorFlush]);
                armed = true;
                reproducedFlushes++;
            }
        } else if (emptyCacheAtSegmentFree) {
            allocator.releaseCachedMemory();
            emptyCacheCalls++;
        }
    }

    /**
     * An {@code oom} row's request, which the recorded allocator could not serve: reproduced on a device that refuses
     * to grow, or asked for again and, when it succeeds, freed at once (the program never had it); a failure then is
     * an out-of-memory error of this replay.
     */
    private void failedRequest(long size, long traceStream) {
        if (reproduce) {
            device.refuseGrowthUntilShrinks(Long.MAX_VALUE);
            try {
                allocator.free(allocator.malloc(size, stream(traceStream)));
                oomsNotReproduced++;
            } catch (OutOfMemoryException e) {
                // The recording's failure, failing here too: an out-of-memory error of this replay as well, so that
                // its count and its first failure say what the note says.
                reproducedOoms++;
                ooms++;
                lastOomRequest = size;
            } finally {
                device.stopRefusing();
                armed = false;
            }
            return;
        }
        long ours = mallocCountingOoms(size, traceStream);
        if (ours != FAILED) {
            failedRequestsServed++;
            allocator.free(ours);
        }
    }

    /** Allocates {@code size} on the trace stream's device stream; {@link #FAILED}, counted, when out of memory. */
    private long mallocCountingOoms(long size, long traceStream) {
        try {
            return allocator.malloc(size, stream(traceStream));
        } catch (OutOfMemoryException e) {
            ooms++;
            lastOomRequest = size;
            return FAILED;
        }
    }

    /** The device stream of a trace stream: 0 is the default stream; others are created on first use. */
    DeviceStream stream(long traceStream) {
        if (traceStream == 0) {
            return DeviceStream.DEFAULT;
        }
        if (traceStream == lastStreamKey) {
            return lastStream;
        }
        long index = streamIndex.get(traceStream, -1);
        DeviceStream s;
        if (index < 0) {
            s = device.createStream();
            streamIndex.put(traceStream, streams.size(), -1);
            streams.add(s);
        } else {
            s = streams.get((int) index);
        }
        lastStreamKey = traceStream;
        lastStream = s;
        return s;
    }

    private void alloc(long key, long size, long traceStream) {
        long ours = mallocCountingOoms(size, traceStream);
        if (ours != FAILED) {
            allocs++;
            if (allocationHook != null) {
                allocationHook.allocated(key, ours);
            }
        }
        long previous = live.put(key, ours, MISSING);
        if (previous != MISSING) {
            reallocations++;
            if (previous != FAILED) {
                allocator.free(previous);
            }
        }
    }

    private void free(long key) {
        long ours = live.remove(key, MISSING);
        if (ours == MISSING) {
            unknownFrees++;
        } else if (ours == FAILED) {
            failedFrees++;
        } else {
            allocator.free(ours);
            frees++;
        }
    }

    /** Successful allocations ({@code alloc} rows, and {@code prealloc} rows when the warm state was not restored). */
    long allocs() {
        return allocs;
    }

    /** Frees replayed. */
    long frees() {
        return frees;
    }

    /** Allocations that failed with out of memory. */
    long ooms() {
        return ooms;
    }

    /** The bytes the last allocation that failed with out of memory asked for (0 before the first). */
    long lastOomRequest() {
        return lastOomRequest;
    }

    /** Frees of a key that was not live (skipped). */
    long unknownFrees() {
        return unknownFrees;
    }

    /** Frees of an allocation that had run out of memory (skipped). */
    long failedFrees() {
        return failedFrees;
    }

    /** Allocations of a key that was still live: the older allocation was freed. */
    long reallocations() {
        return reallocations;
    }

    /** Calls to {@code releaseCachedMemory()} made for runs of {@code segment_free} rows. */
    long emptyCacheCalls() {
        return emptyCacheCalls;
    }

    /** The trace's own out-of-memory rows. */
    long traceOoms() {
        return traceOoms;
    }

    /** The trace's oom rows that carry the request that failed. */
    long oomRequests() {
        return oomRequests;
    }

    /** The recorded allocator's own cache flushes reproduced (a warm replay). */
    long reproducedFlushes() {
        return reproducedFlushes;
    }

    /** The trace's out-of-memory errors that failed here too (a warm replay). */
    long reproducedOoms() {
        return reproducedOoms;
    }

    /** The trace's out-of-memory errors that this replay's allocator served from its cache (a warm replay). */
    long oomsNotReproduced() {
        return oomsNotReproduced;
    }

    /** Requests of the trace's {@code oom} rows that this replay served (not a warm replay). */
    long failedRequestsServed() {
        return failedRequestsServed;
    }

    /** Trace streams other than the default one, each created on the device. */
    int streamCount() {
        return streams.size();
    }
}
