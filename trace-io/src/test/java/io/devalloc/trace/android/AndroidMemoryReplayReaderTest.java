package io.devalloc.trace.android;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.Events;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.detect.TraceFormats;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AndroidMemoryReplayReaderTest {

    private static final String TRACE = """
            202: malloc 0xb4827400 1024
            202: free 0xb4827400
            203: calloc 0xb4837058 4 20
            203: memalign 0xb4900000 64 100
            204: realloc 0xb4a00000 0x0 48
            204: realloc 0xb4a00000 0xb4a00000 96
            204: realloc 0xb4b00000 0xb4a00000 200
            204: realloc 0x0 0xb4b00000 0
            202: free 0x0
            202: malloc 0x0 16

            203: free 0xb4837058
            203: thread_done 0x0
            205: malloc 0xb4c00000 32 1000 2000
            205: thread_done 0x0 3000
            """;

    private static final List<TraceEvent> EVENTS = List.of(
            new TraceEvent(Kind.ALLOC, 0xb4827400L, 1024, 0, 202, 1),
            new TraceEvent(Kind.FREE, 0xb4827400L, 0, 0, 202, 2),
            new TraceEvent(Kind.ALLOC, 0xb4837058L, 80, 0, 203, 3),
            new TraceEvent(Kind.ALLOC, 0xb4900000L, 100, 0, 203, 4),
            new TraceEvent(Kind.ALLOC, 0xb4a00000L, 48, 0, 204, 5),
            new TraceEvent(Kind.FREE, 0xb4a00000L, 0, 0, 204, 6),
            new TraceEvent(Kind.ALLOC, 0xb4a00000L, 96, 0, 204, 6),
            new TraceEvent(Kind.FREE, 0xb4a00000L, 0, 0, 204, 7),
            new TraceEvent(Kind.ALLOC, 0xb4b00000L, 200, 0, 204, 7),
            new TraceEvent(Kind.FREE, 0xb4b00000L, 0, 0, 204, 8),
            new TraceEvent(Kind.FREE, 0xb4837058L, 0, 0, 203, 12),
            new TraceEvent(Kind.ALLOC, 0xb4c00000L, 32, 0, 205, 14));

    @TempDir
    Path dir;

    @Test
    void everyVerbGivesItsEventsOrNone() throws IOException {
        Path file = dir.resolve("trace.txt");
        Files.writeString(file, TRACE, StandardCharsets.UTF_8);
        AndroidMemoryReplayReader reader = new AndroidMemoryReplayReader(file);
        assertEquals(TraceFormat.ANDROID_MEMORY_REPLAY, reader.format());
        assertEquals(EVENTS, Events.readAll(reader));
        // free(NULL), the failed malloc, the realloc to 0 is not skipped (it frees), two thread_done
        assertEquals(4, reader.skipped());
    }

    private Path zip(String name, String... entries) throws IOException {
        Path file = dir.resolve(name);
        try (OutputStream out = Files.newOutputStream(file); ZipOutputStream zip = new ZipOutputStream(out)) {
            for (int i = 0; i < entries.length; i += 2) {
                zip.putNextEntry(new ZipEntry(entries[i]));
                zip.write(entries[i + 1].getBytes(StandardCharsets.UTF_8));
                zip.closeEntry();
            }
        }
        return file;
    }

    @Test
    void aZipOfOneTextFileReadsLikeTheText() throws IOException {
        Path file = zip("trace.zip", "trace.txt", TRACE);
        assertEquals(EVENTS, Events.readAll(new AndroidMemoryReplayReader(file)));
        assertEquals(EVENTS, Events.readAll(TraceFormats.open(file)));
    }

    @Test
    void aZipOfSeveralFilesOrNoneIsAFormatError() throws IOException {
        Path two = zip("two.zip", "a.txt", "1: free 0x0\n", "b.txt", "1: free 0x0\n");
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> new AndroidMemoryReplayReader(two));
        assertEquals(two.toString(), e.file());
        assertTrue(e.getMessage().contains("expected a zip holding one text file (the trace), found 2 files"));
        Path none = zip("none.zip");
        assertTrue(assertThrows(TraceFormatException.class, () -> new AndroidMemoryReplayReader(none)).getMessage()
                .contains("found 0 files"));
    }

    @Test
    void inAZipMessagesNameTheFileInside() throws IOException {
        Path file = zip("bad.zip", "systemui.txt", "1: malloc 0x10 8\n1: mallocx 0x10 8\n");
        try (AndroidMemoryReplayReader reader = new AndroidMemoryReplayReader(file)) {
            reader.next();
            TraceFormatException e = assertThrows(TraceFormatException.class, reader::next);
            assertEquals(file + "!systemui.txt", e.file());
            assertEquals(2, e.line());
        }
    }

    @Test
    void aFreeOfAnUnknownPointerIsNotAFormatError() throws IOException {
        assertEquals(List.of(new TraceEvent(Kind.FREE, 0x77, 0, 0, 9, 1)),
                Events.readAll(new AndroidMemoryReplayReader(new StringReader("9: free 0x77\n"), "a.txt")));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "no colon           | 202 malloc 0x10 8                | expected '<tid>: <verb> ...', got '202 malloc 0x10 8'",
        "bad thread         | t2: malloc 0x10 8                "
                + "| thread id: expected a non-negative decimal integer, got 't2'",
        "no verb            | 202:                             "
                + "| expected a verb (malloc, calloc, memalign, realloc, free or thread_done) after the thread id",
        "unknown verb       | 202: valloc 0x10 8               "
                + "| unknown verb 'valloc': expected malloc, calloc, memalign, realloc, free or thread_done",
        "malloc arguments   | 202: malloc 0x10                 "
                + "| malloc: expected '<tid>: malloc ptr size'"
                + " (and optionally the start and end times), got 1 arguments",
        "calloc arguments   | 202: calloc 0x10 8               | calloc: expected '<tid>: calloc ptr nmemb size'",
        "memalign arguments | 202: memalign 0x10 8 16 32       "
                + "| memalign: expected '<tid>: memalign ptr alignment size'"
                + " (and optionally the start and end times), got 4 arguments",
        "realloc arguments  | 202: realloc 0x10 0x0            "
                + "| realloc: expected '<tid>: realloc new_ptr old_ptr size'",
        "free arguments     | 202: free                        | free: expected '<tid>: free ptr'",
        "thread_done args   | 202: thread_done                 "
                + "| thread_done: expected '<tid>: thread_done 0x0' (and optionally the end time), got 0 arguments",
        "bad pointer        | 202: malloc 0xg0 8               "
                + "| ptr: expected a hexadecimal number (0x...), got '0xg0'",
        "bad size           | 202: malloc 0x10 8k              "
                + "| size: expected a non-negative decimal integer, got '8k'",
        "bad old pointer    | 202: realloc 0x10 nil 8          "
                + "| old_ptr: expected a hexadecimal number (0x...), got 'nil'",
        "bad nmemb          | 202: calloc 0x10 -1 8            "
                + "| nmemb: expected a non-negative decimal integer, got '-1'",
        "calloc overflow    | 202: calloc 0x10 4294967296 4294967296 | calloc: nmemb × size overflows 2^63",
        "bad timestamp      | 202: malloc 0x10 8 100 1e3       "
                + "| end time: expected a non-negative decimal integer, got '1e3'",
    })
    void malformedLinesGiveFileLineAndWhatWasExpected(String what, String line, String expected) throws IOException {
        // At the end of the file, and followed by more lines (where the reader's fast path sees it first).
        for (String after : List.of("", "1: free 0x20\n".repeat(40))) {
            try (AndroidMemoryReplayReader reader = new AndroidMemoryReplayReader(
                    new StringReader("1: malloc 0x20 8\n" + line + "\n" + after), "a.txt")) {
                reader.next();
                TraceFormatException e = assertThrows(TraceFormatException.class, reader::next);
                assertEquals("a.txt", e.file());
                assertEquals(2, e.line());
                assertTrue(e.getMessage().contains(expected),
                        () -> "expected '" + expected + "' in: " + e.getMessage());
            }
        }
    }

    /** {@link #EVENTS} of the {@code copy}-th (0-based) copy of {@link #TRACE} in a file of copies. */
    private static List<TraceEvent> eventsOfCopy(int copy) {
        long lines = TRACE.lines().count();
        return EVENTS.stream().map(e -> new TraceEvent(e.kind(), e.key(), e.size(), e.stream(), e.thread(),
                e.line() + copy * lines)).toList();
    }

    @Test
    void aLongTraceReadsLineByLineAsAShortOne() throws IOException {
        // Long enough for the fast path to read most lines; the same events, line numbers and skipped count.
        int copies = 50;
        List<TraceEvent> expected = new ArrayList<>();
        for (int c = 0; c < copies; c++) {
            expected.addAll(eventsOfCopy(c));
        }
        for (String newline : List.of("\n", "\r\n")) {
            String text = TRACE.repeat(copies).replace("\n", newline);
            AndroidMemoryReplayReader reader = new AndroidMemoryReplayReader(new StringReader(text), "a.txt");
            assertEquals(expected, Events.readAll(reader), newline.length() + "-byte line ends");
            assertEquals(4L * copies, reader.skipped());
        }
    }

    @Test
    void otherSpacingPrefixesAndLongNumbersReadAsTheCommonForm() throws IOException {
        String common = "7: malloc 0x10 8\n7: realloc 0x20 0x10 16\n7: free 0x20\n";
        String other = "7:\tmalloc  10 8\n7: realloc 0X20 0x0010 0000000000000000000016 \n 7: free 0x20\n";
        List<TraceEvent> events = List.of(
                new TraceEvent(Kind.ALLOC, 0x10, 8, 0, 7, 1),
                new TraceEvent(Kind.FREE, 0x10, 0, 0, 7, 2),
                new TraceEvent(Kind.ALLOC, 0x20, 16, 0, 7, 2),
                new TraceEvent(Kind.FREE, 0x20, 0, 0, 7, 3));
        String padding = "8: free 0x0\n".repeat(40);
        for (String text : List.of(common, other)) {
            List<TraceEvent> read = Events.readAll(
                    new AndroidMemoryReplayReader(new StringReader(text + padding), "a.txt"));
            assertEquals(events, read, text);
        }
    }
}
