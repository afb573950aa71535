package io.devalloc.replay.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A plain-text table with aligned columns, for the launcher's listings. Columns are separated by two spaces;
 * the last column is not padded, so lines carry no trailing blanks. A cell may hold several lines ({@code \n}).
 *
 * <p>Lines stay within {@link TextWrap#MAX_WIDTH} columns (indentation included) when the table has columns that
 * may wrap ({@link #wrap(int)}): if the table would be wider, the widest of them are narrowed, first down to their
 * longest word, then if need be down to {@value #MIN_WRAP_WIDTH} columns (breaking words), and their cells,
 * headers included, are wrapped as {@link TextWrap#lines} does. Other columns keep their width; a table whose
 * other columns alone are too wide prints as narrow as it can. Not thread-safe.
 */
public final class TextTable {

    /** How a column's cells are aligned. */
    public enum Align { LEFT, RIGHT }

    /** A wrapping column is never narrowed below this many columns. */
    static final int MIN_WRAP_WIDTH = 10;

    private final String[] headers;
    private final Align[] aligns;
    private final boolean[] wraps;
    /** Wrapping columns that break only between words (at spaces and after commas), never inside one. */
    private final boolean[] wholeWords;
    private final List<String[]> rows = new ArrayList<>();

    private TextTable(String[] headers, Align[] aligns) {
        this.headers = headers;
        this.aligns = aligns;
        this.wraps = new boolean[aligns.length];
        this.wholeWords = new boolean[aligns.length];
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

    /** Lets column {@code column} (0-based) wrap onto more lines when the table would be too wide. */
    public TextTable wrap(int column) {
        Objects.checkIndex(column, aligns.length);
        wraps[column] = true;
        return this;
    }

    /**
     * Lets column {@code column} wrap as {@link #wrap(int)} does, but only between words (at spaces and after commas
     * outside brackets): it is never narrowed below its longest word, so a configuration such as
     * {@code expandable_segments:True} or {@code roundup_power2_divisions:[256:1,512:2]} is never cut inside a
     * setting, only after a comma between two.
     */
    public TextTable wrapBetweenWords(int column) {
        wrap(column);
        wholeWords[column] = true;
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
        List<String[]> lines = new ArrayList<>(rows.size() + 1);
        if (headers != null) {
            lines.add(headers);
        }
        lines.addAll(rows);
        int[] widths = widths(lines, indent.length());
        for (String[] line : lines) {
            // Each cell as the lines it takes at its column's width.
            List<List<String>> cells = new ArrayList<>(line.length);
            int height = 1;
            for (int i = 0; i < line.length; i++) {
                List<String> cell = wraps[i] ? TextWrap.lines(line[i], widths[i], wholeWords[i])
                        : List.of(line[i].split("\n", -1));
                cells.add(cell);
                height = Math.max(height, cell.size());
            }
            for (int l = 0; l < height; l++) {
                StringBuilder sb = new StringBuilder(indent);
                for (int i = 0; i < line.length; i++) {
                    boolean last = i == line.length - 1;
                    List<String> cell = cells.get(i);
                    String text = l < cell.size() ? cell.get(l) : "";
                    int pad = widths[i] - text.length();
                    if (aligns[i] == Align.RIGHT) {
                        sb.repeat(' ', Math.max(0, pad)).append(text);
                    } else {
                        sb.append(text);
                        if (!last) {
                            sb.repeat(' ', Math.max(0, pad));
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

    /**
     * Each column's width: its longest line, then, while the table is wider than {@link TextWrap#MAX_WIDTH}, the
     * widest wrapping column that can still give a column up gives it: down to its longest word first, then, if
     * that is not enough, down to {@value #MIN_WRAP_WIDTH}.
     */
    private int[] widths(List<String[]> lines, int indent) {
        int columns = aligns.length;
        int[] widths = new int[columns];
        int[] longestWord = new int[columns];
        for (String[] line : lines) {
            for (int i = 0; i < columns; i++) {
                for (String part : line[i].split("\n", -1)) {
                    widths[i] = Math.max(widths[i], part.length());
                    if (wraps[i]) {
                        for (String word : TextWrap.words(part, wholeWords[i])) {
                            longestWord[i] = Math.max(longestWord[i], word.length());
                        }
                    }
                }
            }
        }
        int total = indent + 2 * (columns - 1);
        for (int width : widths) {
            total += width;
        }
        int[] wordFloor = new int[columns];
        int[] floor = new int[columns];
        for (int i = 0; i < columns; i++) {
            floor[i] = wraps[i] ? Math.min(widths[i], MIN_WRAP_WIDTH) : widths[i];
            wordFloor[i] = Math.max(floor[i], Math.min(widths[i], longestWord[i]));
            if (wholeWords[i]) {
                floor[i] = wordFloor[i];
            }
        }
        total = narrow(widths, wordFloor, total);
        narrow(widths, floor, total);
        return widths;
    }

    /** Narrows the widest column above its floor by one column at a time until the total fits; the new total. */
    private static int narrow(int[] widths, int[] floor, int total) {
        int t = total;
        while (t > TextWrap.MAX_WIDTH) {
            int widest = -1;
            for (int i = 0; i < widths.length; i++) {
                if (widths[i] > floor[i] && (widest < 0 || widths[i] > widths[widest])) {
                    widest = i;
                }
            }
            if (widest < 0) {
                break;
            }
            widths[widest]--;
            t--;
        }
        return t;
    }
}
