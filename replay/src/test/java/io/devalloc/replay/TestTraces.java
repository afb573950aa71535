package io.devalloc.replay;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Hand-written traces for tests: a builder of events, and a {@link TraceSource} over them. */
public final class TestTraces {

    public static final long MiB = 1L << 20;
    // The addresses of the caching module's hand-written warm trace (TraceReplayerTest), about 2^36.
    public static final long A = 0x10_0000_0000L;
    public static final long B = A + 0x4000_0000L;
    public static final long C = A + 0x8000_0000L;
    public static final long D = A + 0xC000_0000L;

    private TestTraces() {
    }

    /**
     * The caching module's sample warm trace (without its free_requested and snapshot rows, which readers drop):
     * two presegments, three live blocks whose sizes need each inference rule, then two new segments, one on stream 7.
     */
    public static Builder warmSample() {
        return pytorch()
                .presegment(A, 20 * MiB)
                .presegment(B, 2 * MiB)
                // Rounds to 5,000,192; the next live block starts 766,976 B later (<= 1 MiB): an unsplit tail.
                .prealloc(A, 5_000_000)
                // Ends at A + 7.5 MiB, then 12.5 MiB free; the first traced alloc in it lands at A + 8 MiB.
                .prealloc(A + 5_767_168, 2 * MiB)
                .prealloc(B, 1000)
                .alloc(A + 8 * MiB, 4 * MiB)
                .free(A + 8 * MiB)
                .alloc(B + 1024, 100)
                .segmentAlloc(C, 30 * MiB)
                .alloc(C, 31_000_000)
                .segmentAlloc(D, 2 * MiB, 7)
                .alloc(D, 1000, 7)
                .free(A)
                .free(D, 7);
    }

    /** One 30 MiB segment, emptied and released by empty_cache, then a 2 MiB one, released the same way. */
    public static Builder emptyCacheSample() {
        return pytorch()
                .segmentAlloc(A, 30 * MiB)
                .alloc(A, 30 * MiB)
                .free(A)
                .segmentFree(A, 30 * MiB)
                .segmentAlloc(B, 2 * MiB)
                .alloc(B, 1000)
                .free(B)
                .segmentFree(B, 2 * MiB);
    }

    public static Builder pytorch() {
        return new Builder(TraceFormat.PYTORCH_CSV);
    }

    public static Builder of(TraceFormat format) {
        return new Builder(format);
    }

    /** Builds a list of events; line numbers start at 2 (after a header line). */
    public static final class Builder {
        private final TraceFormat format;
        private final List<TraceEvent> events = new ArrayList<>();

        private Builder(TraceFormat format) {
            this.format = format;
        }

        public Builder add(Kind kind, long key, long size, long stream) {
            events.add(new TraceEvent(kind, key, size, stream, 0, events.size() + 2));
            return this;
        }

        public Builder alloc(long key, long size) {
            return add(Kind.ALLOC, key, size, 0);
        }

        public Builder alloc(long key, long size, long stream) {
            return add(Kind.ALLOC, key, size, stream);
        }

        public Builder free(long key) {
            return add(Kind.FREE, key, 0, 0);
        }

        public Builder free(long key, long stream) {
            return add(Kind.FREE, key, 0, stream);
        }

        public Builder presegment(long address, long size) {
            return add(Kind.PRESEGMENT, address, size, 0);
        }

        public Builder prealloc(long address, long size) {
            return add(Kind.PREALLOC, address, size, 0);
        }

        public Builder segmentAlloc(long address, long size) {
            return add(Kind.SEGMENT_ALLOC, address, size, 0);
        }

        public Builder segmentAlloc(long address, long size, long stream) {
            return add(Kind.SEGMENT_ALLOC, address, size, stream);
        }

        public Builder segmentFree(long address, long size) {
            return add(Kind.SEGMENT_FREE, address, size, 0);
        }

        public Builder segmentMap(long address, long size) {
            return add(Kind.SEGMENT_MAP, address, size, 0);
        }

        public Builder segmentUnmap(long address, long size) {
            return add(Kind.SEGMENT_UNMAP, address, size, 0);
        }

        public Builder oom(long size) {
            return add(Kind.OOM, 0, size, 0);
        }

        public List<TraceEvent> events() {
            return List.copyOf(events);
        }

        public int size() {
            return events.size();
        }

        /** A source that reads the events as built now, as often as asked. */
        public TraceSource source() {
            List<TraceEvent> snapshot = List.copyOf(events);
            return () -> new ListTraceReader(format, snapshot);
        }
    }

    /** The warm-start capability of a caching allocator (what a replay reaches through {@code unwrap}). */
    public static PyTorchStateRestore restore(DeviceAllocator allocator) {
        return allocator.unwrap(PyTorchStateRestore.class).orElseThrow();
    }

    /** PyTorch's sizing rules with the default settings: a caching allocator's, on a small simulated device. */
    public static PyTorchStateRestore defaultCachingRules() {
        return restore(new CachingAllocatorProvider(Map.of())
                .create(SimulatedDevice.ofCapacity(1L << 30), ""));
    }
}
