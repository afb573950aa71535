package io.devalloc.trace.detect;

import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.android.AndroidMemoryReplayReader;
import io.devalloc.trace.pytorch.PyTorchCsvReader;
import io.devalloc.trace.pytorch.PyTorchPickleReader;
import io.devalloc.trace.rmm.RmmCsvReader;
import io.devalloc.trace.valgrind.ValgrindReader;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;

/** Tells a trace file's format from its content, and opens the reader for it. */
public final class TraceFormats {

    /** What {@link #detect(Path)} recognises, for its message when nothing matches. */
    static final String KNOWN = "a PyTorch snapshot pickle (binary, starting 0x80 then protocol 2 to 5), "
            + "PyTorch CSV (header '" + PyTorchCsvReader.HEADER + "'), "
            + "RMM CSV (header '" + RmmCsvReader.HEADER + "'), "
            + "valgrind (lines 'Alloc(<size>),' and 'Free(<index>),'), "
            + "Android memory_replay (lines '<tid>: malloc <ptr> <size>' ..., plain text or a zip of one text file)";

    private static final Pattern VALGRIND = Pattern.compile("\\s*(Alloc|Free)\\(\\d+\\),?\\s*");
    private static final Pattern ANDROID =
            Pattern.compile("\\d+:[ \\t]+(malloc|calloc|memalign|realloc|free|thread_done)([ \\t].*)?");
    /** How many lines detection looks through for the first non-blank one. */
    private static final int MAX_BLANK_LINES = 1000;

    private TraceFormats() {
    }

    /**
     * The format of a trace file, from its first bytes: a zip (then the first line of the file inside it), the
     * pickle protocol marker, a CSV header, or the shape of the first non-blank line.
     *
     * @throws TraceFormatException when the content matches no format (the message lists those known)
     */
    public static TraceFormat detect(Path file) throws IOException {
        Objects.requireNonNull(file, "file");
        byte[] head;
        try (InputStream in = Files.newInputStream(file)) {
            head = in.readNBytes(4);
        }
        if (head.length == 0) {
            throw new TraceFormatException(file.toString(), 0, "the file is empty: expected one of " + KNOWN);
        }
        if (head.length >= 2 && (head[0] & 0xff) == 0x80 && head[1] >= 2 && head[1] <= 5) {
            return TraceFormat.PYTORCH_PICKLE;
        }
        if (AndroidMemoryReplayReader.isZip(head)) {
            return detectZip(file);
        }
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(Files.newInputStream(file), StandardCharsets.UTF_8))) {
            return detectText(in, file.toString(), false);
        }
    }

    /** Opens the reader for a file's detected format. */
    public static TraceReader open(Path file) throws IOException {
        return open(file, detect(file));
    }

    /** Opens the reader for a file in the given format. */
    public static TraceReader open(Path file, TraceFormat format) throws IOException {
        return switch (format) {
            case PYTORCH_PICKLE -> new PyTorchPickleReader(file);
            case PYTORCH_CSV -> new PyTorchCsvReader(file);
            case RMM_CSV -> new RmmCsvReader(file);
            case VALGRIND -> new ValgrindReader(file);
            case ANDROID_MEMORY_REPLAY -> new AndroidMemoryReplayReader(file);
        };
    }

    private static TraceFormat detectZip(Path file) throws IOException {
        try (ZipFile zip = new ZipFile(file.toFile())) {
            ZipEntry only = AndroidMemoryReplayReader.onlyEntry(zip, file);
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(zip.getInputStream(only), StandardCharsets.UTF_8))) {
                return detectText(in, file + "!" + only.getName(), true);
            }
        } catch (ZipException e) {
            throw new TraceFormatException(file.toString(), 0, "not a readable zip file (" + e.getMessage()
                    + "): expected one of " + KNOWN);
        }
    }

    private static TraceFormat detectText(BufferedReader in, String name, boolean zipped) throws IOException {
        String first = null;
        long number = 0;
        for (int i = 0; i < MAX_BLANK_LINES; i++) {
            String line = in.readLine();
            if (line == null) {
                break;
            }
            number++;
            if (number == 1 && line.startsWith("\uFEFF")) {
                line = line.substring(1);
            }
            if (line.endsWith("\r")) {
                line = line.substring(0, line.length() - 1);
            }
            if (number == 1 && !zipped) {
                if (line.equals(PyTorchCsvReader.HEADER)) {
                    return TraceFormat.PYTORCH_CSV;
                }
                if (line.equals(RmmCsvReader.HEADER)) {
                    return TraceFormat.RMM_CSV;
                }
            }
            if (!line.isBlank()) {
                first = line;
                break;
            }
        }
        if (first != null && ANDROID.matcher(first).matches()) {
            return TraceFormat.ANDROID_MEMORY_REPLAY;
        }
        if (first != null && !zipped && VALGRIND.matcher(first).matches()) {
            return TraceFormat.VALGRIND;
        }
        String seen = first == null ? "no non-blank line"
                : "line " + number + " is '" + (first.length() > 80 ? first.substring(0, 80) + "..." : first) + "'";
        String what = zipped ? "a zip whose file is not an Android memory_replay trace" : "not a known trace format";
        throw new TraceFormatException(name, first == null ? 0 : number,
                what + " (" + seen + "): expected one of " + KNOWN);
    }
}
