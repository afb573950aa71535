package io.devalloc.caching.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.AllocatorInvariants;
import io.devalloc.testkit.LiveSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Threads allocating, recording streams and freeing, while another completes the streams' work at random moments and
 * empties the cache: no two live allocations ever overlap, and at the end every counter adds up.
 */
class HostConcurrencyTest {

    @ParameterizedTest(name = "config ''{0}''")
    @ValueSource(strings = {"", "pinned_round_threshold_mb:1", "pinned_reserve_segment_size_mb:16"})
    void threadsStreamsAndEmptyCacheTogether(String config) throws Exception {
        int workers = 4;
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(4 * ByteSize.GiB)
                .eventCompletion(EventCompletion.MANUAL).build()) {
            HostCachingArena allocator = (HostCachingArena) new CachingHostAllocatorProvider().create(device, config);
            DeviceStream[] streams = {device.createStream(), device.createStream(), device.createStream()};
            LiveSet shared = new LiveSet();
            AtomicBoolean done = new AtomicBoolean();
            ExecutorService pool = Executors.newFixedThreadPool(workers + 1);
            try {
                Future<?> completer = pool.submit(() -> {
                    Random r = new Random(99);
                    while (!done.get()) {
                        device.completeStream(streams[r.nextInt(streams.length)]);
                        if (r.nextInt(50) == 0) {
                            allocator.emptyCache();
                        }
                        Thread.onSpinWait();
                    }
                    return null;
                });
                List<Future<List<long[]>>> futures = new ArrayList<>();
                for (int t = 0; t < workers; t++) {
                    int seed = t;
                    futures.add(pool.submit(() -> {
                        Random r = new Random(seed);
                        List<long[]> mine = new ArrayList<>();
                        for (int i = 0; i < 5000; i++) {
                            if (mine.isEmpty() || r.nextInt(100) < 55) {
                                long size = 1 + r.nextLong(1L << (1 + r.nextInt(22)));
                                long a = allocator.malloc(size);
                                synchronized (shared) {
                                    shared.add(a, size); // throws if it overlaps a live allocation
                                }
                                if (r.nextInt(4) == 0) {
                                    assertTrue(allocator.recordEvent(a, streams[r.nextInt(streams.length)]));
                                }
                                mine.add(new long[] {a, size});
                            } else {
                                long[] k = mine.remove(r.nextInt(mine.size()));
                                synchronized (shared) {
                                    shared.remove(k[0]);
                                }
                                allocator.free(k[0]);
                            }
                        }
                        return mine;
                    }));
                }
                List<long[]> remaining = new ArrayList<>();
                for (Future<List<long[]>> f : futures) {
                    remaining.addAll(f.get(120, TimeUnit.SECONDS));
                }
                done.set(true);
                completer.get(60, TimeUnit.SECONDS);

                HostArenaInvariants.check(allocator);
                AllocatorInvariants.check(allocator, shared);
                for (long[] k : remaining) {
                    allocator.free(k[0]);
                }
                device.completeAll();
                allocator.emptyCache();
                HostArenaInvariants.check(allocator);
                AllocatorInvariants.check(allocator, new LiveSet());

                AllocatorStats s = allocator.stats();
                assertEquals(workers * 5000L, s.allocationCount() + s.freeCount() - remaining.size(),
                        "every operation was counted");
                assertEquals(s.allocationCount(), s.freeCount());
                Map<String, Long> m = allocator.hostMemoryStats();
                assertEquals(0, m.get("active_requests.current"));
                assertEquals(0, m.get("active_bytes.current"));
                long reserveBlocks = m.get("allocations.current");
                assertEquals(m.get("num_host_alloc") - m.get("num_host_free"), reserveBlocks);
                if (config.contains("reserve")) {
                    assertEquals(1, device.liveAllocations(), "only the reserve segment is left");
                } else {
                    assertEquals(0, reserveBlocks);
                    assertEquals(0, device.liveAllocations());
                    assertEquals(0, s.reservedBytes());
                }
            } finally {
                done.set(true);
                pool.shutdownNow();
                allocator.close();
            }
            assertEquals(0, device.liveAllocations());
        }
    }
}
