package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressBarTest {

    private static final long MS = 1_000_000L;

    @Test
    void theLineShowsTheFractionAndTheCounts() {
        assertEquals("replaying t.csv [###############...............]  50%  1,000/2,000 events",
                ProgressBar.line("t.csv", 1000, 2000));
        assertEquals("replaying t [##############################] 100%  0/0 events", ProgressBar.line("t", 0, 0));
        // A one-pass replay that cannot estimate its total: the count alone.
        assertEquals("replaying t.csv  1,234,567 events", ProgressBar.line("t.csv", 1_234_567, -1));
    }

    @Test
    void aLongLabelLosesItsBeginningSoThatTheLineFits() {
        String label = "../shared/traces/" + "x".repeat(100) + "/memory.csv (caching expandable_segments:True)";
        String line = ProgressBar.line(label, 1_234_567_890L, 2_469_135_780L);
        assertEquals(ProgressBar.MAX_LENGTH, line.length(), line);
        assertTrue(line.startsWith("replaying ...") && line.contains("expandable_segments:True) ["), line);
        String shorter = ProgressBar.line(label, 5, 10);
        assertEquals(ProgressBar.MAX_LENGTH, shorter.length(), shorter);
        assertTrue(shorter.contains("/memory.csv (caching expandable_segments:True) ["), "keeps the end: " + shorter);
        assertTrue(line.endsWith("  1,234,567,890/2,469,135,780 events"), line);
        assertTrue(ProgressBar.line(label, 5, -1).length() <= ProgressBar.MAX_LENGTH);
    }

    @Test
    void drawsOnlyAfterASecondAtMostEveryTenthOfASecondAndErasesItselfAtTheEnd() {
        StringWriter text = new StringWriter();
        AtomicLong now = new AtomicLong();
        ProgressBar bar = new ProgressBar(new PrintWriter(text, true), "t", now::get);
        bar.update(10, 100);
        assertEquals("", text.toString(), "a short replay prints nothing");
        now.set(1000 * MS);
        bar.update(50, 100);
        String first = "\r" + ProgressBar.line("t", 50, 100);
        assertEquals(first, text.toString());
        now.addAndGet(50 * MS);
        bar.update(60, 100);
        assertEquals(first, text.toString(), "not redrawn within 100 ms");
        now.addAndGet(100 * MS);
        bar.update(100, 100);
        String second = "\r" + ProgressBar.line("t", 100, 100);
        assertEquals(first + second, text.toString());
        bar.finish();
        assertEquals(first + second + "\r" + " ".repeat(second.length() - 1) + "\r", text.toString());
    }

    @Test
    void noBarWithoutATerminal() {
        // Tests run with their output redirected: no console, so no bar.
        if (System.console() == null || !System.console().isTerminal()) {
            assertSame(ReplayProgress.NONE, ProgressBar.forTerminal(new PrintWriter(new StringWriter()), "t"));
        }
    }
}
