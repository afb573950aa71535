package io.devalloc.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.InvalidFreeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.mockito.Mockito;

class AllocationTest {

    @Test
    void closeFreesOnceAndASecondCloseIsADoubleFree() {
        DeviceAllocator owner = mock(DeviceAllocator.class);
        Allocation a = new Allocation(owner, 0x4000, 100, DeviceStream.DEFAULT, 7);
        a.close();
        assertTrue(a.isFreed());
        InvalidFreeException e = assertThrows(InvalidFreeException.class, a::close);
        assertEquals(InvalidFreeException.Reason.DOUBLE_FREE, e.reason());
        verify(owner, times(1)).free(0x4000, 7);
    }

    @Test
    void aRefusedFreeLeavesTheHandleUnfreed() {
        DeviceAllocator owner = mock(DeviceAllocator.class);
        doThrow(new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, 0x4000, "x"))
                .when(owner).free(0x4000, 7);
        Allocation a = new Allocation(owner, 0x4000, 100, DeviceStream.DEFAULT, 7);
        assertThrows(InvalidFreeException.class, a::close);
        assertFalse(a.isFreed());
    }

    @Test
    void afterTheAllocatorClosedACloseDoesNothing() {
        DeviceAllocator owner = mock(DeviceAllocator.class);
        when(owner.isClosed()).thenReturn(true);
        Allocation a = new Allocation(owner, 0x4000, 100, DeviceStream.DEFAULT, 7);
        a.close();
        verify(owner, times(0)).free(0x4000, 7);
        assertTrue(a.isFreed());
    }

    /**
     * Issue 15, defect 5: the allocator closes after the handle saw it open and before its free ran (the free is
     * refused because the allocator is closed). Before the fix the handle's close threw that
     * {@link IllegalStateException}; now, as for any close after the allocator's, it does nothing.
     */
    @Test
    void anAllocatorClosingDuringTheHandlesCloseIsNoError() {
        DeviceAllocator owner = mock(DeviceAllocator.class);
        when(owner.isClosed()).thenReturn(false, true);
        doThrow(new IllegalStateException("allocator is closed")).when(owner).free(0x4000, 7);
        Allocation a = new Allocation(owner, 0x4000, 100, DeviceStream.DEFAULT, 7);
        a.close();
        assertTrue(a.isFreed(), "its memory went back with the allocator");
        verify(owner, times(1)).free(0x4000, 7);
        InvalidFreeException twice = assertThrows(InvalidFreeException.class, a::close);
        assertEquals(InvalidFreeException.Reason.DOUBLE_FREE, twice.reason());
    }

    @Test
    void recordStreamAfterFreeIsRefused() {
        DeviceAllocator owner = mock(DeviceAllocator.class);
        Allocation a = new Allocation(owner, 0x4000, 100, DeviceStream.DEFAULT, 7);
        a.recordStream(new DeviceStream(5));
        verify(owner).recordStream(0x4000, new DeviceStream(5));
        a.close();
        assertThrows(IllegalStateException.class, () -> a.recordStream(new DeviceStream(5)));
    }

    @Test
    void concurrentClosesFreeExactlyOnce() throws Exception {
        AtomicInteger frees = new AtomicInteger();
        DeviceAllocator owner = mock(DeviceAllocator.class);
        Mockito.doAnswer(inv -> frees.incrementAndGet()).when(owner).free(0x8000, 7);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (int round = 0; round < 200; round++) {
                Allocation a = new Allocation(owner, 0x8000, 1, DeviceStream.DEFAULT, 7);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Boolean>> results = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    results.add(pool.submit(() -> {
                        go.await();
                        try {
                            a.close();
                            return true;
                        } catch (InvalidFreeException e) {
                            return false;
                        }
                    }));
                }
                go.countDown();
                int successes = 0;
                for (Future<Boolean> f : results) {
                    successes += f.get(10, TimeUnit.SECONDS) ? 1 : 0;
                }
                assertEquals(1, successes, "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(200, frees.get());
    }

    @Test
    void zeroByteAllocationFreesNothing() {
        DeviceAllocator owner = mock(DeviceAllocator.class);
        Allocation a = new Allocation(owner, 0, 0, DeviceStream.DEFAULT, 7);
        a.recordStream(new DeviceStream(3));
        verify(owner, times(0)).recordStream(0, new DeviceStream(3));
        a.close();
        verify(owner, times(0)).free(0, 7);
    }

    /** A close() between allocate's malloc and its allocationId: the caller sees a closed allocator, not a bad free. */
    @Test
    void anAllocatorClosedDuringAllocateThrowsIllegalState() {
        DeviceAllocator owner = mock(DeviceAllocator.class);
        when(owner.allocate(64, DeviceStream.DEFAULT)).thenCallRealMethod();
        when(owner.malloc(64, DeviceStream.DEFAULT)).thenReturn(0x4000L);
        when(owner.allocationId(0x4000)).thenThrow(
                new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, 0x4000, "already freed"));
        when(owner.isClosed()).thenReturn(true);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> owner.allocate(64, DeviceStream.DEFAULT));
        assertTrue(e.getCause() instanceof InvalidFreeException, String.valueOf(e.getCause()));
        // While open, the same failure is the allocator's own and goes out as it is.
        when(owner.isClosed()).thenReturn(false);
        assertThrows(InvalidFreeException.class, () -> owner.allocate(64, DeviceStream.DEFAULT));
    }
}
