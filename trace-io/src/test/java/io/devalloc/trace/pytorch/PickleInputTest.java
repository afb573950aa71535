package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file read through the buffer gives the bytes an array gives, whatever mix of reads crosses its boundaries. */
class PickleInputTest {

    @Test
    void aFileReadsAsItsBytesAcrossBufferBoundaries(@TempDir Path dir) throws IOException {
        byte[] data = new byte[3 * PickleInput.BUFFER + 123];
        new SplittableRandom(3).nextBytes(data);
        // A UTF-8 text across the first boundary.
        byte[] text = "äöü€ across".getBytes(StandardCharsets.UTF_8);
        int textAt = PickleInput.BUFFER - 5;
        System.arraycopy(text, 0, data, textAt, text.length);
        Path file = dir.resolve("bytes");
        Files.write(file, data);
        SplittableRandom random = new SplittableRandom(11);
        try (PickleInput in = PickleInput.open(file)) {
            assertEquals(data.length, in.length());
            while (in.position() < textAt) {
                int at = (int) in.position();
                int step = Math.min(textAt - at, 1 + random.nextInt(5000));
                switch (random.nextInt(4)) {
                    case 0 -> assertEquals(data[at] & 0xff, in.read());
                    case 1 -> {
                        int offset = Math.min(step - 1, 7);
                        assertEquals(data[at + offset] & 0xff, in.peek(offset));
                        assertEquals(step, in.skip(step));
                    }
                    case 2 -> {
                        byte[] chunk = new byte[step];
                        assertEquals(step, in.read(chunk, 0, step));
                        byte[] expected = new byte[step];
                        System.arraycopy(data, at, expected, 0, step);
                        assertArrayEquals(expected, chunk);
                    }
                    default -> assertEquals(step, in.skip(step));
                }
                assertEquals(data.length - in.position(), in.remaining());
            }
            assertEquals("äöü€ across", in.utf8(text.length));
            byte[] rest = new byte[data.length - (textAt + text.length)];
            assertEquals(rest.length, in.read(rest, 0, rest.length));
            assertEquals(-1, in.read());
            assertEquals(-1, in.peek(0));
        }
    }

    @Test
    void aFileThatCannotBeOpenedIsASourceFailure(@TempDir Path dir) {
        PickleInput.SourceFailure e = assertThrows(PickleInput.SourceFailure.class,
                () -> PickleInput.open(dir.resolve("missing.pickle")));
        assertEquals(NoSuchFileException.class, e.getCause().getClass());
    }
}
