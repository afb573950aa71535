package io.devalloc.benchmarks;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.sim.SimulatedDevice;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * RAPIDS RMM's {@code random_allocations} benchmark ({@code BM_RandomAllocations/<mr>/<N>/<max>}) on the simulated
 * 80 GiB device: {@code 2N} steps that each allocate (probability 73%, while fewer than {@code N} allocations were
 * made and fewer than 16000 MiB are live) or free a random live allocation, sizes uniform in
 * {@code [1, maxMiB MiB]}, then free whatever is left. See {@link RandomAllocationsPlan} for the exact rules. The
 * sequence is drawn once per trial in setup (seed {@value #SEED}), so the measured loop only calls the allocator.
 *
 * <p>Benchmarks {@code n1000}, {@code n10000} and {@code n100000} are {@code N = 1000}, {@code 10000} and
 * {@code 100000}, RMM's largest {@code num_allocations} (JMH's {@link OperationsPerInvocation} must be a constant,
 * hence one method per {@code N}). One invocation replays one
 * whole sequence, which makes exactly {@code N} allocations and {@code N} frees for every parameter combination
 * (setup checks it): {@code 2N} operations. The score is therefore <b>nanoseconds per operation</b> (one malloc or
 * one free), and {@code gc.alloc.rate.norm} is bytes of Java heap per operation. RMM reports milliseconds per
 * sequence: multiply the score by {@code 2N / 10^6} (by 0.002 for {@code n1000}, by 0.02 for {@code n10000}, by
 * 0.2 for {@code n100000}).
 *
 * <pre>java -jar benchmarks/target/benchmarks.jar RandomAllocations -prof gc</pre>
 */
public class RandomAllocationsBenchmark extends NanosecondBenchmark {

    /** The seed of every sequence, so that runs and allocators replay the same sequences. */
    public static final long SEED = 0x5EED_2026L;

    /** The allocator and device for one trial and the precomputed sequence; subclasses fix {@code N}. */
    @State(Scope.Thread)
    public abstract static class Sequence {

        /** Largest allocation, in MiB (RMM's {@code max}). */
        @Param({"1", "4", "64"})
        public int maxMiB;

        /** The allocator (see {@link BenchmarkAllocators#create}). */
        @Param({"bfc", "caching", "direct"})
        public String allocator;

        final DeviceStream stream = DeviceStream.DEFAULT;
        SimulatedDevice device;
        DeviceAllocator alloc;
        RandomAllocationsPlan plan;

        /** RMM's {@code num_allocations}. */
        abstract int n();

        @Setup(Level.Trial)
        public void setUp() {
            plan = RandomAllocationsPlan.generate(n(), maxMiB, SEED);
            if (plan.operations() != 2L * n()) {
                // The per-operation score divides by 2N; say so rather than report a wrong figure.
                throw new IllegalStateException("sequence N=" + n() + " max=" + maxMiB + " MiB makes "
                        + plan.allocations + " allocations, not " + n());
            }
            device = BenchmarkAllocators.device();
            alloc = BenchmarkAllocators.create(allocator, device);
            // Warm: BFC reserves its region at the first allocation.
            alloc.free(alloc.malloc(1, stream));
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            if (alloc.stats().activeAllocations() != 0) {
                throw new IllegalStateException("allocations left live: " + alloc.stats());
            }
            alloc.close();
            device.close();
        }

        long replay() {
            return plan.replay(alloc, stream);
        }
    }

    /** {@code N = 1000}. */
    @State(Scope.Thread)
    public static class N1000 extends Sequence {
        @Override
        int n() {
            return 1000;
        }
    }

    /** {@code N = 10000}. */
    @State(Scope.Thread)
    public static class N10000 extends Sequence {
        @Override
        int n() {
            return 10000;
        }
    }

    /** {@code N = 100000}. */
    @State(Scope.Thread)
    public static class N100000 extends Sequence {
        @Override
        int n() {
            return 100_000;
        }
    }

    /** One sequence of 1,000 allocations and 1,000 frees; score per operation. */
    @Benchmark
    @OperationsPerInvocation(2 * 1000)
    public long n1000(N1000 sequence) {
        return sequence.replay();
    }

    /** One sequence of 10,000 allocations and 10,000 frees; score per operation. */
    @Benchmark
    @OperationsPerInvocation(2 * 10000)
    public long n10000(N10000 sequence) {
        return sequence.replay();
    }

    /** One sequence of 100,000 allocations and 100,000 frees; score per operation. */
    @Benchmark
    @OperationsPerInvocation(2 * 100_000)
    public long n100000(N100000 sequence) {
        return sequence.replay();
    }
}
