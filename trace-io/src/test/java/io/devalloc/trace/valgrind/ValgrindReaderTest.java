package io.devalloc.trace.valgrind;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.Events;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ValgrindReaderTest {

    @TempDir
    Path dir;

    @Test
    void allocsAreNumberedFromZeroAndFreesNameThatNumber() throws IOException {
        Path file = dir.resolve("ls.trace");
        Files.writeString(file, "Alloc(552),\nAlloc(120),\nAlloc(0),\nFree(1),\n"
                + "\n  Alloc(1024) ,  \r\nFree(0),\nFree(3)\n",
                StandardCharsets.UTF_8);
        ValgrindReader reader = new ValgrindReader(file);
        assertEquals(TraceFormat.VALGRIND, reader.format());
        assertEquals(List.of(
                new TraceEvent(Kind.ALLOC, 0, 552, 0, 0, 1),
                new TraceEvent(Kind.ALLOC, 1, 120, 0, 0, 2),
                new TraceEvent(Kind.ALLOC, 2, 0, 0, 0, 3),
                new TraceEvent(Kind.FREE, 1, 0, 0, 0, 4),
                new TraceEvent(Kind.ALLOC, 3, 1024, 0, 0, 6),
                new TraceEvent(Kind.FREE, 0, 0, 0, 0, 7),
                new TraceEvent(Kind.FREE, 3, 0, 0, 0, 8)), Events.readAll(reader));
        assertEquals(4, reader.allocations());
    }

    @Test
    void aFreeOfAnIndexNeverAllocatedIsNotAFormatError() throws IOException {
        assertEquals(List.of(new TraceEvent(Kind.FREE, 99, 0, 0, 0, 1), new TraceEvent(Kind.FREE, 99, 0, 0, 0, 2)),
                Events.readAll(new ValgrindReader(new StringReader("Free(99),\nFree(99),\n"), "v.trace")));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "lower case       | alloc(5),      | expected Alloc(<size>), or Free(<index>), got 'alloc(5),'",
        "no parenthesis   | Alloc 5,       | expected Alloc(<size>), or Free(<index>), got 'Alloc 5,'",
        "unclosed         | Alloc(5,       | expected Alloc(<size>), or Free(<index>), got 'Alloc(5,'",
        "empty size       | Alloc(),       | Alloc(size): expected a non-negative decimal integer, got ''",
        "negative size    | Alloc(-5),     | Alloc(size): expected a non-negative decimal integer, got '-5'",
        "hex index        | Free(0x1),     | Free(index): expected a non-negative decimal integer, got '0x1'",
        "two ops          | Alloc(1), Free(0), "
                + "| Alloc(size): expected a non-negative decimal integer, got '1), Free(0'",
        "other text       | Realloc(3),    | expected Alloc(<size>), or Free(<index>), got 'Realloc(3),'",
    })
    void malformedLinesGiveFileLineAndWhatWasExpected(String what, String line, String expected) throws IOException {
        // At the end of the file, and followed by more lines (where the reader's fast path sees it first).
        for (String after : List.of("", "Free(0),\n".repeat(40))) {
            try (ValgrindReader reader = new ValgrindReader(new StringReader("Alloc(8),\n\n" + line + "\n" + after),
                    "v.trace")) {
                reader.next();
                TraceFormatException e = assertThrows(TraceFormatException.class, reader::next);
                assertEquals("v.trace", e.file());
                assertEquals(3, e.line());
                assertTrue(e.getMessage().contains(expected),
                        () -> "expected '" + expected + "' in: " + e.getMessage());
            }
        }
    }

    @Test
    void spacesCommasLineEndsAndOtherWhiteSpaceReadAsTheCommonForm() throws IOException {
        List<TraceEvent> expected = List.of(
                new TraceEvent(Kind.ALLOC, 0, 552, 0, 0, 1),
                new TraceEvent(Kind.ALLOC, 1, 120, 0, 0, 2),
                new TraceEvent(Kind.FREE, 0, 0, 0, 0, 3),
                new TraceEvent(Kind.FREE, 1, 0, 0, 0, 5));
        String padding = "Free(9),\n".repeat(40);
        for (String text : List.of("Alloc(552),\nAlloc(120)\nFree(0),\n\nFree(1),\n",
                "Alloc(552),\r\n  Alloc(120) ,\r\n\tFree(0),\r\n \r\nFree(00000000000000000001)\u3000,\n")) {
            List<TraceEvent> read = Events.readAll(new ValgrindReader(new StringReader(text + padding), "v.trace"));
            assertEquals(expected, read.subList(0, 4), text);
            assertEquals(44, read.size());
        }
    }
}
