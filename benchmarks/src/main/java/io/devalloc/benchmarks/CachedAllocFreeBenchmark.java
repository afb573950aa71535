package io.devalloc.benchmarks;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.sim.SimulatedDevice;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Allocate and free one size that the allocator has cached, on one thread, through the raw-address path
 * ({@link DeviceAllocator#malloc(long, DeviceStream)} and {@link DeviceAllocator#free(long)}). One operation is one
 * allocate+free pair; the score is nanoseconds per pair.
 *
 * <p>For {@code bfc} this is the pool's hot path: find the chunk in its bin, split it, then free and coalesce it
 * back. Setup allocates and frees once so that the region exists before measuring. The targets: at most
 * 100 ns per pair, and 0 B of Java heap per pair ({@code -prof gc}, {@code gc.alloc.rate.norm}). For
 * {@code direct} every pair is a device malloc and a device free: on the simulated device that is bookkeeping
 * only, so it shows the cost of the allocator and device layers, not of {@code cudaMalloc} (tens of
 * microseconds on a real GPU).
 *
 * <pre>java -jar benchmarks/target/benchmarks.jar CachedAllocFree -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
// JMH 1.37 calls sun.misc.Unsafe::objectFieldOffset, which JDK 24+ warns about; the flag keeps the forks quiet.
@Fork(value = 1, jvmArgsAppend = "--sun-misc-unsafe-memory-access=allow")
public class CachedAllocFreeBenchmark {

    /** Bytes per allocation: 256 B (BFC's rounding unit), 64 KiB, 4 MiB. */
    @Param({"256", "65536", "4194304"})
    public long size;

    /** The allocator (see {@link BenchmarkAllocators#create}). */
    @Param({"bfc", "caching", "direct"})
    public String allocator;

    private final DeviceStream stream = DeviceStream.DEFAULT;
    private SimulatedDevice device;
    private DeviceAllocator alloc;

    @Setup(Level.Trial)
    public void setUp() {
        device = BenchmarkAllocators.device();
        alloc = BenchmarkAllocators.create(allocator, device);
        // Warm the cache: BFC reserves its region at the first allocation.
        alloc.free(alloc.malloc(size, stream));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (alloc.stats().activeAllocations() != 0) {
            throw new IllegalStateException("allocations left live: " + alloc.stats());
        }
        alloc.close();
        device.close();
    }

    /** One allocate+free pair; returns the address so that the JIT cannot drop the allocation. */
    @Benchmark
    public long allocateFree() {
        long address = alloc.malloc(size, stream);
        alloc.free(address);
        return address;
    }
}
