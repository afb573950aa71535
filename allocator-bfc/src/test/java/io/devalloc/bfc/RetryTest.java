package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code allow_retry_on_failure} and {@code retry_timeout_ms}: TensorFlow's {@code AllocatorRetry}. No test asserts
 * a duration. The {@link Timeout}s are only guards that turn a hang (a waiter nobody wakes, a wait that should
 * not happen) into a failure; they are far above what any test takes.
 */
class RetryTest {

    private static final long MiB = ByteSize.MiB;

    private static BfcArena bfc(SimulatedDevice device, String config) {
        return (BfcArena) new BfcAllocatorProvider(Map.of()).create(device,
                "memory_limit_mb:1,allow_growth:false,virtual_memory:false," + config);
    }

    /**
     * An allocation that fails waits, and succeeds when another thread frees. The retry timeout is long on
     * purpose: the waiter must be woken by the free, not rescued by the final attempt after the deadline (with a
     * short timeout, a slow scheduler could let the deadline pass first and the test would prove nothing, or
     * flake). The handshake uses the retry counter, so nothing depends on timing.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aFailingAllocationWaitsAndSucceedsWhenAnotherThreadFrees() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "allow_retry_on_failure:true,retry_timeout_ms:600000")) {
            long held = a.malloc(MiB);
            Future<Long> waiter = pool.submit(() -> a.malloc(512 * 1024));
            while (a.stats().allocationRetries() == 0) {
                Thread.sleep(1); // until the other thread has failed its first attempt and entered the wait
            }
            a.free(held);
            long got = waiter.get();
            assertEquals(held, got, "served from the freed memory");
            assertEquals(1, a.stats().allocationRetries());
            assertEquals(0, a.stats().outOfMemoryErrors());
            a.free(got);
            BfcArenaInvariants.check(a);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void withAShortTimeoutAndNoFreeTheAllocationFailsAfterItsRetry() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "allow_retry_on_failure:true,retry_timeout_ms:50")) {
            long held = a.malloc(MiB);
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class, () -> a.malloc(256));
            assertEquals(OutOfMemoryException.Reason.LIMIT_REACHED, oom.reason());
            assertEquals(1, a.stats().allocationRetries());
            assertEquals(1, a.stats().outOfMemoryErrors());
            a.free(held);
            // The failure changed nothing: the arena is usable.
            a.free(a.malloc(256));
            BfcArenaInvariants.check(a);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void withRetryOffItFailsAtOnce() {
        // A 10-minute timeout that must not be used: retry is off.
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "allow_retry_on_failure:false,retry_timeout_ms:600000")) {
            long held = a.malloc(MiB);
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class, () -> a.malloc(256));
            assertEquals(OutOfMemoryException.Reason.LIMIT_REACHED, oom.reason());
            assertEquals(0, a.stats().allocationRetries());
            assertEquals(1, a.stats().outOfMemoryErrors());
            a.free(held);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void tryMallocReturnsZeroWithoutWaitingOrThrowing() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "allow_retry_on_failure:true,retry_timeout_ms:600000")) {
            long held = a.malloc(MiB);
            assertEquals(0, a.tryMalloc(256, 256, DeviceStream.DEFAULT));
            assertEquals(0, a.tryMalloc(2 * MiB, 256, DeviceStream.DEFAULT), "above the limit: 0 as well");
            assertEquals(0, a.tryMalloc(0, 256, DeviceStream.DEFAULT));
            assertEquals(0, a.stats().allocationRetries());
            assertEquals(0, a.stats().outOfMemoryErrors());
            a.free(held);
            assertEquals(held, a.tryMalloc(256, 256, DeviceStream.DEFAULT));
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aRequestAboveTheLimitFailsWithoutWaiting() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "allow_retry_on_failure:true,retry_timeout_ms:600000")) {
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class, () -> a.malloc(2 * MiB));
            assertEquals(OutOfMemoryException.Reason.REQUEST_TOO_LARGE, oom.reason());
            assertEquals(0, a.stats().allocationRetries());
        }
    }

    @Test
    void aZeroTimeoutMakesNoWaitButStillAFinalAttempt() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "allow_retry_on_failure:true,retry_timeout_ms:0")) {
            long held = a.malloc(MiB);
            assertThrows(OutOfMemoryException.class, () -> a.malloc(256));
            assertEquals(1, a.stats().outOfMemoryErrors());
            a.free(held);
        }
    }
}
