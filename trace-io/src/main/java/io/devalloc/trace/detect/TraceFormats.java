package io.devalloc.trace.detect;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.android.AndroidMemoryReplayReader;
import io.devalloc.trace.pytorch.PyTorchCsvReader;
import io.devalloc.trace.pytorch.PyTorchPickleReader;
import io.devalloc.trace.rmm.RmmCsvReader;
import io.devalloc.trace.text.ZipProblem;
import io.devalloc.trace.valgrind.ValgrindReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
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
    /**
     * How much of a text file (or of a zip's file) detection reads: every supported format's first line is far
     * shorter, and a file of one endless line must not be read whole (a small zip can inflate to gigabytes).
     */
    static final int DETECT_PREFIX_BYTES = 1 << 16;
    /** How much of an unrecognised first line the message quotes. */
    private static final int QUOTED = 80;

    private TraceFormats() {
    }

    /**
     * The format of a trace file, from its first bytes: a zip (then the first line of the file inside it), the
     * pickle protocol marker, a CSV header, or the shape of the first non-blank line. Only the first
     * {@value #DETECT_PREFIX_BYTES} bytes of text are read; a first line longer than that is refused.
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
        try (InputStream in = Files.newInputStream(file)) {
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
            try (InputStream in = zip.getInputStream(only)) {
                return detectText(in, file + "!" + UntrustedText.excerpt(only.getName()), true);
            }
        } catch (ZipException | EOFException e) {
            // An entry cut short (its data past the file's end) is an EOFException, often without a message.
            throw new TraceFormatException(file.toString(), 0, "not a readable zip file ("
                    + ZipProblem.describe(e) + "): expected one of " + KNOWN);
        }
    }

    private static TraceFormat detectText(InputStream in, String name, boolean zipped) throws IOException {
        // One byte past the prefix tells a file that ends within it from one that goes on.
        byte[] head = in.readNBytes(DETECT_PREFIX_BYTES + 1);
        boolean whole = head.length <= DETECT_PREFIX_BYTES;
        int limit = Math.min(head.length, DETECT_PREFIX_BYTES);
        String first = null;
        long number = 0;
        int pos = 0;
        while (number < MAX_BLANK_LINES && pos < limit) {
            int end = pos;
            while (end < limit && head[end] != '\n' && head[end] != '\r') {
                end++;
            }
            if (end == limit && !whole) {
                throw new TraceFormatException(name, number + 1, "line " + (number + 1) + " is longer than "
                        + DETECT_PREFIX_BYTES + " bytes: no supported trace format has lines that long");
            }
            String line = new String(head, pos, end - pos, StandardCharsets.UTF_8);
            number++;
            pos = end < limit && head[end] == '\r' && end + 1 < limit && head[end + 1] == '\n' ? end + 2 : end + 1;
            if (number == 1 && line.startsWith("\uFEFF")) {
                line = line.substring(1);
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
                : "line " + number + " is '" + UntrustedText.excerpt(first, QUOTED) + "'";
        String what = zipped ? "a zip whose file is not an Android memory_replay trace" : "not a known trace format";
        throw new TraceFormatException(name, first == null ? 0 : number,
                what + " (" + seen + "): expected one of " + KNOWN);
    }
}
