package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.sim.EventCompletion;
import io.devalloc.sim.SimulatedDevice;
import java.util.Map;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

/**
 * Expandable segments map in pieces of one page, as PyTorch's {@code ExpandableSegment::map} creates one physical
 * handle per page of {@code segment_size_}: 20 MiB ({@code large_segment_size}) in the large pool, 2 MiB in the
 * small one. Seen through {@link CachingRobustnessTest.Faulty}, which records each map's piece size.
 */
class ExpandableSegmentPiecesTest {
    static final long MiB = 1L << 20;

    private static CachingArena arena(CachingRobustnessTest.Faulty device, String config) {
        return (CachingArena) new CachingAllocatorProvider(Map.of()).create(device, config);
    }

    @Test
    void largePoolMapsIn20MiBPiecesAndSmallPoolIn2MiBPieces() {
        var device = new CachingRobustnessTest.Faulty(CachingRobustnessTest.sim(EventCompletion.IMMEDIATE));
        CachingArena a = arena(device, "expandable_segments:True");
        long large = a.malloc(600 * MiB, DeviceStream.DEFAULT);
        long small = a.malloc(512, DeviceStream.DEFAULT);
        assertEquals(2, device.mapCalls.size());
        assertArrayEquals(new long[] {large, 600 * MiB, 20 * MiB}, device.mapCalls.get(0),
                "one map of 600 MiB, in 30 pieces of 20 MiB");
        assertArrayEquals(new long[] {small, 2 * MiB, 2 * MiB}, device.mapCalls.get(1), "one small page");

        // The pieces are real to the device: less than one page of the large map cannot be unmapped.
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        assertThrows(IllegalArgumentException.class, () -> vm.unmap(large, 2 * MiB));
        a.free(large);
        a.free(small);
        a.emptyCache();
        assertEquals(0, vm.mappedBytes(), "the arena's unmaps cover whole pages");
        a.close();
    }

    @Test
    void theLargePieceIsTheConfiguredLargeSegmentSize() {
        var device = new CachingRobustnessTest.Faulty(CachingRobustnessTest.sim(EventCompletion.IMMEDIATE));
        CachingArena a = arena(device, "expandable_segments:True,large_segment_size_mb:32");
        long p = a.malloc(5 * MiB, DeviceStream.DEFAULT);
        assertArrayEquals(new long[] {p, 32 * MiB, 32 * MiB}, device.mapCalls.getFirst());
        a.free(p);
        a.close();
    }

    /**
     * A large page that is not a multiple of the device's granule cannot be mapped: refused when the allocator opens.
     */
    @Test
    void aLargePageThatIsNotAWholeNumberOfGranulesIsRefusedUpFront() {
        SimulatedDevice d = SimulatedDevice.builder().capacity(1L << 30).build();
        InvalidConfigurationException e = Assertions.assertThrows(
                InvalidConfigurationException.class,
                () -> new CachingAllocatorProvider(Map.of()).create(d,
                        "expandable_segments:True,large_segment_size_mb:11"));
        Assertions.assertTrue(e.getMessage().contains("multiple of the mapping granule"),
                e.getMessage());
        Assertions.assertEquals(0, d.counters().mallocCalls());
        new CachingAllocatorProvider(Map.of()).create(d, "large_segment_size_mb:11").close();
        new CachingAllocatorProvider(Map.of()).create(d, "expandable_segments:True,large_segment_size_mb:12")
                .close();
    }
}
