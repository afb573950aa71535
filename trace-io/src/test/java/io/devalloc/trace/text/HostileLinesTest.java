package io.devalloc.trace.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.Events;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.android.AndroidMemoryReplayReader;
import io.devalloc.trace.pytorch.PyTorchCsvReader;
import io.devalloc.trace.rmm.RmmCsvReader;
import io.devalloc.trace.valgrind.ValgrindReader;
import java.io.IOException;
import java.io.StringReader;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What the text readers make of a stranger's trace: an endless line, a huge field, escape sequences. */
class HostileLinesTest {

    /** An escape sequence that would set a terminal's title, then half a megabyte of digits. */
    private static final String HOSTILE_FIELD = "\u001b]0;owned\u0007" + "9".repeat(500_000);

    private static TraceReader reader(String format, String body) throws IOException {
        return switch (format) {
            case "pytorch" -> new PyTorchCsvReader(new StringReader(PyTorchCsvReader.HEADER + "\n" + body), "t");
            case "rmm" -> new RmmCsvReader(new StringReader(RmmCsvReader.HEADER + "\n" + body), "t");
            case "valgrind" -> new ValgrindReader(new StringReader("Alloc(1),\n" + body), "t");
            case "android" -> new AndroidMemoryReplayReader(new StringReader("1: malloc 0x1 1\n" + body), "t");
            default -> throw new IllegalArgumentException(format);
        };
    }

    /** A line of each format with {@code field} where a number or a word belongs. */
    private static String badLine(String format, String field) {
        return switch (format) {
            case "pytorch" -> "1,alloc," + field + ",2,0,\n";
            case "rmm" -> "1,15:47:02.841961," + field + ",0x1,1,0\n";
            case "valgrind" -> field + "\n";
            case "android" -> "1: " + field + " 0x1 1\n";
            default -> throw new IllegalArgumentException(format);
        };
    }

    private static TraceFormatException refusal(String format, String body) {
        return assertThrows(TraceFormatException.class, () -> {
            try (TraceReader r = reader(format, body)) {
                Events.readAll(r);
            }
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"pytorch", "rmm", "valgrind", "android"})
    void aHugeFieldIsQuotedBoundedWithItsControlsEscaped(String format) {
        TraceFormatException e = refusal(format, badLine(format, HOSTILE_FIELD));
        String m = e.getMessage();
        assertEquals(2, e.line(), m);
        assertTrue(m.length() < 600, () -> m.length() + " characters: " + m.substring(0, 600));
        assertTrue(m.contains("\\x1b]0;owned\\x07999"), m);
        assertTrue(m.contains("more characters)"), m);
        assertTrue(m.chars().noneMatch(c -> c < 0x20 || c == 0x7f), m);
    }

    @ParameterizedTest
    @ValueSource(strings = {"pytorch", "rmm", "valgrind", "android"})
    void aLineLongerThanAnyFormatHasIsRefusedBeforeItIsHeldWhole(String format) {
        String endless = "7".repeat(TextLines.MAX_LINE_BYTES + 4096);
        TraceFormatException e = refusal(format, endless + "\n");
        assertEquals(2, e.line(), e.getMessage());
        assertEquals("t:2: line 2 is longer than " + TextLines.MAX_LINE_BYTES
                + " bytes: no supported trace format has lines that long", e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"pytorch", "rmm", "valgrind", "android"})
    void aLineJustUnderTheCapIsStillRead(String format) {
        // The cap refuses only what no format has: a long bad line is still reported as bad, not as too long.
        String longField = "7".repeat(TextLines.MAX_LINE_BYTES - 64);
        TraceFormatException e = refusal(format, badLine(format, "x" + longField));
        assertTrue(e.getMessage().contains("'x777"), e.getMessage());
        assertTrue(e.getMessage().length() < 600, e.getMessage());
    }
}
