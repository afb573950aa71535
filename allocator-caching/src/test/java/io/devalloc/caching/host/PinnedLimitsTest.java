package io.devalloc.caching.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.ForwardingDeviceMemory;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.StderrCaptureAccess;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * PyTorch 2.10&ndash;2.13's pinned limits ({@code upstream-2026.md} section 3): {@code pinned_max_round_threshold_mb}
 * (pytorch#171662), {@code pinned_max_cached_size_mb}, their precedence, and pytorch#192722's bucket scan, with the
 * spec's examples (MB there is MiB, upstream's {@code kMB}).
 */
class PinnedLimitsTest {

    private static final long MiB = ByteSize.MiB;

    private SimulatedDevice device;
    private HostCachingArena allocator;

    private HostCachingArena open(EventCompletion completion, String config) {
        device = SimulatedDevice.builder().capacity(4 * ByteSize.GiB).eventCompletion(completion).build();
        allocator = (HostCachingArena) new CachingHostAllocatorProvider().create(device, config);
        return allocator;
    }

    private HostCachingArena open(String config) {
        return open(EventCompletion.IMMEDIATE, config);
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

    private long stat(String key) {
        return allocator.hostMemoryStats().get(key);
    }

    /** The size of the block at {@code address}: its own device allocation, or its piece of the reserve. */
    private long blockSize(long address) {
        for (SegmentSnapshot s : allocator.snapshot().segments()) {
            for (var b : s.blocks()) {
                if (b.address() == address) {
                    return b.size();
                }
            }
        }
        throw new AssertionError("no block at 0x" + Long.toHexString(address));
    }

    private BlockState stateAt(long address) {
        for (SegmentSnapshot s : allocator.snapshot().segments()) {
            for (var b : s.blocks()) {
                if (b.address() == address) {
                    return b.state();
                }
            }
        }
        throw new AssertionError("no block at 0x" + Long.toHexString(address));
    }

    // ----------------------------------------------------------------------------------- pinned_max_round_threshold_mb

    @Test
    void aRequestAboveTheRoundThresholdIsPinnedAtItsOwnSize() {
        open("pinned_max_round_threshold_mb:64");
        long a = allocator.malloc(80 * MiB);
        assertEquals(80 * MiB, blockSize(a), "80 MiB pinned, not 128 MiB");
        assertEquals(80 * MiB, device.counters().bytesInUse(), "what the device holds");
        assertEquals(80 * MiB, stat("allocated_bytes.current"));
        assertEquals(80 * MiB, stat("active_bytes.current"));
        long b = allocator.malloc(64 * MiB);
        assertEquals(64 * MiB, blockSize(b), "at the threshold: rounded (a power of two already)");
        long c = allocator.malloc(40 * MiB);
        assertEquals(64 * MiB, blockSize(c), "below it: rounded to a power of two as always");
        long d = allocator.malloc(64 * MiB + 1);
        assertEquals(64 * MiB + 1, blockSize(d), "one byte above: unrounded");
        assertEquals((80 + 64 + 64 + 64) * MiB + 1, allocator.stats().reservedBytes());
        for (long p : new long[] {a, b, c, d}) {
            allocator.free(p);
        }
        assertEquals(4, stat("allocations.current"), "below the (unlimited) cached size every block is cached");
    }

    @Test
    void withoutTheKeysEverythingIsRoundedAsBefore() {
        open("");
        long a = allocator.malloc(80 * MiB);
        assertEquals(128 * MiB, blockSize(a));
        allocator.free(a);
        assertEquals(1, stat("allocations.current"));
    }

    @Test
    void roundThresholdZeroRoundsNothing() {
        open("pinned_max_round_threshold_mb:0");
        long a = allocator.malloc(1000);
        long b = allocator.malloc(3);
        assertEquals(1000, blockSize(a), "every request above 0 bytes is above a threshold of 0");
        assertEquals(3, blockSize(b));
        allocator.free(a);
        allocator.free(b);
        assertEquals(a, allocator.malloc(999), "a cached 1000-byte block serves a smaller request of its bucket");
        assertNotEquals(b, allocator.malloc(4), "but a 3-byte block never serves 4 bytes");
    }

    // ------------------------------------------------------------------------------------ pinned_max_cached_size_mb

    @Test
    void aFreedBlockAboveTheCachedSizeGoesBackToTheDeviceAtOnce() {
        open("pinned_max_cached_size_mb:32");
        long a = allocator.malloc(64 * MiB);
        assertEquals(64 * MiB, blockSize(a), "above the cached size: not rounded either");
        assertEquals(1, stat("allocations.current"));
        allocator.free(a);
        Map<String, Long> m = allocator.hostMemoryStats();
        assertEquals(0, m.get("allocated_bytes.current"), "released right after the free");
        assertEquals(0, m.get("allocations.current"));
        assertEquals(1, m.get("allocations.freed"));
        assertEquals(64 * MiB, m.get("allocated_bytes.freed"));
        assertEquals(1, m.get("num_host_free"), "a host free, as upstream");
        assertEquals(1, m.get("host_free_time.count"));
        assertEquals(0, m.get("active_requests.current"));
        assertEquals(0, m.get("active_bytes.current"));
        assertEquals(0, device.liveAllocations());
        AllocatorStats s = allocator.stats();
        assertEquals(0, s.reservedBytes());
        assertEquals(1, s.deviceFrees());

        long b = allocator.malloc(20 * MiB);
        assertEquals(32 * MiB, blockSize(b), "at most the cached size: rounded, and cached when freed");
        allocator.free(b);
        assertEquals(1, stat("allocations.current"));
        assertEquals(b, allocator.malloc(17 * MiB));
        assertEquals(1, allocator.stats().deviceFrees());
        allocator.free(b);
    }

    @Test
    void asUpstreamTheRequestIsComparedSoARoundedBlockCanExceedTheLimit() {
        open("pinned_max_cached_size_mb:24");
        long a = allocator.malloc(20 * MiB);
        assertEquals(32 * MiB, blockSize(a), "20 MiB <= 24 MiB: rounded to 32 MiB");
        allocator.free(a);
        assertEquals(0, stat("allocations.current"), "and the 32 MiB block is above the limit: not cached");
        assertEquals(1, stat("num_host_free"));
    }

    @Test
    void cachedSizeZeroCachesNothing() {
        open("pinned_max_cached_size_mb:0");
        for (int i = 0; i < 3; i++) {
            long a = allocator.malloc(1000);
            assertEquals(1000, blockSize(a), "above a cached size of 0: unrounded");
            allocator.free(a);
        }
        assertEquals(3, stat("num_host_alloc"), "every request is a device malloc");
        assertEquals(3, stat("num_host_free"));
        assertEquals(0, device.liveAllocations());
    }

    @Test
    void aBlockAboveTheCachedSizeWaitsForItsEventsThenGoesBackToTheDevice() {
        open(EventCompletion.MANUAL, "pinned_max_cached_size_mb:32");
        DeviceStream copy = device.createStream();
        long a = allocator.malloc(64 * MiB);
        assertTrue(allocator.recordEvent(a, copy));
        allocator.free(a);
        assertEquals(BlockState.PENDING_FREE, stateAt(a));
        assertEquals(1, device.liveAllocations(), "not before its event completed");
        assertEquals(64 * MiB, stat("allocated_bytes.current"));
        assertEquals(1, stat("active_requests.current"));

        allocator.emptyCache();
        long b = allocator.malloc(1000);
        assertEquals(2, device.liveAllocations(), "emptyCache and a malloc processed the events: still pending");
        assertEquals(0, stat("num_host_free"));

        device.completeStream(copy);
        assertEquals(2, device.liveAllocations(), "completion alone frees nothing: the next allocation looks");
        long c = allocator.malloc(1000);
        assertEquals(2, device.liveAllocations(), "b and c; a went back to the device");
        assertEquals(1, stat("num_host_free"));
        assertEquals(2 * 1024, stat("allocated_bytes.current"));
        assertEquals(2, stat("active_requests.current"));
        assertEquals(2 * 1024, stat("active_bytes.current"));
        allocator.free(b);
        allocator.free(c);
    }

    @Test
    void aPendingBlockAboveTheCachedSizeIsReleasedByEmptyCacheOnceComplete() {
        open(EventCompletion.MANUAL, "pinned_max_cached_size_mb:32");
        DeviceStream copy = device.createStream();
        long a = allocator.malloc(33 * MiB);
        allocator.recordEvent(a, copy);
        allocator.free(a);
        device.completeStream(copy);
        allocator.emptyCache();
        assertEquals(0, device.liveAllocations());
        assertEquals(1, stat("num_host_free"));
        assertEquals(0, stat("allocations.current"));
    }

    @Test
    void theCachedSizeTakesPrecedenceOverALargerRoundThreshold() {
        open("pinned_max_round_threshold_mb:128,pinned_max_cached_size_mb:32");
        long a = allocator.malloc(40 * MiB);
        assertEquals(40 * MiB, blockSize(a), "below the threshold but above the cached size: never rounded up");
        long b = allocator.malloc(20 * MiB);
        assertEquals(32 * MiB, blockSize(b), "below both: rounded");
        allocator.free(a);
        allocator.free(b);
        assertEquals(1, stat("allocations.current"), "the 40 MiB block went back, the 32 MiB one is cached");
    }

    @Test
    void devallocsRoundThresholdCombinesWithTheCachedSize() {
        open("pinned_round_threshold_mb:16,pinned_max_cached_size_mb:64");
        long a = allocator.malloc(21_390_950);
        assertEquals(22 * MiB, blockSize(a), "devalloc's 2 MiB multiple below the cached size");
        long b = allocator.malloc(65 * MiB);
        assertEquals(65 * MiB, blockSize(b), "above the cached size: unrounded (not 66 MiB)");
        long c = allocator.malloc(9 * MiB);
        assertEquals(16 * MiB, blockSize(c));
        allocator.free(a);
        allocator.free(b);
        allocator.free(c);
        assertEquals(2, stat("allocations.current"));
        assertEquals(1, stat("num_host_free"));
        assertEquals(a, allocator.malloc(21 * MiB), "the 22 MiB class is still served by exact size");
        assertEquals(c, allocator.malloc(12 * MiB));
    }

    // ------------------------------------------------------------------------------------ pytorch#192722's scan

    @Test
    void aRequestNeverGetsASmallerBlockOfItsBucket() {
        // The PR's example: threshold 128, cached 1024; 150 MiB and 200 MiB are both in bucket 28 (128, 256] MiB.
        open("pinned_max_round_threshold_mb:128,pinned_max_cached_size_mb:1024");
        long small = allocator.malloc(150 * MiB);
        allocator.free(small);
        long big = allocator.malloc(200 * MiB);
        assertNotEquals(small, big, "the cached 150 MiB block must not serve 200 MiB (upstream's heap overflow)");
        assertEquals(200 * MiB, blockSize(big));
        assertEquals(2, stat("num_host_alloc"));
        assertEquals(small, allocator.malloc(140 * MiB), "the 150 MiB block still serves what fits in it");
        allocator.free(big);
        HostArenaInvariants.check(allocator);
    }

    @Test
    void aRequestTakesALargerCachedBlockOfItsBucketAndStatsCountTheBlock() {
        open("pinned_max_round_threshold_mb:128,pinned_max_cached_size_mb:1024");
        long large = allocator.malloc(250 * MiB);
        allocator.free(large);
        Map<String, Long> before = allocator.hostMemoryStats();
        long p = allocator.malloc(200 * MiB);
        assertEquals(large, p, "a cached 250 MiB block of the same bucket fits");
        assertEquals(1, stat("num_host_alloc"));
        Map<String, Long> m = allocator.hostMemoryStats();
        assertEquals(250 * MiB, m.get("active_bytes.current"), "the block's size, not the request's");
        assertEquals(250 * MiB, m.get("active_bytes.allocated") - before.get("active_bytes.allocated"));
        AllocatorStats s = allocator.stats();
        assertEquals(200 * MiB, s.requestedBytes());
        assertEquals(250 * MiB, s.allocatedBytes());
        allocator.free(p);
        m = allocator.hostMemoryStats();
        assertEquals(0, m.get("active_bytes.current"), "balanced: increased and decreased by the block's size");
        assertEquals(m.get("active_bytes.allocated"), m.get("active_bytes.freed"));
        assertEquals(0, allocator.stats().requestedBytes());
    }

    @Test
    void amongFittingBlocksTheMostRecentlyFreedComesFirst() {
        open("pinned_max_round_threshold_mb:128,pinned_max_cached_size_mb:1024");
        long b220 = allocator.malloc(220 * MiB);
        long b250 = allocator.malloc(250 * MiB);
        long b150 = allocator.malloc(150 * MiB);
        allocator.free(b220);
        allocator.free(b250);
        allocator.free(b150);
        // Most recent first: 150 (too small), then 250 (fits): LIFO, not best fit (which would pick 220).
        assertEquals(b250, allocator.malloc(200 * MiB));
        assertEquals(b220, allocator.malloc(200 * MiB), "then the next most recent that fits");
        assertEquals(b150, allocator.malloc(129 * MiB), "the skipped block kept its place");
        long fresh = allocator.malloc(200 * MiB);
        assertNotEquals(0, fresh);
        assertEquals(4, stat("num_host_alloc"), "only the last request missed");
        assertEquals(4, stat("active_requests.current"));
        assertEquals((220 + 250 + 150 + 200) * MiB, stat("active_bytes.current"));
    }

    @Test
    void theScanKeepsTheOrderOfTheBlocksItSkips() {
        open("pinned_max_round_threshold_mb:128");
        long a = allocator.malloc(130 * MiB);
        long b = allocator.malloc(140 * MiB);
        long c = allocator.malloc(250 * MiB);
        long d = allocator.malloc(160 * MiB);
        long e = allocator.malloc(170 * MiB);
        for (long p : new long[] {a, b, c, d, e}) {
            allocator.free(p);
        }
        assertEquals(c, allocator.malloc(200 * MiB), "e and d are skipped");
        assertEquals(e, allocator.malloc(135 * MiB), "then e, d, b, a: still in the order they were freed");
        assertEquals(d, allocator.malloc(135 * MiB));
        assertEquals(b, allocator.malloc(135 * MiB));
        assertEquals(a, allocator.malloc(129 * MiB));
        assertEquals(5, stat("num_host_alloc"));
    }

    // ------------------------------------------------------------------------------------ the reserve segment

    @Test
    void reservePiecesAboveTheCachedSizeAreNeverFreedAndStayCached() {
        open("pinned_reserve_segment_size_mb:256,pinned_max_cached_size_mb:32");
        long a = allocator.malloc(50 * MiB + 1);
        assertEquals(1, device.liveAllocations(), "one device allocation: the reserve");
        assertEquals(50 * MiB + 4096, blockSize(a), "unrounded; the piece's extent is 4 KiB-rounded, as upstream");
        allocator.free(a);
        assertEquals(1, device.liveAllocations());
        assertEquals(BlockState.FREE, stateAt(a), "upstream's free_block returns early for the reserve; kept here");
        Map<String, Long> m = allocator.hostMemoryStats();
        assertEquals(0, m.get("num_host_free"));
        assertEquals(1, m.get("allocations.current"));
        assertEquals(0, m.get("active_requests.current"));
        assertEquals(a, allocator.malloc(50 * MiB), "so it is reused");
        allocator.free(a);

        // A block of its own (the reserve has 206 MiB - 4 KiB left): above the limit, it goes back to the device.
        long own = allocator.malloc(300 * MiB);
        assertEquals(2, device.liveAllocations());
        allocator.free(own);
        assertEquals(1, device.liveAllocations());
        assertEquals(1, stat("num_host_free"));
        allocator.emptyCache();
        assertEquals(1, device.liveAllocations(), "emptyCache keeps the reserve's pieces");
        assertEquals(256 * MiB, allocator.stats().reservedBytes());
    }

    // ------------------------------------------------------------------------------------ device failure

    @Test
    void whenTheDeviceRefusesTheFreeTheBlockIsCachedInstead() {
        device = SimulatedDevice.ofCapacity(ByteSize.GiB);
        RefusingFrees refusing = new RefusingFrees(device);
        allocator = (HostCachingArena) CachingHostAllocatorProvider.create(refusing,
                CachingHostOptions.parse("pinned_max_cached_size_mb:1"));
        long a = allocator.malloc(2 * MiB);
        refusing.refuse = true;
        allocator.free(a);
        assertEquals(0, allocator.stats().activeAllocations(), "the free itself succeeded");
        assertEquals(BlockState.FREE, stateAt(a), "cached, not lost");
        assertEquals(1, stat("allocations.current"));
        assertEquals(0, stat("num_host_free"));
        HostArenaInvariants.check(allocator);
        assertThrows(DeviceException.class, allocator::emptyCache, "emptyCache tries again and reports it");
        refusing.refuse = false;
        allocator.emptyCache();
        assertEquals(0, device.liveAllocations());
        assertEquals(1, stat("num_host_free"));
    }

    /** pinned_free_catch_all:False (upstream's default): a device failure inside free is logged and rethrown. */
    @Test
    void withoutCatchAllADeviceFailureInFreeIsThrownAndTheBlockStaysLive() {
        device = SimulatedDevice.ofCapacity(ByteSize.GiB);
        RefusingFrees failing = new RefusingFrees(device);
        allocator = (HostCachingArena) CachingHostAllocatorProvider.create(failing, CachingHostOptions.parse(""));
        long a = allocator.malloc(MiB);
        allocator.recordStream(a, device.createStream());
        failing.failEvents = true;
        assertThrows(DeviceException.class, () -> allocator.free(a));
        assertEquals(1, allocator.stats().activeAllocations(), "nothing changed");
        failing.failEvents = false;
        allocator.free(a);
        assertEquals(0, allocator.stats().activeAllocations());
        HostArenaInvariants.check(allocator);
    }

    /** pinned_free_catch_all:True: the failure is logged and swallowed; the block stays allocated (not reused). */
    @Test
    void withCatchAllADeviceFailureInFreeIsSwallowed() {
        device = SimulatedDevice.ofCapacity(ByteSize.GiB);
        RefusingFrees failing = new RefusingFrees(device);
        allocator = (HostCachingArena) CachingHostAllocatorProvider.create(failing,
                CachingHostOptions.parse("pinned_free_catch_all:True"));
        assertTrue(allocator.snapshot().settings().get("pinned_free_catch_all") instanceof Boolean b && b);
        long a = allocator.malloc(MiB);
        allocator.recordStream(a, device.createStream());
        failing.failEvents = true;
        String err = StderrCaptureAccess.during(() -> allocator.free(a));
        assertTrue(err.contains("Suppressed exception in pinned allocator free()"), err);
        assertEquals(1, allocator.stats().activeAllocations(), "as upstream's early exit: not freed");
        long b = allocator.malloc(MiB);
        assertTrue(b != a, "the block whose free failed is not handed out again");
        failing.failEvents = false;
        allocator.free(b);
        HostArenaInvariants.check(allocator);
    }

    // ------------------------------------------------------------------------------------ configuration

    @Test
    void aBadValueCreatesNoAllocatorAndTouchesNoDevice() {
        device = SimulatedDevice.ofCapacity(ByteSize.GiB);
        for (String config : new String[] {"pinned_max_cached_size_mb:-1", "pinned_max_round_threshold_mb:1.5",
                "pinned_round_threshold_mb:16,pinned_max_round_threshold_mb:64"}) {
            assertThrows(InvalidConfigurationException.class,
                    () -> new CachingHostAllocatorProvider().create(device, config), config);
        }
        assertEquals(0, device.counters().mallocCalls());
        assertEquals(0, device.liveAllocations());
    }

    /** Delegates to a simulated device; refuses frees while {@link #refuse} is set. */
    private static final class RefusingFrees extends ForwardingDeviceMemory {
        boolean refuse;
        boolean failEvents;

        RefusingFrees(SimulatedDevice d) {
            super(d);
        }

        @Override
        public void free(long address) {
            if (refuse) {
                throw new DeviceException("injected: free refused");
            }
            super.free(address);
        }

        @Override
        public void recordEvent(DeviceEvent event, DeviceStream stream) {
            if (failEvents) {
                throw new DeviceException("injected: recordEvent refused");
            }
            super.recordEvent(event, stream);
        }

        @Override
        public void synchronize() {
            if (failEvents) {
                throw new DeviceException("injected: synchronize refused");
            }
            super.synchronize();
        }
    }
}
