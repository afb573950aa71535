package io.devalloc.benchmarks;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Allocate and free one size that the allocator has cached, on one thread. One operation is one allocate+free pair;
 * the score is nanoseconds per pair. The same invocation measures devalloc's allocators and peers
 * ({@link PairAllocator#NAMES}):
 * <ul>
 *   <li>{@code bfc}, {@code caching}, {@code direct}: devalloc's, over the simulated device, through the raw-address
 *       path ({@link DeviceAllocator#malloc(long, DeviceStream)} and {@link DeviceAllocator#free(long)}) on the
 *       default stream. For {@code bfc} this is the pool's hot path: find the chunk in its bin, split it, then free
 *       and coalesce it back. For {@code direct} every pair is a device malloc and a device free: on the simulated
 *       device that is bookkeeping only, so it shows the cost of the allocator and device layers, not of
 *       {@code cudaMalloc} (tens of microseconds on a real GPU);</li>
 *   <li>{@code netty-pooled}, {@code netty-adaptive}: Netty's pooled and adaptive allocators, direct buffers
 *       ({@link NettyPairAllocator});</li>
 *   <li>{@code ffm-confined}: a confined FFM arena per pair: malloc, zeroing and free
 *       ({@link FfmConfinedPairAllocator}).</li>
 * </ul>
 * Setup makes one pair so that the size is cached before measuring. The targets for devalloc: at most
 * 100 ns per pair, and 0 B of Java heap per pair ({@code -prof gc}, {@code gc.alloc.rate.norm}).
 * {@link CachedAllocFreeTwoThreadsBenchmark} is the same on two threads.
 *
 * <pre>java -jar benchmarks/target/benchmarks.jar CachedAllocFree -prof gc</pre>
 */
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = {
        // As NanosecondBenchmark's fork (Netty uses sun.misc.Unsafe only where it is allowed), and Netty's leak
        // detector off, as in Netty's own microbenchmarks (see NettyPairAllocator).
        "--sun-misc-unsafe-memory-access=allow",
        "-Dio.netty.leakDetection.level=disabled"})
public class CachedAllocFreeBenchmark extends NanosecondBenchmark {

    /** Bytes per allocation: 256 B (BFC's rounding unit), 64 KiB, 4 MiB. */
    @Param({"256", "65536", "4194304"})
    public long size;

    /** The allocator (see {@link PairAllocator#open}). */
    @Param({"bfc", "caching", "direct", "netty-pooled", "netty-adaptive", "ffm-confined"})
    public String allocator;

    PairAllocator alloc;
    private PairAllocator.Pairs pairs;

    @Setup(Level.Trial)
    public void setUp() {
        alloc = PairAllocator.open(allocator);
        pairs = alloc.forThread(size, false);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        alloc.close();
    }

    /** One allocate+free pair; returns the address so that the JIT cannot drop the allocation. */
    @Benchmark
    public long allocateFree() {
        return pairs.allocateFree();
    }
}
