package io.devalloc.caching.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PyTorch memory trace in the CSV form of {@code ../shared/traces} ({@code pickle_to_csv.py --prepend-segments
 * --prepend-live}): columns {@code seq,action,addr,size,stream,time_us}, the {@code presegment} and {@code prealloc}
 * rows first, then the recorded events. Test code: small, strict (an unknown action or a malformed row fails the
 * read), and it keeps every row, in order.
 *
 * @param name the file name
 * @param rows the rows, in file order
 */
record CsvTrace(String name, List<Row> rows) {

    /** The {@code action} column. */
    enum Action {
        PRESEGMENT, PREALLOC, ALLOC, FREE_REQUESTED, FREE_COMPLETED, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP,
        SEGMENT_UNMAP, OOM, SNAPSHOT;

        static Action of(String text) {
            return valueOf(text.trim().toUpperCase(Locale.ROOT));
        }
    }

    /**
     * One row.
     *
     * @param seq    the row's sequence number
     * @param action what it records
     * @param addr   the device address (block, or segment for presegment and segment_* rows)
     * @param size   the caller's requested size for alloc, prealloc and free rows; the segment size for presegment
     *               and segment_* rows
     * @param stream the stream (0 = the default stream)
     * @param timeUs the time in microseconds, -1 when the column is empty
     */
    record Row(long seq, Action action, long addr, long size, long stream, long timeUs) {
    }

    static final String HEADER = "seq,action,addr,size,stream,time_us";

    CsvTrace {
        rows = List.copyOf(rows);
    }

    /** Reads a trace file. */
    static CsvTrace read(Path file) {
        List<Row> rows = new ArrayList<>();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String header = in.readLine();
            if (header == null || !header.trim().equals(HEADER)) {
                throw new IllegalArgumentException(file + ": expected the header '" + HEADER + "', got '" + header + "'");
            }
            String line;
            int lineNo = 1;
            while ((line = in.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                rows.add(parse(line, file, lineNo));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new CsvTrace(file.getFileName().toString(), rows);
    }

    private static Row parse(String line, Path file, int lineNo) {
        String[] f = line.split(",", -1);
        if (f.length != 6) {
            throw new IllegalArgumentException(file + ":" + lineNo + ": expected 6 columns, got " + f.length + ": " + line);
        }
        try {
            String time = f[5].trim();
            return new Row(Long.parseLong(f[0].trim()), Action.of(f[1]), Long.parseLong(f[2].trim()),
                    Long.parseLong(f[3].trim()), Long.parseLong(f[4].trim()), time.isEmpty() ? -1 : Long.parseLong(time));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ":" + lineNo + ": " + e.getMessage() + ": " + line, e);
        }
    }

    /** The rows of one action, in order. */
    List<Row> rows(Action action) {
        List<Row> out = new ArrayList<>();
        for (Row r : rows) {
            if (r.action() == action) {
                out.add(r);
            }
        }
        return Collections.unmodifiableList(out);
    }

    /** The number of rows of one action. */
    long count(Action action) {
        return rows.stream().filter(r -> r.action() == action).count();
    }

    // ------------------------------------------------------------------------------------------------ summary

    private static final Pattern NUMBER_FIELD = Pattern.compile("\"([a-z0-9_]+)\"\\s*:\\s*(-?[0-9]+)\\s*[,}\\n]");

    /**
     * A top-level integer field of a {@code *.summary.json} (e.g. {@code peak_reserved_bytes}). The summaries are
     * flat apart from {@code actions} and {@code allocator_settings}, whose keys do not collide with the figures
     * read here; a small pattern is enough for test code.
     *
     * @throws IllegalArgumentException if the field is absent
     */
    static long summaryLong(Path summaryJson, String field) {
        String text;
        try {
            text = Files.readString(summaryJson, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Matcher m = NUMBER_FIELD.matcher(text);
        while (m.find()) {
            if (m.group(1).equals(field)) {
                return Long.parseLong(m.group(2));
            }
        }
        throw new IllegalArgumentException(summaryJson + " has no integer field '" + field + "'");
    }
}
