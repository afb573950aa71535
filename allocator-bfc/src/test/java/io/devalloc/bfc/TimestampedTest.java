package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Timestamped mode ({@code timestamped:true}): TensorFlow's {@code freed_at_count} / safe frontier expressed with
 * streams and events. Events complete only when the test says so ({@link EventCompletion#MANUAL}), so "the device
 * is still reading" is under the test's control.
 */
class TimestampedTest {

    private static final long MiB = ByteSize.MiB;

    private SimulatedDevice device;
    private BfcArena a;
    private DeviceStream streamA;
    private DeviceStream streamB;

    @BeforeEach
    void open() {
        device = SimulatedDevice.builder().capacity(ByteSize.GiB).eventCompletion(EventCompletion.MANUAL)
                .virtualMemory(false).build();
        a = (BfcArena) new BfcAllocatorProvider(Map.of()).create(device,
                "timestamped:true,memory_limit_mb:1,allow_growth:false,allow_retry_on_failure:false");
        streamA = device.createStream();
        streamB = device.createStream();
    }

    @AfterEach
    void close() {
        BfcArenaInvariants.check(a);
        a.close();
        device.close();
    }

    private BlockState stateAt(long address) {
        for (BlockSnapshot b : a.snapshot().segments().get(0).blocks()) {
            if (b.address() == address) {
                return b.state();
            }
        }
        throw new AssertionError("no block at " + Long.toHexString(address));
    }

    @Test
    void memoryFreedOnAStreamIsReusedAtOnceByItButNotByAnotherStreamUntilTheEventCompletes() {
        long p = a.malloc(256, streamA);
        a.free(p);
        assertEquals(BlockState.PENDING_FREE, stateAt(p));
        assertEquals(p, a.malloc(256, streamA), "the same stream reuses it at once: its work is ordered after");
        a.free(p);
        assertEquals(2, device.pendingEvents());

        long onB = a.malloc(256, streamB);
        assertNotEquals(p, onB, "another stream must not reuse it while stream A may still read it");
        assertEquals(0, a.advanceSafeFrontier(), "nothing completed yet");

        device.completeStream(streamA);
        assertEquals(2, a.advanceSafeFrontier());
        assertEquals(BlockState.FREE, stateAt(p));
        assertEquals(p, a.malloc(256, streamB), "after the event completes, stream B reuses it");
        a.free(onB);
    }

    @Test
    void allocationsAdvanceTheFrontierThemselves() {
        long p = a.malloc(256, streamA);
        long keep = a.malloc(256, streamA);
        a.free(p);
        device.completeStream(streamA);
        // No explicit advanceSafeFrontier(): the allocation checks the events.
        assertEquals(p, a.malloc(256, streamB));
        a.free(keep);
    }

    @Test
    void recordStreamMakesEvenTheAllocatingStreamWait() {
        long p = a.malloc(256, streamA);
        a.recordStream(p, streamB);
        a.free(p);
        assertEquals(2, device.pendingEvents(), "one event on each stream that used it");

        long q1 = a.malloc(256, streamA);
        assertNotEquals(p, q1, "stream B may still read it, so not even stream A reuses it");
        device.completeStream(streamA);
        long q2 = a.malloc(256, streamA);
        assertNotEquals(p, q2, "stream B has not finished");
        assertEquals(0, a.advanceSafeFrontier());

        device.completeStream(streamB);
        assertEquals(p, a.malloc(256, streamA));
        assertEquals(1, a.advanceSafeFrontier());
        a.free(q1);
        a.free(q2);
    }

    @Test
    void freesDoNotMergeUntilSafe() {
        long p1 = a.malloc(256, streamA);
        long p2 = a.malloc(256, streamA);
        a.free(p1);
        a.free(p2);
        List<BfcMemoryDump.ChunkInfo> chunks = a.memoryDump().chunks();
        assertEquals(3, chunks.size(), "two pending frees and the tail, unmerged");
        assertEquals(List.of(1L, 2L, 0L), chunks.stream().map(BfcMemoryDump.ChunkInfo::freedAtCount).toList());
        assertEquals(List.of(false, false, false), chunks.stream().map(BfcMemoryDump.ChunkInfo::inUse).toList());
        BfcArenaInvariants.check(a);

        device.completeStream(streamA);
        assertEquals(2, a.advanceSafeFrontier());
        chunks = a.memoryDump().chunks();
        assertEquals(1, chunks.size(), "merged into one chunk once safe");
        assertEquals(MiB, chunks.get(0).size());
        assertEquals(0, chunks.get(0).freedAtCount());
    }

    @Test
    void theFrontierFollowsFreeOrder() {
        long x = a.malloc(256, streamA);
        long y = a.malloc(256, streamB);
        a.free(x); // count 1, on stream A
        a.free(y); // count 2, on stream B
        device.completeStream(streamB);
        assertEquals(0, a.advanceSafeFrontier(), "free 2 is done, but free 1 is not");
        assertEquals(y, a.malloc(256, streamB), "stream B still reuses its own free");
        device.completeStream(streamA);
        assertEquals(2, a.advanceSafeFrontier());
        assertEquals(x, a.malloc(256, streamB));
    }

    @Test
    void anAllocationThatNeedsPendingMemoryWaitsForItsEventsInsteadOfFailing() {
        long p = a.malloc(MiB, streamA);
        a.free(p);
        assertEquals(1, device.pendingEvents());
        // The whole 1 MiB limit is in the pending chunk: stream B can only be served by waiting for stream A.
        long q = a.malloc(MiB, streamB);
        assertEquals(p, q);
        assertEquals(0, device.pendingEvents(), "the allocation synchronised the pending event");
        assertEquals(0, a.stats().allocationRetries(), "no retry wait was needed");
        assertEquals(0, a.stats().outOfMemoryErrors());
        a.free(q);
        device.completeAll();
        assertEquals(2, a.advanceSafeFrontier());
    }

    @Test
    void tryMallocNeverWaitsForPendingEventsButMallocDoes() {
        long p = a.malloc(MiB, streamA);
        a.free(p);
        int pending = device.pendingEvents();
        assertTrue(pending > 0);
        assertEquals(0, a.tryMalloc(MiB, 256, streamB), "no waiting: the only memory is still pending");
        assertEquals(pending, device.pendingEvents(), "and no event was waited for");
        assertEquals(p, a.malloc(MiB, streamB), "malloc waits for the free's event instead of failing");
        assertEquals(0, device.pendingEvents());
        a.free(p);
    }
}
