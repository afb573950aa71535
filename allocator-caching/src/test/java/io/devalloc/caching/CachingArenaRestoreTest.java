package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.spi.ForwardingDeviceAllocator;
import io.devalloc.api.spi.LiveBytes;
import io.devalloc.api.spi.MappedPages;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.api.spi.SizeRounding;
import io.devalloc.sim.SimulatedDevice;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The warm-start restore is the arena's {@link PyTorchStateRestore} without being the arena: {@code unwrap} hands out
 * its one {@link CachingArenaRestore}, through decorators too, while the arena's own capabilities still unwrap to
 * the arena, and a restore on a closed arena is refused with its lock released.
 */
class CachingArenaRestoreTest {

    static final long MiB = 1L << 20;

    private static CachingArena arena() {
        return (CachingArena) new CachingAllocatorProvider(Map.of()).create(SimulatedDevice.ofCapacity(1L << 30), "");
    }

    @Test
    void unwrapHandsOutOneRestoreThatIsNotTheArena() {
        CachingArena a = arena();
        PyTorchStateRestore restore = a.unwrap(PyTorchStateRestore.class).orElseThrow();
        assertInstanceOf(CachingArenaRestore.class, restore);
        assertFalse(PyTorchStateRestore.class.isInstance(a), "the arena is the port of DeviceCachingAllocator only");
        assertSame(restore, a.unwrap(PyTorchStateRestore.class).orElseThrow(), "one per arena");
        a.close();
    }

    @Test
    void decoratorsReachTheRestoreAndTheArenasOwnCapabilities() {
        CachingArena a = arena();
        DeviceAllocator decorated = new ForwardingDeviceAllocator(a) {
        };
        assertSame(a.unwrap(PyTorchStateRestore.class).orElseThrow(),
                decorated.unwrap(PyTorchStateRestore.class).orElseThrow());
        assertSame(a, decorated.unwrap(LiveBytes.class).orElseThrow());
        assertSame(a, decorated.unwrap(SizeRounding.class).orElseThrow());
        assertSame(a, decorated.unwrap(MappedPages.class).orElseThrow());
        assertSame(a, decorated.unwrap(CachingAllocator.class).orElseThrow());
        a.close();
    }

    @Test
    void theSizingQuestionsAreTheArenasRules() {
        CachingArena a = arena();
        PyTorchStateRestore restore = a.unwrap(PyTorchStateRestore.class).orElseThrow();
        assertEquals(a.roundedSize(1000), restore.roundSize(1000), "round_size");
        assertTrue(restore.isSmallRequest(MiB));
        assertFalse(restore.isSmallRequest(MiB + 512));
        assertEquals(2 * MiB, restore.smallSegmentSize());
        assertEquals(20 * MiB, restore.largeSegmentSize());
        assertFalse(restore.expandableSegments());
        a.close();
    }

    @Test
    void aRestoreRestoresThroughTheMallocBookkeepingAndIsRefusedOnceClosed() throws Exception {
        CachingArena a = arena();
        PyTorchStateRestore restore = a.unwrap(PyTorchStateRestore.class).orElseThrow();
        long segment = restore.restoreSegment(20 * MiB, DeviceStream.DEFAULT);
        restore.restoreAllocation(segment, 4 * MiB, 4 * MiB - 100, DeviceStream.DEFAULT);
        assertEquals(20 * MiB, a.stats().reservedBytes());
        assertEquals(4 * MiB, a.stats().allocatedBytes());
        assertEquals(1, a.memoryStats().get("num_device_alloc"));
        CachingInvariants.check(a);
        a.free(segment);
        a.close();
        assertThrows(IllegalStateException.class, () -> restore.restoreSegment(20 * MiB, DeviceStream.DEFAULT));
        // Another thread gets the lock: the refused restore released it.
        assertEquals(0, CompletableFuture.supplyAsync(() -> a.stats().reservedBytes()).get(10, TimeUnit.SECONDS));
    }
}
