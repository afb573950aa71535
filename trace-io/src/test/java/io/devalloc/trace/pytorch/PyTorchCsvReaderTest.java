package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.Events;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PyTorchCsvReaderTest {

    @TempDir
    Path dir;

    private Path write(String name, String text) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return file;
    }

    @Test
    void everyActionBecomesItsEventOrIsSkipped() throws IOException {
        Path file = write("t.csv", """
                seq,action,addr,size,stream,time_us
                0,presegment,1000,400,0,10
                1,prealloc,1000,90,0,10
                2,alloc,1100,100,0,10
                3,free_requested,1100,100,0,15
                4,free_completed,1100,100,0,16
                5,segment_alloc,5000,300,7,17
                6,segment_free,5000,300,7,18
                7,segment_map,9000,2048,0,19

                8,segment_unmap,9000,1024,0,
                9,oom,,12345,0,20
                10,snapshot,0,0,0,21
                11,alloc,18446744073709551615,9223372036854775807,,22
                12,annotate,,,,23
                13,user_defined,0,0,0,24
                """);
        PyTorchCsvReader reader = new PyTorchCsvReader(file);
        assertEquals(TraceFormat.PYTORCH_CSV, reader.format());
        List<TraceEvent> events = Events.readAll(reader);
        assertEquals(List.of(
                new TraceEvent(Kind.PRESEGMENT, 1000, 400, 0, 0, 2),
                new TraceEvent(Kind.PREALLOC, 1000, 90, 0, 0, 3),
                new TraceEvent(Kind.ALLOC, 1100, 100, 0, 0, 4),
                new TraceEvent(Kind.FREE, 1100, 100, 0, 0, 6),
                new TraceEvent(Kind.SEGMENT_ALLOC, 5000, 300, 7, 0, 7),
                new TraceEvent(Kind.SEGMENT_FREE, 5000, 300, 7, 0, 8),
                new TraceEvent(Kind.SEGMENT_MAP, 9000, 2048, 0, 0, 9),
                new TraceEvent(Kind.SEGMENT_UNMAP, 9000, 1024, 0, 0, 11),
                new TraceEvent(Kind.OOM, 12345, 0, 0, 0, 12),
                new TraceEvent(Kind.ALLOC, -1L, Long.MAX_VALUE, 0, 0, 14)), events);
        assertEquals(4, reader.skipped());
    }

    @Test
    void windowsLineEndingsAndAByteOrderMarkAreRead() throws IOException {
        List<TraceEvent> events = Events.readAll(new PyTorchCsvReader(new StringReader(
                "\uFEFFseq,action,addr,size,stream,time_us\r\n0,alloc,1,2,3,4\r\n1,free_completed,1,2,3,5\r\n"),
                "crlf.csv"));
        assertEquals(List.of(new TraceEvent(Kind.ALLOC, 1, 2, 3, 0, 2), new TraceEvent(Kind.FREE, 1, 2, 3, 0, 3)),
                events);
    }

    @Test
    void aFreeOfAnUnknownAddressIsNotAFormatError() throws IOException {
        List<TraceEvent> events = Events.readAll(new PyTorchCsvReader(new StringReader(
                "seq,action,addr,size,stream,time_us\n0,free_completed,777,8,0,\n"), "f.csv"));
        assertEquals(List.of(new TraceEvent(Kind.FREE, 777, 8, 0, 0, 2)), events);
    }

    @Test
    void anEmptyTraceHasNoEvents() throws IOException {
        try (PyTorchCsvReader reader = new PyTorchCsvReader(write("e.csv", "seq,action,addr,size,stream,time_us\n"))) {
            assertNull(reader.next());
            assertNull(reader.next());
        }
    }

    @Test
    void aWrongHeaderIsReportedOnLineOne() throws IOException {
        Path file = write("h.csv", "Thread,Time,Action,Pointer,Size,Stream\n");
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> new PyTorchCsvReader(file));
        assertEquals(file.toString(), e.file());
        assertEquals(1, e.line());
        assertTrue(e.getMessage().contains("expected the header 'seq,action,addr,size,stream,time_us'"),
                e.getMessage());
        TraceFormatException empty = assertThrows(TraceFormatException.class,
                () -> new PyTorchCsvReader(write("empty.csv", "")));
        assertEquals(1, empty.line());
        assertTrue(empty.getMessage().contains("empty file"), empty.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "five columns       | 0,alloc,1,2,3                "
                + "| expected 6 columns (seq,action,addr,size,stream,time_us), got 5",
        "seven columns      | 0,alloc,1,2,3,4,5            "
                + "| expected 6 columns (seq,action,addr,size,stream,time_us), got 7",
        "unknown action     | 0,malloc,1,2,3,4             "
                + "| unknown action 'malloc': expected one of presegment, prealloc, alloc",
        "bad seq            | x,alloc,1,2,3,4              | seq: expected a non-negative decimal integer, got 'x'",
        "bad addr           | 0,alloc,12x,2,3,4            | addr: expected a non-negative decimal integer, got '12x'",
        "hex addr           | 0,alloc,0x10,2,3,4           | addr: expected a non-negative decimal integer, got '0x10'",
        "missing addr       | 0,alloc,,2,3,4               | addr: expected a non-negative decimal integer, got ''",
        "negative size      | 0,free_completed,1,-5,3,4    | size: expected a non-negative decimal integer, got '-5'",
        "missing size       | 0,segment_alloc,1,,3,4       | size: expected a non-negative decimal integer, got ''",
        "size too large     | 0,alloc,1,9223372036854775808,0,4 "
                + "| size: expected a size below 2^63, got '9223372036854775808'",
        "addr too large     | 0,alloc,18446744073709551616,1,0,4 "
                + "| addr: expected a non-negative decimal integer below 2^64",
        "bad stream         | 0,alloc,1,2,s,4              | stream: expected a non-negative decimal integer, got 's'",
        "bad time           | 0,alloc,1,2,0,1.5            "
                + "| time_us: expected a non-negative decimal integer, got '1.5'",
        "space in a number  | 0,alloc, 1,2,0,4             | addr: expected a non-negative decimal integer, got ' 1'",
    })
    void malformedRowsGiveFileLineAndWhatWasExpected(String what, String row, String expected) throws IOException {
        // Alone, and after enough good rows that the reader is on its fused fast path when it meets the bad one.
        for (int good : new int[] {1, 5000}) {
            StringBuilder text = new StringBuilder("seq,action,addr,size,stream,time_us\n");
            for (int i = 0; i < good; i++) {
                text.append(i).append(",alloc,").append(139800000000000L + i).append(",512,0,1763324225770003\n");
            }
            text.append(row).append('\n');
            for (int i = 0; i < 300; i++) {
                text.append(i).append(",free_completed,1,2,0,3\n");
            }
            Path file = write("bad.csv", text.toString());
            long line = good + 2;
            try (PyTorchCsvReader reader = new PyTorchCsvReader(file)) {
                for (int i = 0; i < good; i++) {
                    reader.next();
                }
                TraceFormatException e = assertThrows(TraceFormatException.class, reader::next);
                assertEquals(file.toString(), e.file());
                assertEquals(line, e.line());
                assertTrue(e.getMessage().startsWith(file + ":" + line + ": "), e.getMessage());
                assertTrue(e.getMessage().contains(expected),
                        () -> "expected '" + expected + "' in: " + e.getMessage());
            }
        }
    }

    /**
     * A large file of rows of every shape (every action, 1 to 20 digits, leading zeros, empty optional columns,
     * CRLF, blank lines), long enough to cross many buffer refills: the fused fast path and the general path must
     * together give exactly the events written.
     */
    @Test
    void rowsOfEveryShapeReadTheSameOnEveryPath() throws IOException {
        SplittableRandom random = new SplittableRandom(7);
        PyTorchAction[] actions = PyTorchAction.values();
        StringBuilder text = new StringBuilder("seq,action,addr,size,stream,time_us\n");
        List<TraceEvent> expected = new ArrayList<>();
        long line = 1;
        for (int row = 0; row < 60_000; row++) {
            line++;
            if (random.nextInt(50) == 0) {
                text.append(random.nextBoolean() ? "\n" : "  \r\n");
                continue;
            }
            // Mostly the two common actions, as in real traces.
            int pick = random.nextInt(actions.length + 6);
            PyTorchAction action = pick < actions.length ? actions[pick]
                    : pick % 2 == 0 ? PyTorchAction.ALLOC : PyTorchAction.FREE_COMPLETED;
            String addr = number(random, 20);
            String size = number(random, 18);
            String stream = random.nextInt(10) == 0 ? "" : number(random, 3);
            String time = random.nextInt(10) == 0 ? "" : number(random, 18);
            if (!action.needsAddressAndSize && random.nextBoolean()) {
                addr = "";
                size = "";
            }
            text.append(number(random, 18)).append(',').append(action.text).append(',').append(addr).append(',')
                    .append(size).append(',').append(stream).append(',').append(time)
                    .append(random.nextInt(20) == 0 ? "\r\n" : "\n");
            if (action.kind == TraceEvent.Kind.OOM) {
                // An oom row's size column is the device's free bytes: the event's key; the request is unknown.
                expected.add(new TraceEvent(action.kind, size.isEmpty() ? TraceEvent.FREE_BYTES_UNKNOWN
                        : Long.parseLong(size), 0, stream.isEmpty() ? 0 : Long.parseLong(stream), 0, line));
            } else if (action.kind != null) {
                expected.add(new TraceEvent(action.kind, addr.isEmpty() ? 0 : Long.parseUnsignedLong(addr),
                        size.isEmpty() ? 0 : Long.parseLong(size), stream.isEmpty() ? 0 : Long.parseLong(stream), 0,
                        line));
            }
        }
        Path file = write("shapes.csv", text.toString());
        assertTrue(Files.size(file) > 8 * (1 << 17), "crosses buffer refills");
        assertEquals(expected, Events.readAll(new PyTorchCsvReader(file)));

    }

    /**
     * Random files of good rows with random damage (bytes inserted, deleted or changed; lone {@code \r}, a byte-order
     * mark, non-ASCII bytes, no newline at the end), each read from the file, where the fused fast path takes the
     * rows it can, and through a reader that hands over one character at a time, which keeps the reader on its
     * general path: the same events, line numbers and error, every time.
     */
    @Test
    void damagedFilesReadTheSameOnTheFastAndTheGeneralPath() throws IOException {
        SplittableRandom random = new SplittableRandom(3);
        PyTorchAction[] actions = PyTorchAction.values();
        String[] damage = {"\r", "\n", ",", "", "x", "\u00e9", "\r\n", "0", "99999999999999999999", " "};
        for (int round = 0; round < 300; round++) {
            StringBuilder text = new StringBuilder(random.nextInt(10) == 0 ? "\uFEFF" : "")
                    .append(PyTorchCsvReader.HEADER).append('\n');
            int rows = 1 + random.nextInt(random.nextBoolean() ? 40 : 4000);
            for (int row = 0; row < rows; row++) {
                PyTorchAction action = random.nextInt(4) == 0 ? actions[random.nextInt(actions.length)]
                        : random.nextBoolean() ? PyTorchAction.ALLOC : PyTorchAction.FREE_COMPLETED;
                int end = random.nextInt(30);
                text.append(number(random, 3)).append(',').append(action.text).append(',')
                        .append(number(random, 18)).append(',').append(number(random, 9)).append(",0,")
                        .append(number(random, 16)).append(end == 0 ? "\r\n" : end == 1 ? "\r" : "\n");
            }
            for (int d = random.nextInt(4); d > 0; d--) {
                int at = random.nextInt(text.length());
                int cut = random.nextInt(3);
                text.replace(at, Math.min(text.length(), at + cut), damage[random.nextInt(damage.length)]);
            }
            if (random.nextInt(5) == 0) {
                text.setLength(text.length() - 1);
            }
            String content = text.toString();
            Path file = write("d" + round + ".csv", content);
            assertEquals(outcome(() -> new PyTorchCsvReader(oneCharAtATime(content), file.toString())),
                    outcome(() -> new PyTorchCsvReader(file)), "round " + round);
        }
    }

    private interface ReaderFactory {
        PyTorchCsvReader open() throws IOException;
    }

    /** Every event read, then the error that stopped the reading, if any (as its message, which has the line). */
    private static List<String> outcome(ReaderFactory factory) throws IOException {
        List<String> out = new ArrayList<>();
        try (PyTorchCsvReader reader = factory.open()) {
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

    /** 1 to {@code maxDigits} decimal digits, sometimes with leading zeros; 20 digits stay below 2^64. */
    private static String number(SplittableRandom random, int maxDigits) {
        int digits = 1 + random.nextInt(maxDigits);
        StringBuilder s = new StringBuilder(digits);
        for (int i = 0; i < digits; i++) {
            // Twenty digits start with 0 or 1 and then at most 7: below 18446744073709551615.
            int bound = digits < 20 || i > 1 ? 10 : i == 0 ? 2 : 8;
            s.append((char) ('0' + random.nextInt(bound)));
        }
        return s.toString();
    }
}
