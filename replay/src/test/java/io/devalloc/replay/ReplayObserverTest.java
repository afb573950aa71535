package io.devalloc.replay;

import static io.devalloc.replay.TestTraces.MiB;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.observe.DeviceCall;
import io.devalloc.trace.TraceFormat;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A replay watched as an application watches its allocator: the replaying pass once, the pass to the peak never. */
class ReplayObserverTest {

    /** Counts what it is told and remembers the allocators it saw. */
    static final class Watcher implements ReplayObserver, AllocatorListener {
        final Map<DeviceCall, Integer> calls = new EnumMap<>(DeviceCall.class);
        final Map<DeviceCall, Long> bytes = new EnumMap<>(DeviceCall.class);
        int ooms;
        int retries;
        long released;
        final List<DeviceAllocator> opened = new ArrayList<>();
        final List<DeviceAllocator> finished = new ArrayList<>();
        long allocatedAtFinish = -1;
        int freesAtFinish = -1;

        @Override
        public AllocatorListener listener(DeviceDescriptor device) {
            return this;
        }

        @Override
        public void opened(DeviceAllocator allocator) {
            opened.add(allocator);
        }

        @Override
        public void finished(DeviceAllocator allocator) {
            finished.add(allocator);
            assertFalse(allocator.isClosed(), "finished is told before the allocator closes");
            allocatedAtFinish = allocator.stats().allocatedBytes();
            freesAtFinish = count(DeviceCall.FREE);
        }

        @Override
        public void deviceCall(DeviceCall call, long address, long size, long nanos, boolean succeeded) {
            assertTrue(nanos >= 0);
            if (succeeded) {
                calls.merge(call, 1, Integer::sum);
                bytes.merge(call, size, Long::sum);
            }
        }

        @Override
        public void outOfMemory(long requestedBytes, OutOfMemoryException error) {
            ooms++;
        }

        @Override
        public void allocationRetried(long requestedBytes, int attempt, RetryCause cause) {
            retries++;
        }

        @Override
        public void cacheReleased(long bytes, long nanos) {
            released += bytes;
        }

        int count(DeviceCall call) {
            return calls.getOrDefault(call, 0);
        }
    }

    @Test
    void theReplayingPassIsWatchedOnceAndTheFiguresAgreeWithTheResult() throws IOException {
        TestTraces.Builder t = TestTraces.of(TraceFormat.RMM_CSV)
                .alloc(0x1000, 30 * MiB)
                .alloc(0x2000, 30 * MiB)
                .alloc(0x3000, 30 * MiB) // does not fit on 64 MiB: an out-of-memory error
                .free(0x1000)
                .alloc(0x4000, 1000)
                .free(0x2000);
        Watcher w = new Watcher();
        ReplayOutcome o = new Replayer(ReplayOptions.defaults().withAllocator("direct").withDevice("sim:64MiB"))
                .observer(w).replay("t", t.source());
        ReplayResult r = o.result();
        assertAll(
                () -> assertEquals(1, r.ooms()),
                () -> assertEquals(1, w.ooms),
                () -> assertEquals(r.deviceMallocs(), w.count(DeviceCall.MALLOC)),
                () -> assertEquals(r.deviceFrees(), w.freesAtFinish),
                // The allocator's close frees what is still live: a real device call, told too.
                () -> assertEquals(r.deviceFrees() + 1, w.count(DeviceCall.FREE)),
                () -> assertEquals(1, w.opened.size()),
                () -> assertEquals(1, w.finished.size()),
                () -> assertSame(w.opened.get(0), w.finished.get(0)),
                // 0x4000 is still live at the end: direct sizes it to the simulator's 512 B granularity.
                () -> assertEquals(1024, w.allocatedAtFinish));
    }

    @Test
    void withoutAnObserverNothingIsWrapped() throws IOException {
        TestTraces.Builder t = TestTraces.of(TraceFormat.RMM_CSV).alloc(0x1000, 1000).free(0x1000);
        Watcher w = new Watcher();
        ReplayOutcome watched = new Replayer(ReplayOptions.defaults()).observer(w).replay("t", t.source());
        ReplayOutcome plain = new Replayer(ReplayOptions.defaults()).replay("t", t.source());
        assertEquals(plain.result().deviceMallocs(), watched.result().deviceMallocs());
        assertEquals(plain.result().peakReservedBytes(), watched.result().peakReservedBytes());
        assertEquals(1, w.count(DeviceCall.MALLOC));
        assertEquals(2 * MiB, w.bytes.get(DeviceCall.MALLOC), "caching's first segment for a small request");
    }

    @Test
    void cachingTellsItsRetryAndTheCacheItReleasedThroughTheReplaysConfigurationText() throws IOException {
        TestTraces.Builder t = TestTraces.of(TraceFormat.RMM_CSV)
                .alloc(0x1000, 20 * MiB)
                .alloc(0x2000, 20 * MiB)
                .free(0x1000)
                .alloc(0x3000, 40 * MiB) // misses the cache, fails, releases the free 20 MiB segment, retries
                .free(0x3000)
                .free(0x2000);
        Watcher w = new Watcher();
        ReplayOutcome o = new Replayer(ReplayOptions.defaults().withDevice("sim:64MiB")
                .withConf("max_split_size_mb:1024")).observer(w).replay("t", t.source());
        ReplayResult r = o.result();
        assertAll(
                () -> assertEquals(0, r.ooms()),
                () -> assertEquals(1, r.allocRetries()),
                () -> assertEquals(r.allocRetries(), w.retries),
                () -> assertEquals(20 * MiB, w.released),
                () -> assertEquals(r.deviceMallocs(), w.count(DeviceCall.MALLOC)));
    }
}
