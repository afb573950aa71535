package io.devalloc.trace.detect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.Events;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.android.AndroidMemoryReplayReader;
import io.devalloc.trace.pytorch.PyTorchPickleReader;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.Deflater;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import net.razorvine.pickle.Pickler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class TraceFormatsTest {

    @TempDir
    Path dir;

    private Path text(String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content, StandardCharsets.UTF_8);
        return file;
    }

    private Path zip(String name, String entry, String content) throws IOException {
        Path file = dir.resolve(name);
        try (OutputStream out = Files.newOutputStream(file); ZipOutputStream zip = new ZipOutputStream(out)) {
            zip.putNextEntry(new ZipEntry(entry));
            zip.write(content.getBytes(StandardCharsets.UTF_8));
            zip.closeEntry();
        }
        return file;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "PYTORCH_CSV           | seq,action,addr,size,stream,time_us\\n0,alloc,1,2,0,\\n",
        "PYTORCH_CSV           | \uFEFFseq,action,addr,size,stream,time_us\\r\\n",
        "RMM_CSV               | Thread,Time,Action,Pointer,Size,Stream\\n",
        "VALGRIND              | Alloc(552),\\nFree(0),\\n",
        "VALGRIND              | \\n\\n  Free(3),\\n",
        "VALGRIND              | Alloc(1)\\n",
        "ANDROID_MEMORY_REPLAY | 202: malloc 0xb4827400 1024\\n",
        "ANDROID_MEMORY_REPLAY | \\n202: thread_done 0x0\\n",
        "ANDROID_MEMORY_REPLAY | 9800: free 0x0\\n",
    })
    void textFormatsAreToldByTheirFirstLine(TraceFormat format, String content) throws IOException {
        Path file = text("trace", content.replace("\\n", "\n").replace("\\r", "\r"));
        assertEquals(format, TraceFormats.detect(file));
        try (TraceReader reader = TraceFormats.open(file)) {
            assertEquals(format, reader.format());
        }
    }

    @ParameterizedTest(name = "protocol {0}")
    @ValueSource(ints = {2, 3, 4, 5})
    void aPickleIsToldByItsProtocolMarker(int protocol) throws IOException {
        Path file = dir.resolve("p" + protocol);
        Files.write(file, new byte[] {(byte) 0x80, (byte) protocol, '}', '.'});
        assertEquals(TraceFormat.PYTORCH_PICKLE, TraceFormats.detect(file));
    }

    @Test
    void openReadsAPickle() throws IOException {
        Path file = dir.resolve("snapshot");
        Files.write(file, new Pickler().dumps(Map.of("device_traces",
                List.of(List.of(Map.of("action", "alloc", "addr", 1, "size", 2, "stream", 0))))));
        TraceReader reader = TraceFormats.open(file);
        assertInstanceOf(PyTorchPickleReader.class, reader);
        assertEquals(List.of(new TraceEvent(TraceEvent.Kind.ALLOC, 1, 2, 0, 0, 1)), Events.readAll(reader));
    }

    @Test
    void aZipIsToldByTheFileInside() throws IOException {
        Path file = zip("systemui.zip", "systemui.txt", "202: malloc 0xb4827400 1024\n");
        assertEquals(TraceFormat.ANDROID_MEMORY_REPLAY, TraceFormats.detect(file));
        assertInstanceOf(AndroidMemoryReplayReader.class, TraceFormats.open(file)).close();
    }

    @Test
    void aZipOfSomethingElseIsRefused() throws IOException {
        Path file = zip("other.zip", "notes.txt", "hello\n");
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> TraceFormats.detect(file));
        assertEquals(file + "!notes.txt", e.file());
        assertEquals(1, e.line());
        assertTrue(e.getMessage().contains("a zip whose file is not an Android memory_replay trace (line 1 is"
                + " 'hello'): expected one of"), e.getMessage());
    }

    @Test
    void unknownContentListsTheKnownFormats() throws IOException {
        Path file = text("notes.txt", "\n\nhello, world\n");
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> TraceFormats.detect(file));
        assertEquals(file.toString(), e.file());
        assertEquals(3, e.line());
        String m = e.getMessage();
        assertTrue(m.contains("not a known trace format (line 3 is 'hello, world'): expected one of"), m);
        for (String known : List.of("PyTorch snapshot pickle",
                "PyTorch CSV (header 'seq,action,addr,size,stream,time_us')",
                "RMM CSV (header 'Thread,Time,Action,Pointer,Size,Stream')", "valgrind (lines 'Alloc(<size>),'",
                "Android memory_replay (lines '<tid>: malloc <ptr> <size>'")) {
            assertTrue(m.contains(known), () -> "'" + known + "' not in: " + m);
        }
        assertThrows(TraceFormatException.class, () -> TraceFormats.open(file));
    }

    @Test
    void emptyAndBlankFilesAreRefused() throws IOException {
        TraceFormatException empty = assertThrows(TraceFormatException.class,
                () -> TraceFormats.detect(text("empty", "")));
        assertTrue(empty.getMessage().contains("the file is empty: expected one of"), empty.getMessage());
        TraceFormatException blank = assertThrows(TraceFormatException.class,
                () -> TraceFormats.detect(text("blank", "\n  \n")));
        assertTrue(blank.getMessage().contains("(no non-blank line)"), blank.getMessage());
    }

    @Test
    void aProtocolZeroPickleOrAHeaderInTheWrongCaseIsNotDetected() throws IOException {
        Path protocol0 = text("p0", "(dp0\n.");
        assertThrows(TraceFormatException.class, () -> TraceFormats.detect(protocol0));
        Path lower = text("lower.csv", "thread,time,action,pointer,size,stream\n");
        assertThrows(TraceFormatException.class, () -> TraceFormats.detect(lower));
        Path binary = dir.resolve("binary");
        Files.write(binary, new byte[] {(byte) 0x80, 9, 0, 0});
        assertThrows(TraceFormatException.class, () -> TraceFormats.detect(binary));
    }

    @Test
    void aZipOfOneEndlessLineIsRefusedAfterAReadOfItsPrefix() throws IOException {
        // 64 MiB of one line inflate from a zip of a few hundred kilobytes: detection used to read it whole.
        Path file = dir.resolve("endless.zip");
        byte[] chunk = new byte[1 << 20];
        Arrays.fill(chunk, (byte) 'a');
        try (OutputStream out = Files.newOutputStream(file); ZipOutputStream zip = new ZipOutputStream(out)) {
            zip.putNextEntry(new ZipEntry("endless.txt"));
            for (int i = 0; i < 64; i++) {
                zip.write(chunk);
            }
            zip.closeEntry();
        }
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> TraceFormats.detect(file));
        assertEquals(file + "!endless.txt", e.file());
        assertTrue(e.getMessage().contains("line 1 is longer than " + TraceFormats.DETECT_PREFIX_BYTES
                + " bytes: no supported trace format has lines that long"), e.getMessage());
        assertTrue(e.getMessage().length() < 300, e.getMessage());
    }

    @Test
    void aTextFileWhoseFirstLineOutrunsThePrefixIsRefused() throws IOException {
        Path file = text("long.txt", "\n" + "Alloc(1)".repeat(TraceFormats.DETECT_PREFIX_BYTES / 8 + 1) + "\n");
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> TraceFormats.detect(file));
        assertEquals(2, e.line());
        assertTrue(e.getMessage().contains("line 2 is longer than"), e.getMessage());
        Path fits = text("fits.txt", "x".repeat(TraceFormats.DETECT_PREFIX_BYTES - 1) + "\n");
        TraceFormatException unknown = assertThrows(TraceFormatException.class, () -> TraceFormats.detect(fits));
        assertTrue(unknown.getMessage().contains("not a known trace format (line 1 is 'xxx"), unknown.getMessage());
        assertTrue(unknown.getMessage().length() < 1000, unknown.getMessage());
    }

    /**
     * Found by {@code TraceFuzzTest} (seed 20264079, a mutated zip): an entry whose deflated data stops before its
     * end (the sizes intact, the bytes of an unfinished stream in their place) made detection and the reader throw
     * the inflater's EOFException, which no caller took for a malformed file.
     */
    @Test
    void aZipEntryWhoseDataEndsEarlyIsRefusedAsCorrupt() throws IOException {
        Path file = zip("cut.zip", "t.txt", "1: malloc 0x1 16\n".repeat(1000));
        byte[] zip = Files.readAllBytes(file);
        int data = 30 + "t.txt".length(); // after the local header, which ZipOutputStream writes without extras
        int length;
        try (ZipFile z = new ZipFile(file.toFile())) {
            length = (int) z.getEntry("t.txt").getCompressedSize();
        }
        // The start of a deflate stream much longer than the entry's compressed size: the inflater needs more.
        byte[] noise = new byte[16 * length];
        new Random(1).nextBytes(noise);
        Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
        deflater.setInput(noise);
        deflater.finish();
        byte[] unfinished = new byte[length];
        assertEquals(length, deflater.deflate(unfinished));
        deflater.end();
        System.arraycopy(unfinished, 0, zip, data, length);
        Files.write(file, zip);

        TraceFormatException detected = assertThrows(TraceFormatException.class, () -> TraceFormats.detect(file));
        assertEquals(file + ": not a readable zip file (Unexpected end of ZLIB input stream): expected one of "
                + TraceFormats.KNOWN, detected.getMessage());
        TraceFormatException read = assertThrows(TraceFormatException.class,
                () -> Events.readAll(new AndroidMemoryReplayReader(file)));
        assertEquals(file + "!t.txt:1: corrupt zip data: Unexpected end of ZLIB input stream", read.getMessage());
    }

    @Test
    void anUnknownFirstLineAndAZipEntryNameAreQuotedWithTheirControlsEscaped() throws IOException {
        Path file = zip("evil.zip", "e\u001b]0;owned\u0007.txt", "\u001b[2Jhello\n");
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> TraceFormats.detect(file));
        assertEquals(file + "!e\\x1b]0;owned\\x07.txt", e.file());
        assertTrue(e.getMessage().contains("(line 1 is '\\x1b[2Jhello')"), e.getMessage());
        assertTrue(e.getMessage().chars().noneMatch(c -> c < 0x20), e.getMessage());
    }
}
