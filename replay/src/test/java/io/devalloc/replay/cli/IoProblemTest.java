package io.devalloc.replay.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.EOFException;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The words a command prints for an I/O error reading a trace: never the exception's class name. */
class IoProblemTest {

    @Test
    void anErrorWithoutAMessageIsSaidInWords() {
        assertEquals("the file ends in the middle of its content (cut short?)",
                TraceReplays.ioProblem(new EOFException()));
        assertEquals("the system reported an input error without saying which",
                TraceReplays.ioProblem(new IOException()));
    }

    @Test
    void aMessageIsQuotedBoundedWithItsControlsEscaped() {
        assertEquals("Input/output error \\x1b[2J",
                TraceReplays.ioProblem(new IOException("Input/output error \u001b[2J")));
        assertEquals(200 + "… (9800 more characters)".length(),
                TraceReplays.ioProblem(new IOException("x".repeat(10_000))).length());
    }
}
