package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.DeviceOperation;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TensorFlow's {@code core/common_runtime/gpu/gpu_bfc_allocator_test.cc}, scenario by scenario, with upstream's
 * figures (spec §7). Upstream runs each test over {@code DeviceMemAllocator} (plain cuMemAlloc regions) and, on
 * CUDA ≥ 10.2, over the VMM sub-allocator; the parameter {@code vm} does the same with the simulated device's
 * malloc ({@code virtual_memory:false}) or its virtual memory ({@code virtual_memory:true}).
 *
 * <p>Setup as upstream: {@code GPUBFCAllocator} defaults (no growth, retry on, garbage collection from the
 * environment, which is empty here, hence on). Where upstream expects a null from an allocation within the limit
 * (and waits its 10 s), these tests use {@code tryMalloc} or turn retry off; requests above the limit fail at
 * once in the port.
 */
class UpstreamGpuBfcTest {

    private static final long KiB = ByteSize.KiB;
    private static final long MiB = ByteSize.MiB;
    private static final long GiB = ByteSize.GiB;

    /** A GPUBFCAllocator over {@code device}, with an empty environment. */
    private static BfcArena gpuBfc(SimulatedDevice device, boolean vm, String config) {
        String text = "virtual_memory:" + vm + (config.isEmpty() ? "" : "," + config);
        return (BfcArena) new BfcAllocatorProvider(Map.of()).create(device, text);
    }

    /** Upstream's {@code CheckStats}: (num_allocs, bytes_in_use, peak_bytes_in_use, largest_alloc_size). */
    private static void checkStats(BfcAllocator a, long numAllocs, long inUse, long peak, long largest) {
        BfcStats s = a.bfcStats();
        assertEquals(List.of(numAllocs, inUse, peak, largest),
                List.of(s.numAllocs(), s.bytesInUse(), s.peakBytesInUse(), s.largestAllocSize()),
                "(num_allocs, bytes_in_use, peak_bytes_in_use, largest_alloc_size)");
    }

    /** Upstream's check on sorted pointers: no duplicates, each gap at least the previous request. */
    private static void assertNoDupsNoOverlap(BfcAllocator a, List<Long> pointers) {
        List<Long> sorted = new ArrayList<>(pointers);
        Collections.sort(sorted);
        for (int i = 1; i < sorted.size(); i++) {
            long prev = sorted.get(i - 1);
            long cur = sorted.get(i);
            assertNotEquals(prev, cur, "duplicate pointer");
            long requested = a.requestedSize(prev);
            assertTrue(requested > 0);
            assertTrue(cur - prev >= requested, "allocation at " + Long.toHexString(prev) + " of " + requested
                    + " bytes overlaps the next at " + Long.toHexString(cur));
        }
    }

    /**
     * Upstream draws sizes from {@code PhiloxRandom(123, 17)}; Java has no Philox, so a seeded
     * {@link java.util.Random} gives the unsigned 32-bit draws instead. The scenario only checks non-overlap, so the
     * exact sizes do not change what is asserted.
     */
    private static long rand32(Random r) {
        return Integer.toUnsignedLong(r.nextInt());
    }

    @ParameterizedTest(name = "vm={0}")
    @ValueSource(booleans = {false, true})
    void noDups(boolean vm) {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).virtualMemory(vm).build();
             BfcArena a = gpuBfc(device, vm, "")) {
            checkStats(a, 0, 0, 0, 0);
            List<Long> ptrs = new ArrayList<>();
            for (int s = 1; s < 1024; s++) {
                long p = a.malloc(s, 1, DeviceStream.DEFAULT);
                assertNotEquals(0, p);
                ptrs.add(p);
            }
            // 256·256 + 256·512 + 256·768 + 255·1024
            checkStats(a, 1023, 654336, 654336, 1024);
            assertNoDupsNoOverlap(a, ptrs);
            BfcArenaInvariants.check(a);
            for (long p : ptrs) {
                a.free(p);
            }
            checkStats(a, 1023, 0, 654336, 1024);
            BfcArenaInvariants.check(a);
        }
    }

    @ParameterizedTest(name = "vm={0}")
    @ValueSource(booleans = {false, true})
    void allocationsAndDeallocations(boolean vm) {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).virtualMemory(vm).build();
             BfcArena a = gpuBfc(device, vm, "")) {
            Random rand = new Random(123L << 32 | 17); // stands for PhiloxRandom(123, 17)
            List<Long> initial = new ArrayList<>();
            for (int s = 1; s < 256; s++) {
                long size = Math.min(Math.max(rand32(rand) % MiB, 100), MiB);
                initial.add(a.malloc(size, 1, DeviceStream.DEFAULT));
            }
            List<Long> existing = new ArrayList<>();
            for (int i = 0; i < initial.size(); i++) {
                if (i % 2 == 1) {
                    a.free(initial.get(i));
                } else {
                    existing.add(initial.get(i));
                }
            }
            // Out of memory works and does not prevent later allocations.
            assertEquals(0, a.tryMalloc((1L << 30) + 1, 1, DeviceStream.DEFAULT));
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class,
                    () -> a.malloc((1L << 30) + 1, 1, DeviceStream.DEFAULT));
            assertEquals(OutOfMemoryException.Reason.REQUEST_TOO_LARGE, oom.reason());
            for (int s = 1; s < 256; s++) {
                long size = Math.min(Math.max(rand32(rand) % MiB, 100), MiB);
                long p = a.malloc(size, 1, DeviceStream.DEFAULT);
                assertNotEquals(0, p);
                existing.add(p);
            }
            assertNoDupsNoOverlap(a, existing);
            BfcArenaInvariants.check(a);
            for (long p : existing) {
                a.free(p);
            }
            assertEquals(0, a.bfcStats().bytesInUse());
            BfcArenaInvariants.check(a);
        }
    }

    @ParameterizedTest(name = "vm={0}")
    @ValueSource(booleans = {false, true})
    void exerciseCoalescing(boolean vm) {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).virtualMemory(vm).build();
             BfcArena a = gpuBfc(device, vm, "")) {
            // TypedAllocator::Allocate<T>(n) is AllocateRaw(kAllocatorAlignment = 64, n * sizeof(T)).
            long first = a.malloc(1024 * 4, 64, DeviceStream.DEFAULT);
            a.free(first);
            checkStats(a, 1, 0, 4096, 4096);
            for (int i = 0; i < 1024; i++) {
                long t1 = a.malloc(1024 * 4, 64, DeviceStream.DEFAULT);        // 1024 floats
                long t2 = a.malloc(1048576L * 8, 64, DeviceStream.DEFAULT);    // 1M int64
                long t3 = a.malloc(2048 * 8, 64, DeviceStream.DEFAULT);        // 2048 doubles
                long t4 = a.malloc(10485760L * 4, 64, DeviceStream.DEFAULT);   // 10M floats
                a.free(t1);
                a.free(t2);
                a.free(t3);
                a.free(t4);
            }
            checkStats(a, 4097, 0, 4096 + 8388608 + 16384 + 41943040, 41943040);
            checkStats(a, 4097, 0, 50352128, 41943040);
            BfcArenaInvariants.check(a);
            // Everything coalesced back into one chunk starting at the region's base.
            assertEquals(1, a.memoryDump().chunks().size());
            long again = a.malloc(1024 * 4, 64, DeviceStream.DEFAULT);
            assertEquals(first, again, "the first pointer is reused");
            a.free(again);
        }
    }

    @ParameterizedTest(name = "vm={0}")
    @ValueSource(booleans = {false, true})
    void allocateZeroBufSize(boolean vm) {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).virtualMemory(vm).build();
             BfcArena a = gpuBfc(device, vm, "")) {
            assertEquals(0, a.malloc(0, 64, DeviceStream.DEFAULT));
            assertEquals(0, a.tryMalloc(0, 64, DeviceStream.DEFAULT));
            checkStats(a, 0, 0, 0, 0);
            assertEquals(0, a.regionCount(), "a 0-byte request reserves nothing");
        }
    }

    @Test
    void tracksSizes() {
        // Upstream: TracksAllocationSizes() == true. Here: requestedSize and allocatedSize answer for live chunks.
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(GiB);
             BfcArena a = gpuBfc(device, false, "")) {
            long p = a.malloc(1000, 1, DeviceStream.DEFAULT);
            assertEquals(1000, a.requestedSize(p));
            assertEquals(1024, a.allocatedSize(p));
            a.free(p);
        }
    }

    @ParameterizedTest(name = "vm={0}")
    @ValueSource(booleans = {false, true})
    void allocatedVsRequested(boolean vm) {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).virtualMemory(vm).build();
             BfcArena a = gpuBfc(device, vm, "")) {
            long t1 = a.malloc(4, 64, DeviceStream.DEFAULT); // 1 float
            assertEquals(4, a.requestedSize(t1));
            assertEquals(256, a.allocatedSize(t1));
            a.free(t1);
        }
    }

    @ParameterizedTest(name = "vm={0}")
    @ValueSource(booleans = {false, true})
    void testCustomMemoryLimit(boolean vm) {
        // Configured for a 2 MiB pool (upstream: 1 << 21 bytes).
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).virtualMemory(vm).build();
             BfcArena a = gpuBfc(device, vm, "memory_limit_mb:2")) {
            long first = a.malloc(64 * 4, 64, DeviceStream.DEFAULT);
            assertNotEquals(0, first);
            assertEquals(0, a.tryMalloc((2L << 20) * 4, 64, DeviceStream.DEFAULT));
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class,
                    () -> a.malloc((2L << 20) * 4, 64, DeviceStream.DEFAULT));
            assertEquals(OutOfMemoryException.Reason.REQUEST_TOO_LARGE, oom.reason());
            assertEquals(2 * MiB, a.bfcStats().bytesLimit());
            a.free(first);
            BfcArenaInvariants.check(a);
        }
    }

    @ParameterizedTest(name = "vm={0}")
    @ValueSource(booleans = {false, true})
    void allocationsAndDeallocationsWithGrowth(boolean vm) {
        // Upstream never passes its growth option, so it runs without growth; this runs with growth as the name says.
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(2 * GiB).virtualMemory(vm).build();
             BfcArena a = gpuBfc(device, vm, "allow_growth:true")) {
            Random rand = new Random(123L << 32 | 17); // stands for PhiloxRandom(123, 17)
            long maxMem = 1 << 27;
            List<Long> initial = new ArrayList<>();
            for (int s = 1; s < 10; s++) {
                long size = Math.min(Math.max(rand32(rand) % maxMem, 100), maxMem);
                initial.add(a.malloc(size, 1, DeviceStream.DEFAULT));
            }
            List<Long> existing = new ArrayList<>();
            for (int i = 0; i < initial.size(); i++) {
                if (i % 2 == 1) {
                    a.free(initial.get(i));
                } else {
                    existing.add(initial.get(i));
                }
            }
            long maxMem2 = 1 << 26;
            for (int s = 1; s < 10; s++) {
                long size = Math.min(Math.max(rand32(rand) % maxMem2, 100), maxMem2);
                existing.add(a.malloc(size, 1, DeviceStream.DEFAULT));
            }
            assertNoDupsNoOverlap(a, existing);
            BfcArenaInvariants.check(a);
            assertTrue(a.bfcStats().poolBytes() < 2 * GiB, "growth reserved only part of the limit");
            for (long p : existing) {
                a.free(p);
            }
            BfcArenaInvariants.check(a);
        }
    }

    @ParameterizedTest(name = "vm={0}")
    @ValueSource(booleans = {false, true})
    void binDebugInfo(boolean vm) {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).virtualMemory(vm).build();
             BfcArena a = gpuBfc(device, vm, "")) {
            List<Long> ptrs = new ArrayList<>();
            List<Long> allocatedSizes = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                for (int j = 0; j < 2; j++) {
                    long p = a.malloc(256L << i, 1, DeviceStream.DEFAULT);
                    assertNotEquals(0, p);
                    ptrs.add(p);
                    allocatedSizes.add(a.allocatedSize(p));
                }
            }
            BfcMemoryDump md = a.memoryDump();
            assertEquals(11, md.chunks().size(), "1 + 5 sizes × 2 chunks");
            assertEquals(21, md.bins().size());
            for (int i = 0; i < 21; i++) {
                BfcMemoryDump.BinSummary bin = md.bins().get(i);
                assertEquals(i, bin.bin());
                assertEquals(256L << i, bin.binSize());
                if (i < 5) {
                    long requested = 2 * (256L << i);
                    assertEquals(requested, a.requestedSize(ptrs.get(2 * i)) + a.requestedSize(ptrs.get(2 * i + 1)));
                    long allocated = allocatedSizes.get(2 * i) + allocatedSizes.get(2 * i + 1);
                    assertEquals(requested, allocated);
                    assertEquals(allocated, bin.totalBytesInUse(), "bin " + i);
                    assertEquals(allocated, bin.totalBytesInBin(), "bin " + i);
                    assertEquals(requested, bin.requestedInUse(), "bin " + i);
                    assertEquals(2, bin.chunksInUse(), "bin " + i);
                    assertEquals(2, bin.chunksInBin(), "bin " + i);
                } else {
                    assertEquals(0, bin.totalBytesInUse(), "bin " + i);
                    assertEquals(0, bin.requestedInUse(), "bin " + i);
                    assertEquals(0, bin.chunksInUse(), "bin " + i);
                    if (i == 20) {
                        assertTrue(bin.totalBytesInBin() > 0);
                        // Exactly: the 1 GiB region less the 10 chunks (2·(256+512+1024+2048+4096) = 15872).
                        assertEquals(GiB - 15872, bin.totalBytesInBin());
                        assertEquals(1, bin.chunksInBin());
                    } else {
                        assertEquals(0, bin.totalBytesInBin(), "bin " + i);
                        assertEquals(0, bin.chunksInBin(), "bin " + i);
                    }
                }
            }

            for (int i = 1; i < ptrs.size(); i += 2) {
                a.free(ptrs.get(i));
                ptrs.set(i, 0L);
            }
            md = a.memoryDump();
            for (int i = 0; i < 21; i++) {
                BfcMemoryDump.BinSummary bin = md.bins().get(i);
                if (i < 5) {
                    long requested = 256L << i;
                    assertEquals(requested, a.requestedSize(ptrs.get(2 * i)));
                    assertEquals(a.allocatedSize(ptrs.get(2 * i)), bin.totalBytesInUse(), "bin " + i);
                    assertTrue(bin.totalBytesInBin() >= a.allocatedSize(ptrs.get(2 * i)), "bin " + i);
                    assertEquals(requested, bin.requestedInUse(), "bin " + i);
                    assertEquals(1, bin.chunksInUse(), "bin " + i);
                    assertTrue(bin.chunksInBin() >= 1, "bin " + i);
                    // Exactly: the freed chunks of bins 0-3 sit between used ones; the freed 4096 merged into the tail.
                    assertEquals(i < 4 ? 2 : 1, bin.chunksInBin(), "bin " + i);
                    assertEquals(i < 4 ? 2 * requested : requested, bin.totalBytesInBin(), "bin " + i);
                } else {
                    assertEquals(0, bin.totalBytesInUse(), "bin " + i);
                    assertEquals(0, bin.requestedInUse(), "bin " + i);
                    assertEquals(0, bin.chunksInUse(), "bin " + i);
                }
            }
            assertEquals(GiB - 15872 + 4096, md.bins().get(20).totalBytesInBin());
            assertEquals(10, md.chunks().size());
            BfcArenaInvariants.check(a);
        }
    }

    @Test
    void log2FloorViaBinNumForSize() {
        // Upstream's Log2FloorNonZeroSlow is gone; BinNumForSize = min(20, floor(log2(max(n,256) >> 8))) replaces it.
        assertEquals(0, Bins.binFor(0));
        assertEquals(0, Bins.binFor(1));
        assertEquals(0, Bins.binFor(256));
        assertEquals(0, Bins.binFor(511));
        assertEquals(1, Bins.binFor(512));
        assertEquals(1, Bins.binFor(767));
        assertEquals(1, Bins.binFor(1023));
        assertEquals(2, Bins.binFor(1024));
        assertEquals(2, Bins.binFor(1025));
        assertEquals(9, Bins.binFor(256L * 1023));
        assertEquals(10, Bins.binFor(256L * 1024));
        assertEquals(10, Bins.binFor(256L * 1025));
        assertEquals(12, Bins.binFor(MiB));
        assertEquals(12, Bins.binFor(2 * MiB - 1));
        assertEquals(13, Bins.binFor(2 * MiB));
        assertEquals(19, Bins.binFor(256 * MiB - 1));
        assertEquals(20, Bins.binFor(256 * MiB));
        assertEquals(20, Bins.binFor(512 * MiB));
        assertEquals(20, Bins.binFor(64 * GiB));
        assertEquals(20, Bins.binFor(Long.MAX_VALUE));
        for (int b = 0; b < 21; b++) {
            assertEquals(256L << b, Bins.binSize(b));
            assertEquals(b, Bins.binFor(Bins.binSize(b)));
        }
    }

    @Test
    void forceAllowGrowth() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(2 * GiB)) {
            // Unset: the configured value (growth on) is used.
            assertEquals(2 * MiB, regionTarget(device, Map.of(), "allow_growth:true"));
            // Unparseable: the configured value (growth on) is kept.
            assertEquals(2 * MiB, regionTarget(device,
                    Map.of(BfcOptions.ENV_FORCE_ALLOW_GROWTH, "unparseable"), "allow_growth:true"));
            // "true" forces growth on over a configured false.
            assertEquals(2 * MiB, regionTarget(device,
                    Map.of(BfcOptions.ENV_FORCE_ALLOW_GROWTH, "true"), "allow_growth:false"));
            // "false" forces growth off: the whole limit is the region target.
            assertEquals(2 * GiB, regionTarget(device,
                    Map.of(BfcOptions.ENV_FORCE_ALLOW_GROWTH, "false"), "allow_growth:true"));
        }
    }

    private static long regionTarget(SimulatedDevice device, Map<String, String> env, String config) {
        try (BfcAllocator a = new BfcAllocatorProvider(env).create(device, "memory_limit_mb:2048," + config)) {
            return a.currentRegionAllocationBytes();
        }
    }

    /** 128 × 4 MiB with growth in a 512 MiB limit, then frees the first 127. Returns the last allocation. */
    private static long fillWith4MiBAndFreeAllButLast(BfcArena a, int count) {
        List<Long> ptrs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            long p = a.malloc(4 * MiB, 1, DeviceStream.DEFAULT);
            assertNotEquals(0, p);
            ptrs.add(p);
        }
        for (int i = 0; i < count - 1; i++) {
            a.free(ptrs.get(i));
        }
        return ptrs.get(count - 1);
    }

    private static List<Long> mallocSizes(SimulatedDevice device) {
        List<Long> sizes = new ArrayList<>();
        for (DeviceOperation op : device.history()) {
            if (op.kind() == DeviceOperation.Kind.MALLOC || op.kind() == DeviceOperation.Kind.MAP) {
                sizes.add(op.bytes() / MiB);
            }
        }
        return sizes;
    }

    @Test
    void physicalAllocatorOomsFragmentation() {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).recordHistory(true).build();
             BfcArena a = gpuBfc(device, false, "memory_limit_mb:512,allow_growth:true,allow_retry_on_failure:false")) {
            long last = fillWith4MiBAndFreeAllButLast(a, 128);
            assertEquals(List.of(4L, 4L, 8L, 16L, 32L, 64L, 128L, 256L), mallocSizes(device));
            assertEquals(8, a.regionCount());
            assertEquals(512 * MiB, a.bfcStats().poolBytes());
            assertEquals(252 * MiB, a.bfcStats().largestFreeBlockBytes());
            BfcArenaInvariants.check(a);

            assertEquals(0, a.tryMalloc(508 * MiB, 1, DeviceStream.DEFAULT));
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class,
                    () -> a.malloc(508 * MiB, 1, DeviceStream.DEFAULT));
            assertEquals(OutOfMemoryException.Reason.FRAGMENTATION, oom.reason());
            // Garbage collection (on by default in GPUBFC) could only free 256 MiB of whole regions: nothing freed.
            assertEquals(8, a.regionCount());
            assertEquals(0, device.counters().frees());
            BfcArenaInvariants.check(a);
            a.free(last);
        }
    }

    @Test
    void virtualAllocatorPromotesReuse() {
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(GiB).recordHistory(true).build();
             BfcArena a = gpuBfc(device, true, "memory_limit_mb:512,allow_growth:true,allow_retry_on_failure:false")) {
            long last = fillWith4MiBAndFreeAllButLast(a, 128);
            assertEquals(List.of(4L, 4L, 8L, 16L, 32L, 64L, 128L, 256L), mallocSizes(device));
            assertEquals(1, a.regionCount(), "the regions coalesced");
            assertEquals(508 * MiB, a.bfcStats().largestFreeBlockBytes());
            long p = a.malloc(508 * MiB, 1, DeviceStream.DEFAULT);
            assertNotEquals(0, p);
            BfcArenaInvariants.check(a);
            a.free(p);
            a.free(last);
            BfcArenaInvariants.check(a);
        }
    }

    @Test
    void testRegionDeallocation() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(2 * GiB);
             BfcArena a = gpuBfc(device, false, "allow_growth:true")) {
            long last = fillWith4MiBAndFreeAllButLast(a, 128);
            assertTrue(a.regionCount() > 1);
            assertEquals(8, a.regionCount());
            assertTrue(a.deallocateFreeRegions());
            assertEquals(1, a.regionCount());
            List<BfcMemoryDump.ChunkInfo> free = a.memoryDump().chunks().stream().filter(c -> !c.inUse()).toList();
            assertEquals(1, free.size(), "exactly one free chunk");
            assertEquals(Bins.binFor(free.get(0).size()), free.get(0).bin(), "and it is binned");
            assertEquals(252 * MiB, free.get(0).size());
            assertEquals(256 * MiB, a.bfcStats().poolBytes());
            assertEquals(7, device.counters().frees());
            BfcArenaInvariants.check(a);
            a.free(last);
        }
    }

    @Test
    void testNoRegionDeallocation() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(2 * GiB);
             BfcArena a = gpuBfc(device, true, "allow_growth:true")) {
            long last = fillWith4MiBAndFreeAllButLast(a, 128);
            assertEquals(1, a.regionCount());
            assertFalse(a.deallocateFreeRegions());
            assertEquals(1, a.regionCount());
            assertEquals(512 * MiB, a.bfcStats().poolBytes());
            BfcArenaInvariants.check(a);
            a.free(last);
        }
    }
}
