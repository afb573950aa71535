package io.devalloc.trace.rmm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.Events;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.detect.TraceFormats;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RmmCsvTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-21T15:47:02.841961Z"), ZoneOffset.UTC);

    @TempDir
    Path dir;

    @Test
    void readsRmmsLog() throws IOException {
        Path file = dir.resolve("rmm.csv");
        Files.writeString(file, """
                Thread,Time,Action,Pointer,Size,Stream
                2342727,15:47:02.841961,allocate,0x10012400000,1048576,0
                2342727,15:47:02.841990,allocate failure,(nil),1099511627776,0x5617a0c0
                2342728,15:47:02.842001,allocate,7f2a00000200,256,0x5617a0c0

                2342727,15:47:02.842100,free,0x10012400000,1048576,0
                2342728,1634567890.345678,free,0x7f2a00000200,256,5617a0c0
                2342728,15:47:02.842200,allocate,(nil),0,(nil)
                2342728,15:47:02.842300,allocate failure,0x0,2048,0
                """, StandardCharsets.UTF_8);
        RmmCsvReader reader = new RmmCsvReader(file);
        assertEquals(TraceFormat.RMM_CSV, reader.format());
        assertEquals(List.of(
                new TraceEvent(Kind.ALLOC, 0x10012400000L, 1048576, 0, 2342727, 2),
                new TraceEvent(Kind.OOM, TraceEvent.FREE_BYTES_UNKNOWN, 1099511627776L, 0x5617a0c0L, 2342727, 3),
                new TraceEvent(Kind.ALLOC, 0x7f2a00000200L, 256, 0x5617a0c0L, 2342728, 4),
                new TraceEvent(Kind.FREE, 0x10012400000L, 1048576, 0, 2342727, 6),
                new TraceEvent(Kind.FREE, 0x7f2a00000200L, 256, 0x5617a0c0L, 2342728, 7),
                new TraceEvent(Kind.ALLOC, 0, 0, 0, 2342728, 8),
                // RMM before its printf-style logger wrote a failure's null pointer as 0x0.
                new TraceEvent(Kind.OOM, TraceEvent.FREE_BYTES_UNKNOWN, 2048, 0, 2342728, 9)), Events.readAll(reader));
    }

    @Test
    void writesRmmsLogAsTheLoggingAdaptorDoes() throws IOException {
        StringWriter out = new StringWriter();
        try (RmmCsvWriter writer = new RmmCsvWriter(out, CLOCK)) {
            assertTrue(writer.write(new TraceEvent(Kind.ALLOC, 0x10012400000L, 1048576, 0, 2342727, 1)));
            writer.allocateFailure(1L << 40, 0x5617a0c0L, 2342727);
            assertTrue(writer.write(new TraceEvent(Kind.FREE, 0x10012400000L, 1048576, 0, 2342727, 2)));
            assertTrue(writer.write(new TraceEvent(Kind.PREALLOC, 0x20000, 512, 0x5617a0c0L, 9, 3)));
            assertFalse(writer.write(new TraceEvent(Kind.SEGMENT_ALLOC, 0x20000, 2 << 20, 0, 0, 4)));
            assertFalse(writer.write(new TraceEvent(Kind.OOM, 0, 12345, 0, 0, 5)));
        }
        assertEquals("""
                Thread,Time,Action,Pointer,Size,Stream
                2342727,15:47:02.841961,allocate,0x10012400000,1048576,0
                2342727,15:47:02.841961,allocate failure,(nil),1099511627776,0x5617a0c0
                2342727,15:47:02.841961,free,0x10012400000,1048576,0
                9,15:47:02.841961,allocate,0x20000,512,0x5617a0c0
                """, out.toString());
    }

    @Test
    void writeThenReadGivesTheSameEvents() throws IOException {
        List<TraceEvent> events = new ArrayList<>();
        long line = 1;
        for (int i = 0; i < 500; i++) {
            long thread = 1000 + i % 3;
            long stream = i % 4 == 0 ? 0 : 0x7f00_0000_0000L + i % 4;
            long address = 0x7f10_0000_0000L + 512L * i;
            events.add(new TraceEvent(Kind.ALLOC, address, 1 + 37L * i, stream, thread, line++));
            if (i % 3 != 0) {
                events.add(new TraceEvent(Kind.FREE, address, 1 + 37L * i, stream, thread, line++));
            }
        }
        events.add(new TraceEvent(Kind.ALLOC, -1L, Long.MAX_VALUE, -1L, -1L, line++));
        Path file = dir.resolve("round.csv");
        try (RmmCsvWriter writer = new RmmCsvWriter(file)) {
            for (TraceEvent e : events) {
                assertTrue(writer.write(e));
            }
            // A request that failed comes back as the trace's OOM event, with its size.
            writer.allocateFailure(1L << 40, 0x7f00_0000_0001L, 1000);
        }
        events.add(new TraceEvent(Kind.OOM, TraceEvent.FREE_BYTES_UNKNOWN, 1L << 40, 0x7f00_0000_0001L, 1000, line));
        assertEquals(TraceFormat.RMM_CSV, TraceFormats.detect(file));
        List<TraceEvent> read = Events.readAll(TraceFormats.open(file));
        assertEquals(Events.withoutLines(events), Events.withoutLines(read));
        assertEquals(2, read.get(0).line(), "line numbers are the file's (header on line 1)");
    }

    @Test
    void aWrongHeaderIsReportedOnLineOne() {
        TraceFormatException e = assertThrows(TraceFormatException.class,
                () -> new RmmCsvReader(new StringReader("thread,time,action,pointer,size,stream\n"), "r.csv"));
        assertEquals("r.csv", e.file());
        assertEquals(1, e.line());
        assertTrue(e.getMessage().contains("expected the header 'Thread,Time,Action,Pointer,Size,Stream'"));
    }

    @Test
    void aFreeOfAnUnknownPointerIsNotAFormatError() throws IOException {
        assertEquals(List.of(new TraceEvent(Kind.FREE, 0xabc, 16, 0, 1, 2)), Events.readAll(new RmmCsvReader(
                new StringReader("Thread,Time,Action,Pointer,Size,Stream\n1,00:00:00.000001,free,0xabc,16,0\n"),
                "r.csv")));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "five columns    | 1,15:47:02.841961,allocate,0x10,16                "
                + "| expected 6 columns (Thread,Time,Action,Pointer,Size,Stream), got 5",
        "unknown action  | 1,15:47:02.841961,deallocate,0x10,16,0            "
                + "| unknown Action 'deallocate': expected allocate, free or allocate failure",
        "bad thread      | t1,15:47:02.841961,allocate,0x10,16,0             "
                + "| Thread: expected a non-negative decimal integer, got 't1'",
        "bad time        | 1,15:47,allocate,0x10,16,0                        "
                + "| Time: expected HH:MM:SS.micro (like 15:47:02.841961), got '15:47'",
        "bad hour        | 1,25:47:02.841961,allocate,0x10,16,0              | Time: expected HH:MM:SS.micro",
        "bad pointer     | 1,15:47:02.841961,allocate,0xzz,16,0              "
                + "| Pointer: expected a hexadecimal number (0x...), got '0xzz'",
        "empty pointer   | 1,15:47:02.841961,allocate,,16,0                  "
                + "| Pointer: expected a hexadecimal number (0x...), got ''",
        "bad size        | 1,15:47:02.841961,allocate,0x10,0x10,0            "
                + "| Size: expected a non-negative decimal integer, got '0x10'",
        "bad stream      | 1,15:47:02.841961,allocate,0x10,16,stream         "
                + "| Stream: expected a hexadecimal number (0x...), got 'stream'",
        "long pointer    | 1,15:47:02.841961,allocate,0x10000000000000000,16,0 "
                + "| Pointer: expected a hexadecimal number (0x...) below 2^64",
    })
    void malformedRowsGiveFileLineAndWhatWasExpected(String what, String row, String expected) throws IOException {
        try (RmmCsvReader reader = new RmmCsvReader(new StringReader(
                "Thread,Time,Action,Pointer,Size,Stream\n1,15:47:02.841961,allocate,0x20,16,0\n" + row + "\n"),
                "bad.csv")) {
            reader.next();
            TraceFormatException e = assertThrows(TraceFormatException.class, reader::next);
            assertEquals("bad.csv", e.file());
            assertEquals(3, e.line());
            assertTrue(e.getMessage().contains(expected), () -> "expected '" + expected + "' in: " + e.getMessage());
        }
    }

    /**
     * A large log of rows of every shape (both time forms, (nil), pointers and streams with and without 0x, upper
     * case, 1 to 20 digit threads, failures, CRLF, blank lines), long enough to cross buffer refills: the fused fast
     * path and the general path together give exactly the events written.
     */
    @Test
    void rowsOfEveryShapeReadTheSameOnEveryPath() throws IOException {
        SplittableRandom random = new SplittableRandom(11);
        StringBuilder text = new StringBuilder(RmmCsvReader.HEADER).append('\n');
        List<TraceEvent> expected = new ArrayList<>();
        long line = 1;
        for (int row = 0; row < 50_000; row++) {
            line++;
            if (random.nextInt(60) == 0) {
                text.append(random.nextBoolean() ? "\n" : " \r\n");
                continue;
            }
            long thread = random.nextInt(8) == 0 ? random.nextLong() >>> random.nextInt(64) : random.nextInt(5_000_000);
            String time = random.nextInt(10) == 0 ? (random.nextInt(2_000_000_000) + "." + random.nextInt(1000))
                    : String.format("%02d:%02d:%02d.%0" + (1 + random.nextInt(9)) + "d", random.nextInt(24),
                            random.nextInt(60), random.nextInt(61), random.nextInt(10));
            int pick = random.nextInt(20);
            String action = pick == 0 ? "allocate failure" : pick % 2 == 0 ? "allocate" : "free";
            long pointer = random.nextInt(30) == 0 ? 0 : random.nextLong() >>> random.nextInt(40);
            String pointerText = pointer == 0 && random.nextBoolean() ? "(nil)" : hexText(random, pointer);
            long size = random.nextLong() >>> (1 + random.nextInt(63));
            long stream = random.nextInt(3) == 0 ? random.nextLong() >>> random.nextInt(64) : 0;
            String streamText = stream == 0 ? (random.nextInt(5) == 0 ? "(nil)" : "0") : hexText(random, stream);
            text.append(Long.toUnsignedString(thread)).append(',').append(time).append(',').append(action)
                    .append(',').append(pointerText).append(',').append(size).append(',').append(streamText)
                    .append(random.nextInt(20) == 0 ? "\r\n" : "\n");
            Kind kind = action.equals("allocate") ? Kind.ALLOC : action.equals("free") ? Kind.FREE : Kind.OOM;
            // A failure's key says the device's free bytes are unknown: RMM does not log them.
            expected.add(new TraceEvent(kind, kind == Kind.OOM ? TraceEvent.FREE_BYTES_UNKNOWN : pointer, size, stream,
                    thread, line));
        }
        Path file = dir.resolve("shapes.csv");
        Files.writeString(file, text, StandardCharsets.UTF_8);
        assertTrue(Files.size(file) > 8 * (1 << 17), "crosses buffer refills");
        assertEquals(expected, Events.readAll(new RmmCsvReader(file)));
    }

    /** {@code v} in hexadecimal: mostly 0x and lower case, sometimes upper case or no prefix. */
    private static String hexText(SplittableRandom random, long v) {
        String digits = Long.toHexString(v);
        return switch (random.nextInt(8)) {
            case 0 -> digits;
            case 1 -> "0x" + digits.toUpperCase(Locale.ROOT);
            case 2 -> "0X" + digits;
            default -> "0x" + digits;
        };
    }

    /**
     * Random RMM logs with an odd value in one column of some rows (the other time form, 60 seconds, hour 24, no or
     * ten fraction digits, (nil), 0X, no prefix, 17 hex digits, 19 and 20 digit numbers, sizes from 2^63) and random
     * damage, each read from the file (the fused fast path takes the rows it can) and through a reader that hands
     * over one character at a time (the general path only): the same events, line numbers and error, every time.
     */
    @Test
    void damagedLogsReadTheSameOnTheFastAndTheGeneralPath() throws IOException {
        SplittableRandom random = new SplittableRandom(5);
        String[][] odd = {
            {"1634567890.345678", "15:47:60.1", "24:00:00.5", "15:47:02.", "15:47:02.1234567890", "5:47:02.1"},
            {"(nil)", "0X1F", "7f2a", "0x12345678901234567", "0x", "0xFFFFFFFFFFFFFFFF", "0xg1"},
            {"9223372036854775808", "99999999999999999999", "1234567890123456789", "", "-1"},
            {"(nil)", "0X5", "5617a0c0", "00", "0x12345678901234567"},
            {"12345678901234567890", "1234567890123456789", "007", ""}};
        String[] damage = {"\r", "\n", ",", "", "x", "\u00e9", "\r\n", "0", " ", ":"};
        for (int round = 0; round < 300; round++) {
            StringBuilder text = new StringBuilder(RmmCsvReader.HEADER).append('\n');
            int rows = 1 + random.nextInt(random.nextBoolean() ? 40 : 3000);
            for (int row = 0; row < rows; row++) {
                String[] cols = {
                    Long.toString(random.nextInt(3_000_000)),
                    String.format("%02d:%02d:%02d.%06d", random.nextInt(24), random.nextInt(60), random.nextInt(60),
                            random.nextInt(1_000_000)),
                    random.nextInt(15) == 0 ? "allocate failure" : random.nextBoolean() ? "allocate" : "free",
                    "0x" + Long.toHexString(random.nextLong() >>> random.nextInt(48)),
                    Long.toString(random.nextLong() >>> (1 + random.nextInt(63))),
                    random.nextInt(3) == 0 ? "0x" + Long.toHexString(random.nextLong() >>> 16) : "0"};
                if (random.nextInt(8) == 0) {
                    // One odd column: the thread (4), the time (0), the pointer (1), the size (2) or the stream (3).
                    int kind = random.nextInt(5);
                    int column = new int[] {1, 3, 4, 5, 0}[kind];
                    cols[column] = odd[kind][random.nextInt(odd[kind].length)];
                }
                int end = random.nextInt(30);
                text.append(String.join(",", cols)).append(end == 0 ? "\r\n" : end == 1 ? "\r" : "\n");
            }
            for (int d = random.nextInt(4); d > 0; d--) {
                int at = random.nextInt(text.length());
                text.replace(at, Math.min(text.length(), at + random.nextInt(3)),
                        damage[random.nextInt(damage.length)]);
            }
            if (random.nextInt(5) == 0) {
                text.setLength(text.length() - 1);
            }
            String content = text.toString();
            Path file = dir.resolve("d" + round + ".csv");
            Files.writeString(file, content, StandardCharsets.UTF_8);
            assertEquals(outcome(() -> new RmmCsvReader(oneCharAtATime(content), file.toString())),
                    outcome(() -> new RmmCsvReader(file)), "round " + round);
        }
    }

    private interface ReaderFactory {
        RmmCsvReader open() throws IOException;
    }

    /** Every event read, then the error that stopped the reading, if any (as its message, which has the line). */
    private static List<String> outcome(ReaderFactory factory) throws IOException {
        List<String> out = new ArrayList<>();
        try (RmmCsvReader reader = factory.open()) {
            for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                out.add(e.toString());
            }
        } catch (TraceFormatException e) {
            out.add("error " + e.getMessage());
        }
        return out;
    }

    private static Reader oneCharAtATime(String text) {
        return new Reader() {
            private int next;

            @Override
            public int read(char[] buffer, int offset, int length) {
                if (next == text.length()) {
                    return -1;
                }
                if (length == 0) {
                    return 0;
                }
                buffer[offset] = text.charAt(next++);
                return 1;
            }

            @Override
            public void close() {
            }
        };
    }
}
