package io.devalloc.trace.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.EOFException;
import java.util.zip.ZipException;
import org.junit.jupiter.api.Test;

class ZipProblemTest {

    @Test
    void theJdksClassNamesAreLeftOut() {
        assertEquals("invalid LOC header (bad signature)",
                ZipProblem.describe(new ZipException("ZipFile invalid LOC header (bad signature)")));
        assertEquals("invalid CEN header (bad entry name or comment)",
                ZipProblem.describe(new ZipException("ZipFile invalid CEN header (bad entry name or comment)")));
        assertEquals("Unexpected end of ZLIB input stream",
                ZipProblem.describe(new EOFException("Unexpected end of ZLIB input stream")));
    }

    @Test
    void aProblemWithoutAMessageIsSaidInWords() {
        assertEquals("an entry ends before its data does", ZipProblem.describe(new EOFException()));
        assertEquals("an entry ends before its data does", ZipProblem.describe(new ZipException(" ")));
    }

    @Test
    void whatTheMessageQuotesIsBoundedAndEscaped() {
        assertEquals("bad name \\x1b[2J", ZipProblem.describe(new ZipException("bad name \u001b[2J")));
    }
}
