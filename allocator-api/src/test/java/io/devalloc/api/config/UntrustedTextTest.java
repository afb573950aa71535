package io.devalloc.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class UntrustedTextTest {

    @Test
    void shortPrintableTextIsQuotedAsItIs() {
        assertEquals("max_split_size_mb:128", UntrustedText.excerpt("max_split_size_mb:128"));
        assertEquals("", UntrustedText.excerpt(""));
        assertEquals("日本語 ✓", UntrustedText.excerpt("日本語 ✓"));
    }

    @Test
    void controlCharactersAndBidiOverridesAreEscaped() {
        assertEquals("a\\x1b]0;owned\\x07b", UntrustedText.excerpt("a\u001b]0;owned\u0007b"));
        assertEquals("line\\x0aline\\x0d\\x09", UntrustedText.excerpt("line\nline\r\t"));
        assertEquals("\\x7f\\x9b", UntrustedText.excerpt("\u007f\u009b"));
        assertEquals("x\\u202ey\\u2066", UntrustedText.excerpt("x\u202ey\u2066"));
    }

    @Test
    void longTextIsCutWithWhatWasLeftOutCounted() {
        String huge = "x".repeat(10_000_000);
        String quoted = UntrustedText.excerpt(huge, 5);
        assertEquals("xxxxx… (9999995 more characters)", quoted);
        assertEquals(UntrustedText.DEFAULT_LIMIT + "… (9999800 more characters)".length(),
                UntrustedText.excerpt(huge).length());
    }

    @Test
    void aCutNeverSplitsASurrogatePair() {
        String emoji = "ab\uD83D\uDE00cd";
        assertEquals("ab… (4 more characters)", UntrustedText.excerpt(emoji, 3));
        assertTrue(UntrustedText.excerpt(emoji, 4).startsWith("ab\uD83D\uDE00"));
    }

    @Test
    void aLimitBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> UntrustedText.excerpt("a", 0));
    }
}
