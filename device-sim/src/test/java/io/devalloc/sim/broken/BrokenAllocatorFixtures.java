package io.devalloc.sim.broken;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.DeviceAllocatorContract;
import java.util.HashMap;
import java.util.Map;

/**
 * Contract subclasses over deliberately broken allocators. Their names do not end in "Test", so Surefire does not
 * run them; {@link ContractCatchesViolationsTest} runs them through the JUnit engine and expects failures.
 */
final class BrokenAllocatorFixtures {

    private BrokenAllocatorFixtures() {
    }

    abstract static class OnSim extends DeviceAllocatorContract {
        @Override
        protected DeviceMemory openDevice() {
            return SimulatedDevice.ofCapacity(ByteSize.GiB);
        }

        DeviceAllocator direct(DeviceMemory device) {
            return new DirectAllocatorProvider().create(device, "");
        }
    }

    /** Silently ignores frees of addresses it does not know, instead of refusing them. */
    static class ForgivingFree extends OnSim {
        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new ForwardingAllocator(direct(device)) {
                @Override
                public void free(long address) {
                    try {
                        delegate.free(address);
                    } catch (InvalidFreeException ignored) {
                        // the bug under test
                    }
                }
            };
        }
    }

    /** Reports one allocation too many once anything was freed. */
    static class MiscountingStats extends OnSim {
        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new ForwardingAllocator(direct(device)) {
                @Override
                public AllocatorStats stats() {
                    AllocatorStats s = delegate.stats();
                    long active = s.activeAllocations() + (s.freeCount() > 0 ? 1 : 0);
                    return new AllocatorStats(s.allocationCount(), s.freeCount(), active, Math.max(active,
                            s.peakActiveAllocations()), s.allocatedBytes(), s.peakAllocatedBytes(), s.requestedBytes(),
                            s.peakRequestedBytes(), s.reservedBytes(), s.peakReservedBytes(), s.largestAllocation(),
                            s.largestFreeBlock(), s.deviceMallocs(), s.deviceFrees(), s.allocationRetries(),
                            s.outOfMemoryErrors(), s.limitBytes());
                }
            };
        }
    }

    /** Hands every third allocation out 512 bytes into the allocation made just before it (an overlap). */
    static class Overlapping extends OnSim {
        @Override
        protected DeviceAllocator createAllocator(DeviceMemory device) {
            return new ForwardingAllocator(direct(device)) {
                private long previous;
                private int count;

                @Override
                public synchronized long malloc(long bytes, DeviceStream stream) {
                    long real = delegate.malloc(bytes, stream);
                    long previousAddress = previous;
                    previous = real;
                    if (++count % 3 == 0 && previousAddress != 0) {
                        // Lie: claim the caller's bytes start inside the last allocation. Keep the real block so
                        // that frees still balance; the lie is the overlap the contract must catch.
                        aliases.put(previousAddress + 512, real);
                        return previousAddress + 512;
                    }
                    return real;
                }

                private final Map<Long, Long> aliases = new HashMap<>();

                @Override
                public synchronized void free(long address) {
                    Long real = aliases.remove(address);
                    delegate.free(real != null ? real : address);
                }

                @Override
                public synchronized long allocationId(long address) {
                    Long real = aliases.get(address);
                    return delegate.allocationId(real != null ? real : address);
                }

                @Override
                public synchronized void free(long address, long allocationId) {
                    Long real = aliases.remove(address);
                    delegate.free(real != null ? real : address, allocationId);
                }
            };
        }
    }
}
