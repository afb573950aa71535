package io.devalloc.trace.android;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceEvent.Kind;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceFormatException;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.text.FusedRow;
import io.devalloc.trace.text.SwarDigits;
import io.devalloc.trace.text.TextLines;
import io.devalloc.trace.text.ZipProblem;
import java.io.EOFException;
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
    private final FusedRow row;
    private final ZipFile zip;
    private final int[] starts = new int[8];
    private final int[] ends = new int[8];
    private long skipped;

    /** Opens a text file, or a zip file that holds one text file. */
    public AndroidMemoryReplayReader(Path file) throws IOException {
        if (isZip(file)) {
            ZipFile zip = openZip(file);
            try {
                ZipEntry only = onlyEntry(zip, file);
                InputStream in = zip.getInputStream(only);
                this.lines = new TextLines(in, file + "!" + UntrustedText.excerpt(only.getName()));
                this.row = new FusedRow(lines);
                this.zip = zip;
            } catch (IOException | RuntimeException e) {
                zip.close();
                throw e;
            }
        } else {
            this.lines = TextLines.open(file);
            this.row = new FusedRow(lines);
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
        this.row = new FusedRow(lines);
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
        } catch (ZipException | EOFException e) {
            throw new TraceFormatException(file.toString(), 0, "not a readable zip file: " + ZipProblem.describe(e));
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
        if (pendingAlloc != null) {
            TraceEvent alloc = pendingAlloc;
            pendingAlloc = null;
            return alloc;
        }
        try {
            while (true) {
                int p = row.start();
                int kind = p < 0 ? NONE : fusedLine(lines.buffer(), p);
                if (kind == NONE) {
                    // Anything fusedLine does not take (thread_done, other spacing, pointers without 0x, the last
                    // lines, errors) is read token by token, with the messages.
                    if (!lines.nextLine()) {
                        return null;
                    }
                    kind = parse();
                }
                if (kind != SKIPPED) {
                    return new TraceEvent(kind == ALLOC ? Kind.ALLOC : Kind.FREE, eventPtr, eventSize, 0, eventTid,
                            lines.lineNumber());
                }
            }
        } catch (ZipException | EOFException e) {
            // Only a zip's entry can end before its declared data (a plain file's read just ends): EOFException.
            String problem = e.getMessage() == null ? "the entry ends before its data does" : e.getMessage();
            throw new TraceFormatException(lines.file(), lines.lineNumber() + 1, "corrupt zip data: "
                    + UntrustedText.excerpt(problem));
        }
    }

    // What a line gives, in the event* fields: an allocation, a free, or nothing (a skipped line: thread_done,
    // free(NULL), a failed allocation; or a blank line).
    private static final int NONE = 0;
    private static final int ALLOC = 1;
    private static final int FREE = 2;
    private static final int SKIPPED = 3;

    private long eventTid;
    private long eventPtr;
    private long eventSize;
    /** A realloc's allocation, which follows its free; null when there is none. */
    private TraceEvent pendingAlloc;

    /** Sets the event* fields to an allocation of {@code ptr} (nothing when it failed: ptr 0). */
    private int allocation(long tid, long ptr, long size) {
        return event(ALLOC, tid, ptr, size);
    }

    /** Sets the event* fields to a free of {@code ptr} (nothing for free(NULL)). */
    private int free(long tid, long ptr) {
        return event(FREE, tid, ptr, 0);
    }

    /** Sets the event* fields to {@code kind} of {@code ptr}; a null pointer is nothing (skipped). */
    private int event(int kind, long tid, long ptr, long size) {
        if (ptr == 0) {
            skipped++;
            return SKIPPED;
        }
        eventTid = tid;
        eventPtr = ptr;
        eventSize = size;
        return kind;
    }

    /**
     * A realloc: the free of {@code oldPtr} now and the allocation of {@code newPtr} after it ({@link #pendingAlloc}),
     * each when its pointer is not 0.
     */
    private int realloc(long tid, long newPtr, long oldPtr, long size, long row) {
        if (oldPtr == 0) {
            return allocation(tid, newPtr, size);
        }
        if (newPtr != 0) {
            pendingAlloc = new TraceEvent(Kind.ALLOC, newPtr, size, 0, tid, row);
        }
        return free(tid, oldPtr);
    }

    // ------------------------------------------------------------------------------------------------ fused path
    // The common line, as malloc debug writes it, parsed while its end is looked for:
    // "<tid>: <verb> 0x<hex> ..." with single spaces, malloc, free, calloc, memalign or realloc, every pointer with
    // 0x, every decimal 1 to 18 digits, optionally the two timestamps, ended by \n or \r\n. The longest such line
    // is 123 bytes, and a number read looks 24 bytes ahead: within TextLines.FUSED_SLACK.

    /** {@code "malloc "} (low seven bytes), {@code "free "} (low five), {@code "realloc "}, {@code "calloc "} (low
     * seven), {@code "memalign"}: little-endian words. */
    private static final long MALLOC_SPACE = 0x20636F6C6C616DL;
    private static final long FREE_SPACE = 0x2065657266L;
    private static final long REALLOC_SPACE = 0x20636F6C6C616572L;
    private static final long CALLOC_SPACE = 0x20636F6C6C6163L;
    private static final long MEMALIGN = 0x6E67696C616D656DL;
    private static final long LOW7 = 0xFFFFFFFFFFFFFFL;
    private static final long LOW5 = 0xFFFFFFFFFFL;

    /**
     * Parses the line at {@code b[p]} if it has the common shape, moves past it and says what it gave (the event*
     * fields); {@link #NONE} (nothing moved) for any other line, which {@link #parse()} then reads with its messages.
     * Where both accept a line, both give the same events.
     */
    private int fusedLine(byte[] b, int p) {
        int i = row.decimal(b, p, ':');
        if (i < 0 || b[i] != ' ') {
            return NONE;
        }
        long tid = row.value();
        i++;
        long word = SwarDigits.word(b, i);
        int verb;
        if ((word & LOW7) == MALLOC_SPACE) {
            verb = 0;
            i += 7;
        } else if ((word & LOW5) == FREE_SPACE) {
            verb = 1;
            i += 5;
        } else if (word == REALLOC_SPACE) {
            verb = 2;
            i += 8;
        } else if ((word & LOW7) == CALLOC_SPACE) {
            verb = 3;
            i += 7;
        } else if (word == MEMALIGN && b[i + 8] == ' ') {
            verb = 4;
            i += 9;
        } else {
            return NONE;
        }
        i = hex(b, i);
        if (i < 0) {
            return NONE;
        }
        long ptr = row.value();
        long oldPtr = 0;
        long size = 0;
        switch (verb) {
            case 0 -> { // malloc ptr size
                i = number(b, i);
                size = row.value();
            }
            case 2 -> { // realloc new_ptr old_ptr size
                if (b[i] != ' ') {
                    return NONE;
                }
                i = hex(b, i + 1);
                oldPtr = row.value();
                if (i >= 0) {
                    i = number(b, i);
                    size = row.value();
                }
            }
            case 3 -> { // calloc ptr nmemb size
                i = number(b, i);
                long nmemb = row.value();
                if (i >= 0) {
                    i = number(b, i);
                    size = row.value();
                    // An overflow is the general path's error.
                    if (Math.multiplyHigh(nmemb, size) != 0 || nmemb * size < 0) {
                        return NONE;
                    }
                    size = nmemb * size;
                }
            }
            case 4 -> { // memalign ptr alignment size
                i = number(b, i);
                if (i >= 0) {
                    i = number(b, i);
                    size = row.value();
                }
            }
            default -> { // free ptr
            }
        }
        if (i < 0) {
            return NONE;
        }
        // The start and end times, or none.
        if (b[i] == ' ') {
            i = SwarDigits.skip(b, i + 1);
            if (i < 0 || b[i] != ' ') {
                return NONE;
            }
            i = SwarDigits.skip(b, i + 1);
            if (i < 0) {
                return NONE;
            }
        }
        if (!row.end(i)) {
            return NONE;
        }
        return switch (verb) {
            case 0, 3, 4 -> allocation(tid, ptr, size);
            case 1 -> free(tid, ptr);
            default -> realloc(tid, ptr, oldPtr, size, lines.lineNumber());
        };
    }

    /** A space and 1 to 18 decimal digits at {@code i} into {@link #row}: where they end, or -1. */
    private int number(byte[] b, int i) {
        if (i < 0 || b[i] != ' ') {
            return -1;
        }
        return row.decimal(b, i + 1);
    }

    /** {@code 0x} and 1 to 16 hexadecimal digits at {@code from} into {@link #row}: where they end, or -1. */
    private int hex(byte[] b, int from) {
        if (b[from] != '0' || b[from + 1] != 'x') {
            return -1;
        }
        return row.hex(b, from + 2);
    }

    // ---------------------------------------------------------------------------------------------- general path

    /** The current line's events (the event* fields; a realloc's second waits in {@link #pendingAlloc}). */
    private int parse() throws IOException {
        int n = tokens();
        if (n == 0) {
            return SKIPPED; // a blank line: not counted
        }
        byte[] b = lines.buffer();
        int colon = ends[0] - 1;
        if (ends[0] - starts[0] < 2 || b[colon] != ':') {
            throw lines.error("expected '<tid>: <verb> ...', got '"
                    + UntrustedText.excerpt(lines.text(lines.start(), lines.end()).strip()) + "'");
        }
        long tid = lines.unsignedDecimal(starts[0], colon, "thread id");
        if (n < 2) {
            throw lines.error("expected a verb (" + VERBS + ") after the thread id");
        }
        if (verbIs("malloc")) {
            arguments(n, 2, "malloc", "ptr size");
            return allocation(tid, hex(2, "ptr"), size(3, "size"));
        }
        if (verbIs("calloc")) {
            arguments(n, 3, "calloc", "ptr nmemb size");
            long ptr = hex(2, "ptr");
            long nmemb = size(3, "nmemb");
            long size = size(4, "size");
            long bytes;
            try {
                bytes = Math.multiplyExact(nmemb, size);
            } catch (ArithmeticException overflow) {
                throw lines.error("calloc: nmemb × size overflows 2^63 (" + nmemb + " × " + size + ")");
            }
            return allocation(tid, ptr, bytes);
        }
        if (verbIs("memalign")) {
            arguments(n, 3, "memalign", "ptr alignment size");
            long ptr = hex(2, "ptr");
            size(3, "alignment");
            return allocation(tid, ptr, size(4, "size"));
        }
        if (verbIs("realloc")) {
            arguments(n, 3, "realloc", "new_ptr old_ptr size");
            long newPtr = hex(2, "new_ptr");
            long oldPtr = hex(3, "old_ptr");
            long size = size(4, "size");
            return realloc(tid, newPtr, oldPtr, size, lines.lineNumber());
        }
        if (verbIs("free")) {
            arguments(n, 1, "free", "ptr");
            return free(tid, hex(2, "ptr"));
        }
        if (verbIs("thread_done")) {
            if (n != 3 && n != 4) {
                throw lines.error("thread_done: expected '<tid>: thread_done 0x0' (and optionally the end time),"
                        + " got " + (n - 2) + " arguments");
            }
            hex(2, "thread_done's argument");
            if (n == 4) {
                size(3, "end time");
            }
            skipped++;
            return SKIPPED;
        }
        throw lines.error("unknown verb '" + lines.quote(starts[1], ends[1]) + "': expected " + VERBS);
    }

    /** Whether the second token is {@code verb} (ASCII). */
    private boolean verbIs(String verb) {
        int from = starts[1];
        int length = verb.length();
        if (ends[1] - from != length) {
            return false;
        }
        byte[] b = lines.buffer();
        for (int k = 0; k < length; k++) {
            if (b[from + k] != verb.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    /** Checks the argument count: exactly {@code count}, or that plus the two timestamps. */
    private void arguments(int tokens, int count, String verb, String names) throws TraceFormatException {
        int given = tokens - 2;
        if (given != count && given != count + 2) {
            throw lines.error(verb + ": expected '<tid>: " + verb + " " + names + "' (and optionally the start and"
                    + " end times), got " + given + " arguments");
        }
        if (given == count + 2) {
            size(tokens - 2, "start time");
            size(tokens - 1, "end time");
        }
    }

    /**
     * Splits the current line on spaces and tabs; returns the count (at most {@code starts.length} are kept, the
     * count goes on). Positions are indexes in the line's buffer; a UTF-8 character other than ASCII never holds a
     * space or a tab byte, so the tokens are those of the line's text.
     */
    private int tokens() {
        byte[] b = lines.buffer();
        int n = 0;
        int i = lines.start();
        int len = lines.end();
        while (true) {
            while (i < len && (b[i] == ' ' || b[i] == '\t')) {
                i++;
            }
            if (i >= len) {
                return n;
            }
            int start = i;
            while (i < len && b[i] != ' ' && b[i] != '\t') {
                i++;
            }
            if (n < starts.length) {
                starts[n] = start;
                ends[n] = i;
            }
            n++;
        }
    }

    private long hex(int token, String what) throws TraceFormatException {
        return lines.hex(starts[token], ends[token], what);
    }

    private long size(int token, String what) throws TraceFormatException {
        return lines.size(starts[token], ends[token], what);
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
