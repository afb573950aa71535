package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.sim.DeviceOperation;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.AllocatorInvariants;
import io.devalloc.testkit.LiveSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A seeded, randomized model-based test of the caching allocator: several streams, record_stream with events that
 * complete only when the test (or the allocator's own synchronisation) says so, empty_cache, out-of-memory errors,
 * expandable segments and max_split_size on and off. After every operation the arena's own structural invariants
 * ({@link CachingInvariants#check}: segments tiled by blocks, no two mergeable neighbours, pool membership and
 * order, stats equal to what the blocks say) are checked, and the stats are compared with an independent model:
 * which allocations are live, which freed blocks still wait for events, and what the device holds. No live or
 * pending block may ever overlap a new allocation. At the end everything is freed and empty_cache gives it all back.
 *
 * <p>A failure names the seed and the operation number: rerun with the same configuration to reproduce it.
 */
class CachingModelBasedTest {

    static final long KiB = 1024;
    static final long MiB = 1024 * KiB;
    static final long GiB = 1024 * MiB;

    static final int OPERATIONS = 30_000;
    static final int SNAPSHOT_EVERY = 64;

    /** The model of what the test did. */
    private static final class Model {
        /** Live allocations, address → requested bytes. */
        final LiveSet live = new LiveSet();
        /** Live allocations and freed blocks still waiting for events: nothing new may overlap them. */
        final LiveSet held = new LiveSet();
        final List<Long> liveAddresses = new ArrayList<>();
        final Map<Long, DeviceStream> streamOf = new HashMap<>();
        /** Streams recorded with recordStream (other than the allocation stream), by live address. */
        final Map<Long, Set<Long>> uses = new HashMap<>();
        /** Freed blocks with outstanding events: address → streams whose event has not completed yet. */
        final Map<Long, Set<Long>> pending = new HashMap<>();
        final Map<Long, Long> pendingRequested = new HashMap<>();
        final Map<Long, DeviceStream> pendingStream = new HashMap<>();
        long pendingRequestedBytes;

        void allocated(long address, long bytes, DeviceStream stream) {
            held.add(address, bytes);
            live.add(address, bytes);
            liveAddresses.add(address);
            streamOf.put(address, stream);
        }

        long removeLive(int index) {
            int last = liveAddresses.size() - 1;
            long address = liveAddresses.get(index);
            liveAddresses.set(index, liveAddresses.get(last));
            liveAddresses.remove(last);
            return address;
        }

        /** The allocator freed the block for good (events done and processed, or synchronised). */
        void released(long address) {
            held.remove(address);
            pendingRequestedBytes -= pendingRequested.remove(address);
            pendingStream.remove(address);
        }

        /** At a malloc: process_events frees the pending blocks whose events have all completed. */
        void processEvents() {
            for (Iterator<Map.Entry<Long, Set<Long>>> it = pending.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<Long, Set<Long>> e = it.next();
                if (e.getValue().isEmpty()) {
                    it.remove();
                    released(e.getKey());
                }
            }
        }

        /** synchronize_and_free_events: every outstanding event is waited for. */
        void synchronizeAll() {
            for (long address : new ArrayList<>(pending.keySet())) {
                pending.remove(address);
                released(address);
            }
        }

        void streamCompleted(long stream) {
            for (Set<Long> s : pending.values()) {
                s.remove(stream);
            }
        }
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
        "",
        "expandable_segments:True",
        "max_split_size_mb:20",
        "expandable_segments:True,max_split_size_mb:40",
        "max_split_size_mb:30,roundup_power2_divisions:[256:1,512:2,>:4],garbage_collection_threshold:0.6,"
                + "per_process_memory_fraction:0.8",
        "expandable_segments:True,garbage_collection_threshold:0.5,per_process_memory_fraction:0.7,"
                + "roundup_power2_divisions:4",
        "large_segment_size_mb:32,max_split_size_mb:64,max_non_split_rounding_mb:64",
    })
    void randomOperations(String config) {
        long seed = 0x5EED_CAFEL ^ config.hashCode();
        new Run(config, seed).execute();
    }

    /** One seeded run. */
    private static final class Run {
        final String config;
        final long seed;
        final Random rnd;
        final SimulatedDevice device;
        final CachingArena arena;
        final DeviceStream[] streams;
        final Model model = new Model();
        int op;
        String lastOp = "start";
        long ooms;
        long pendingSeen;

        Run(String config, long seed) {
            this.config = config;
            this.seed = seed;
            this.rnd = new Random(seed);
            this.device = SimulatedDevice.builder().capacity(2 * GiB).eventCompletion(EventCompletion.MANUAL)
                    .recordHistory(true).build();
            this.arena = (CachingArena) new CachingAllocatorProvider(Map.of()).create(device, config);
            this.streams = new DeviceStream[] {DeviceStream.DEFAULT, device.createStream(), device.createStream(),
                device.createStream()};
        }

        void execute() {
            try {
                for (op = 1; op <= OPERATIONS; op++) {
                    step();
                    check(op % SNAPSHOT_EVERY == 0);
                }
                finish();
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("config '" + config + "', seed " + seed + ", operation " + op + " ("
                        + lastOp + "): " + e.getMessage(), e);
            }
            assertTrue(ooms > 0, "the run should have met out-of-memory at least once (ooms " + ooms + ")");
            assertTrue(pendingSeen > 0, "the run should have deferred frees");
        }

        DeviceStream randomStream() {
            return streams[rnd.nextInt(streams.length)];
        }

        long randomSize() {
            int k = rnd.nextInt(100);
            if (k < 30) {
                return 1 + rnd.nextInt(4096);
            } else if (k < 50) {
                return rnd.nextLong(4096, MiB + 1);
            } else if (k < 70) {
                return rnd.nextLong(MiB + 1, 10 * MiB);
            } else if (k < 88) {
                return rnd.nextLong(10 * MiB, 64 * MiB);
            } else if (k < 94) {
                return rnd.nextLong(64 * MiB, 300 * MiB);
            } else if (k < 96) {
                return rnd.nextLong(512 * MiB, 1536 * MiB); // often more than is left: out of memory
            }
            long[] exact = {512, MiB, MiB + 512, 2 * MiB, 10 * MiB - 512, 10 * MiB, 20 * MiB, 40 * MiB, 64 * MiB};
            return exact[rnd.nextInt(exact.length)];
        }

        void step() {
            int r = rnd.nextInt(1000);
            int liveCount = model.liveAddresses.size();
            if (liveCount > 120 && r < 450) {
                r += 450; // too many live: something else
            }
            if (liveCount == 0 && r >= 450 && r < 900) {
                r = 0;
            }
            if (r < 450) {
                malloc(randomSize(), randomStream());
            } else if (r < 700) {
                free(rnd.nextInt(liveCount));
            } else if (r < 780) {
                recordStream(rnd.nextInt(liveCount), randomStream());
            } else if (r < 840) {
                int i = rnd.nextInt(liveCount);
                recordStream(i, randomStream());
                free(i);
            } else if (r < 900) {
                DeviceStream s = randomStream();
                lastOp = "completeStream(" + s + ")";
                device.completeStream(s);
                model.streamCompleted(s.handle());
            } else if (r < 960) {
                malloc(rnd.nextInt(2048) + 1L, randomStream()); // small churn
            } else if (r < 975) {
                lastOp = "completeAll";
                device.completeAll();
                for (DeviceStream s : streams) {
                    model.streamCompleted(s.handle());
                }
            } else if (r < 982) {
                lastOp = "emptyCache";
                arena.emptyCache();
                model.synchronizeAll();
            } else if (r < 985) {
                lastOp = "resetPeakStats";
                arena.resetPeakStats();
            } else {
                lastOp = "free burst";
                for (int n = 0; n < 10 && !model.liveAddresses.isEmpty(); n++) {
                    free(rnd.nextInt(model.liveAddresses.size()));
                }
            }
        }

        void malloc(long size, DeviceStream stream) {
            lastOp = "malloc(" + size + ", " + stream + ")";
            long syncs = stat("num_sync_all_streams");
            long address = 0;
            boolean oom = false;
            try {
                address = arena.malloc(size, stream);
            } catch (OutOfMemoryException e) {
                oom = true;
                ooms++;
            }
            boolean synced = stat("num_sync_all_streams") > syncs;
            if (synced) {
                model.synchronizeAll();
            } else {
                model.processEvents();
            }
            if (oom) {
                assertTrue(synced, "an out-of-memory error comes only after release_cached_blocks synchronised");
                return;
            }
            assertTrue(address != 0, "a non-zero request got address 0");
            model.allocated(address, size, stream);
        }

        void free(int index) {
            long address = model.removeLive(index);
            lastOp = "free(0x" + Long.toHexString(address) + ")";
            long requested = model.live.remove(address);
            DeviceStream stream = model.streamOf.remove(address);
            Set<Long> uses = model.uses.remove(address);
            arena.free(address);
            if (uses == null || uses.isEmpty()) {
                model.held.remove(address);
            } else {
                model.pending.put(address, uses);
                model.pendingRequested.put(address, requested);
                model.pendingStream.put(address, stream);
                model.pendingRequestedBytes += requested;
                pendingSeen++;
            }
        }

        void recordStream(int index, DeviceStream stream) {
            long address = model.liveAddresses.get(index);
            lastOp = "recordStream(0x" + Long.toHexString(address) + ", " + stream + ")";
            arena.recordStream(address, stream);
            if (stream.handle() != model.streamOf.get(address).handle()) {
                model.uses.computeIfAbsent(address, k -> new HashSet<>()).add(stream.handle());
            }
        }

        long stat(String key) {
            return arena.memoryStats().get(key);
        }

        void check(boolean withSnapshot) {
            CachingInvariants.check(arena);
            Map<String, Long> m = arena.memoryStats();
            int live = model.live.size();
            assertEquals(live, m.get("allocation.all.current"), "allocation.all.current");
            assertEquals(live + model.pending.size(), m.get("active.all.current"),
                    "active.all.current = live + blocks waiting for events");
            assertEquals(model.live.requestedBytes() + model.pendingRequestedBytes,
                    m.get("requested_bytes.all.current"),
                    "requested_bytes.all.current (requested bytes of active blocks)");
            assertEquals(device.counters().bytesInUse(), m.get("reserved_bytes.all.current"),
                    "reserved bytes = what the device holds for the allocator");
            assertTrue(m.get("allocated_bytes.all.current") <= m.get("active_bytes.all.current"));
            assertTrue(m.get("active_bytes.all.current") <= m.get("reserved_bytes.all.current"));
            AllocatorStats s = arena.stats();
            assertEquals(live, s.activeAllocations());
            assertEquals(model.live.requestedBytes(), s.requestedBytes());
            if (withSnapshot) {
                AllocatorInvariants.check(arena, model.live);
                checkSnapshot();
            }
        }

        /**
         * The snapshot against the model: segments tiled and disjoint, exactly the live allocations allocated with
         * their requested sizes, each in a segment of its own stream, pending blocks exactly the model's, mapped
         * bytes equal to reserved, and the stats' allocated bytes and largest free block equal to the blocks'.
         */
        void checkSnapshot() {
            MemorySnapshot snap = arena.snapshot();
            snap.checkInvariants();
            AllocatorStats stats = arena.stats();
            int pendingBlocks = 0;
            int allocatedBlocks = 0;
            long allocatedBytes = 0;
            long mapped = 0;
            long largestFree = 0;
            for (SegmentSnapshot seg : snap.segments()) {
                for (BlockSnapshot b : seg.blocks()) {
                    if (b.state() != BlockState.UNMAPPED) {
                        mapped += b.size();
                    }
                    if (b.state() == BlockState.FREE) {
                        largestFree = Math.max(largestFree, b.size());
                    }
                    if (b.state() == BlockState.ALLOCATED) {
                        allocatedBlocks++;
                        allocatedBytes += b.size();
                        Long requested = model.live.asMap().get(b.address());
                        assertTrue(requested != null, "allocated block 0x" + Long.toHexString(b.address())
                                + " is not live");
                        assertEquals((long) requested, b.requestedSize());
                        assertTrue(b.size() >= requested);
                        assertEquals(model.streamOf.get(b.address()).handle(), seg.stream(),
                                "block 0x" + Long.toHexString(b.address()) + " is in another stream's segment");
                    } else if (b.state() == BlockState.PENDING_FREE) {
                        pendingBlocks++;
                        DeviceStream st = model.pendingStream.get(b.address());
                        assertTrue(st != null, "pending block 0x" + Long.toHexString(b.address())
                                + " is not pending in the model");
                        assertEquals(st.handle(), seg.stream());
                    }
                }
            }
            assertEquals(model.pending.size(), pendingBlocks, "pending blocks in the snapshot");
            assertEquals(model.live.size(), allocatedBlocks, "allocated blocks in the snapshot");
            assertEquals(stats.allocatedBytes(), allocatedBytes);
            assertEquals(stats.reservedBytes(), mapped, "mapped bytes in the snapshot");
            assertEquals(stats.largestFreeBlock(), largestFree);
        }

        void finish() {
            lastOp = "final free all";
            while (!model.liveAddresses.isEmpty()) {
                free(model.liveAddresses.size() - 1);
                CachingInvariants.check(arena);
            }
            lastOp = "final emptyCache";
            arena.emptyCache();
            model.synchronizeAll();
            check(true);
            Map<String, Long> m = arena.memoryStats();
            for (String key : List.of("allocation", "active", "segment", "inactive_split", "allocated_bytes",
                    "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes")) {
                assertEquals(0L, m.get(key + ".all.current"), key + ".all.current after everything was freed");
            }
            assertEquals(0, device.counters().bytesInUse());
            assertEquals(0, device.liveAllocations());
            assertEquals(0, device.virtualMemory().orElseThrow().mappedBytes());
            assertEquals(0, device.pendingEvents());
            assertTrue(arena.snapshot().segments().isEmpty());
            // As upstream, a reservation whose first map failed (out of memory) stays reserved, wholly unmapped,
            // for the next request of its (stream, pool); empty_cache only unmaps free mapped blocks. At most one
            // per (stream, pool); close() gives them back.
            long unreleased = count(DeviceOperation.Kind.RESERVE) - count(DeviceOperation.Kind.RELEASE);
            assertTrue(unreleased >= 0 && unreleased <= 2L * streams.length, "reservations left: " + unreleased);
            arena.close();
            assertEquals(count(DeviceOperation.Kind.RESERVE), count(DeviceOperation.Kind.RELEASE),
                    "every expandable reservation was released by close()");
        }

        long count(DeviceOperation.Kind kind) {
            return device.history().stream().filter(o -> o.kind() == kind).count();
        }
    }

    // ================================================================================================ concurrency

    /**
     * Four threads allocate, free and record streams on their own streams at once (and one of them empties the
     * cache now and then). A shared live set catches overlaps: an address joins it only after malloc returned and
     * leaves it before free is called, so any overlap is the allocator's. The invariants and the stats are checked
     * at the end, and everything goes back to the device.
     */
    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
        "",
        "expandable_segments:True",
        "max_split_size_mb:20,garbage_collection_threshold:0.5,per_process_memory_fraction:0.9",
    })
    void concurrentThreads(String config) throws Exception {
        SimulatedDevice device = SimulatedDevice.builder().capacity(4 * GiB).build();
        CachingArena arena = (CachingArena) new CachingAllocatorProvider(Map.of()).create(device, config);
        int threads = 4;
        DeviceStream[] streams = new DeviceStream[threads];
        for (int t = 0; t < threads; t++) {
            streams[t] = device.createStream();
        }
        LiveSet shared = new LiveSet();
        AtomicLong ooms = new AtomicLong();
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<long[]>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                results.add(pool.submit(() -> {
                    Random rnd = new Random(1000L + id);
                    DeviceStream mine = streams[id];
                    List<long[]> live = new ArrayList<>(); // {address, bytes}
                    start.await();
                    for (int i = 0; i < 4000; i++) {
                        int r = rnd.nextInt(100);
                        if ((r < 50 && live.size() < 40) || live.isEmpty()) {
                            long bytes = rnd.nextInt(4) == 0 ? rnd.nextLong(MiB, 32 * MiB) : 1 + rnd.nextInt(64 * 1024);
                            long address;
                            try {
                                address = arena.malloc(bytes, mine);
                            } catch (OutOfMemoryException e) {
                                ooms.incrementAndGet();
                                continue;
                            }
                            synchronized (shared) {
                                shared.add(address, bytes);
                            }
                            live.add(new long[] {address, bytes});
                        } else if (r < 88) {
                            long[] a = live.remove(rnd.nextInt(live.size()));
                            synchronized (shared) {
                                shared.remove(a[0]);
                            }
                            arena.free(a[0]);
                        } else if (r < 95) {
                            long[] a = live.get(rnd.nextInt(live.size()));
                            arena.recordStream(a[0], streams[rnd.nextInt(threads)]);
                        } else if (r < 97) {
                            if (id == 0) {
                                arena.emptyCache();
                            } else {
                                arena.snapshot().checkInvariants();
                            }
                        } else {
                            arena.memoryStats();
                            arena.stats();
                        }
                    }
                    return live;
                }));
            }
            List<long[]> remaining = new ArrayList<>();
            for (Future<List<long[]>> f : results) {
                remaining.addAll(f.get());
            }
            CachingInvariants.check(arena);
            assertEquals(remaining.size(), shared.size());
            Map<String, Long> m = arena.memoryStats();
            assertEquals(shared.size(), m.get("allocation.all.current"));
            assertEquals(shared.requestedBytes(), arena.stats().requestedBytes());
            assertEquals(device.counters().bytesInUse(), m.get("reserved_bytes.all.current"));
            AllocatorInvariants.check(arena, shared);
            for (long[] a : remaining) {
                shared.remove(a[0]);
                arena.free(a[0]);
            }
            arena.emptyCache();
            CachingInvariants.check(arena);
            m = arena.memoryStats();
            assertEquals(0L, m.get("allocation.all.current"));
            assertEquals(0L, m.get("active.all.current"));
            assertEquals(0L, m.get("reserved_bytes.all.current"));
            assertEquals(0, device.counters().bytesInUse());
            assertEquals(0, device.liveAllocations());
        } finally {
            pool.shutdownNow();
            arena.close();
        }
    }
}
