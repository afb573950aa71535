package io.devalloc.trace.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import io.devalloc.api.Allocation;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.direct.DirectAllocatorProvider;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.trace.TraceRecorder;
import io.devalloc.trace.pytorch.PyTorchCsvRecorder;
import io.devalloc.trace.rmm.RmmCsvRecorder;
import io.devalloc.trace.text.CsvLine;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.mockito.Mockito;

/**
 * The recording decorator over the direct allocator on a {@link FakeDevice}: every row of both formats checked
 * exactly, what is and is not recorded, ordering under address reuse, four threads at once, recorder failures and
 * ownership.
 */
class RecordingAllocatorTest {

    /** 2026-11-21T15:47:02.841961Z in microseconds. */
    private static final long T0 = 1_795_276_022_841_961L;
    private static final long MiB = 1 << 20;

    /** A clock that advances 1 µs every time it is read, from {@link #T0}. */
    private static InstantSource ticking() {
        AtomicLong micros = new AtomicLong(T0);
        return () -> {
            long t = micros.getAndIncrement();
            return Instant.ofEpochSecond(t / 1_000_000, t % 1_000_000 * 1000);
        };
    }

    private static long tid() {
        return Thread.currentThread().threadId();
    }

    /**
     * The same workload for both formats: two allocations (default stream and a created stream), a zero-byte one,
     * an impossible one, a recordStream, a free, a handle that reuses the freed address, and calls that must not
     * be recorded. Returns the device for further checks.
     */
    private static FakeDevice workload(RecordingAllocator a, FakeDevice device) {
        DeviceStream s = device.createStream();
        DeviceStream other = device.createStream();
        long first = a.malloc(1000);                                         // t0
        long second = a.malloc(4096, s);                                     // t0+1
        assertEquals(FakeDevice.BASE, first);
        assertEquals(FakeDevice.BASE + 1024, second);
        assertEquals(0, a.malloc(0, s), "zero bytes: address 0, not recorded");
        OutOfMemoryException oom = assertThrows(OutOfMemoryException.class, () -> a.malloc(2 * MiB, s)); // t0+2
        assertEquals(MiB - 5120, oom.deviceFreeBytes());
        a.recordStream(second, other);                                       // t0+3, no row in either format
        a.free(first);                                                       // t0+4
        try (Allocation h = a.allocate(1000)) {                              // t0+5: reuses the freed address
            assertEquals(FakeDevice.BASE, h.address());
            assertSame(a, h.allocator());
        }                                                                    // t0+6
        // Rejected calls: nothing recorded, no clock read.
        assertThrows(IllegalArgumentException.class, () -> a.malloc(-1));
        assertThrows(InvalidFreeException.class, () -> a.free(0x1234));
        assertThrows(InvalidFreeException.class, () -> a.free(first));      // double free
        assertThrows(InvalidFreeException.class, () -> a.recordStream(first, s));
        a.free(0);
        a.recordStream(0, s);
        a.free(second);                                                      // t0+7
        return device;
    }

    private static RecordingAllocator recording(FakeDevice device, TraceRecorder recorder) {
        DeviceAllocator direct = new DirectAllocatorProvider().create(device, "");
        return new RecordingAllocator(direct, recorder, ticking());
    }

    @Test
    void rmmCsvHasEveryRowExactly() throws IOException {
        StringWriter out = new StringWriter();
        FakeDevice device = new FakeDevice(MiB);
        RecordingAllocator a = recording(device, new RmmCsvRecorder(out, ZoneOffset.UTC));
        workload(a, device);
        assertEquals(8, a.recordedEvents(), "2 allocs, 1 failure, 1 recordStream, free, alloc, free, free");
        a.close();
        long t = tid();
        assertEquals(String.join("\n",
                "Thread,Time,Action,Pointer,Size,Stream",
                t + ",15:47:02.841961,allocate,0x7f3a00000000,1000,0",
                t + ",15:47:02.841962,allocate,0x7f3a00000400,4096,0x5581d2a0",
                t + ",15:47:02.841963,allocate failure,(nil),2097152,0x5581d2a0",
                t + ",15:47:02.841965,free,0x7f3a00000000,1000,0",
                t + ",15:47:02.841966,allocate,0x7f3a00000000,1000,0",
                t + ",15:47:02.841967,free,0x7f3a00000000,1000,0",
                t + ",15:47:02.841968,free,0x7f3a00000400,4096,0x5581d2a0",
                ""), out.toString());
        List<RmmRow> rows = parseRmm(out.toString());
        assertEquals(7, rows.size());
        assertTrue(device.isClosed() || device.usedBytes() == 0);
    }

    @Test
    void pytorchCsvHasEveryRowExactly() throws IOException {
        StringWriter out = new StringWriter();
        FakeDevice device = new FakeDevice(MiB);
        RecordingAllocator a = recording(device, new PyTorchCsvRecorder(out));
        workload(a, device);
        a.close();
        assertEquals(String.join("\n",
                "seq,action,addr,size,stream,time_us",
                "0,alloc,139887084830720,1000,0,1795276022841961",
                "1,alloc,139887084831744,4096,1434571424,1795276022841962",
                "2,oom,,1043456,1434571424,1795276022841963",
                "3,free_requested,139887084830720,1000,0,1795276022841965",
                "4,free_completed,139887084830720,1000,0,1795276022841965",
                "5,alloc,139887084830720,1000,0,1795276022841966",
                "6,free_requested,139887084830720,1000,0,1795276022841967",
                "7,free_completed,139887084830720,1000,0,1795276022841967",
                "8,free_requested,139887084831744,4096,1434571424,1795276022841968",
                "9,free_completed,139887084831744,4096,1434571424,1795276022841968",
                ""), out.toString());
        assertEquals(10, parsePyTorch(out.toString()).size());
    }

    @Test
    void rmmTimeIsTheLocalWallClockWithMicroseconds() throws IOException {
        StringWriter out = new StringWriter();
        RmmCsvRecorder r = new RmmCsvRecorder(out, ZoneId.of("Asia/Kolkata")); // UTC+05:30, no DST
        r.allocate(7, T0, 0x100, 1, 0);                                  // 15:47:02.841961Z
        r.allocate(7, 1_795_292_999_000_005L, 0x200, 2, 0);              // 2026-11-21T20:29:59.000005Z → 01:59:59
        r.free(7, 0, 0x100, 1, 0);                                       // the epoch: 05:30:00.000000
        r.free(Long.MAX_VALUE, T0, -1L, Long.MAX_VALUE, -1L);            // extremes: unsigned hex
        r.close();
        r.close(); // idempotent
        assertEquals(String.join("\n",
                RmmCsvRecorder.HEADER,
                "7,21:17:02.841961,allocate,0x100,1,0",
                "7,01:59:59.000005,allocate,0x200,2,0",
                "7,05:30:00.000000,free,0x100,1,0",
                "9223372036854775807,21:17:02.841961,free,0xffffffffffffffff,9223372036854775807,0xffffffffffffffff",
                ""), out.toString());
        assertThrows(IOException.class, () -> r.allocate(1, T0, 0x100, 1, 0), "closed");
    }

    @Test
    void rmmTimeFollowsDaylightSavingTransitions() throws IOException {
        StringWriter out = new StringWriter();
        RmmCsvRecorder r = new RmmCsvRecorder(out, ZoneId.of("Europe/Paris"));
        long beforeFallBack = Instant.parse("2026-10-25T00:59:59.5Z").toEpochMilli() * 1000; // 02:59:59.5 CEST
        long afterFallBack = Instant.parse("2026-10-25T01:00:00.25Z").toEpochMilli() * 1000; // 02:00:00.25 CET
        long summer = Instant.parse("2026-07-01T12:00:00Z").toEpochMilli() * 1000;           // 14:00 CEST
        r.allocate(1, beforeFallBack, 0x100, 1, 0);
        r.allocate(1, afterFallBack, 0x200, 1, 0);
        r.allocate(1, summer, 0x300, 1, 0); // back in time: the cached offset is recomputed
        r.close();
        List<RmmRow> rows = parseRmm(out.toString());
        assertEquals(List.of("02:59:59.500000", "02:00:00.250000", "14:00:00.000000"),
                rows.stream().map(RmmRow::time).toList());
    }

    @Test
    void pytorchRecorderWritesUnsignedAddressesAndSkipsNonOomFailures() throws IOException {
        StringWriter out = new StringWriter();
        PyTorchCsvRecorder r = new PyTorchCsvRecorder(out);
        r.allocate(1, 5, -2L, 3, -1L);
        r.allocateFailure(1, 6, 10, 0, new DeviceException("cudaErrorIllegalAddress"));
        r.recordStream(1, 7, -2L, 3, -1L, 42);
        r.free(1, 8, -2L, 3, -1L);
        r.close();
        assertEquals(String.join("\n",
                PyTorchCsvRecorder.HEADER,
                "0,alloc,18446744073709551614,3,18446744073709551615,5",
                "1,free_requested,18446744073709551614,3,18446744073709551615,8",
                "2,free_completed,18446744073709551614,3,18446744073709551615,8",
                ""), out.toString());
    }

    @Test
    void byteStreamsGetTheSameTextAsWriters() throws IOException {
        StringWriter rmmChars = new StringWriter();
        ByteArrayOutputStream rmmBytes = new ByteArrayOutputStream();
        StringWriter ptChars = new StringWriter();
        ByteArrayOutputStream ptBytes = new ByteArrayOutputStream();
        List<TraceRecorder> recorders = List.of(new RmmCsvRecorder(rmmChars, ZoneOffset.UTC),
                new RmmCsvRecorder(rmmBytes, ZoneOffset.UTC), new PyTorchCsvRecorder(ptChars),
                new PyTorchCsvRecorder(ptBytes));
        for (TraceRecorder r : recorders) {
            r.allocate(3, T0, FakeDevice.BASE, 1000, FakeDevice.FIRST_STREAM);
            r.allocateFailure(3, T0 + 1, 1L << 40, 0, new OutOfMemoryException(
                    OutOfMemoryException.Reason.DEVICE_EXHAUSTED, "fake:0", 1L << 40, 512, MiB, 0, 0, Long.MAX_VALUE,
                    null));
            r.free(3, T0 + 2, FakeDevice.BASE, 1000, FakeDevice.FIRST_STREAM);
            r.flush();
            r.close();
        }
        assertEquals(rmmChars.toString(), rmmBytes.toString(StandardCharsets.US_ASCII));
        assertEquals(ptChars.toString(), ptBytes.toString(StandardCharsets.US_ASCII));
        assertEquals(3, parseRmm(rmmChars.toString()).size());
        assertEquals(List.of("alloc", "oom", "free_requested", "free_completed"),
                parsePyTorch(ptChars.toString()).stream().map(PyTorchRow::action).toList());
        assertEquals(512, parsePyTorch(ptChars.toString()).get(1).size(), "oom: the device's free bytes");
        assertEquals(1L << 40, parseRmm(rmmChars.toString()).get(1).size(), "allocate failure: the request");
    }

    @Test
    void csvLineFormatsNumbersWithoutStrings() throws IOException {
        StringWriter out = new StringWriter();
        CsvLine line = new CsvLine(out);
        line.decimal(0).comma().decimal(-1).comma().decimal(Long.MIN_VALUE).comma().decimal(Long.MAX_VALUE).comma()
                .unsignedDecimal(-1L).comma().unsignedDecimal(Long.MIN_VALUE).comma().unsignedDecimal(10).comma()
                .hex(0).comma().hex(0xabcdefL).comma().hex(Long.MIN_VALUE).comma().padded(7, 6).end();
        StringBuilder longLine = new StringBuilder();
        for (int i = 0; i < 100; i++) {
            line.text("abcdefghij");
            longLine.append("abcdefghij");
        }
        line.end();
        assertEquals("0,-1,-9223372036854775808,9223372036854775807,18446744073709551615,9223372036854775808,10,"
                + "0,abcdef,8000000000000000,000007\n" + longLine + "\n", out.toString());
    }

    // ------------------------------------------------------------------------------------------- ordering

    /**
     * Between the delegate's free and the row for it, another thread allocates the same address: its allocation
     * writes the pending free first (for the freeing thread), and the late free writes nothing more.
     */
    @ParameterizedTest
    @EnumSource(RecordingAllocator.Format.class)
    void aFreeIsWrittenBeforeTheAllocationThatReusesItsAddress(RecordingAllocator.Format format,
                                                               @TempDir Path dir) throws Exception {
        FakeDevice device = new FakeDevice(MiB);
        DeviceAllocator direct = new DirectAllocatorProvider().create(device, "");
        long[] reused = new long[1];
        long[] otherThread = new long[1];
        RecordingAllocator[] self = new RecordingAllocator[1];
        HookedAllocator hooked = new HookedAllocator(direct, () -> {
            Thread t = new Thread(() -> {
                otherThread[0] = tid();
                reused[0] = self[0].malloc(1000);
            });
            t.start();
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        Path file = dir.resolve("trace.csv");
        RecordingAllocator a = new RecordingAllocator(hooked, format.open(file), ticking());
        self[0] = a;
        long p = a.malloc(1000);
        a.free(p); // the hook allocates p again on another thread, under the delegate's free
        assertEquals(p, reused[0], "the fake device hands the freed address out again");
        hooked.hook = null;
        a.free(reused[0]);
        a.close();
        String text = Files.readString(file);
        long me = tid();
        if (format == RecordingAllocator.Format.RMM_CSV) {
            List<RmmRow> rows = parseRmm(text);
            assertEquals(List.of("allocate", "free", "allocate", "free"), rows.stream().map(RmmRow::action).toList());
            assertEquals(List.of(me, me, otherThread[0], me), rows.stream().map(RmmRow::thread).toList());
            assertTrue(rows.stream().allMatch(r -> r.pointer() == p && r.size() == 1000));
        } else {
            List<PyTorchRow> rows = parsePyTorch(text);
            assertEquals(List.of("alloc", "free_requested", "free_completed", "alloc", "free_requested",
                    "free_completed"), rows.stream().map(PyTorchRow::action).toList());
            assertTrue(rows.stream().allMatch(r -> r.addr() == p && r.size() == 1000));
        }
        assertTrue(device.usedBytes() == 0);
    }

    /** Four threads allocating and freeing at once (with constant address reuse) produce a well-formed file. */
    @ParameterizedTest
    @EnumSource(RecordingAllocator.Format.class)
    void fourThreadsRecordAWellFormedTrace(RecordingAllocator.Format format, @TempDir Path dir) throws Exception {
        FakeDevice device = new FakeDevice(64 * MiB);
        Path file = dir.resolve("trace.csv");
        RecordingAllocator a = RecordingAllocator.wrap(new DirectAllocatorProvider().create(device, ""), file, format);
        int threads = 4;
        int steps = 5_000;
        long[] allocs = new long[threads];
        long[] frees = new long[threads];
        long[] ooms = new long[threads];
        long[] ids = new long[threads];
        DeviceStream[] streams = {DeviceStream.DEFAULT, device.createStream(), device.createStream()};
        CountDownLatch start = new CountDownLatch(1);
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            int me = w;
            Thread t = new Thread(() -> {
                ids[me] = tid();
                SplittableRandom random = new SplittableRandom(me);
                List<Long> live = new ArrayList<>();
                try {
                    start.await();
                    for (int i = 0; i < steps; i++) {
                        int r = random.nextInt(100);
                        if (r < 2) {
                            assertThrows(OutOfMemoryException.class, () -> a.malloc(128 * MiB));
                            ooms[me]++;
                        } else if (r < 55 || live.isEmpty()) {
                            long size = 256L * (1 + random.nextInt(4)) - random.nextInt(3);
                            live.add(a.malloc(size, streams[random.nextInt(streams.length)]));
                            allocs[me]++;
                        } else {
                            a.free(live.remove(random.nextInt(live.size())));
                            frees[me]++;
                        }
                    }
                    for (long p : live) {
                        a.free(p);
                        frees[me]++;
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "recorder-" + w);
            workers.add(t);
            t.start();
        }
        start.countDown();
        for (Thread t : workers) {
            t.join();
        }
        assertEquals(List.of(), errors);
        long totalAllocs = 0;
        long totalFrees = 0;
        long totalOoms = 0;
        for (int w = 0; w < threads; w++) {
            totalAllocs += allocs[w];
            totalFrees += frees[w];
            totalOoms += ooms[w];
        }
        assertEquals(totalAllocs, totalFrees);
        assertEquals(totalAllocs + totalFrees + totalOoms, a.recordedEvents());
        a.close();
        assertEquals(0, device.usedBytes());
        String text = Files.readString(file, StandardCharsets.US_ASCII);
        Set<Long> streamHandles = Set.of(streams[0].handle(), streams[1].handle(), streams[2].handle());
        if (format == RecordingAllocator.Format.RMM_CSV) {
            List<RmmRow> rows = parseRmm(text);
            assertEquals(totalAllocs + totalFrees + totalOoms, rows.size());
            Map<Long, long[]> live = new HashMap<>();
            Map<Long, Long> perThread = new HashMap<>();
            String previousTime = "";
            for (RmmRow row : rows) {
                perThread.merge(row.thread(), 1L, Long::sum);
                assertTrue(streamHandles.contains(row.stream()), row.toString());
                assertTrue(row.time().compareTo(previousTime) >= 0 || previousTime.startsWith("23"), row.toString());
                previousTime = row.time();
                switch (row.action()) {
                    case "allocate" -> assertEquals(null,
                            live.put(row.pointer(), new long[] {row.size(), row.stream()}),
                            () -> "allocated while live: " + row);
                    case "free" -> {
                        long[] known = live.remove(row.pointer());
                        assertTrue(known != null, () -> "freed while not live: " + row);
                        assertEquals(known[0], row.size(), row.toString());
                        assertEquals(known[1], row.stream(), row.toString());
                    }
                    default -> {
                        assertEquals("allocate failure", row.action());
                        assertEquals(0, row.pointer());
                        assertEquals(128 * MiB, row.size());
                    }
                }
            }
            assertTrue(live.isEmpty());
            for (int w = 0; w < threads; w++) {
                assertEquals(allocs[w] + frees[w] + ooms[w], perThread.get(ids[w]), "rows of thread " + w);
            }
        } else {
            List<PyTorchRow> rows = parsePyTorch(text);
            assertEquals(totalAllocs + 2 * totalFrees + totalOoms, rows.size());
            Map<Long, long[]> live = new HashMap<>();
            long previousTime = Long.MIN_VALUE;
            for (int i = 0; i < rows.size(); i++) {
                PyTorchRow row = rows.get(i);
                assertEquals(i, row.seq());
                assertTrue(row.timeUs() >= previousTime, row.toString());
                previousTime = row.timeUs();
                assertTrue(row.action().equals("oom") || streamHandles.contains(row.stream()), row.toString());
                switch (row.action()) {
                    case "alloc" -> assertEquals(null, live.put(row.addr(), new long[] {row.size(), row.stream()}),
                            () -> "allocated while live: " + row);
                    case "free_requested" -> {
                        PyTorchRow completed = rows.get(++i);
                        assertEquals("free_completed", completed.action());
                        assertEquals(new PyTorchRow(i, "free_completed", row.addr(), row.size(), row.stream(),
                                row.timeUs()), completed);
                        long[] known = live.remove(row.addr());
                        assertTrue(known != null, () -> "freed while not live: " + row);
                        assertEquals(known[0], row.size(), row.toString());
                        assertEquals(known[1], row.stream(), row.toString());
                    }
                    default -> assertEquals("oom", row.action(), row.toString());
                }
            }
            assertTrue(live.isEmpty());
        }
    }

    // ------------------------------------------------------------------------ errors, ownership and wiring

    @Test
    void aFailingRecorderStopsRecordingButNotTheAllocator() {
        FakeDevice device = new FakeDevice(MiB);
        IOException diskFull = new IOException("No space left on device");
        FailingRecorder recorder = new FailingRecorder(2, diskFull);
        DeviceAllocator direct = new DirectAllocatorProvider().create(device, "");
        RecordingAllocator a = new RecordingAllocator(direct, recorder);
        long p = a.malloc(100);
        long q = a.malloc(100); // the recorder fails here
        assertFalse(a.isRecording());
        assertSame(diskFull, a.recordingFailure().orElseThrow());
        a.free(p);
        a.free(q);
        long r = a.malloc(300);
        a.free(r);
        assertEquals(0, device.usedBytes(), "the allocator kept working");
        assertEquals(2, recorder.calls, "nothing was passed to the recorder after it failed");
        IOException flushed = assertThrows(IOException.class, a::flush);
        assertSame(diskFull, flushed);
        UncheckedIOException closed = assertThrows(UncheckedIOException.class, a::close);
        assertSame(diskFull, closed.getCause());
        assertTrue(recorder.closed);
        assertTrue(a.isClosed());
        a.close(); // idempotent: the failure was reported once
    }

    /**
     * A clock that throws (a user's {@code InstantSource}) stops the recording like a failing recorder: the malloc
     * that failed still throws its own out-of-memory error, and the one that succeeded still returns its address.
     */
    @Test
    void aFailingClockStopsRecordingButNeverReplacesTheAllocatorsOutcome() throws IOException {
        FakeDevice device = new FakeDevice(MiB);
        IllegalStateException broken = new IllegalStateException("clock broke");
        InstantSource throwing = () -> {
            throw broken;
        };
        RecordingAllocator a = new RecordingAllocator(new DirectAllocatorProvider().create(device, ""),
                new RmmCsvRecorder(new StringWriter(), ZoneOffset.UTC), throwing);
        assertThrows(OutOfMemoryException.class, () -> a.malloc(2 * MiB));
        assertFalse(a.isRecording());
        assertSame(broken, a.recordingFailure().orElseThrow().getCause());
        long p = a.malloc(100);
        assertEquals(FakeDevice.BASE, p);
        a.free(p);
        assertEquals(0, device.usedBytes());
        assertThrows(UncheckedIOException.class, a::close);
        assertTrue(a.isClosed());
    }

    @Test
    void anUncheckedRecorderFailureNeverFailsTheAllocation() {
        FakeDevice device = new FakeDevice(MiB);
        TraceRecorder broken = mock(TraceRecorder.class);
        IllegalStateException bug = new IllegalStateException("bug in a custom recorder");
        try {
            Mockito.doThrow(bug).when(broken).allocate(any(Long.class), any(Long.class), any(Long.class),
                    any(Long.class), any(Long.class));
            Mockito.doThrow(new IllegalStateException("close too")).when(broken).close();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        RecordingAllocator a = new RecordingAllocator(new DirectAllocatorProvider().create(device, ""), broken);
        long p = a.malloc(100);
        assertEquals(FakeDevice.BASE, p, "the allocation succeeded and was returned");
        assertFalse(a.isRecording());
        assertSame(bug, a.recordingFailure().orElseThrow().getCause());
        a.free(p);
        assertEquals(0, device.usedBytes());
        UncheckedIOException e = assertThrows(UncheckedIOException.class, a::close);
        assertSame(bug, e.getCause().getCause());
        assertEquals("close too", e.getCause().getSuppressed()[0].getMessage());
        assertTrue(a.isClosed(), "the delegate was closed all the same");
    }

    @Test
    void closeFlushesAndClosesTheRecorderThenTheDelegate(@TempDir Path dir) throws IOException {
        FakeDevice device = new FakeDevice(MiB);
        DeviceAllocator direct = new DirectAllocatorProvider().create(device, "");
        Path file = dir.resolve("run.csv");
        RecordingAllocator a = RecordingAllocator.wrap(direct, file, RecordingAllocator.Format.RMM_CSV);
        assertSame(direct, a.delegate());
        assertEquals("direct", a.name());
        assertSame(device, a.device());
        long p = a.malloc(100);
        assertEquals("", Files.readString(file), "buffered until flushed");
        a.flush();
        assertEquals(2, Files.readAllLines(file).size(), "header and one row after flush()");
        a.malloc(200); // still live at close: freed by the delegate's close, not recorded
        a.close();
        assertTrue(direct.isClosed());
        assertTrue(a.isClosed());
        assertThrows(IllegalStateException.class, () -> a.malloc(1));
        assertThrows(IllegalStateException.class, () -> a.free(p));
        List<RmmRow> rows = parseRmm(Files.readString(file));
        assertEquals(List.of("allocate", "allocate"), rows.stream().map(RmmRow::action).toList());
        a.close();
        a.flush(); // closed: nothing to do
    }

    @Test
    void statsSnapshotsAndCacheCallsGoToTheDelegate() {
        DeviceAllocator delegate = mock(DeviceAllocator.class);
        AllocatorStats stats = new DirectAllocatorProvider().create(new FakeDevice(MiB), "").stats();
        MemorySnapshot snapshot = new MemorySnapshot("mock", new FakeDevice(MiB).descriptor(), List.of(), stats);
        when(delegate.stats()).thenReturn(stats);
        when(delegate.snapshot()).thenReturn(snapshot);
        when(delegate.allocationId(0x500)).thenReturn(9L);
        RecordingAllocator a = new RecordingAllocator(delegate, new FailingRecorder(Integer.MAX_VALUE, null));
        assertSame(stats, a.stats());
        assertSame(snapshot, a.snapshot());
        assertEquals(9, a.allocationId(0x500));
        a.resetPeakStats();
        a.releaseCachedMemory();
        Mockito.verify(delegate).resetPeakStats();
        Mockito.verify(delegate).releaseCachedMemory();
        a.close();
        Mockito.verify(delegate).close();
    }

    @Test
    void theBuilderWrapsTheAllocatorItBuilds(@TempDir Path dir) throws IOException {
        FakeDevice device = new FakeDevice(MiB);
        DeviceMemoryProvider fake = mock(DeviceMemoryProvider.class);
        when(fake.name()).thenReturn("fake");
        when(fake.priority()).thenReturn(1);
        when(fake.probe()).thenReturn(Availability.available("always"));
        when(fake.deviceCount()).thenReturn(1);
        when(fake.description()).thenReturn("fake memory");
        when(fake.argumentHelp()).thenReturn("none");
        when(fake.open(any())).thenReturn(device);
        Path file = dir.resolve("run.pytorch.csv");
        DeviceAllocator built = DeviceAllocators.builder().deviceProviders(List.of(fake))
                .allocatorProviders(List.of(new DirectAllocatorProvider()))
                .device("fake").allocator("direct").decorate(RecordingAllocator.to(file,
                        RecordingAllocator.Format.PYTORCH_CSV)).build();
        RecordingAllocator recording = assertInstanceOf(RecordingAllocator.class, built);
        try (built) {
            built.free(built.malloc(512));
        }
        assertTrue(device.isClosed(), "the built allocator owns the device");
        assertTrue(recording.delegate().isClosed());
        assertEquals(List.of("seq,action,addr,size,stream,time_us", "alloc", "free_requested", "free_completed"),
                Files.readAllLines(file).stream().map(l -> l.startsWith("seq") ? l : l.split(",")[1]).toList());

        // A file that cannot be created: nothing is left open.
        FakeDevice second = new FakeDevice(MiB);
        when(fake.open(any())).thenReturn(second);
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> DeviceAllocators.builder()
                .deviceProviders(List.of(fake))
                .allocatorProviders(List.of(new DirectAllocatorProvider()))
                .device("fake").decorate(RecordingAllocator.to(dir.resolve("missing/dir/run.csv"),
                        RecordingAllocator.Format.RMM_CSV)).build());
        assertTrue(e.getMessage().contains("run.csv"), e.getMessage());
        assertTrue(second.isClosed());
    }

    @Test
    void wrapLeavesTheDelegateToTheCallerWhenTheFileCannotBeCreated(@TempDir Path dir) {
        DeviceAllocator direct = new DirectAllocatorProvider().create(new FakeDevice(MiB), "");
        assertThrows(IOException.class, () -> RecordingAllocator.wrap(direct, dir.resolve("no/such/dir.csv"),
                RecordingAllocator.Format.PYTORCH_CSV));
        assertFalse(direct.isClosed());
        direct.close();
    }

    @Test
    void aStaleHandleIsNotRecordedAndDoesNotDisturbTheNewerAllocation() throws IOException {
        StringWriter out = new StringWriter();
        FakeDevice device = new FakeDevice(MiB);
        RecordingAllocator a = recording(device, new RmmCsvRecorder(out, ZoneOffset.UTC));
        Allocation stale = a.allocate(1000);
        a.free(stale.address());                 // freed through the raw address
        long newer = a.malloc(1000);             // reuses it
        assertEquals(stale.address(), newer);
        InvalidFreeException e = assertThrows(InvalidFreeException.class, stale::close);
        assertEquals(InvalidFreeException.Reason.DOUBLE_FREE, e.reason());
        a.free(newer);
        a.close();
        assertEquals(List.of("allocate", "free", "allocate", "free"),
                parseRmm(out.toString()).stream().map(RmmRow::action).toList());
    }

    // ------------------------------------------------------------------------------------------ parsing

    record RmmRow(long thread, String time, String action, long pointer, long size, long stream) {
    }

    private static final Pattern RMM_ROW = Pattern.compile(
            "(\\d+),(\\d\\d:\\d\\d:\\d\\d\\.\\d{6}),(allocate|free|allocate failure),"
                    + "(0x[1-9a-f][0-9a-f]*|\\(nil\\)),(\\d+),(0|0x[0-9a-f]+)");

    /**
     * Parses RMM's CSV strictly: the exact header, then rows matching RMM's formats, nothing else; a null pointer is
     * {@code (nil)}, as glibc's {@code %p} in RMM's logger writes it, never {@code 0x0}.
     */
    static List<RmmRow> parseRmm(String text) {
        assertTrue(text.endsWith("\n"), "ends with a newline");
        String[] lines = text.split("\n", -1);
        assertEquals(RmmCsvRecorder.HEADER, lines[0]);
        assertEquals("Thread,Time,Action,Pointer,Size,Stream", lines[0]);
        List<RmmRow> rows = new ArrayList<>();
        for (int i = 1; i < lines.length - 1; i++) {
            var m = RMM_ROW.matcher(lines[i]);
            assertTrue(m.matches(), "line " + (i + 1) + ": " + lines[i]);
            String pointer = m.group(4);
            String stream = m.group(6);
            rows.add(new RmmRow(Long.parseLong(m.group(1)), m.group(2), m.group(3),
                    RmmCsvRecorder.NULL_POINTER.equals(pointer) ? 0 : Long.parseUnsignedLong(pointer.substring(2), 16),
                    Long.parseLong(m.group(5)),
                    stream.equals("0") ? 0 : Long.parseUnsignedLong(stream.substring(2), 16)));
            assertNotEquals("(nil)".equals(pointer), "allocate".equals(m.group(3)) || "free".equals(m.group(3)),
                    lines[i]);
        }
        return rows;
    }

    record PyTorchRow(long seq, String action, long addr, long size, long stream, long timeUs) {
    }

    private static final Pattern PYTORCH_ROW = Pattern.compile(
            "(\\d+),(alloc|free_requested|free_completed|oom),(\\d*),(\\d+),(\\d+),(\\d+)");

    /**
     * Parses the project CSV strictly: the header, then alloc, free_requested, free_completed and oom rows (oom with
     * an empty address).
     */
    static List<PyTorchRow> parsePyTorch(String text) {
        assertTrue(text.endsWith("\n"), "ends with a newline");
        String[] lines = text.split("\n", -1);
        assertEquals("seq,action,addr,size,stream,time_us", lines[0]);
        List<PyTorchRow> rows = new ArrayList<>();
        Set<Long> seqs = new HashSet<>();
        for (int i = 1; i < lines.length - 1; i++) {
            var m = PYTORCH_ROW.matcher(lines[i]);
            assertTrue(m.matches(), "line " + (i + 1) + ": " + lines[i]);
            assertEquals(m.group(2).equals("oom"), m.group(3).isEmpty(), lines[i]);
            PyTorchRow row = new PyTorchRow(Long.parseLong(m.group(1)), m.group(2),
                    m.group(3).isEmpty() ? 0 : Long.parseUnsignedLong(m.group(3)), Long.parseLong(m.group(4)),
                    Long.parseUnsignedLong(m.group(5)), Long.parseLong(m.group(6)));
            assertTrue(seqs.add(row.seq()));
            rows.add(row);
        }
        return rows;
    }

    // ------------------------------------------------------------------------------------------ helpers

    /** A recorder that fails with {@code failure} on call number {@code failOn}, counting calls. */
    private static final class FailingRecorder implements TraceRecorder {
        private final int failOn;
        private final IOException failure;
        int calls;
        boolean closed;

        FailingRecorder(int failOn, IOException failure) {
            this.failOn = failOn;
            this.failure = failure;
        }

        private void call() throws IOException {
            if (++calls == failOn) {
                throw failure;
            }
        }

        @Override
        public void allocate(long threadId, long epochMicros, long address, long size, long stream)
                throws IOException {
            call();
        }

        @Override
        public void allocateFailure(long threadId, long epochMicros, long size, long stream, RuntimeException cause)
                throws IOException {
            call();
        }

        @Override
        public void free(long threadId, long epochMicros, long address, long size, long stream) throws IOException {
            call();
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /** Forwards to a delegate and runs a hook after each successful {@code free(long)}. */
    private static final class HookedAllocator implements DeviceAllocator {
        private final DeviceAllocator d;
        volatile Runnable hook;

        HookedAllocator(DeviceAllocator d, Runnable hook) {
            this.d = d;
            this.hook = hook;
        }

        @Override
        public String name() {
            return d.name();
        }

        @Override
        public DeviceMemory device() {
            return d.device();
        }

        @Override
        public long malloc(long bytes, DeviceStream stream) {
            return d.malloc(bytes, stream);
        }

        @Override
        public void free(long address) {
            d.free(address);
            Runnable h = hook;
            if (h != null) {
                h.run();
            }
        }

        @Override
        public long allocationId(long address) {
            return d.allocationId(address);
        }

        @Override
        public void free(long address, long allocationId) {
            d.free(address, allocationId);
        }

        @Override
        public void recordStream(long address, DeviceStream stream) {
            d.recordStream(address, stream);
        }

        @Override
        public AllocatorStats stats() {
            return d.stats();
        }

        @Override
        public void resetPeakStats() {
            d.resetPeakStats();
        }

        @Override
        public void releaseCachedMemory() {
            d.releaseCachedMemory();
        }

        @Override
        public MemorySnapshot snapshot() {
            return d.snapshot();
        }

        @Override
        public boolean isClosed() {
            return d.isClosed();
        }

        @Override
        public void close() {
            d.close();
        }
    }
}
