package io.devalloc.benchmarks;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.caching.host.CachingHostAllocatorProvider;
import io.devalloc.sim.SimulatedDevice;
import java.util.Arrays;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Allocate and free one cached size while {@link #freeBlocks} other free blocks sit in the same pool: whether the
 * cost of a pair stays flat as the pool grows (issue 13's targets: at most 1 µs at 64 k free blocks, and the 1 M
 * figure at most twice the 1 k figure). One operation is one allocate+free pair, on one thread and one stream.
 *
 * <p>Setup allocates {@code freeBlocks} pairs of a filler and a keeper, then the probe between two keepers, and
 * frees every filler and the probe. A filler is freed between two live keepers, so no free block coalesces with
 * another, and every one stays a separate element of the allocator's ordered free structure:
 * <ul>
 *   <li>{@code caching}: fillers of 1 KiB and a probe of 512 B, all in the small pool of the default stream (free
 *       blocks ordered by stream, size, address): the probe is the first of the pool, where inserting it into a
 *       sorted array moves every filler;</li>
 *   <li>{@code bfc}: fillers of 1,280 B and a probe of 1,024 B, all in bin 2 (chunks of [1 KiB, 2 KiB) ordered by
 *       size, address), the probe again first;</li>
 *   <li>{@code caching-host}: fillers and probe of 1 KiB, all on the free list of the 1 KiB size class, the probe
 *       freed last.</li>
 * </ul>
 *
 * <pre>java -jar benchmarks/target/benchmarks.jar PoolScale -f 1 -wi 2 -i 3</pre>
 */
@State(Scope.Thread)
public class PoolScaleBenchmark extends NanosecondBenchmark {

    /** Free blocks in the probe's pool besides the probe: 1 k, 64 k, 1 M. */
    @Param({"1024", "65536", "1048576"})
    public int freeBlocks;

    /** The allocator: {@code caching}, {@code bfc} (see {@link BenchmarkAllocators#create}) or {@code caching-host}. */
    @Param({"caching", "bfc", "caching-host"})
    public String allocator;

    private final DeviceStream stream = DeviceStream.DEFAULT;
    private SimulatedDevice device;
    DeviceAllocator alloc;
    private long[] keepers;
    private long probeSize;

    @Setup(Level.Trial)
    public void setUp() {
        device = BenchmarkAllocators.device();
        long fillerSize;
        switch (allocator) {
            case "caching" -> {
                fillerSize = 1024;
                probeSize = 512;
            }
            case "bfc" -> {
                fillerSize = 1280;
                probeSize = 1024;
            }
            case "caching-host" -> {
                fillerSize = 1024;
                probeSize = 1024;
            }
            default -> throw new IllegalArgumentException("unknown allocator '" + allocator
                    + "' (caching, bfc, caching-host)");
        }
        alloc = allocator.equals("caching-host")
                ? CachingHostAllocatorProvider.create(device) : BenchmarkAllocators.create(allocator, device);
        long[] fillers = new long[freeBlocks];
        keepers = new long[freeBlocks + 1];
        long probe = 0;
        for (int i = 0; i < freeBlocks; i++) {
            fillers[i] = alloc.malloc(fillerSize, stream);
            keepers[i] = alloc.malloc(fillerSize, stream);
            if (i == freeBlocks / 2) {
                probe = alloc.malloc(probeSize, stream);
                keepers[freeBlocks] = alloc.malloc(fillerSize, stream);
            }
        }
        // In address order, as the sorted structures hold them: setup then costs no more than the pool's own order
        // needs, with the sorted arrays of before as with trees.
        Arrays.sort(fillers);
        for (long f : fillers) {
            alloc.free(f);
        }
        alloc.free(probe);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        // From the highest address down: each keeper merges with the free blocks beside it, which are then the
        // last of their pool's order, so teardown is quick even where the pool was a sorted array.
        Arrays.sort(keepers);
        for (int i = keepers.length - 1; i >= 0; i--) {
            alloc.free(keepers[i]);
        }
        if (alloc.stats().activeAllocations() != 0) {
            throw new IllegalStateException("allocations left live: " + alloc.stats());
        }
        alloc.close();
        device.close();
    }

    /** One allocate+free pair of the probe's size; returns the address so that the JIT cannot drop it. */
    @Benchmark
    public long allocateFree() {
        long address = alloc.malloc(probeSize, stream);
        alloc.free(address);
        return address;
    }
}
