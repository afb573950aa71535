package io.devalloc.replay.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class TextWrapTest {

    @Test
    void breaksAtSpacesWithinTheWidth() {
        assertEquals(List.of("the quick", "brown fox", "jumps"), TextWrap.lines("the quick brown fox jumps", 10));
        assertEquals(List.of("fits as it is"), TextWrap.lines("fits as it is", 13));
        assertEquals(List.of("a:1,b:2,", "c:3 d"), TextWrap.lines("a:1,b:2,c:3 d", 9), "after a comma too");
        assertEquals(List.of(""), TextWrap.lines("", 5));
    }

    @Test
    void breaksAWordLongerThanTheWidthInside() {
        assertEquals(List.of("a", "abcde", "fgh z"), TextWrap.lines("a abcdefgh z", 5));
        assertEquals(List.of("abc", "def", "gh"), TextWrap.lines("abcdefgh", 3));
    }

    @Test
    void keepsTheTextsOwnLineBreaks() {
        assertEquals(List.of("one", "two three", "four"), TextWrap.lines("one\ntwo three four", 9));
        assertThrows(IllegalArgumentException.class, () -> TextWrap.lines("x", 0));
    }

    @Test
    void printsWithAHangingIndentWithinTheMaximumWidth() {
        String note = "bfc ran with retry_timeout_ms:0: a single-threaded replay never frees while an allocation"
                + " waits, so TensorFlow's 10 s wait for frees could only stall; set retry_timeout_ms to keep it";
        StringWriter text = new StringWriter();
        try (PrintWriter out = new PrintWriter(text)) {
            TextWrap.print(out, "  - ", "    ", note);
        }
        List<String> lines = text.toString().lines().toList();
        assertEquals(2, lines.size(), text::toString);
        assertTrue(lines.get(0).startsWith("  - bfc ran") && lines.get(1).startsWith("    ") , text::toString);
        for (String line : lines) {
            assertTrue(line.length() <= TextWrap.MAX_WIDTH, line);
        }
        assertEquals(note, lines.get(0).substring(4) + " " + lines.get(1).substring(4));
    }

    @Test
    void aLongFirstPrefixDoesNotNarrowTheLinesAfterIt() {
        String prefix = "  note (bfc allow_growth:true (from TF_FORCE_GPU_ALLOW_GROWTH)): ";
        String note = "word ".repeat(60).strip();
        StringWriter text = new StringWriter();
        try (PrintWriter out = new PrintWriter(text)) {
            TextWrap.print(out, prefix, "    ", note);
        }
        List<String> lines = text.toString().lines().toList();
        assertTrue(lines.get(0).startsWith(prefix + "word"), text::toString);
        assertTrue(lines.get(1).length() > TextWrap.MAX_WIDTH - 10, "the next lines use the whole width:\n" + text);
        for (String line : lines) {
            assertTrue(line.length() <= TextWrap.MAX_WIDTH, line);
        }
        assertEquals(60, text.toString().split("word", -1).length - 1, "every word printed once");

        StringWriter noRoom = new StringWriter();
        try (PrintWriter out = new PrintWriter(noRoom)) {
            TextWrap.print(out, "x".repeat(110) + ": ", "    ", "a b");
        }
        assertEquals("x".repeat(110) + ":\n    a b\n", noRoom.toString().replace(System.lineSeparator(), "\n"));
    }
}
