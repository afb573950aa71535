package io.devalloc.caching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.units.ByteSize;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Expandable segments on real host memory: the caching allocator maps and unmaps pages of the host's virtual memory
 * (mmap/mprotect/madvise), and data written through the mappings reads back.
 */
class HostExpandableSegmentsTest {

    private static final long MiB = ByteSize.MiB;

    @Test
    void expandableSegmentsRunOnHostMemoryWithDataWrittenThroughTheMapping() {
        try (DeviceMemory host = DeviceRegistry.load().open("host:256MiB");
             CachingAllocator a = new CachingAllocatorProvider(Map.of()).create(host, "expandable_segments:True")) {
            assertTrue(host.virtualMemory().isPresent(), "host memory offers virtual memory");
            a.recordHistory(1000);
            List<long[]> live = new ArrayList<>();
            long[] sizes = {3 * MiB, 100_000, 25 * MiB, 7 * MiB, 512, 40 * MiB};
            for (int i = 0; i < sizes.length; i++) {
                long p = a.malloc(sizes[i], DeviceStream.DEFAULT);
                fill(host.hostView(p, sizes[i]).orElseThrow(), (byte) (i + 1));
                live.add(new long[] {p, sizes[i], i + 1});
            }
            for (long[] l : live) {
                check(host.hostView(l[0], l[1]).orElseThrow(), (byte) l[2]);
            }
            CachingInvariants.check((CachingArena) a);
            assertEquals(0, a.memoryStats().get("segment.all.current"), "expandable mappings are not segments");
            assertTrue(a.history().stream().anyMatch(e -> e.action() == TraceAction.SEGMENT_MAP));
            long mapped = host.virtualMemory().orElseThrow().mappedBytes();
            assertEquals(a.memoryStats().get("reserved_bytes.all.current"), mapped, "reserved = mapped host memory");
            for (long[] l : live) {
                a.free(l[0]);
            }
            a.emptyCache();
            assertEquals(0, host.virtualMemory().orElseThrow().mappedBytes(), "every page went back to the OS");
            assertEquals(0, a.memoryStats().get("reserved_bytes.all.current"));
            assertTrue(a.history().stream().anyMatch(e -> e.action() == TraceAction.SEGMENT_UNMAP));
            // Freshly mapped pages read zero again.
            long p = a.malloc(25 * MiB, DeviceStream.DEFAULT);
            MemorySegment view = host.hostView(p, 25 * MiB).orElseThrow();
            assertEquals(0, view.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals(0, view.get(ValueLayout.JAVA_BYTE, 25 * MiB - 1));
            a.free(p);
            CachingInvariants.check((CachingArena) a);
        }
    }

    private static void fill(MemorySegment m, byte value) {
        m.fill(value);
    }

    private static void check(MemorySegment m, byte value) {
        for (long o : new long[] {0, m.byteSize() / 3, m.byteSize() / 2, m.byteSize() - 1}) {
            assertEquals(value, m.get(ValueLayout.JAVA_BYTE, o), "byte " + o);
        }
    }
}
