package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * openxla/xla {@code xla/tsl/framework/bfc_allocator_test.cc} (spec §7). Upstream uses a {@code FakeSubAllocator}
 * that bump-allocates, does not coalesce and never frees; here the simulated device's plain malloc
 * ({@code virtual_memory:false}) plays that part. The options are plain {@code BFCAllocator::Options} defaults
 * (growth on, garbage collection off, retry on) unless the upstream test says otherwise.
 */
class UpstreamXlaBfcTest {

    private static final long MiB = ByteSize.MiB;

    /** Plain {@code BFCAllocator::Options} defaults over plain device mallocs, with {@code limit} bytes. */
    private static BfcOptions plainBfc(long limit) {
        return BfcOptions.defaults().withAllowGrowth(true).withGarbageCollection(false).withMemoryLimit(limit)
                .withVirtualMemory(BfcOptions.VirtualMemoryUse.OFF);
    }

    private static BfcArena create(SimulatedDevice device, BfcOptions options) {
        return (BfcArena) BfcAllocatorProvider.create(device, options);
    }

    private static void assertAligned(long p, long alignment) {
        assertEquals(0, p % alignment, "address " + Long.toHexString(p) + " is not aligned to " + alignment);
    }

    @Test
    void allocateAndFree() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(64 * MiB);
             BfcArena a = create(device, plainBfc(MiB))) {
            long p = a.malloc(512, 64, DeviceStream.DEFAULT);
            assertNotEquals(0, p);
            assertAligned(p, 64);
            assertEquals(512, a.allocatedSize(p));
            a.free(p);
            assertEquals(0, a.bfcStats().bytesInUse());
            BfcArenaInvariants.check(a);
        }
    }

    @Test
    void defaultAlignment() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(64 * MiB);
             BfcArena a = create(device, plainBfc(MiB))) {
            long first = a.malloc(1);
            long second = a.malloc(1);
            assertAligned(first, 64);
            assertAligned(second, 64);
            assertEquals(256, second - first, "chunks sit 256 B apart");
            a.free(first);
            a.free(second);
        }
    }

    /**
     * OomLogsAllocationAnnotations without the annotations (not ported): a 1024-B pool, no growth, no retry;
     * 512 B succeeds, 2048 B fails, and the memory log lists the live chunk as {@code InUse at}.
     */
    @Test
    void oomLogsInUseChunks() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(64 * MiB);
             BfcArena a = create(device, plainBfc(1024).withAllowGrowth(false).withRetry(false, 0))) {
            long p = a.malloc(512);
            assertNotEquals(0, p);
            assertEquals(0, a.tryMalloc(2048, 256, DeviceStream.DEFAULT));
            assertThrows(OutOfMemoryException.class, () -> a.malloc(2048));
            List<String> log = a.memoryLog(2048);
            assertTrue(log.stream().anyMatch(l -> l.startsWith("InUse at " + Long.toHexString(p) + " of size 512")),
                    String.join("\n", log));
            a.free(p);
        }
    }

    @Test
    void extendTerminatesWhenSubAllocatorAlwaysFails() {
        // A 2048-B pool, no growth, no retry; every device malloc fails. Back-pedalling asks for 2048, 1792, 1536,
        // 1280, 1024, 768, 512 and 256 bytes, then stops below the 256-B request: exactly 8 calls.
        BfcOptions options = plainBfc(2048).withAllowGrowth(false).withRetry(false, 0);
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(64 * MiB);
             BfcArena a = create(device, options)) {
            device.setLimitBytes(0);
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class,
                    () -> a.malloc(100, 64, DeviceStream.DEFAULT));
            assertEquals(8, device.counters().mallocCalls());
            assertEquals(8, device.counters().failedMallocs());
            assertEquals(OutOfMemoryException.Reason.DEVICE_EXHAUSTED, oom.reason());
            assertEquals(0, a.regionCount());

            assertEquals(0, a.tryMalloc(100, 64, DeviceStream.DEFAULT));
            assertEquals(16, device.counters().mallocCalls());
            BfcArenaInvariants.check(a);
        }
    }

    @ParameterizedTest(name = "alignment={0}")
    @ValueSource(longs = {32, 64, 128, 256, 512, 1024, 2048, 4096})
    void respectsRequestedAlignment(long alignment) {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(64 * MiB);
             BfcArena a = create(device, plainBfc(MiB))) {
            long filler = a.malloc(256, 1, DeviceStream.DEFAULT);
            assertNotEquals(0, filler);
            List<Long> ptrs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                long p = a.malloc(256, alignment, DeviceStream.DEFAULT);
                assertNotEquals(0, p);
                assertAligned(p, alignment);
                assertEquals(256, a.allocatedSize(p), "alignment padding stays a free chunk, not slack");
                ptrs.add(p);
            }
            assertEquals(9 * 256, a.bfcStats().bytesInUse());
            assertNoOverlap(a, filler, ptrs);
            BfcArenaInvariants.check(a);
            for (long p : ptrs) {
                a.free(p);
            }
            a.free(filler);
            assertEquals(1, a.memoryDump().chunks().size());
            BfcArenaInvariants.check(a);
        }
    }

    private static void assertNoOverlap(BfcArena a, long filler, List<Long> ptrs) {
        TreeMap<Long, Long> live = new TreeMap<>();
        live.put(filler, a.allocatedSize(filler));
        for (long p : ptrs) {
            assertEquals(null, live.put(p, a.allocatedSize(p)), "duplicate");
        }
        long end = Long.MIN_VALUE;
        for (var e : live.entrySet()) {
            assertTrue(e.getKey() >= end, "overlap at " + Long.toHexString(e.getKey()));
            end = e.getKey() + e.getValue();
        }
    }

    @Test
    void stressAllocFree() {
        long[] alignments = {64, 256, 512, 1024, 4096};
        long[] sizes = {1, 128, 256, 700, 1024, 4096, 8192};
        List<long[]> requests = new ArrayList<>();
        for (int rep = 0; rep < 10; rep++) {
            for (long alignment : alignments) {
                for (long size : sizes) {
                    requests.add(new long[] {alignment, size});
                }
            }
        }
        assertEquals(350, requests.size());
        // Upstream shuffles with std::mt19937(42); a seeded java.util.Random stands for it.
        Random rng = new Random(42);
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(64 * MiB);
             BfcArena a = create(device, plainBfc(16 * MiB))) {
            for (int iter = 0; iter < 20; iter++) {
                Collections.shuffle(requests, rng);
                List<Long> ptrs = new ArrayList<>();
                for (long[] r : requests) {
                    long p = a.malloc(r[1], r[0], DeviceStream.DEFAULT);
                    assertNotEquals(0, p);
                    assertAligned(p, r[0]);
                    ptrs.add(p);
                }
                BfcArenaInvariants.check(a);
                assertEquals(350, a.stats().activeAllocations());
                Collections.shuffle(ptrs, rng);
                for (long p : ptrs) {
                    a.free(p);
                }
                assertEquals(0, a.bfcStats().bytesInUse());
                BfcArenaInvariants.check(a);
            }
            assertEquals(20 * 350, a.bfcStats().numAllocs());
        }
    }

    @Test
    void alignmentWithHardcodedSubAllocatorAlignment() {
        // The device aligns only to 256 B, and the region is placed at an address that is 256-aligned and no more.
        long base = 0x7000_0000_0100L;
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(64 * MiB).granularity(256)
                .virtualMemory(false).scriptedAddresses(List.of(base)).build();
             BfcArena a = create(device, plainBfc(MiB))) {
            List<Long> ptrs = new ArrayList<>();
            for (long alignment : new long[] {256, 512, 1024, 4096}) {
                long p = a.malloc(256, alignment, DeviceStream.DEFAULT);
                assertNotEquals(0, p);
                assertAligned(p, alignment);
                assertTrue(p >= base && p < base + MiB);
                ptrs.add(p);
            }
            assertEquals(base, ptrs.get(0), "256 B needs no padding");
            assertEquals(1, a.regionCount());
            BfcArenaInvariants.check(a);
            for (long p : ptrs) {
                a.free(p);
            }
            BfcArenaInvariants.check(a);
        }
    }

    @Test
    void getAndClearMemoryStats() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = create(device, plainBfc(256 * MiB))) {
            long p1 = a.malloc(1024);
            assertPeaks(a, 1024, 1024);
            long p2 = a.malloc(2048);
            assertPeaks(a, 3072, 3072);
            a.free(p2);
            assertPeaks(a, 1024, 3072);
            a.clearStats();
            // BfcStats has no peak_allocated_bytes: peakBytesInUse is that figure here (BFC reserves nothing).
            assertPeaks(a, 1024, 1024);
            BfcStats s = a.bfcStats();
            assertEquals(0, s.numAllocs());
            assertEquals(0, s.largestAllocSize());
            assertEquals(2 * MiB, s.peakPoolBytes(), "pool peaks survive clearStats");
            a.free(p1);
        }
    }

    private static void assertPeaks(BfcArena a, long inUse, long peak) {
        BfcStats s = a.bfcStats();
        assertEquals(inUse, s.bytesInUse(), "bytes_in_use");
        assertEquals(peak, s.peakBytesInUse(), "peak_bytes_in_use");
        assertEquals(peak, a.stats().peakAllocatedBytes(), "peak allocated bytes");
    }
}
