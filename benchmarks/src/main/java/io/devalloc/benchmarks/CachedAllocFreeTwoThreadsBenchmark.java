package io.devalloc.benchmarks;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * {@link CachedAllocFreeBenchmark} on two threads that share one allocator: each thread allocates and frees its own
 * size, thread 0 {@link Shared#size} and thread 1 one and a half times that (384 B, 96 KiB, 6 MiB: another
 * cached block, another size class in each allocator), and, for devalloc's allocators, on its own stream created
 * for it on the shared simulated device. Netty's allocators are shared as Netty shares them (per-thread caches or
 * magazines where its defaults give them); {@code ffm-confined} opens a confined arena per pair on each thread, so
 * the threads share only the native {@code malloc}.
 *
 * <p>One operation is one allocate+free pair of one thread; JMH reports the average time per pair over both
 * threads. With the two threads on two cores and no contention that equals the single-thread figure; what it adds
 * is the cost of sharing (locks, cache lines). On a loaded 2-core machine the threads also compete for the cores.
 *
 * <pre>java -jar benchmarks/target/benchmarks.jar CachedAllocFree -prof gc</pre>
 */
@Fork(value = 1, jvmArgsAppend = {
        // As CachedAllocFreeBenchmark.
        "--sun-misc-unsafe-memory-access=allow",
        "-Dio.netty.leakDetection.level=disabled"})
public class CachedAllocFreeTwoThreadsBenchmark extends NanosecondBenchmark {

    /** The allocator both threads share. */
    @State(Scope.Benchmark)
    public static class Shared {

        /** Thread 0's bytes per allocation (thread 1 allocates 1.5 times as much): 256 B, 64 KiB, 4 MiB. */
        @Param({"256", "65536", "4194304"})
        public long size;

        /** The allocator (see {@link PairAllocator#open}). */
        @Param({"bfc", "caching", "direct", "netty-pooled", "netty-adaptive", "ffm-confined"})
        public String allocator;

        PairAllocator alloc;

        @Setup(Level.Trial)
        public void setUp() {
            alloc = PairAllocator.open(allocator);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            // Once, after both threads have stopped measuring; it also destroys the threads' streams.
            alloc.close();
        }
    }

    /** One thread's size and stream. */
    @State(Scope.Thread)
    public static class PerThread {

        PairAllocator.Pairs pairs;

        @Setup(Level.Trial)
        public void setUp(Shared shared, ThreadParams thread) {
            open(shared, thread.getThreadIndex());
        }

        /** Thread {@code index}'s pairs from the shared allocator (what setup does; the smoke test calls it). */
        void open(Shared shared, int index) {
            pairs = shared.alloc.forThread(sizeOf(shared.size, index), true);
        }
    }

    /** Thread {@code index}'s size: {@code size} for thread 0, {@code size * 1.5} for thread 1. */
    static long sizeOf(long size, int index) {
        return size + index * (size / 2);
    }

    /** One allocate+free pair of the calling thread; returns the address so that the JIT cannot drop it. */
    @Benchmark
    @Threads(2)
    public long allocateFree(PerThread thread) {
        return thread.pairs.allocateFree();
    }
}
