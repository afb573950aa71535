package io.devalloc.trace.android;

import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.text.TextLines;
import io.devalloc.trace.TraceEvent.Kind;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;

/**
 * Reads the heap traces of Android's {@code memory_replay} (AOSP {@code system/extras/memory_replay}), as malloc
 * debug records them: one call per line, in the global order of the calls across threads, plain text or a zip that
 * holds one text file (read from the zip as it is decompressed).
 *
 * <table>
 *   <caption>The lines and what each gives</caption>
 *   <tr><th>line</th><th>events</th></tr>
 *   <tr><td>{@code tid: malloc ptr size}</td><td>{@link Kind#ALLOC} ptr, size</td></tr>
 *   <tr><td>{@code tid: calloc ptr nmemb size}</td><td>{@link Kind#ALLOC} ptr, nmemb × size</td></tr>
 *   <tr><td>{@code tid: memalign ptr alignment size}</td><td>{@link Kind#ALLOC} ptr, size (the alignment is not
 *       kept; also used for {@code posix_memalign})</td></tr>
 *   <tr><td>{@code tid: realloc new_ptr old_ptr size}</td><td>{@link Kind#FREE} old_ptr (unless 0:
 *       {@code realloc(NULL, size)}), then {@link Kind#ALLOC} new_ptr, size (unless new_ptr is 0: a
 *       {@code realloc(ptr, 0)} that freed, or a failure)</td></tr>
 *   <tr><td>{@code tid: free ptr}</td><td>{@link Kind#FREE} ptr; nothing for {@code free(NULL)} (ptr 0)</td></tr>
 *   <tr><td>{@code tid: thread_done 0x0}</td><td>nothing: the thread ended</td></tr>
 * </table>
 * An allocation whose returned pointer is 0 (it failed) gives no event. Every line that gives no event is counted by
 * {@link #skipped()}. Pointers are hexadecimal (with or without {@code 0x}), the other numbers decimal; the thread
 * id becomes the events' thread. Newer recordings end each line with timestamps (two for the calls, start and end in
 * nanoseconds, one for {@code thread_done}); they are checked and not kept. Blank lines are ignored. An event's
 * {@link TraceEvent#line() line} is its line in the text (both events of a realloc have the same). A free of a
 * pointer that is not live is not a format error: the replay deals with it. One line at a time: constant memory.
 */
public final class AndroidMemoryReplayReader implements TraceReader {

    private static final String VERBS = "malloc, calloc, memalign, realloc, free or thread_done";

    private final TextLines lines;
    private final ZipFile zip;
    private final int[] starts = new int[8];
    private final int[] ends = new int[8];
    private TraceEvent pending;
    private long skipped;

    /** Opens a text file, or a zip file that holds one text file. */
    public AndroidMemoryReplayReader(Path file) throws IOException {
        if (isZip(file)) {
            ZipFile zip = openZip(file);
            try {
                ZipEntry only = onlyEntry(zip, file);
                InputStream in = zip.getInputStream(only);
                this.lines = new TextLines(in, file + "!" + only.getName());
                this.zip = zip;
            } catch (IOException | RuntimeException e) {
                zip.close();
                throw e;
            }
        } else {
            this.lines = new TextLines(Files.newInputStream(file), file.toString());
            this.zip = null;
        }
    }

    /**
     * Reads text from a character stream, closed by {@link #close()}.
     *
     * @param in   the text
     * @param file the name messages give
     */
    public AndroidMemoryReplayReader(Reader in, String file) {
        this.lines = new TextLines(in, file);
        this.zip = null;
    }

    /** True when the file starts as a zip does: a local file header, or the end record of an empty zip. */
    public static boolean isZip(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return isZip(in.readNBytes(4));
        }
    }

    public static boolean isZip(byte[] head) {
        return head.length >= 4 && head[0] == 'P' && head[1] == 'K'
                && ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6));
    }

    private static ZipFile openZip(Path file) throws IOException {
        try {
            return new ZipFile(file.toFile());
        } catch (ZipException e) {
            throw new TraceFormatException(file.toString(), 0, "not a readable zip file: " + e.getMessage());
        }
    }

    /** The zip's one file (directories aside). */
    public static ZipEntry onlyEntry(ZipFile zip, Path file) throws TraceFormatException {
        ZipEntry only = null;
        int files = 0;
        for (Enumeration<? extends ZipEntry> e = zip.entries(); e.hasMoreElements();) {
            ZipEntry entry = e.nextElement();
            if (!entry.isDirectory()) {
                files++;
                only = entry;
            }
        }
        if (files != 1) {
            throw new TraceFormatException(file.toString(), 0,
                    "expected a zip holding one text file (the trace), found " + files + " files");
        }
        return only;
    }

    @Override
    public TraceFormat format() {
        return TraceFormat.ANDROID_MEMORY_REPLAY;
    }

    /** The lines read so far that gave no event: {@code thread_done}, {@code free(NULL)}, failed allocations. */
    public long skipped() {
        return skipped;
    }

    @Override
    public TraceEvent next() throws IOException {
        if (pending != null) {
            TraceEvent e = pending;
            pending = null;
            return e;
        }
        String line;
        while ((line = nextLine()) != null) {
            TraceEvent e = parse(line);
            if (e != null) {
                return e;
            }
        }
        return null;
    }

    private String nextLine() throws IOException {
        try {
            return lines.next();
        } catch (ZipException e) {
            throw new TraceFormatException(lines.file(), lines.lineNumber() + 1, "corrupt zip data: " + e.getMessage());
        }
    }

    /** The line's first event (a realloc's second waits in {@link #pending}), or null when it gives none. */
    private TraceEvent parse(String line) throws IOException {
        int n = tokens(line);
        if (n == 0) {
            return null;
        }
        int colon = ends[0] - 1;
        if (ends[0] - starts[0] < 2 || line.charAt(colon) != ':') {
            throw lines.error("expected '<tid>: <verb> ...', got '" + line.strip() + "'");
        }
        long tid = lines.unsignedDecimal(line, starts[0], colon, "thread id");
        if (n < 2) {
            throw lines.error("expected a verb (" + VERBS + ") after the thread id");
        }
        String verb = line.substring(starts[1], ends[1]);
        long row = lines.lineNumber();
        return switch (verb) {
            case "malloc" -> {
                arguments(line, n, 2, verb, "ptr size");
                yield allocation(tid, hex(line, 2, "ptr"), size(line, 3, "size"), row);
            }
            case "calloc" -> {
                arguments(line, n, 3, verb, "ptr nmemb size");
                long ptr = hex(line, 2, "ptr");
                long nmemb = size(line, 3, "nmemb");
                long size = size(line, 4, "size");
                long bytes;
                try {
                    bytes = Math.multiplyExact(nmemb, size);
                } catch (ArithmeticException overflow) {
                    throw lines.error("calloc: nmemb × size overflows 2^63 (" + nmemb + " × " + size + ")");
                }
                yield allocation(tid, ptr, bytes, row);
            }
            case "memalign" -> {
                arguments(line, n, 3, verb, "ptr alignment size");
                long ptr = hex(line, 2, "ptr");
                size(line, 3, "alignment");
                yield allocation(tid, ptr, size(line, 4, "size"), row);
            }
            case "realloc" -> {
                arguments(line, n, 3, verb, "new_ptr old_ptr size");
                long newPtr = hex(line, 2, "new_ptr");
                long oldPtr = hex(line, 3, "old_ptr");
                long size = size(line, 4, "size");
                TraceEvent alloc = newPtr == 0 ? null : new TraceEvent(Kind.ALLOC, newPtr, size, 0, tid, row);
                if (oldPtr == 0) {
                    if (alloc == null) {
                        skipped++;
                    }
                    yield alloc;
                }
                pending = alloc;
                yield new TraceEvent(Kind.FREE, oldPtr, 0, 0, tid, row);
            }
            case "free" -> {
                arguments(line, n, 1, verb, "ptr");
                long ptr = hex(line, 2, "ptr");
                if (ptr == 0) {
                    skipped++;
                    yield null;
                }
                yield new TraceEvent(Kind.FREE, ptr, 0, 0, tid, row);
            }
            case "thread_done" -> {
                if (n != 3 && n != 4) {
                    throw lines.error("thread_done: expected '<tid>: thread_done 0x0' (and optionally the end time),"
                            + " got " + (n - 2) + " arguments");
                }
                hex(line, 2, "thread_done's argument");
                if (n == 4) {
                    size(line, 3, "end time");
                }
                skipped++;
                yield null;
            }
            default -> throw lines.error("unknown verb '" + verb + "': expected " + VERBS);
        };
    }

    /** Checks the argument count: exactly {@code count}, or that plus the two timestamps. */
    private void arguments(String line, int tokens, int count, String verb, String names)
            throws TraceFormatException {
        int given = tokens - 2;
        if (given != count && given != count + 2) {
            throw lines.error(verb + ": expected '<tid>: " + verb + " " + names + "' (and optionally the start and"
                    + " end times), got " + given + " arguments");
        }
        if (given == count + 2) {
            size(line, tokens - 2, "start time");
            size(line, tokens - 1, "end time");
        }
    }

    private TraceEvent allocation(long tid, long ptr, long size, long row) {
        if (ptr == 0) {
            skipped++;
            return null;
        }
        return new TraceEvent(Kind.ALLOC, ptr, size, 0, tid, row);
    }

    /** Splits on spaces and tabs; returns the count (at most {@code starts.length} are kept, the count goes on). */
    private int tokens(String line) {
        int n = 0;
        int i = 0;
        int len = line.length();
        while (true) {
            while (i < len && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
                i++;
            }
            if (i >= len) {
                return n;
            }
            int start = i;
            while (i < len && line.charAt(i) != ' ' && line.charAt(i) != '\t') {
                i++;
            }
            if (n < starts.length) {
                starts[n] = start;
                ends[n] = i;
            }
            n++;
        }
    }

    private long hex(String line, int token, String what) throws TraceFormatException {
        return lines.hex(line, starts[token], ends[token], what);
    }

    private long size(String line, int token, String what) throws TraceFormatException {
        return lines.size(line, starts[token], ends[token], what);
    }

    @Override
    public void close() throws IOException {
        try {
            lines.close();
        } finally {
            if (zip != null) {
                zip.close();
            }
        }
    }
}
