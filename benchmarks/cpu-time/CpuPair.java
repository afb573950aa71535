import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.bfc.BfcAllocatorProvider;
import io.devalloc.bfc.BfcOptions;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.caching.CachingOptions;
import io.devalloc.sim.SimulatedDevice;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * CPU time (not wall time) in ns per cached allocate+free pair on the raw path, as CachedAllocFreeBenchmark does
 * it (same device and allocator settings): on a loaded, time-shared machine JMH's wall-clock figures swing by 2x,
 * the thread's CPU time far less. Not built by Maven; run it with the source launcher against the benchmarks jar:
 * java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar benchmarks/cpu-time/CpuPair.java bfc 9
 * (allocators comma-separated, then rounds of 1 M pairs after 5 warm-up rounds; min, p25 and median printed).
 */
public class CpuPair {
    static long sink;
    public static void main(String[] args) {
        String[] allocs = args.length > 0 ? args[0].split(",") : new String[] {"bfc", "caching"};
        long[] sizes = {256, 65536, 4194304};
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        for (String a : allocs) {
            for (long size : sizes) {
                SimulatedDevice device = SimulatedDevice.ofCapacity(80L << 30);
                DeviceAllocator alloc = switch (a) {
                    case "bfc" -> BfcAllocatorProvider.create(device, BfcOptions.defaults().withRetry(false, 0));
                    case "caching" -> CachingAllocatorProvider.create(device, CachingOptions.defaults());
                    default -> throw new IllegalArgumentException(a);
                };
                DeviceStream stream = DeviceStream.DEFAULT;
                alloc.free(alloc.malloc(size, stream));
                int n = 1_000_000;
                for (int w = 0; w < 5; w++) run(alloc, size, stream, n);
                double[] r = new double[rounds];
                for (int i = 0; i < rounds; i++) {
                    long t0 = mx.getCurrentThreadCpuTime();
                    run(alloc, size, stream, n);
                    r[i] = (mx.getCurrentThreadCpuTime() - t0) / (double) n;
                }
                Arrays.sort(r);
                System.out.printf("%-8s %8d  min %6.1f  p25 %6.1f  median %6.1f ns/pair (cpu)%n",
                        a, size, r[0], r[rounds / 4], r[rounds / 2]);
                alloc.close();
                device.close();
            }
        }
    }
    static void run(DeviceAllocator alloc, long size, DeviceStream stream, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            long p = alloc.malloc(size, stream);
            alloc.free(p);
            s += p;
        }
        sink += s;
    }
}
