package io.devalloc.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.units.ByteSize;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Four threads allocate, fill each block with a pattern unique to the thread and iteration, keep a few blocks
 * live, and verify every block before freeing it. If two live allocations ever overlapped, one thread's pattern
 * would be overwritten by another's and the verification would fail.
 */
class HostMemoryConcurrencyTest {

    private static final int THREADS = 4;
    private static final int ITERATIONS = 300;
    private static final int LIVE_PER_THREAD = 8;
    private static final long CAPACITY = 64 * ByteSize.MiB;

    private record Block(long address, long bytes, long pattern) {
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void concurrentAllocationsNeverOverlap(boolean pinned) throws Exception {
        NativeMemoryCalls calls = FfmNativeMemoryCalls.link();
        try (HostMemory device = pinned ? HostMemory.pinned(calls, CAPACITY) : HostMemory.host(calls, CAPACITY);
             ExecutorService pool = Executors.newFixedThreadPool(THREADS)) {
            List<Callable<Integer>> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                workers.add(() -> work(device, thread));
            }
            int verified = 0;
            for (Future<Integer> f : pool.invokeAll(workers)) {
                verified += f.get();
            }
            assertEquals(THREADS * ITERATIONS, verified);
            assertEquals(new MemoryInfo(CAPACITY, CAPACITY), device.memoryInfo(), "everything was freed");
        }
    }

    /**
     * Each thread owns a reservation of four granules and, interleaved with mallocs, maps, fills, verifies and
     * unmaps random granules of it, checking that a freshly mapped granule reads zero. Every thread's maps and
     * mallocs go through the one device, so a lost update to the shared counters or to another thread's bitset
     * would show in the final accounting or as a failed map.
     */
    @Test
    void concurrentMapsUnmapsAndMallocsKeepTheirDataAndAccounting() throws Exception {
        NativeMemoryCalls calls = FfmNativeMemoryCalls.link();
        long g = HostVirtualMemory.GRANULARITY;
        try (HostMemory device = HostMemory.host(calls, CAPACITY);
             ExecutorService pool = Executors.newFixedThreadPool(THREADS)) {
            VirtualMemory vm = device.virtualMemory().orElseThrow();
            List<Callable<Integer>> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                workers.add(() -> {
                    SplittableRandom random = new SplittableRandom(100 + thread);
                    long base = vm.reserve(4 * g);
                    assertNotEquals(DeviceMemory.NULL, base);
                    long[] patterns = new long[4];
                    int checked = 0;
                    for (int i = 0; i < 60; i++) {
                        int granule = random.nextInt(4);
                        long address = base + granule * g;
                        if (patterns[granule] == 0) {
                            // 4 threads x 4 granules x 2 MiB + the mallocs stay below the 64 MiB capacity.
                            assertTrue(vm.map(address, g));
                            MemorySegment view = device.hostView(address, g).orElseThrow();
                            verify(view, 0, 0);
                            patterns[granule] = ((long) thread << 48) | ((long) i << 16) | 1;
                            fill(view, patterns[granule]);
                        } else {
                            verify(device.hostView(address, g).orElseThrow(), patterns[granule]);
                            vm.unmap(address, g);
                            patterns[granule] = 0;
                            checked++;
                        }
                        long a = device.malloc(1 + random.nextInt(64 * 1024));
                        assertNotEquals(DeviceMemory.NULL, a);
                        device.free(a);
                    }
                    for (int granule = 0; granule < 4; granule++) {
                        if (patterns[granule] != 0) {
                            verify(device.hostView(base + granule * g, g).orElseThrow(), patterns[granule]);
                            vm.unmap(base + granule * g, g);
                            checked++;
                        }
                    }
                    vm.release(base);
                    return checked;
                });
            }
            int checked = 0;
            for (Future<Integer> f : pool.invokeAll(workers)) {
                checked += f.get();
            }
            assertTrue(checked > THREADS, "granules were verified: " + checked);
            assertEquals(0, vm.mappedBytes());
            assertEquals(new MemoryInfo(CAPACITY, CAPACITY), device.memoryInfo(), "everything was given back");
        }
    }

    private static int work(HostMemory device, int thread) {
        SplittableRandom random = new SplittableRandom(thread);
        ArrayDeque<Block> live = new ArrayDeque<>();
        int verified = 0;
        for (int i = 0; i < ITERATIONS; i++) {
            long bytes = 8 + 8L * random.nextInt(8 * 1024);
            long address = device.malloc(bytes);
            // 4 threads × 8 live × at most 64 KiB (plus rounding) stays far below the capacity.
            assertNotEquals(DeviceMemory.NULL, address);
            long pattern = ((long) thread << 48) | ((long) i << 16);
            fill(device.hostView(address, bytes).orElseThrow(), pattern);
            live.addLast(new Block(address, bytes, pattern));
            if (live.size() > LIVE_PER_THREAD || i == ITERATIONS - 1) {
                while (live.size() > (i == ITERATIONS - 1 ? 0 : LIVE_PER_THREAD / 2)) {
                    Block b = live.removeFirst();
                    verify(device.hostView(b.address(), b.bytes()).orElseThrow(), b.pattern());
                    device.free(b.address());
                    verified++;
                }
            }
        }
        return verified;
    }

    private static void fill(MemorySegment m, long pattern) {
        for (long off = 0; off < m.byteSize(); off += 8) {
            m.set(ValueLayout.JAVA_LONG_UNALIGNED, off, pattern + off);
        }
    }

    private static void verify(MemorySegment m, long pattern) {
        verify(m, pattern, 1);
    }

    /** Checks {@code pattern + off * step} at every 8-byte offset (step 0 for a constant, e.g. zero). */
    private static void verify(MemorySegment m, long pattern, long step) {
        for (long off = 0; off < m.byteSize(); off += 8) {
            long value = m.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
            if (value != pattern + off * step) {
                throw new AssertionError("block at " + ByteSize.hex(m.address()) + " was overwritten at offset " + off
                        + ": expected " + Long.toHexString(pattern + off * step) + ", found "
                        + Long.toHexString(value));
            }
        }
    }
}
