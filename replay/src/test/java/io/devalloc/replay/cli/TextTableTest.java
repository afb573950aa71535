package io.devalloc.replay.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class TextTableTest {

    private static String print(TextTable table) {
        StringWriter text = new StringWriter();
        try (PrintWriter out = new PrintWriter(text)) {
            table.print(out, "> ");
        }
        return text.toString().replace(System.lineSeparator(), "\n");
    }

    @Test
    void alignsColumnsUnderTheirHeadersWithoutTrailingBlanks() {
        TextTable table = TextTable.withHeaders("NAME", "PRIORITY", "NOTE")
                .align(1, TextTable.Align.RIGHT)
                .row("pinned-host", 4, "")
                .row("sim", 1, "simulated");
        assertEquals("""
                > NAME         PRIORITY  NOTE
                > pinned-host         4
                > sim                 1  simulated
                """, print(table));
    }

    @Test
    void aTableWithoutHeadersPrintsOnlyItsRows() {
        TextTable table = TextTable.withoutHeaders(2).row("allocations", 3204).row("peak reserved", "646.24 MiB");
        assertEquals("""
                > allocations    3204
                > peak reserved  646.24 MiB
                """, print(table));
    }

    @Test
    void refusesRowsOfTheWrongWidth() {
        TextTable table = TextTable.withHeaders("A", "B");
        assertThrows(IllegalArgumentException.class, () -> table.row("only one"));
        assertThrows(IllegalArgumentException.class, () -> TextTable.withoutHeaders(0));
        assertThrows(IndexOutOfBoundsException.class, () -> table.align(2, TextTable.Align.LEFT));
    }
}
