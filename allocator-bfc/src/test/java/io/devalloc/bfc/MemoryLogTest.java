package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.AddressOrder;
import io.devalloc.sim.SimulatedDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The human-readable memory log (TensorFlow's {@code DumpMemoryLog}), its byte formatting
 * ({@code HumanReadableNumBytes}), the occupancy map ({@code RenderOccupancy}), and the out-of-memory message,
 * which states whether the failure is fragmentation or exhaustion.
 */
class MemoryLogTest {

    private static final long KiB = ByteSize.KiB;
    private static final long MiB = ByteSize.MiB;

    private static BfcArena bfc(SimulatedDevice device, String config) {
        return (BfcArena) new BfcAllocatorProvider(Map.of()).create(device, config);
    }

    @ParameterizedTest(name = "{0} → {1}")
    @CsvSource({
        "0, 0B",
        "4, 4B",
        "1023, 1023B",
        "1024, 1.0KiB",
        "1025, 1.0KiB",
        "1500, 1.5KiB",
        "1927, 1.9KiB",
        "2048, 2.0KiB",
        "16384, 16.0KiB",
        "1048575, 1024.0KiB",
        "1048576, 1.00MiB",
        "12345678, 11.77MiB",
        "18874368, 18.00MiB",
        "1073741824, 1.00GiB",
        "4982162063, 4.64GiB",
        "1099511627776, 1.00TiB",
        "1125899906842624, 1.00PiB",
        "1152921504606846976, 1.00EiB",
        "-1, -1B",
        "-4, -4B",
        "-1000, -1000B",
        "-12345678, -11.77MiB",
        // Exact binary ties round half to even, as C's printf does (String.format would round them up).
        "1280, 1.2KiB",
        "1792, 1.8KiB",
        "2304, 2.2KiB",
        "1179648, 1.12MiB",
        "1441792, 1.38MiB",
        "1703936, 1.62MiB",
    })
    void humanReadableBytes(long bytes, String expected) {
        assertEquals(expected, MemoryLogFormat.humanBytes(bytes));
    }

    private static String statLine(String label, long value) {
        return String.format(Locale.ROOT, "%-18s%20d", label + ":", value);
    }

    @Test
    void dumpLines() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "memory_limit_mb:1,virtual_memory:false")) {
            long p1 = a.malloc(4);      // a 256-B chunk
            long p2 = a.malloc(1000);   // a 1024-B chunk
            long base = p1;
            assertEquals(base + 256, p2);
            List<String> log = a.memoryLog(4096);

            assertEquals("BFCAllocator dump for bfc", log.get(0));
            for (int b = 0; b < 21; b++) {
                assertTrue(log.get(1 + b).startsWith("Bin (" + (256L << b) + "): \tTotal Chunks: "), log.get(1 + b));
            }
            assertEquals("Bin (256): \tTotal Chunks: 1, Chunks in use: 1. 256B allocated for chunks. 256B in use in"
                    + " bin. 4B client-requested in use in bin.", log.get(1));
            assertEquals("Bin (512): \tTotal Chunks: 0, Chunks in use: 0. 0B allocated for chunks. 0B in use in"
                    + " bin. 0B client-requested in use in bin.", log.get(2));
            assertEquals("Bin (1024): \tTotal Chunks: 1, Chunks in use: 1. 1.0KiB allocated for chunks. 1.0KiB in use"
                    + " in bin. 1000B client-requested in use in bin.", log.get(3));
            // The tail: 1 MiB − 1280 = 1047296 B, in bin 11 (512 KiB … 1 MiB).
            assertEquals("Bin (524288): \tTotal Chunks: 1, Chunks in use: 0. 1022.8KiB allocated for chunks. 0B in"
                    + " use in bin. 0B client-requested in use in bin.", log.get(12));
            assertEquals("Bin for 4.0KiB was 4.0KiB, Chunk State: ", log.get(22));
            assertEquals("Next region of size 1048576", log.get(23));
            assertTrue(log.get(24).matches("InUse at " + Long.toHexString(base) + " of size 256 next -?\\d+.*"),
                    log.get(24));
            assertTrue(log.get(25).matches("InUse at " + Long.toHexString(base + 256) + " of size 1024 next -?\\d+.*"),
                    log.get(25));
            assertTrue(log.get(26).matches("Free  at " + Long.toHexString(base + 1280)
                    + " of size 1047296 next -?\\d+"),
                    log.get(26));
            assertEquals("Summary of in-use Chunks by size:", log.get(27).strip());
            assertEquals("1 Chunks of size 256 totalling 256B", log.get(28));
            assertEquals("1 Chunks of size 1024 totalling 1.0KiB", log.get(29));
            assertEquals("Sum Total of in-use chunks: 1.2KiB", log.get(30));
            String pool = log.get(31);
            assertTrue(pool.contains("1048576") && pool.contains("memory_limit_: 1048576"), pool);

            List<String> stats = List.of(log.get(32).split("\n"));
            assertEquals("Stats: ", stats.get(0));
            assertEquals(List.of(statLine("Limit", MiB), statLine("InUse", 1280), statLine("MaxInUse", 1280),
                    statLine("NumAllocs", 2), statLine("MaxAllocSize", 1024), statLine("Reserved", 0),
                    statLine("PeakReserved", 0), statLine("LargestFreeBlock", 1047296)), stats.subList(1, 9));
            assertEquals("Fragmentation metric: 0.000000", stats.get(stats.size() - 1));
            assertEquals(33, log.size());

            // The "Bin for" line lists the free chunks of the bin that would serve the request.
            a.free(p1);
            List<String> withFree = a.memoryLog(100);
            assertEquals("Bin for 256B was 256B, Chunk State: ", withFree.get(22));
            assertEquals("  Size: 256B | Requested Size: 4B | in_use: 0 | bin_num: 0", withFree.get(23),
                    "one line per free chunk of that bin");
            a.free(p2);
        }
    }

    @Test
    void occupancyOfAnEmptyArena() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "memory_limit_mb:1,virtual_memory:false")) {
            assertEquals("<allocator contains no memory>", a.renderOccupancy());
            a.free(a.malloc(256));
            assertEquals("_".repeat(100), a.renderOccupancy());
        }
    }

    @Test
    void occupancyPaintsRequestedBytesAndSlack() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "memory_limit_mb:1,virtual_memory:false")) {
            // 600000 B get the whole 1 MiB chunk: requested bytes cover columns 0–57, the slack 58–99.
            long p = a.malloc(600000);
            String map = a.renderOccupancy();
            assertEquals(100, map.length());
            assertEquals("*".repeat(58) + "x".repeat(42), map);
            a.free(p);
        }
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "memory_limit_mb:1,virtual_memory:false")) {
            long q1 = a.malloc(256 * KiB);
            long q2 = a.malloc(256 * KiB);
            a.free(q1);
            assertEquals("_".repeat(25) + "*".repeat(25) + "_".repeat(50), a.renderOccupancy());
            a.free(q2);
        }
    }

    @Test
    void occupancySpansEveryRegion() {
        // Growth: a 2 MiB region, then a 4 MiB one (bottom-up addresses keep them in creation order).
        try (SimulatedDevice device = SimulatedDevice.builder().capacity(ByteSize.GiB)
                .addressOrder(AddressOrder.BOTTOM_UP).virtualMemory(false).build();
             BfcArena a = bfc(device, "allow_growth:true")) {
            long p1 = a.malloc(2 * MiB);
            long p2 = a.malloc(MiB);
            assertEquals(2, a.regionCount());
            // 6 MiB in all: p1 covers columns 0–33, p2 (from offset 2 MiB) columns 33–49.
            assertEquals("*".repeat(50) + "_".repeat(50), a.renderOccupancy());
            a.free(p1);
            a.free(p2);
        }
    }

    @Test
    void outOfMemoryFromFragmentationSaysSo() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "memory_limit_mb:512,allow_growth:true,virtual_memory:false,"
                     + "allow_retry_on_failure:false")) {
            List<Long> ptrs = new ArrayList<>();
            for (int i = 0; i < 128; i++) {
                ptrs.add(a.malloc(4 * MiB));
            }
            for (int i = 0; i < 127; i++) {
                a.free(ptrs.get(i));
            }
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class, () -> a.malloc(508 * MiB));
            assertEquals(OutOfMemoryException.Reason.FRAGMENTATION, oom.reason());
            String m = oom.getMessage();
            assertTrue(m.contains("fragmentation"), m);
            assertFalse(m.contains("exhaustion"), m);
            assertTrue(m.contains("total free 508.00MiB"), m);
            assertTrue(m.contains("largest free chunk 252.00MiB"), m);
            assertTrue(m.contains("508.00MiB"), m);
            assertEquals(508 * MiB, oom.requestedBytes());
            assertEquals(512 * MiB, oom.reservedBytes());
            assertEquals(4 * MiB, oom.allocatedBytes());
            assertEquals(512 * MiB, oom.limitBytes());
            a.free(ptrs.get(127));
        }
    }

    @Test
    void outOfMemoryFromExhaustionSaysSo() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "memory_limit_mb:1,virtual_memory:false,allow_retry_on_failure:false")) {
            long p = a.malloc(512 * KiB);
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class, () -> a.malloc(768 * KiB));
            assertEquals(OutOfMemoryException.Reason.LIMIT_REACHED, oom.reason());
            String m = oom.getMessage();
            assertTrue(m.contains("exhaustion"), m);
            assertFalse(m.contains("fragmentation"), m);
            assertTrue(m.contains("total free 512.0KiB"), m);
            assertTrue(m.contains("largest free chunk 512.0KiB"), m);
            assertEquals(768 * KiB, oom.requestedBytes());
            a.free(p);
        }
    }

    @Test
    void outOfMemoryWhenTheDeviceRefusesSaysSo() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             BfcArena a = bfc(device, "memory_limit_mb:64,virtual_memory:false,allow_retry_on_failure:false")) {
            device.setLimitBytes(0);
            OutOfMemoryException oom = assertThrows(OutOfMemoryException.class, () -> a.malloc(MiB));
            assertEquals(OutOfMemoryException.Reason.DEVICE_EXHAUSTED, oom.reason());
            String m = oom.getMessage();
            assertTrue(m.contains("exhaustion: the device refused more memory"), m);
            assertTrue(m.contains("total free 0B"), m);
            assertTrue(m.contains("largest free chunk 0B"), m);
        }
    }
}
