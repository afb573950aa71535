package io.devalloc.benchmarks;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.units.ByteSize;
import io.devalloc.micrometer.DevallocMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What observability costs an allocator built with {@link DeviceAllocators#builder()} over a simulated 80 GiB device
 * ({@code sim:80GiB}), per {@code observer} (see {@link Observed#OBSERVERS}):
 * <ul>
 *   <li>{@code none}: nothing set, so the builder wraps nothing: the raw allocator, as
 *       {@link CachedAllocFreeBenchmark} measures it;</li>
 *   <li>{@code listener}: one listener that does nothing, so the cost is the wrappers' alone (the allocator
 *       decorator, the device wrapper that times each device call, the guard around the listener);</li>
 *   <li>{@code micrometer}: {@link DevallocMetrics}' listener, bound with its gauges to a
 *       {@link SimpleMeterRegistry} (a counter increment and a timer record per device call);</li>
 *   <li>{@code jfr}: {@code jfrEvents(true)} with no recording running: each device call checks one flag
 *       ({@code Event.shouldCommit()}) beside the timing.</li>
 * </ul>
 * Two benchmarks, one operation = one allocate+free pair of 1 MiB on the default stream, through the raw-address
 * path:
 * <ul>
 *   <li>{@link #cachedPair}: {@code caching} and {@code bfc} with the size cached: no device call, so no listener
 *       call (the hot path tells the listener nothing); it shows what the decorator costs on the hot path, and that
 *       with {@code none} the pair allocates nothing on the heap ({@code -prof gc}, {@code gc.alloc.rate.norm});</li>
 *   <li>{@link #devicePair}: {@code direct}, where every malloc and every free is a device call: the listener is
 *       told twice per pair (a {@code malloc} and a {@code free}), so the difference to {@code none} is what the
 *       listener costs per two device calls. On the simulated device a device call is bookkeeping only (a real
 *       {@code cudaMalloc} takes tens of microseconds), so the ratio is the worst case.</li>
 * </ul>
 * Caching and BFC with their cache emptied after every pair would also call the device, but add a cache release
 * (a third listener call, and for {@code caching} a wait on every pending event) to each pair; {@code direct}
 * calls the device and nothing else.
 *
 * <pre>java -jar benchmarks/target/benchmarks.jar ObservabilityBenchmark -prof gc</pre>
 */
public class ObservabilityBenchmark extends NanosecondBenchmark {

    /** Bytes per allocation: 1 MiB (the largest size of {@code caching}'s small pool, a 2 MiB segment). */
    static final long SIZE = ByteSize.MiB;

    /** A cached pair: the size is cached before measuring, so no pair calls the device. */
    @Benchmark
    public long cachedPair(Cached state) {
        return state.pair();
    }

    /** A pair where the malloc and the free are each a device call ({@code direct}). */
    @Benchmark
    public long devicePair(Uncached state) {
        return state.pair();
    }

    /** The allocator {@code cachedPair} measures: {@code caching} or {@code bfc}. */
    @State(Scope.Thread)
    public static class Cached extends Observed {

        /** {@code caching}: PyTorch's defaults; {@code bfc}: GPUBFCAllocator's defaults, retry on failure off. */
        @Param({"caching", "bfc"})
        public String allocator;

        @Override
        String allocatorName() {
            return allocator;
        }
    }

    /** The allocator {@code devicePair} measures: {@code direct}, which calls the device on every malloc and free. */
    @State(Scope.Thread)
    public static class Uncached extends Observed {

        @Override
        String allocatorName() {
            return "direct";
        }
    }

    /**
     * An allocator built with one observer; setup makes one pair so that a caching allocator has the size cached.
     * Annotated so that JMH takes its {@code @Param}; only its subclasses are benchmark arguments.
     */
    @State(Scope.Thread)
    public abstract static class Observed {

        /** Every value of {@link #observer}. */
        static final List<String> OBSERVERS = List.of("none", "listener", "micrometer", "jfr");

        /** What watches the allocator: {@code none}, {@code listener}, {@code micrometer} or {@code jfr}. */
        @Param({"none", "listener", "micrometer", "jfr"})
        public String observer;

        DeviceAllocator alloc;
        /** The registry the {@code micrometer} observer is bound to; null for the other observers. */
        MeterRegistry registry;

        /** The allocator kind to build ({@code caching}, {@code bfc}, {@code direct}). */
        abstract String allocatorName();

        @Setup(Level.Trial)
        public void setUp() {
            String kind = allocatorName();
            DeviceAllocators.Builder builder = DeviceAllocators.builder().device("sim:80GiB").allocator(kind)
                    // As BenchmarkAllocators builds bfc: a failure shows at once instead of after a 10 s wait.
                    .config(kind.equals("bfc") ? "allow_retry_on_failure:false" : "");
            DevallocMetrics metrics = null;
            switch (observer) {
                case "none" -> {
                }
                case "listener" -> builder.listener(new AllocatorListener() {
                    @Override
                    public String toString() {
                        return "a listener that does nothing";
                    }
                });
                case "micrometer" -> {
                    metrics = DevallocMetrics.named("benchmark");
                    builder.listener(metrics.listener());
                }
                case "jfr" -> builder.name("benchmark").jfrEvents(true);
                default -> throw new IllegalArgumentException("unknown observer '" + observer + "' " + OBSERVERS);
            }
            alloc = builder.build();
            if (metrics != null) {
                registry = new SimpleMeterRegistry();
                metrics.bindTo(registry, alloc);
            }
            // Warm the cache: BFC reserves its region at the first allocation, caching obtains a segment.
            pair();
        }

        /** One allocate+free pair; returns the address so that the JIT cannot drop the allocation. */
        final long pair() {
            long address = alloc.malloc(SIZE, DeviceStream.DEFAULT);
            alloc.free(address);
            return address;
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            try {
                if (alloc.stats().activeAllocations() != 0) {
                    throw new IllegalStateException("allocations left live: " + alloc.stats());
                }
            } finally {
                alloc.close();
                if (registry != null) {
                    registry.close();
                }
            }
        }
    }
}
