package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.LiveSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A seeded random workload against a simple model (the set of live allocations), checking after every operation:
 * each region tiled exactly by its chunks, no two adjacent free chunks (outside timestamped mode), every free chunk
 * in the right bin and no used chunk binned, bytes in use equal to the sum of used chunk sizes, pool bytes equal to
 * the regions, no live allocations overlapping, and each address aligned as asked.
 */
class BfcModelBasedTest {

    private static final String[] MODES = {
        "allow_growth:false",
        "allow_growth:true,virtual_memory:false",
        "allow_growth:true,virtual_memory:true",
        "allow_growth:true,virtual_memory:false,garbage_collection:true,fragmentation_fraction:0.01",
        "allow_growth:true,timestamped:true",
    };

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4})
    void randomWorkloadKeepsEveryInvariantAfterEveryOperation(int mode) {
        long seed = 0xBFC0L + mode;
        Random r = new Random(seed);
        boolean timestamped = MODES[mode].contains("timestamped:true");
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(512 * ByteSize.MiB)
                .eventCompletion(timestamped ? EventCompletion.MANUAL : EventCompletion.IMMEDIATE).build()) {
            BfcArena arena = (BfcArena) new BfcAllocatorProvider(Map.of()).create(device,
                    MODES[mode] + ",allow_retry_on_failure:false");
            DeviceStream other = device.createStream();
            LiveSet live = new LiveSet();
            List<Long> order = new ArrayList<>();
            long ooms = 0;
            for (int op = 0; op < 12_000; op++) {
                int dice = r.nextInt(100);
                if (order.isEmpty() || dice < 55) {
                    long size = sizeFor(r);
                    long alignment = r.nextInt(10) == 0 ? 1L << (9 + r.nextInt(4)) : 256;
                    DeviceStream stream = r.nextInt(5) == 0 ? other : DeviceStream.DEFAULT;
                    long a;
                    try {
                        a = arena.malloc(size, alignment, stream);
                    } catch (OutOfMemoryException e) {
                        ooms++;
                        BfcArenaInvariants.check(arena);
                        continue;
                    }
                    assertEquals(0, a % alignment, "alignment " + alignment);
                    live.add(a, size);
                    order.add(a);
                    assertEquals(size, arena.requestedSize(a));
                    assertTrue(arena.allocatedSize(a) >= size);
                } else if (dice < 97) {
                    int i = r.nextInt(order.size());
                    long a = order.get(i);
                    order.set(i, order.get(order.size() - 1));
                    order.remove(order.size() - 1);
                    live.remove(a);
                    arena.free(a);
                } else if (timestamped) {
                    // The device finishes some work: frees become safe, and may merge.
                    device.completeStream(r.nextBoolean() ? other : DeviceStream.DEFAULT);
                    arena.advanceSafeFrontier();
                } else {
                    arena.releaseCachedMemory();
                }
                BfcArenaInvariants.check(arena);
                assertEquals(live.size(), arena.stats().activeAllocations());
                assertEquals(live.requestedBytes(), arena.stats().requestedBytes());
            }
            for (long a : order) {
                arena.free(a);
            }
            device.synchronize();
            arena.releaseCachedMemory();
            BfcArenaInvariants.check(arena);
            assertEquals(0, arena.stats().allocatedBytes());
            assertEquals(0, arena.stats().reservedBytes(), "every region went back");
            assertTrue(ooms < 12_000 / 4, "the workload is mostly served: " + ooms + " out-of-memory errors");
            arena.close();
        }
    }

    /** Sizes spread over every bin: mostly small, sometimes tens of MiB. */
    private static long sizeFor(Random r) {
        int bits = 1 + r.nextInt(r.nextInt(8) == 0 ? 26 : 20);
        return 1 + r.nextLong(1L << bits);
    }

    @Test
    void aVirtualMemoryArenaNeverExceedsALimitThatIsNotAWholeNumberOfGranules() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            BfcArena arena = (BfcArena) new BfcAllocatorProvider(Map.of()).create(device,
                    "memory_limit_mb:5,virtual_memory:true,allow_growth:true,allow_retry_on_failure:false");
            List<Long> held = new ArrayList<>();
            while (true) {
                try {
                    held.add(arena.malloc(256 * ByteSize.KiB));
                } catch (OutOfMemoryException e) {
                    break;
                }
                BfcArenaInvariants.check(arena);
            }
            assertTrue(arena.bfcStats().poolBytes() <= 5 * ByteSize.MiB, arena.bfcStats().toString());
            assertEquals(4 * ByteSize.MiB, arena.bfcStats().poolBytes(), "two whole granules fit under 5 MiB");
            for (long a : held) {
                arena.free(a);
            }
            arena.close();
        }
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            // Issue 15, defect 9: typed as a configuration error (was a plain IllegalArgumentException).
            var e = Assertions.assertThrows(
                    InvalidConfigurationException.class,
                    () -> new BfcAllocatorProvider(Map.of()).create(device, "memory_limit_mb:1,virtual_memory:true"));
            assertTrue(e.getMessage().contains("granule"), e.getMessage());
            BfcAllocator auto = new BfcAllocatorProvider(Map.of()).create(device, "memory_limit_mb:1");
            auto.free(auto.malloc(1000));
            assertEquals(ByteSize.MiB, auto.bfcStats().poolBytes(), "auto falls back to plain regions below a granule");
            auto.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"allow_growth:false", "allow_growth:true,virtual_memory:false",
            "allow_growth:true,timestamped:true"})
    void threadsAllocatingAndFreeingAtOnceLeaveAConsistentArena(String config) throws Exception {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB)) {
            BfcArena arena = (BfcArena) new BfcAllocatorProvider(Map.of()).create(device,
                    config + ",retry_timeout_ms:200");
            LiveSet shared = new LiveSet();
            int threads = 4;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<List<Long>>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                futures.add(pool.submit(() -> {
                    Random r = new Random(seed);
                    DeviceStream mine = seed % 2 == 0 ? DeviceStream.DEFAULT : device.createStream();
                    List<Long> kept = new ArrayList<>();
                    for (int i = 0; i < 4000; i++) {
                        // At most 24 live per thread: 4 threads × 24 × 4 MiB stays well inside the 1 GiB device.
                        if (kept.isEmpty() || (kept.size() < 24 && r.nextBoolean())) {
                            long size = 1 + r.nextLong(4 * ByteSize.MiB);
                            long a = arena.malloc(size, mine);
                            synchronized (shared) {
                                shared.add(a, size);
                            }
                            kept.add(a);
                        } else {
                            long a = kept.remove(r.nextInt(kept.size()));
                            synchronized (shared) {
                                shared.remove(a);
                            }
                            arena.free(a);
                        }
                    }
                    return kept;
                }));
            }
            List<Long> remaining = new ArrayList<>();
            for (Future<List<Long>> f : futures) {
                remaining.addAll(f.get(120, TimeUnit.SECONDS));
            }
            pool.shutdown();
            BfcArenaInvariants.check(arena);
            assertEquals(shared.size(), arena.stats().activeAllocations());
            assertEquals(shared.requestedBytes(), arena.stats().requestedBytes());
            for (long a : remaining) {
                arena.free(a);
            }
            arena.advanceSafeFrontier();
            BfcArenaInvariants.check(arena);
            assertEquals(0, arena.stats().allocatedBytes());
            arena.close();
        }
    }
}
