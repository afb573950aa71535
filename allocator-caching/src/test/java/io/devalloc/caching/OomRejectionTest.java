package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code throw_on_cudamalloc_oom} (pytorch#179473) as upstream's {@code alloc_block} has it: checked before every
 * device allocation (malloc or expandable map) after the runtime-limit check, against the <em>configured</em>
 * fraction (1.0 when none); a refusal skips the rest of the retry ladder, counts {@code num_oom_rejections} (not
 * {@code num_ooms}), records no {@code oom} trace entry, calls only the rejection observers, and throws upstream's
 * text with the caller's request.
 */
class OomRejectionTest {

    static final long MiB = 1024 * 1024;
    static final long GiB = 1024 * MiB;

    private final List<CachingArena> arenas = new ArrayList<>();

    private CachingArena arena(String config) {
        CachingArena a = (CachingArena) new CachingAllocatorProvider(Map.of())
                .create(SimulatedDevice.builder().capacity(GiB).build(), config);
        arenas.add(a);
        return a;
    }

    @AfterEach
    void invariantsHold() {
        arenas.forEach(CachingInvariants::check);
    }

    private static long stat(CachingArena a, String key) {
        return a.memoryStats().get(key);
    }

    @Test
    void aRefusalSkipsTheRetryLadderAndKeepsTheCache() throws InterruptedException {
        CachingArena a = arena("throw_on_cudamalloc_oom:True");
        a.recordHistory(1000);
        AtomicInteger oomObserved = new AtomicInteger();
        a.registerOutOfMemoryObserver((d, s, allowed, free) -> oomObserved.incrementAndGet());
        CountDownLatch rejectionSeen = new CountDownLatch(1);
        AtomicReference<long[]> rejection = new AtomicReference<>();
        a.registerOomRejectionObserver((d, size, total, deviceTotal) -> {
            rejection.set(new long[] {d, size, total, deviceTotal});
            rejectionSeen.countDown();
        });
        long live = a.malloc(600 * MiB, DeviceStream.DEFAULT);
        a.free(a.malloc(300 * MiB, DeviceStream.DEFAULT)); // a cached 300 MiB segment
        assertEquals(900 * MiB, a.stats().reservedBytes());

        OutOfMemoryException e = assertThrows(OutOfMemoryException.class,
                () -> a.malloc(400 * MiB + 1000, DeviceStream.DEFAULT));
        assertEquals("CUDA out of memory. Allocation was preemptively rejected because it would exceed"
                + " per_process_memory_fraction limit. Requested size: 400.00 MiB", e.getMessage());
        assertEquals(OutOfMemoryException.Reason.LIMIT_REACHED, e.reason());
        assertEquals(1, stat(a, "num_oom_rejections"));
        assertEquals(0, stat(a, "num_ooms"));
        assertEquals(0, stat(a, "num_alloc_retries"), "no retry");
        assertEquals(0, stat(a, "num_sync_all_streams"), "the cache was not released");
        assertEquals(900 * MiB, a.stats().reservedBytes());
        assertEquals(1, a.stats().outOfMemoryErrors(), "the common stats count every error thrown");
        assertTrue(a.history().stream().noneMatch(t -> t.action() == TraceAction.OOM), "no oom trace entry");
        assertEquals(0, oomObserved.get(), "OOM observers are not called");
        assertTrue(rejectionSeen.await(10, TimeUnit.SECONDS));
        assertEquals(0, rejection.get()[0]);
        assertEquals(402 * MiB, rejection.get()[1], "the segment size");
        assertEquals(900 * MiB, rejection.get()[2]);
        assertEquals(GiB, rejection.get()[3]);

        a.resetAccumulatedStats();
        assertEquals(0, stat(a, "num_oom_rejections"));
        a.free(live);
    }

    /** The warning prints the percentage as upstream's ostream does: 100, not 100.0. */
    @Test
    void percentagesAsCxxPrintsThem() {
        assertEquals("100", CachingArenaReports.ostreamDouble(100.0));
        assertEquals("50", CachingArenaReports.ostreamDouble(50.0));
        assertEquals("12.5", CachingArenaReports.ostreamDouble(12.5));
        assertEquals("33.3333", CachingArenaReports.ostreamDouble(100.0 / 3));
        assertEquals("0.5", CachingArenaReports.ostreamDouble(0.5));
        assertEquals("0", CachingArenaReports.ostreamDouble(0.0));
    }

    @Test
    void withoutTheKeyTheLadderReleasesTheCacheAndSucceeds() {
        CachingArena a = arena("");
        long live = a.malloc(600 * MiB, DeviceStream.DEFAULT);
        a.free(a.malloc(300 * MiB, DeviceStream.DEFAULT));
        long p = a.malloc(400 * MiB + 1000, DeviceStream.DEFAULT);
        assertEquals(1, stat(a, "num_alloc_retries"));
        assertEquals(0, stat(a, "num_oom_rejections"));
        a.free(p);
        a.free(live);
    }

    @Test
    void expandableMapsAreCheckedToo() {
        CachingArena a = arena("throw_on_cudamalloc_oom:True,expandable_segments:True");
        long live = a.malloc(900 * MiB, DeviceStream.DEFAULT);
        assertThrows(OutOfMemoryException.class, () -> a.malloc(200 * MiB, DeviceStream.DEFAULT));
        assertEquals(1, stat(a, "num_oom_rejections"));
        assertEquals(1, stat(a, "num_device_alloc"), "no map was attempted");
        a.free(live);
    }

    /**
     * With a configured fraction below 1, upstream's runtime-limit check (allowed_memory_maximum, set from the same
     * fraction) answers first, so the allocation takes the normal path to out of memory.
     */
    @Test
    void aConfiguredFractionIsCheckedFirstByTheRuntimeLimit() {
        CachingArena a = arena("throw_on_cudamalloc_oom:True,per_process_memory_fraction:0.5");
        long live = a.malloc(400 * MiB, DeviceStream.DEFAULT);
        OutOfMemoryException e = assertThrows(OutOfMemoryException.class,
                () -> a.malloc(200 * MiB, DeviceStream.DEFAULT));
        assertTrue(e.getMessage().startsWith("CUDA out of memory. Tried to allocate 200.00 MiB."), e.getMessage());
        assertTrue(e.getMessage().contains("512.00 MiB allowed; "), e.getMessage());
        assertEquals(1, stat(a, "num_ooms"));
        assertEquals(0, stat(a, "num_oom_rejections"));
        a.free(live);
    }

    /** After the runtime fraction is lifted, the check still uses the configured 0.5, as upstream. */
    @Test
    void theCheckUsesTheConfiguredFractionNotTheRuntimeOne() {
        CachingArena a = arena("throw_on_cudamalloc_oom:True,per_process_memory_fraction:0.5");
        a.setPerProcessMemoryFraction(1.0);
        assertEquals(1.0, a.perProcessMemoryFraction());
        long live = a.malloc(400 * MiB, DeviceStream.DEFAULT);
        assertThrows(OutOfMemoryException.class, () -> a.malloc(200 * MiB, DeviceStream.DEFAULT));
        assertEquals(1, stat(a, "num_oom_rejections"));
        assertEquals(0, stat(a, "num_ooms"));
        a.free(live);
    }

    /** Upstream's dispatch: one try around the loop, so a throwing observer is logged and ends the round. */
    @Test
    void anObserverThatThrowsIsLoggedAndEndsTheRound() {
        List<String> calls = new ArrayList<>();
        List<CachingAllocator.OomRejectionObserver> observers = List.of(
                (d, s, t, total) -> calls.add("first"),
                (d, s, t, total) -> {
                    throw new IllegalStateException("observer failure");
                },
                (d, s, t, total) -> calls.add("third"));
        String err = StderrCapture.during(() -> CachingArenaReports.dispatchRejection(observers, 0, MiB, 0, GiB));
        assertEquals(List.of("first"), calls);
        assertTrue(err.contains("Exception in OOM rejection observer: observer failure"), err);
    }

    @Test
    void aThrowingObserverLeavesTheAllocatorUsable() throws InterruptedException {
        CachingArena a = arena("throw_on_cudamalloc_oom:True");
        CountDownLatch called = new CountDownLatch(1);
        a.registerOomRejectionObserver((d, s, t, total) -> {
            called.countDown();
            throw new IllegalStateException("observer failure");
        });
        assertThrows(OutOfMemoryException.class, () -> a.malloc(2 * GiB, DeviceStream.DEFAULT));
        assertTrue(called.await(10, TimeUnit.SECONDS));
        long p = a.malloc(MiB, DeviceStream.DEFAULT);
        a.free(p);
    }
}
