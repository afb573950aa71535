package io.devalloc.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.units.ByteSize;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link HostMemory} over real libc memory, with a small capacity so that running out is cheap to reach. */
class HostMemoryTest {

    private static final long CAPACITY = ByteSize.MiB;

    private HostMemory device;

    @BeforeEach
    void open() {
        device = HostMemory.host(FfmNativeMemoryCalls.link(), CAPACITY);
    }

    @AfterEach
    void close() {
        device.close();
    }

    @Test
    void describesItselfAsHostMemory() {
        DeviceDescriptor d = device.descriptor();
        assertEquals("host", d.provider());
        assertEquals(0, d.index());
        assertEquals(DeviceKind.HOST, d.kind());
        assertEquals(CAPACITY, d.totalBytes());
        assertEquals("host memory (1.00 MiB)", d.name());
        assertEquals(256, device.alignment());
        assertEquals(new MemoryInfo(CAPACITY, CAPACITY), device.memoryInfo());
        assertEquals(2 * ByteSize.MiB, device.virtualMemory().orElseThrow().granularity(),
                "Linux x86-64: host virtual memory with 2 MiB granules");
    }

    @Test
    void addressesAreAlignedDistinctAndAccountedRoundedUp() {
        Set<Long> seen = new HashSet<>();
        long[] sizes = {1, 255, 256, 257, 1000, 4096, 12345};
        long used = 0;
        for (long size : sizes) {
            long address = device.malloc(size);
            assertNotEquals(DeviceMemory.NULL, address, "malloc(" + size + ")");
            assertEquals(0, address % 256, "address " + ByteSize.hex(address) + " of malloc(" + size + ")");
            assertTrue(seen.add(address));
            used += ByteSize.roundUp(size, 256);
            assertEquals(new MemoryInfo(CAPACITY - used, CAPACITY), device.memoryInfo());
        }
        for (long address : seen) {
            device.free(address);
        }
        assertEquals(new MemoryInfo(CAPACITY, CAPACITY), device.memoryInfo());
    }

    @Test
    void mallocReturnsNullPastCapacityAndSucceedsAgainAfterAFree() {
        long half = device.malloc(CAPACITY / 2);
        long quarter = device.malloc(CAPACITY / 4);
        assertNotEquals(DeviceMemory.NULL, half);
        assertNotEquals(DeviceMemory.NULL, quarter);
        MemoryInfo before = device.memoryInfo();
        assertEquals(CAPACITY / 4, before.freeBytes());

        assertEquals(DeviceMemory.NULL, device.malloc(CAPACITY / 4 + 1), "one byte too many after rounding");
        assertEquals(before, device.memoryInfo(), "a refused malloc changes nothing");
        long last = device.malloc(CAPACITY / 4);
        assertNotEquals(DeviceMemory.NULL, last, "exactly the rest fits");
        assertEquals(0, device.memoryInfo().freeBytes());
        assertEquals(DeviceMemory.NULL, device.malloc(1));

        device.free(half);
        long again = device.malloc(CAPACITY / 2);
        assertNotEquals(DeviceMemory.NULL, again);
    }

    @Test
    void hugeSizesReturnNullWithoutOverflowOrChange() {
        long live = device.malloc(1000);
        MemoryInfo before = device.memoryInfo();
        for (long size : new long[] {Long.MAX_VALUE, Long.MAX_VALUE - 255, Long.MAX_VALUE - 256, CAPACITY + 1,
                Long.MAX_VALUE / 2}) {
            assertEquals(DeviceMemory.NULL, device.malloc(size), "malloc(" + size + ")");
            assertEquals(before, device.memoryInfo());
        }
        device.free(live);
    }

    @Test
    void nonPositiveSizesAreRefusedAndChangeNothing() {
        long live = device.malloc(1);
        MemoryInfo before = device.memoryInfo();
        for (long size : new long[] {0, -1, Long.MIN_VALUE}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> device.malloc(size));
            assertTrue(e.getMessage().contains(Long.toString(size)), e.getMessage());
            assertEquals(before, device.memoryInfo());
        }
        device.free(live);
    }

    @Test
    void doubleAndUnknownFreesThrowAndChangeNothing() {
        long a = device.malloc(512);
        long b = device.malloc(512);
        device.free(a);
        MemoryInfo before = device.memoryInfo();

        for (long address : new long[] {a, b + 256, b + 1, 0, -256, 0x1000}) {
            InvalidFreeException e = assertThrows(InvalidFreeException.class, () -> device.free(address));
            assertEquals(InvalidFreeException.Reason.UNKNOWN_ADDRESS, e.reason());
            assertEquals(address, e.address());
            assertTrue(e.getMessage().contains("host:0"), e.getMessage());
            assertEquals(before, device.memoryInfo(), "free(" + ByteSize.hex(address) + ") changed the device");
        }
        // b is still live and usable: the refused frees did not touch it.
        device.hostView(b, 512).orElseThrow().set(ValueLayout.JAVA_LONG, 0, 42L);
        device.free(b);
        assertEquals(new MemoryInfo(CAPACITY, CAPACITY), device.memoryInfo());
    }

    @Test
    void hostViewReadsAndWritesTheAllocation() {
        long bytes = 10_000;
        long address = device.malloc(bytes);
        MemorySegment view = device.hostView(address, bytes).orElseThrow();
        assertEquals(address, view.address());
        assertEquals(bytes, view.byteSize());
        for (long i = 0; i < bytes; i++) {
            view.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        // A second, interior view sees the same bytes.
        MemorySegment inner = device.hostView(address + 5000, 100).orElseThrow();
        for (long i = 0; i < 100; i++) {
            assertEquals((byte) ((5000 + i) * 31 + 7), inner.get(ValueLayout.JAVA_BYTE, i));
        }
        device.free(address);
    }

    @Test
    void hostViewRefusesRangesOutsideOneLiveAllocation() {
        long a = device.malloc(1000);
        long b = device.malloc(1000);
        assertThrows(IllegalArgumentException.class, () -> device.hostView(a, 1001), "past the requested size");
        assertThrows(IllegalArgumentException.class, () -> device.hostView(a + 999, 2));
        assertThrows(IllegalArgumentException.class, () -> device.hostView(a + 1000, 1), "in the rounding slack");
        assertThrows(IllegalArgumentException.class, () -> device.hostView(a - 1, 1));
        assertThrows(IllegalArgumentException.class, () -> device.hostView(a, 0));
        assertThrows(IllegalArgumentException.class, () -> device.hostView(a, -1));
        assertThrows(IllegalArgumentException.class, () -> device.hostView(a, Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> device.hostView(0, 1));
        long low = Math.min(a, b);
        long high = Math.max(a, b);
        assertThrows(IllegalArgumentException.class, () -> device.hostView(low, high - low + 1),
                "spanning two allocations");
        assertEquals(1, device.hostView(a + 999, 1).orElseThrow().byteSize());
        device.free(a);
        assertThrows(IllegalArgumentException.class, () -> device.hostView(a, 1), "freed");
        device.free(b);
    }

    @Test
    void closeFreesEverythingIsIdempotentAndLaterCallsFail() {
        List<Long> addresses = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            addresses.add(device.malloc(1000 * (i + 1)));
        }
        DeviceStream stream = device.createStream();
        DeviceEvent event = device.createEvent();
        device.close();
        device.close();

        assertEquals("host", device.descriptor().provider(), "the descriptor stays readable for messages");
        List<Runnable> calls = List.of(
                () -> device.malloc(1),
                () -> device.free(addresses.get(0)),
                () -> device.memoryInfo(),
                () -> device.createStream(),
                () -> device.destroyStream(stream),
                () -> device.createEvent(),
                () -> device.recordEvent(event, stream),
                () -> device.isEventComplete(event),
                () -> device.synchronizeEvent(event),
                () -> device.destroyEvent(event),
                () -> device.synchronize(),
                () -> device.virtualMemory(),
                () -> device.hostView(addresses.get(0), 1));
        for (Runnable call : calls) {
            IllegalStateException e = assertThrows(IllegalStateException.class, call::run);
            assertTrue(e.getMessage().endsWith("is closed"), e.getMessage());
        }
    }

    @Test
    void streamsHaveUniqueNonzeroHandlesAndAreValidated() {
        DeviceStream s1 = device.createStream();
        DeviceStream s2 = device.createStream();
        assertFalse(s1.isDefault());
        assertNotEquals(s1, s2);

        assertThrows(IllegalArgumentException.class, () -> device.destroyStream(DeviceStream.DEFAULT));
        assertThrows(IllegalArgumentException.class, () -> device.destroyStream(new DeviceStream(987_654)));
        device.destroyStream(s1);
        assertThrows(IllegalArgumentException.class, () -> device.destroyStream(s1), "destroyed twice");
        DeviceStream s3 = device.createStream();
        assertNotEquals(s1, s3, "handles are not reused");
        device.destroyStream(s2);
        device.destroyStream(s3);
        assertThrows(NullPointerException.class, () -> device.destroyStream(null));
    }

    @Test
    void eventsAreCompleteAndValidated() {
        DeviceStream stream = device.createStream();
        DeviceEvent e1 = device.createEvent();
        DeviceEvent e2 = device.createEvent();
        assertNotEquals(e1, e2);
        assertTrue(device.isEventComplete(e1), "never recorded is complete, as in CUDA");
        device.recordEvent(e1, stream);
        device.recordEvent(e2, DeviceStream.DEFAULT);
        assertTrue(device.isEventComplete(e1));
        device.synchronizeEvent(e1);
        device.synchronize();

        DeviceEvent unknown = new DeviceEvent(123_456_789);
        assertThrows(IllegalArgumentException.class, () -> device.recordEvent(unknown, stream));
        assertThrows(IllegalArgumentException.class, () -> device.isEventComplete(unknown));
        assertThrows(IllegalArgumentException.class, () -> device.synchronizeEvent(unknown));
        assertThrows(IllegalArgumentException.class, () -> device.destroyEvent(unknown));
        assertThrows(IllegalArgumentException.class, () -> device.recordEvent(e1, new DeviceStream(555_555)),
                "unknown stream");
        device.destroyStream(stream);
        assertThrows(IllegalArgumentException.class, () -> device.recordEvent(e1, stream), "destroyed stream");

        device.destroyEvent(e1);
        assertThrows(IllegalArgumentException.class, () -> device.isEventComplete(e1), "destroyed event");
        assertThrows(IllegalArgumentException.class, () -> device.destroyEvent(e1), "destroyed twice");
        device.destroyEvent(e2);
    }

    @Test
    void capacityBelowOneAllocationIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> HostMemory.host(FfmNativeMemoryCalls.link(), 255));
        try (HostMemory tiny = HostMemory.host(FfmNativeMemoryCalls.link(), 256)) {
            long address = tiny.malloc(256);
            assertNotEquals(DeviceMemory.NULL, address);
            assertEquals(DeviceMemory.NULL, tiny.malloc(1));
            tiny.free(address);
        }
    }

    @Test
    void largeAllocationsNeedNotFitInTheJavaHeap() {
        // The test JVM runs with -Xmx1g; a 2 GiB native allocation works because it is neither on the heap nor
        // touched (posix_memalign leaves untouched pages unbacked).
        try (HostMemory big = HostMemory.host(FfmNativeMemoryCalls.link(), 4 * ByteSize.GiB)) {
            long address = big.malloc(2 * ByteSize.GiB);
            assertNotEquals(DeviceMemory.NULL, address);
            MemorySegment view = big.hostView(address, 2 * ByteSize.GiB).orElseThrow();
            view.set(ValueLayout.JAVA_LONG, 2 * ByteSize.GiB - 8, 0x1234_5678L);
            assertEquals(0x1234_5678L, view.get(ValueLayout.JAVA_LONG, 2 * ByteSize.GiB - 8));
            big.free(address);
            assertSame(DeviceKind.HOST, big.descriptor().kind());
        }
    }
}
