package io.devalloc.replay.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A plain-text table with aligned columns, for the launcher's listings. Columns are separated by two spaces;
 * the last column is not padded, so lines carry no trailing blanks. Not thread-safe.
 */
public final class TextTable {

    /** How a column's cells are aligned. */
    public enum Align { LEFT, RIGHT }

    private final String[] headers;
    private final Align[] aligns;
    private final List<String[]> rows = new ArrayList<>();

    private TextTable(String[] headers, Align[] aligns) {
        this.headers = headers;
        this.aligns = aligns;
    }

    /** A table with a header line; every column left-aligned until {@link #align(int, Align)} says otherwise. */
    public static TextTable withHeaders(String... headers) {
        Align[] aligns = new Align[headers.length];
        Arrays.fill(aligns, Align.LEFT);
        return new TextTable(headers.clone(), aligns);
    }

    /** A table of {@code columns} columns without a header line (for name/value listings). */
    public static TextTable withoutHeaders(int columns) {
        if (columns < 1) {
            throw new IllegalArgumentException("a table needs at least one column, got " + columns);
        }
        Align[] aligns = new Align[columns];
        Arrays.fill(aligns, Align.LEFT);
        return new TextTable(null, aligns);
    }

    /** Sets the alignment of column {@code column} (0-based). */
    public TextTable align(int column, Align align) {
        Objects.checkIndex(column, aligns.length);
        aligns[column] = Objects.requireNonNull(align, "align");
        return this;
    }

    /** Adds a row; cells are turned into text with {@link String#valueOf(Object)}. */
    public TextTable row(Object... cells) {
        if (cells.length != aligns.length) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, the table has " + aligns.length
                    + " columns");
        }
        String[] text = new String[cells.length];
        for (int i = 0; i < cells.length; i++) {
            text[i] = String.valueOf(cells[i]);
        }
        rows.add(text);
        return this;
    }

    /** Writes the table, each line starting with {@code indent}. */
    public void print(PrintWriter out, String indent) {
        int[] widths = new int[aligns.length];
        List<String[]> lines = new ArrayList<>(rows.size() + 1);
        if (headers != null) {
            lines.add(headers);
        }
        lines.addAll(rows);
        for (String[] line : lines) {
            for (int i = 0; i < line.length; i++) {
                widths[i] = Math.max(widths[i], line[i].length());
            }
        }
        for (String[] line : lines) {
            StringBuilder sb = new StringBuilder(indent);
            for (int i = 0; i < line.length; i++) {
                boolean last = i == line.length - 1;
                String cell = line[i];
                int pad = widths[i] - cell.length();
                if (aligns[i] == Align.RIGHT) {
                    sb.repeat(' ', pad).append(cell);
                } else {
                    sb.append(cell);
                    if (!last) {
                        sb.repeat(' ', pad);
                    }
                }
                if (!last) {
                    sb.append("  ");
                }
            }
            out.println(sb.toString().stripTrailing());
        }
    }
}
