package io.devalloc.benchmarks;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.List;

/**
 * One of devalloc's allocators ({@link BenchmarkAllocators#create}) over a simulated 80 GiB device of its own, through
 * the raw-address path ({@link DeviceAllocator#malloc(long, DeviceStream)}, {@link DeviceAllocator#free(long)}).
 */
final class DevallocPairAllocator implements PairAllocator {

    private final SimulatedDevice device;
    private final DeviceAllocator allocator;
    /** The streams {@link #forThread} created, destroyed by {@link #close}. */
    private final List<DeviceStream> streams = new ArrayList<>();

    DevallocPairAllocator(String name) {
        device = BenchmarkAllocators.device();
        try {
            allocator = BenchmarkAllocators.create(name, device);
        } catch (RuntimeException e) {
            device.close();
            throw e;
        }
    }

    /** The allocator, for checks outside the measured body. */
    DeviceAllocator allocator() {
        return allocator;
    }

    @Override
    public Pairs forThread(long size, boolean ownStream) {
        // Streams are created under the device's lock, so threads may call this at once.
        DeviceStream stream = DeviceStream.DEFAULT;
        if (ownStream) {
            stream = device.createStream();
            synchronized (streams) {
                streams.add(stream);
            }
        }
        // Warm the cache: BFC reserves its region at the first allocation, caching obtains a segment.
        allocator.free(allocator.malloc(size, stream));
        return new OnStream(allocator, size, stream);
    }

    @Override
    public void close() {
        try {
            if (allocator.stats().activeAllocations() != 0) {
                throw new IllegalStateException("allocations left live: " + allocator.stats());
            }
            // Closing gives the cached blocks of every stream back to the device before the streams go.
            allocator.close();
            synchronized (streams) {
                for (DeviceStream stream : streams) {
                    device.destroyStream(stream);
                }
                streams.clear();
            }
        } finally {
            device.close();
        }
    }

    /** A thread's pairs: {@code size} bytes on {@code stream}. */
    private record OnStream(DeviceAllocator allocator, long size, DeviceStream stream) implements Pairs {

        @Override
        public long allocateFree() {
            long address = allocator.malloc(size, stream);
            allocator.free(address);
            return address;
        }
    }
}
