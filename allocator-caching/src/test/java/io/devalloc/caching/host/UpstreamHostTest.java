package io.devalloc.caching.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.error.UnknownStreamException;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * PyTorch's own scenarios for the pinned-host caching allocator (test/test_cuda.py: {@code test_host_memory_stats},
 * {@code test_caching_pinned_memory}) and the behaviour of spec section 9: power-of-two sizes, LIFO reuse, no split,
 * reuse only after recorded events, {@code empty_cache}.
 */
class UpstreamHostTest {

    private static final long MiB = ByteSize.MiB;

    private SimulatedDevice device;
    private HostCachingArena allocator;

    private HostCachingArena open(EventCompletion completion, String config) {
        device = SimulatedDevice.builder().capacity(ByteSize.GiB).eventCompletion(completion).build();
        allocator = (HostCachingArena) new CachingHostAllocatorProvider().create(device, config);
        return allocator;
    }

    private HostCachingArena open() {
        return open(EventCompletion.IMMEDIATE, "");
    }

    @AfterEach
    void closeAll() {
        if (allocator != null) {
            if (!allocator.isClosed()) {
                HostArenaInvariants.check(allocator);
            }
            allocator.close();
            assertEquals(0, device.liveAllocations(), "close returned every device allocation");
        }
        if (device != null) {
            device.close();
        }
    }

    /** The keys of {@code torch.cuda.host_memory_stats()} that upstream's test checks, all 0. */
    private static Map<String, Long> emptyStats() {
        Map<String, Long> m = new HashMap<>();
        for (String prefix : new String[] {"allocated_bytes", "allocations", "active_bytes", "active_requests"}) {
            for (String suffix : new String[] {"allocated", "current", "freed", "peak"}) {
                m.put(prefix + "." + suffix, 0L);
            }
        }
        m.put("host_alloc_time.count", 0L);
        m.put("host_free_time.count", 0L);
        m.put("num_host_alloc", 0L);
        m.put("num_host_free", 0L);
        return m;
    }

    private void checkStats(Map<String, Long> expected) {
        Map<String, Long> stats = allocator.hostMemoryStats();
        for (Map.Entry<String, Long> e : expected.entrySet()) {
            assertEquals(e.getValue(), stats.get(e.getKey()), e.getKey());
        }
    }

    private static void add(Map<String, Long> m, long n, String... keys) {
        for (String k : keys) {
            m.merge(k, n, Long::sum);
        }
    }

    // ------------------------------------------------------------------------------------ test_host_memory_stats

    @Test
    void testHostMemoryStats() {
        open();
        Map<String, Long> expected = emptyStats();
        allocator.emptyCache();
        checkStats(expected);

        // torch.ones(10 * 1024, pin_memory=True): 40,960 bytes of float32 in a 65,536-byte block.
        long t1 = allocator.malloc(10 * 1024 * 4);
        assertNotEquals(0, t1);
        add(expected, 1, "active_requests.allocated", "active_requests.current", "active_requests.peak",
                "allocations.allocated", "allocations.current", "allocations.peak");
        add(expected, 16 * 1024 * 4, "allocated_bytes.allocated", "allocated_bytes.current", "allocated_bytes.peak",
                "active_bytes.allocated", "active_bytes.current", "active_bytes.peak");
        add(expected, 1, "num_host_alloc", "host_alloc_time.count");
        checkStats(expected);
        assertEquals(65_536, expected.get("allocated_bytes.current"));

        // torch.ones(20 * 1024, pin_memory=True): 81,920 bytes in a 131,072-byte block.
        long t2 = allocator.malloc(20 * 1024 * 4);
        add(expected, 1, "active_requests.allocated", "active_requests.current", "active_requests.peak",
                "allocations.allocated", "allocations.current", "allocations.peak");
        add(expected, 32 * 1024 * 4, "allocated_bytes.allocated", "allocated_bytes.current", "allocated_bytes.peak",
                "active_bytes.allocated", "active_bytes.current", "active_bytes.peak");
        add(expected, 1, "num_host_alloc", "host_alloc_time.count");
        checkStats(expected);
        assertEquals(65_536 + 131_072, expected.get("allocated_bytes.current"));

        // _host_emptyCache with both tensors alive changes nothing.
        allocator.emptyCache();
        checkStats(expected);
        assertEquals(2, device.liveAllocations());

        // reset_peak_host_memory_stats + reset_accumulated_host_memory_stats.
        allocator.resetPeakStats();
        allocator.resetAccumulatedStats();
        Map<String, Long> s = allocator.hostMemoryStats();
        for (String prefix : new String[] {"allocations", "allocated_bytes", "active_requests", "active_bytes"}) {
            assertEquals(0, s.get(prefix + ".allocated"), prefix);
            assertEquals(0, s.get(prefix + ".freed"), prefix);
            assertEquals(s.get(prefix + ".current"), s.get(prefix + ".peak"), prefix);
        }
        assertEquals(2, s.get("allocations.current"));
        assertEquals(0, s.get("num_host_alloc"));
        assertEquals(0, s.get("host_alloc_time.count"));
        assertEquals(0, s.get("host_alloc_time.total"));
        assertEquals(0, s.get("host_alloc_time.max"));
        allocator.free(t1);
        allocator.free(t2);
    }

    @Test
    void hostMemoryStatsHaveUpstreamsKeysSorted() {
        open();
        Set<String> expected = new TreeSet<>();
        for (String prefix : new String[] {"allocated_bytes", "allocations", "active_bytes", "active_requests"}) {
            for (String suffix : new String[] {"allocated", "current", "freed", "peak"}) {
                expected.add(prefix + "." + suffix);
            }
        }
        for (String prefix : new String[] {"host_alloc_time", "host_free_time"}) {
            for (String suffix : new String[] {"total", "max", "min", "count", "avg"}) {
                expected.add(prefix + "." + suffix);
            }
        }
        expected.add("num_host_alloc");
        expected.add("num_host_free");
        Map<String, Long> stats = allocator.hostMemoryStats();
        assertEquals(List.copyOf(expected), List.copyOf(stats.keySet()), "the same 28 keys, in sorted order");
        assertThrows(UnsupportedOperationException.class, () -> stats.put("x", 1L));
    }

    @Test
    void activeRequestsFallWhenABlockIsReusableAndAllocationsWhenItIsReturned() {
        open(EventCompletion.MANUAL, "");
        DeviceStream s = device.createStream();
        long a = allocator.malloc(40_960);
        long b = allocator.malloc(40_960);
        allocator.free(a);
        Map<String, Long> m = allocator.hostMemoryStats();
        assertEquals(1, m.get("active_requests.current"), "a is back on its free list");
        assertEquals(1, m.get("active_requests.freed"));
        assertEquals(65_536, m.get("active_bytes.current"));
        assertEquals(2, m.get("allocations.current"), "a is still owned (cached)");

        assertTrue(allocator.recordEvent(b, s));
        allocator.free(b);
        m = allocator.hostMemoryStats();
        assertEquals(1, m.get("active_requests.current"), "b waits for its event: still active");
        assertEquals(0, allocator.stats().activeAllocations(), "but no longer handed out");

        device.completeStream(s);
        long c = allocator.malloc(10);
        m = allocator.hostMemoryStats();
        assertEquals(1, m.get("active_requests.current"), "b became reusable, c is new (a 16-byte block)");
        assertEquals(3, m.get("allocations.current"));
        allocator.free(c);

        allocator.emptyCache();
        m = allocator.hostMemoryStats();
        assertEquals(0, m.get("allocations.current"));
        assertEquals(3, m.get("allocations.freed"));
        assertEquals(3, m.get("num_host_free"));
        assertEquals(3, m.get("host_free_time.count"));
        assertEquals(m.get("num_host_alloc"), m.get("num_host_free"));
        assertEquals(0, m.get("active_requests.current"));
        assertEquals(0, m.get("active_bytes.current"));
        assertEquals(0, device.liveAllocations());
    }

    @Test
    void activePeaksAreSummedPerSizeClassAsUpstream() {
        open();
        // One 64 KiB block live, freed; then one 128 KiB block live: never two at once, yet the summed peak says 2.
        long a = allocator.malloc(65_536);
        allocator.free(a);
        long b = allocator.malloc(131_072);
        Map<String, Long> m = allocator.hostMemoryStats();
        assertEquals(1, m.get("active_requests.current"));
        assertEquals(2, m.get("active_requests.peak"), "the sum of each class's peak: an upper bound, as upstream");
        assertEquals(65_536 + 131_072, m.get("active_bytes.peak"));
        assertEquals(1, allocator.stats().peakActiveAllocations(), "the common stats keep the exact peak");
        assertEquals(2, m.get("allocations.peak"), "allocations is one counter: exact");
        allocator.free(b);
    }

    // ------------------------------------------------------------------------------------ test_caching_pinned_memory

    @Test
    void testCachingPinnedMemory() {
        open(EventCompletion.MANUAL, "");
        // t = torch.FloatTensor([1]).pin_memory(); del t; again: the allocation is reused.
        long t = allocator.malloc(4);
        long ptr = t;
        allocator.free(t);
        t = allocator.malloc(4);
        assertEquals(ptr, t, "allocation not reused");

        // A non-blocking copy from t on a busy stream records an event; t is deleted while the copy is pending.
        DeviceStream copyStream = device.createStream();
        assertTrue(allocator.recordEvent(t, copyStream));
        allocator.free(t);
        t = allocator.malloc(4);
        assertNotEquals(ptr, t, "allocation re-used too soon");
        assertEquals(1, device.pendingEvents());

        // Once the copy has finished, the block is reusable again (and it was freed after t, so it comes first).
        long second = t;
        allocator.free(second);
        device.completeStream(copyStream);
        assertEquals(ptr, allocator.malloc(4), "reused once the recorded event completed");
        assertEquals(second, allocator.malloc(4));
        assertEquals(2, allocator.hostMemoryStats().get("num_host_alloc"));
    }

    @Test
    void aBlockUsedOnSeveralStreamsWaitsForAllOfThem() {
        open(EventCompletion.MANUAL, "");
        DeviceStream s1 = device.createStream();
        DeviceStream s2 = device.createStream();
        long a = allocator.malloc(1000);
        assertTrue(allocator.recordEvent(a, s1));
        assertTrue(allocator.recordEvent(a, s2));
        assertTrue(allocator.recordEvent(a, s2), "recording a stream twice is harmless");
        allocator.free(a);
        assertEquals(2, device.pendingEvents(), "one event per stream");
        assertEquals(BlockState.PENDING_FREE, stateAt(a));

        device.completeStream(s1);
        long b = allocator.malloc(1000);
        assertNotEquals(a, b, "s2 has not finished");
        device.completeStream(s2);
        long c = allocator.malloc(1000);
        assertEquals(a, c);
        allocator.free(b);
        allocator.free(c);
    }

    @Test
    void eventsAreProcessedOldestFirstStoppingAtTheFirstNotComplete() {
        open(EventCompletion.MANUAL, "");
        DeviceStream slow = device.createStream();
        DeviceStream fast = device.createStream();
        long a = allocator.malloc(4096);
        long b = allocator.malloc(8192);
        allocator.recordEvent(a, slow);
        allocator.recordEvent(b, fast);
        allocator.free(a);
        allocator.free(b);
        device.completeStream(fast);
        long c = allocator.malloc(8192);
        assertNotEquals(b, c, "b's event is done, but queued behind a's, which is not (upstream's single queue)");
        device.completeStream(slow);
        long d = allocator.malloc(8192);
        assertEquals(b, d);
        assertEquals(a, allocator.malloc(4096));
    }

    @Test
    void recordEventAnswersFalseForWhatItDoesNotKnowAndRecordStreamThrows() {
        open();
        DeviceStream s = device.createStream();
        long a = allocator.malloc(1000);
        assertFalse(allocator.recordEvent(0, s));
        assertFalse(allocator.recordEvent(a + 8, s), "interior address");
        assertFalse(allocator.recordEvent(0x1234_0000L, s), "never allocated");
        allocator.recordStream(0, s);
        assertEquals(InvalidFreeException.Reason.UNKNOWN_ADDRESS,
                assertThrows(InvalidFreeException.class, () -> allocator.recordStream(a + 8, s)).reason());
        allocator.free(a);
        assertFalse(allocator.recordEvent(a, s), "a cached block is not a live allocation");
        assertThrows(InvalidFreeException.class, () -> allocator.recordStream(a, s));
    }

    @Test
    void theStreamOfMallocIsIgnored() {
        open(EventCompletion.MANUAL, "");
        DeviceStream s = device.createStream();
        long a = allocator.malloc(1000, s);
        allocator.free(a);
        assertEquals(a, allocator.malloc(1000), "no stream per block: reused from any stream, no event needed");
        assertEquals(0, device.pendingEvents());
    }

    // ------------------------------------------------------------------------------------ sizes, LIFO, no split

    @Test
    void sizesAreRoundedToPowersOfTwo() {
        open();
        long[][] cases = {{1, 1}, {2, 2}, {3, 4}, {1000, 1024}, {40_960, 65_536}, {65_536, 65_536}, {65_537, 131_072},
                {81_920, 131_072}, {5 * MiB, 8 * MiB}, {20 * MiB + 1, 32 * MiB}};
        for (long[] c : cases) {
            long a = allocator.malloc(c[0]);
            SegmentSnapshot seg = segmentAt(a);
            assertEquals(c[1], seg.size(), "a request of " + c[0] + " bytes");
            assertEquals(c[0], seg.blocks().getFirst().requestedSize());
            allocator.free(a);
        }
    }

    @Test
    void freeListsAreLastInFirstOut() {
        open();
        long a = allocator.malloc(3000);
        long b = allocator.malloc(4000);
        long c = allocator.malloc(4096);
        allocator.free(a);
        allocator.free(b);
        allocator.free(c);
        assertEquals(c, allocator.malloc(2049), "the block freed last comes first");
        assertEquals(b, allocator.malloc(4096));
        assertEquals(a, allocator.malloc(3333));
        assertEquals(3, allocator.hostMemoryStats().get("num_host_alloc"));
    }

    @Test
    void blocksAreNeverSplitNorSharedAcrossSizeClasses() {
        open();
        long big = allocator.malloc(MiB);
        allocator.free(big);
        long small = allocator.malloc(512 * 1024);
        assertNotEquals(big, small, "a cached 1 MiB block does not serve a 512 KiB class request");
        long smaller = allocator.malloc(1000);
        assertTrue(smaller < big || smaller >= big + MiB, "nor is it carved");
        long bigger = allocator.malloc(MiB + 1);
        assertNotEquals(big, bigger, "nor does it serve a larger class");
        assertEquals(4, allocator.hostMemoryStats().get("num_host_alloc"));
        assertEquals(MiB, segmentAt(big).size());
        assertEquals(BlockState.FREE, stateAt(big));
        assertEquals(big, allocator.malloc(600_000), "the 1 MiB class is served by the cached block");
    }

    @Test
    void emptyCacheReturnsCachedBlocksOnlyAndAfterEventsTheRest() {
        open(EventCompletion.MANUAL, "");
        DeviceStream s = device.createStream();
        long live = allocator.malloc(100_000);
        long pending = allocator.malloc(200_000);
        long cached = allocator.malloc(300_000);
        allocator.recordEvent(pending, s);
        allocator.free(pending);
        allocator.free(cached);
        assertEquals(3, device.liveAllocations());

        allocator.emptyCache();
        assertEquals(2, device.liveAllocations(), "only the cached block went back");
        assertEquals(BlockState.ALLOCATED, stateAt(live));
        assertEquals(BlockState.PENDING_FREE, stateAt(pending));
        assertEquals(200_000, segmentAt(pending).blocks().getFirst().requestedSize(),
                "a block waiting on its event keeps its request, as PyTorch's snapshot");
        assertEquals(131_072 + 262_144, allocator.stats().reservedBytes());
        assertEquals(1, allocator.hostMemoryStats().get("num_host_free"));

        device.completeStream(s);
        allocator.releaseCachedMemory();
        assertEquals(1, device.liveAllocations(), "empty_cache processes events first");
        assertEquals(131_072, allocator.stats().reservedBytes());
        allocator.free(live);
        allocator.emptyCache();
        AllocatorStats st = allocator.stats();
        assertEquals(0, st.reservedBytes());
        assertEquals(3, st.deviceMallocs());
        assertEquals(3, st.deviceFrees());
        assertEquals(0, device.liveAllocations());
    }

    @Test
    void snapshotShowsOneSegmentPerDeviceAllocation() {
        open(EventCompletion.MANUAL, "");
        DeviceStream s = device.createStream();
        long a = allocator.malloc(3000);
        long b = allocator.malloc(5000);
        long c = allocator.malloc(70_000);
        allocator.recordEvent(b, s);
        allocator.free(b);
        allocator.free(c);
        MemorySnapshot snap = allocator.snapshot();
        snap.checkInvariants();
        assertEquals("caching-host", snap.allocator());
        assertEquals(3, snap.segments().size());
        for (SegmentSnapshot seg : snap.segments()) {
            assertEquals("pinned", seg.pool());
            assertEquals(1, seg.blocks().size());
            assertEquals(seg.address(), seg.blocks().getFirst().address());
            assertEquals(seg.size(), seg.blocks().getFirst().size());
        }
        assertEquals(BlockState.ALLOCATED, stateAt(a));
        assertEquals(3000, segmentAt(a).blocks().getFirst().requestedSize());
        assertEquals(BlockState.PENDING_FREE, stateAt(b));
        assertEquals(BlockState.FREE, stateAt(c));
        assertEquals(4096 + 8192 + 131_072, snap.totalSegmentBytes());
        assertEquals(131_072, snap.stats().largestFreeBlock());
        allocator.free(a);
    }

    // ------------------------------------------------------------------------------------ refusals

    @Test
    void badInputIsRefusedAndChangesNothing() {
        open();
        long a = allocator.malloc(1000);
        AllocatorStats before = allocator.stats();
        Map<String, Long> hostBefore = allocator.hostMemoryStats();
        assertThrows(IllegalArgumentException.class, () -> allocator.malloc(-1));
        assertEquals(InvalidFreeException.Reason.UNKNOWN_ADDRESS,
                assertThrows(InvalidFreeException.class, () -> allocator.free(a + 1)).reason());
        assertEquals(InvalidFreeException.Reason.DOUBLE_FREE,
                assertThrows(InvalidFreeException.class, () -> allocator.free(a, 999_999)).reason());
        assertEquals(before, allocator.stats());
        assertEquals(hostBefore, allocator.hostMemoryStats());
        allocator.free(a);
        InvalidFreeException twice = assertThrows(InvalidFreeException.class, () -> allocator.free(a));
        assertTrue(twice.getMessage().contains(Long.toHexString(a)), twice.getMessage());
        assertEquals(0, allocator.malloc(0));
    }

    @Test
    void requestsTooLargeForTheDeviceAreRefusedBeforeAnyDeviceCall() {
        open();
        long calls = device.counters().mallocCalls();
        for (long size : new long[] {Long.MAX_VALUE, (1L << 62) + 1, 1L << 62, ByteSize.GiB + 1}) {
            OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> allocator.malloc(size));
            assertEquals(OutOfMemoryException.Reason.REQUEST_TOO_LARGE, e.reason());
            assertEquals(size, e.requestedBytes());
        }
        assertEquals(calls, device.counters().mallocCalls());
        assertEquals(4, allocator.stats().outOfMemoryErrors());
        device.setLimitBytes(700 * MiB);
        OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> allocator.malloc(600 * MiB));
        assertEquals(OutOfMemoryException.Reason.DEVICE_EXHAUSTED, e.reason());
        assertTrue(e.getMessage().contains("rounded up to 1.00 GiB") && e.getMessage().contains(
                "pinned_round_threshold_mb"), "a 1 GiB block for 600 MiB: the message points at the option: "
                + e.getMessage());
    }

    @Test
    void aRefusedDeviceMallocIsRetriedAfterReturningTheCache() {
        open();
        device.setLimitBytes(3 * MiB);
        long a = allocator.malloc(MiB);
        long b = allocator.malloc(MiB);
        allocator.free(a);
        allocator.free(b);
        long c = allocator.malloc(2 * MiB);
        assertNotEquals(0, c);
        AllocatorStats s = allocator.stats();
        assertEquals(1, s.allocationRetries());
        assertEquals(2 * MiB, s.reservedBytes(), "the two cached 1 MiB blocks went back to make room");
        assertEquals(2, allocator.hostMemoryStats().get("num_host_free"));

        OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> allocator.malloc(2 * MiB));
        assertEquals(OutOfMemoryException.Reason.DEVICE_EXHAUSTED, e.reason());
        assertEquals(2 * MiB, e.reservedBytes());
        assertEquals(1, allocator.stats().allocationRetries(), "nothing cached: no retry");
        allocator.free(c);
    }

    @Test
    void aDeviceErrorChangesNothing() {
        open(EventCompletion.MANUAL, "");
        AllocatorStats before = allocator.stats();
        device.failNextMallocWith(new DeviceException("injected"));
        assertThrows(DeviceException.class, () -> allocator.malloc(1000));
        assertEquals(before, allocator.stats());
        assertEquals(0, allocator.hostMemoryStats().get("allocations.allocated"));

        long a = allocator.malloc(1000);
        // Issue 15, defect 2: a stream the device never created is refused when recorded (it was accepted before);
        // one destroyed after it was recorded makes the device refuse the event record at the free.
        assertThrows(UnknownStreamException.class, () -> allocator.recordEvent(a, new DeviceStream(0x7777)));
        DeviceStream doomed = device.createStream();
        assertTrue(allocator.recordEvent(a, doomed));
        device.destroyStream(doomed);
        // The device refuses the event record: the free synchronizes the device instead, so the block is reusable
        // at once and never stranded.
        allocator.free(a);
        assertEquals(0, allocator.stats().activeAllocations());
        assertEquals(BlockState.FREE, stateAt(a));
        assertEquals(a, allocator.malloc(1000), "reused");
    }

    @Test
    void closeReturnsEverythingAndLaterCallsAreRefused() {
        open(EventCompletion.MANUAL, "pinned_reserve_segment_size_mb:1");
        DeviceStream s = device.createStream();
        long a = allocator.malloc(100);
        long b = allocator.malloc(2 * MiB);
        long c = allocator.malloc(3 * MiB);
        allocator.recordEvent(c, s);
        allocator.free(c);
        allocator.close();
        assertEquals(0, device.liveAllocations());
        assertTrue(allocator.isClosed());
        allocator.close();
        assertThrows(IllegalStateException.class, () -> allocator.malloc(1));
        assertThrows(IllegalStateException.class, () -> allocator.free(a));
        assertThrows(IllegalStateException.class, () -> allocator.recordEvent(b, s));
        assertThrows(IllegalStateException.class, allocator::emptyCache);
        AllocatorStats st = allocator.stats();
        assertEquals(0, st.reservedBytes());
        assertEquals(0, st.activeAllocations());
        assertEquals(0, allocator.snapshot().segments().size());
        Map<String, Long> m = allocator.hostMemoryStats();
        assertEquals(0, m.get("allocations.current"));
        assertEquals(0, m.get("active_requests.current"));
    }

    // ------------------------------------------------------------------------------------ helpers

    private SegmentSnapshot segmentAt(long address) {
        for (SegmentSnapshot s : allocator.snapshot().segments()) {
            if (address >= s.address() && address < s.end()) {
                return s;
            }
        }
        throw new AssertionError("no segment holds 0x" + Long.toHexString(address));
    }

    private BlockState stateAt(long address) {
        List<BlockState> states = new ArrayList<>();
        segmentAt(address).blocks().stream().filter(b -> b.address() == address).forEach(b -> states.add(b.state()));
        assertEquals(1, states.size());
        return states.getFirst();
    }
}
