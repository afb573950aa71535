package io.devalloc.replay.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Collections;
import java.util.List;
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
    void aCellMayHoldSeveralLines() {
        TextTable table = TextTable.withHeaders("", "caching\nexpandable_segments:True")
                .align(1, TextTable.Align.RIGHT)
                .row("peak reserved", "1.69 GiB");
        // 13 columns of names, two spaces, 24 columns of figures (the widest line of the header), right-aligned.
        assertEquals(">" + " ".repeat(1 + 13 + 2 + 17) + "caching\n"
                + ">" + " ".repeat(1 + 13 + 2) + "expandable_segments:True\n"
                + "> peak reserved" + " ".repeat(2 + 16) + "1.69 GiB\n", print(table));
    }

    @Test
    void wrappingColumnsKeepTheTableWithinTheWidth() {
        String keys = String.join(", ", Collections.nCopies(30, "max_split_size_mb"));
        TextTable table = TextTable.withHeaders("ALLOCATOR", "CONFIG KEYS", "DESCRIPTION")
                .wrap(1).wrap(2)
                .row("caching", keys, "PyTorch's CUDA caching allocator: small and large pools per stream, 512 B"
                        + " rounding, 2/20 MiB segments")
                .row("direct", "memory_limit_mb", "no caching");
        String text = print(table);
        for (String line : text.split("\n")) {
            assertTrue(line.length() <= TextWrap.MAX_WIDTH, line.length() + ": " + line);
        }
        // Every word is still there, in order, and the rows keep their first line's names.
        assertEquals(keys, joinedColumn(text, "> ALLOCATOR  CONFIG KEYS", 1, "> direct"));
        assertTrue(text.contains("\n> direct     memory_limit_mb"), text);
        assertTrue(text.lines().count() > 4, "the long cells take several lines:\n" + text);
    }

    @Test
    void aTableThatFitsIsNotWrapped() {
        TextTable table = TextTable.withoutHeaders(2).wrap(1).row("config", "a b c d e f g h i j k l m n o p q r s");
        assertEquals("> config  a b c d e f g h i j k l m n o p q r s\n", print(table));
    }

    @Test
    void aWrappingColumnKeepsItsWordsWholeWhenThatIsEnough() {
        String word = "x".repeat(100);
        TextTable table = TextTable.withoutHeaders(2).wrap(1).row("name", "short " + word + " " + word);
        // 206 columns of text in the 112 left: two lines, broken at the space that the second word cannot pass.
        assertEquals("> name  short " + word + "\n>       " + word + "\n", print(table));
    }

    @Test
    void aWordTooLongForTheWidthIsBrokenAndAConfigurationAfterItsCommas() {
        String word = "x".repeat(150);
        String text = print(TextTable.withoutHeaders(2).wrap(1).row("name", word));
        assertEquals("> name  " + "x".repeat(112) + "\n>       " + "x".repeat(38) + "\n", text);

        String conf = "max_split_size_mb:128,garbage_collection_threshold:0.6,roundup_power2_divisions:[256:1,512:2,"
                + "1024:4,>:8],expandable_segments:True";
        String wrapped = print(TextTable.withHeaders("", "caching " + conf, "").wrap(1).row("peak", "1.66 GiB", "*")
                .align(1, TextTable.Align.RIGHT));
        for (String line : wrapped.split("\n")) {
            assertTrue(line.length() <= TextWrap.MAX_WIDTH, line);
        }
        // The header breaks after a comma of the configuration, right-aligned; no word is cut.
        assertTrue(wrapped.contains("roundup_power2_divisions:[256:1,512:2,1024:4,\n"), wrapped);
        assertTrue(wrapped.contains(" >:8],expandable_segments:True\n"), wrapped);
    }

    /** The words of column 1 (second column, starting where its header starts) from the header line to the end line. */
    private static String joinedColumn(String text, String headerStart, int column, String endStart) {
        String[] lines = text.split("\n");
        int start = 0;
        while (!lines[start].startsWith(headerStart)) {
            start++;
        }
        int from = lines[start].indexOf("CONFIG KEYS");
        int to = lines[start].indexOf("DESCRIPTION");
        StringBuilder sb = new StringBuilder();
        for (int i = start + 1; i < lines.length && !lines[i].startsWith(endStart); i++) {
            String cell = lines[i].substring(from, Math.min(to, lines[i].length())).strip();
            if (!cell.isEmpty()) {
                sb.append(sb.isEmpty() ? "" : " ").append(cell);
            }
        }
        return sb.toString();
    }

    @Test
    void refusesRowsOfTheWrongWidth() {
        TextTable table = TextTable.withHeaders("A", "B");
        assertThrows(IllegalArgumentException.class, () -> table.row("only one"));
        assertThrows(IllegalArgumentException.class, () -> TextTable.withoutHeaders(0));
        assertThrows(IndexOutOfBoundsException.class, () -> table.align(2, TextTable.Align.LEFT));
        assertThrows(IndexOutOfBoundsException.class, () -> table.wrap(2));
    }

    @Test
    void aColumnThatWrapsBetweenWordsIsNeverCutInsideASetting() {
        // A table too wide for 120 columns whose configuration column may wrap only between words (after commas).
        TextTable table = TextTable.withHeaders("#", "CONFIG", "A".repeat(40), "B".repeat(40))
                .wrapBetweenWords(1);
        table.row(1, "expandable_segments:True,roundup_power2_divisions:4", "x", "y");
        String text = print(table);
        assertTrue(text.contains("expandable_segments:True,"), text);
        assertTrue(text.contains("roundup_power2_divisions:4"), text);
        for (String line : text.split("\n")) {
            assertFalse(line.strip().endsWith("Tru") || line.contains("expandable_segme "), text);
        }
    }

    @Test
    void aCommaInsideBracketsIsNotABreakBetweenSettings() {
        TextTable table = TextTable.withHeaders("#", "CONFIG", "A".repeat(45), "B".repeat(45))
                .wrapBetweenWords(1);
        table.row(1, "roundup_power2_divisions:[256:1,512:2,1024:4,>:8],max_split_size_mb:64", "x", "y");
        String text = print(table);
        assertTrue(text.contains("roundup_power2_divisions:[256:1,512:2,1024:4,>:8],"), text);
        assertTrue(text.contains("max_split_size_mb:64"), text);
        assertEquals(List.of("a:[1,2],", "b:3", "c"), TextWrap.words("a:[1,2],b:3 c", true));
        assertEquals(List.of("a:[1,", "2],", "b:3", "c"), TextWrap.words("a:[1,2],b:3 c", false));
    }
}
