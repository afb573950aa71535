package io.devalloc.replay.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * Word wrapping for the commands' output, which stays within {@value #MAX_WIDTH} columns: notes, footers and the
 * wrapping columns of a {@link TextTable}. Lines break at spaces and after commas (a configuration such as
 * {@code max_split_size_mb:128,garbage_collection_threshold:0.6} has no spaces); a word longer than the width is
 * broken inside.
 */
public final class TextWrap {

    /** The widest line the commands print, indentation included. */
    public static final int MAX_WIDTH = 120;
    /** The narrowest room {@link #print} leaves a line of text after its prefix. */
    private static final int MIN_WIDTH = 20;

    private TextWrap() {
    }

    /**
     * {@code text} in lines of at most {@code width} characters, broken at spaces (the spaces at a break are dropped),
     * after commas, and at its own line breaks; text that fits is returned as it is.
     *
     * @throws IllegalArgumentException if {@code width < 1}
     */
    public static List<String> lines(String text, int width) {
        return lines(text, width, false);
    }

    /**
     * {@link #lines(String, int)}, but for configuration texts when {@code settings}: a comma inside brackets (a
     * value such as {@code roundup_power2_divisions:[256:1,512:2]}) is not a place to break, only a comma between
     * two settings is.
     */
    static List<String> lines(String text, int width, boolean settings) {
        if (width < 1) {
            throw new IllegalArgumentException("a wrapping width must be positive, got " + width);
        }
        List<String> lines = new ArrayList<>();
        for (String paragraph : text.split("\n", -1)) {
            wrapParagraph(paragraph, width, settings, lines);
        }
        return lines;
    }

    /**
     * The words of {@code text} between which {@link #lines(String, int, boolean)} may break it: split at spaces and
     * after commas (with {@code settings}, only commas outside brackets).
     */
    static List<String> words(String text, boolean settings) {
        List<String> words = new ArrayList<>();
        for (String piece : afterCommas(text, settings)) {
            int start = 0;
            for (int space = piece.indexOf(' '); space >= 0; space = piece.indexOf(' ', start)) {
                words.add(piece.substring(start, space));
                start = space + 1;
            }
            words.add(piece.substring(start));
        }
        return words;
    }

    /**
     * {@code text} cut after each comma, each piece keeping its comma, the last one what follows the last comma
     * (empty after a final comma). With {@code settings}, a configuration text: only the commas between two settings
     * cut it, not those inside brackets (a value such as {@code roundup_power2_divisions:[256:1,512:2]} stays whole).
     */
    public static List<String> afterCommas(String text, boolean settings) {
        List<String> pieces = new ArrayList<>();
        int start = 0;
        int depth = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '[') {
                depth++;
            } else if (c == ']') {
                depth = Math.max(0, depth - 1);
            } else if (c == ',' && (!settings || depth == 0)) {
                pieces.add(text.substring(start, i + 1));
                start = i + 1;
            }
        }
        pieces.add(text.substring(start));
        return pieces;
    }

    /** The index after the last comma before {@code limit} where a line may break, or 0 for none. */
    private static int lastComma(String text, int limit, boolean settings) {
        if (!settings) {
            return text.lastIndexOf(',', limit - 1) + 1;
        }
        List<String> pieces = afterCommas(text, true);
        int found = 0;
        // Every piece but the last ends with its comma, at the piece's end - 1.
        for (int p = 0, end = 0; p < pieces.size() - 1; p++) {
            end += pieces.get(p).length();
            if (end - 1 >= limit) {
                break;
            }
            found = end;
        }
        return found;
    }

    private static void wrapParagraph(String text, int width, boolean settings, List<String> lines) {
        int first = lines.size();
        String rest = text;
        while (rest.length() > width) {
            // The last space at or before the width (what comes before it fits), or the last comma before it.
            int cut = Math.max(rest.lastIndexOf(' ', width), lastComma(rest, width, settings));
            if (cut <= 0) {
                lines.add(rest.substring(0, width));
                rest = rest.substring(width);
            } else {
                lines.add(rest.substring(0, cut).stripTrailing());
                rest = rest.substring(cut).stripLeading();
            }
        }
        if (!rest.isEmpty() || lines.size() == first) {
            lines.add(rest);
        }
    }

    /**
     * Prints {@code text} wrapped to {@value #MAX_WIDTH} columns: the first line after {@code firstPrefix}, the
     * others after {@code nextPrefix} (a hanging indent, e.g. {@code "  - "} then {@code "    "}), each line as long
     * as its prefix leaves room for.
     */
    public static void print(PrintWriter out, String firstPrefix, String nextPrefix, String text) {
        int nextWidth = Math.max(MIN_WIDTH, MAX_WIDTH - nextPrefix.length());
        int firstWidth = MAX_WIDTH - firstPrefix.length();
        List<String> first = lines(text, Math.max(1, firstWidth));
        if (firstWidth < MIN_WIDTH || first.isEmpty()) {
            // No room after a long prefix: the text starts on the next line.
            out.println(firstPrefix.stripTrailing());
            printLines(out, nextPrefix, lines(text, nextWidth));
            return;
        }
        out.println((firstPrefix + first.getFirst()).stripTrailing());
        // The first line is the beginning of the text (wrapping only drops the spaces where it breaks).
        String rest = text.substring(first.getFirst().length()).stripLeading();
        if (!rest.isEmpty()) {
            printLines(out, nextPrefix, lines(rest, nextWidth));
        }
    }

    private static void printLines(PrintWriter out, String prefix, List<String> lines) {
        for (String line : lines) {
            out.println((prefix + line).stripTrailing());
        }
    }
}
