package io.devalloc.advisor;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.api.spi.AllocatorProvider;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Where grids come from: {@code --grid NAME} names a built-in grid, {@code --grid FILE} reads one.
 *
 * <p><b>Built-in.</b> {@value #DEFAULT} (also the allocator's own name): the allocator provider's
 * {@link AllocatorProvider#defaultGrid(long)} for the trace's largest request. An allocator without one has no
 * built-in grid; it is given a file.
 *
 * <p><b>A file</b> holds one configuration text per line, exactly as {@code --config} takes it; {@code #} starts a
 * comment (to the end of the line), blank lines are skipped, and the line {@value #DEFAULTS_LINE} stands for the
 * allocator's defaults (the empty text, which a line cannot hold).
 * Every setting is checked by creating the allocator with it: one it refuses is a problem
 * ({@code file:line: upstream's message}), left out, and the others still run; so is a setting given twice. The
 * first {@value #MAX_LISTED_PROBLEMS} problems of a file are listed, then how many more there were.
 */
public final class Grids {

    /** The name of the allocator's built-in grid. */
    public static final String DEFAULT = "default";
    /** The line of a grid file that stands for the allocator's defaults (the empty configuration text). */
    public static final String DEFAULTS_LINE = "defaults";

    /**
     * How many problems of a grid file are listed; the rest are counted. A file of a hundred thousand bad lines
     * would otherwise become a report of as many problems (tens of megabytes of JSON), which helps nobody.
     */
    public static final int MAX_LISTED_PROBLEMS = 10;
    /** How much of an allocator's refusal a problem quotes: the refusal may quote the whole setting, from the file. */
    private static final int REFUSAL_QUOTED = 400;

    private Grids() {
    }

    /** Says why an allocator refuses a configuration text. */
    @FunctionalInterface
    public interface ConfigCheck {
        /** The allocator's message when it refuses {@code config}, or null when it accepts it. */
        String refusal(String config);
    }

    /**
     * The grid {@code spec} names: a built-in grid's name, or a file's path.
     *
     * @param spec            {@value #DEFAULT}, the allocator's name, or a path; null for {@value #DEFAULT}
     * @param provider        the allocator
     * @param largestRequest  the trace's largest request, for the built-in grid
     * @param check           how a setting is checked
     * @throws IllegalArgumentException for an unknown name, an unreadable file, a file without settings, or an
     *                                  allocator without a built-in grid
     */
    public static Grid resolve(String spec, AllocatorProvider provider, long largestRequest, ConfigCheck check) {
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(check, "check");
        String name = spec == null ? DEFAULT : spec.strip();
        if (name.equals(DEFAULT) || name.equals(provider.name())) {
            List<String> configs = provider.defaultGrid(largestRequest);
            if (configs.isEmpty()) {
                throw new IllegalArgumentException("allocator '" + provider.name() + "' offers no built-in grid:"
                        + " give --grid FILE, a file of configuration texts, one per line");
            }
            return checked("default (" + provider.name() + ")", configs, "built-in " + provider.name() + " grid",
                    check);
        }
        Path file = Path.of(name);
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException("grid file " + name + " is a directory: give a file of configuration"
                    + " texts, one per line");
        }
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            // A pipe or a device (/dev/zero) may never end: a grid is a file of a few lines.
            throw new IllegalArgumentException("grid file " + name + " is not a regular file (a pipe or a device):"
                    + " save the settings to a file first");
        }
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("unknown grid '" + name + "': give '" + DEFAULT + "' (the "
                    + provider.name() + " allocator's built-in grid) or a file of configuration texts, one per line;"
                    + " there is no file " + name);
        }
        return read(file, check);
    }

    /**
     * Reads the grid file {@code file}, checking each setting.
     *
     * @throws IllegalArgumentException if it cannot be read, is not UTF-8 text, or holds no setting at all
     */
    public static Grid read(Path file, ConfigCheck check) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("grid file " + file + " is not UTF-8 text", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read grid file " + file + ": " + e.getMessage(), e);
        }
        List<GridEntry> entries = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        int settings = 0;
        int unlisted = 0;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            String text = (hash >= 0 ? line.substring(0, hash) : line).strip();
            if (text.isEmpty()) {
                continue;
            }
            settings++;
            String config = text.equals(DEFAULTS_LINE) ? "" : text;
            String where = file + ":" + (i + 1);
            Integer first = seen.putIfAbsent(config, i + 1);
            if (first != null) {
                unlisted += listed(problems, where + ": the same setting as line " + first + "; left out");
                continue;
            }
            String refusal = check.refusal(config);
            if (refusal != null) {
                unlisted += listed(problems, where + ": " + UntrustedText.excerpt(refusal, REFUSAL_QUOTED));
            } else {
                entries.add(new GridEntry(config, where));
            }
        }
        if (settings == 0) {
            throw new IllegalArgumentException("grid file " + file + " holds no setting: write one configuration"
                    + " text per line ('" + DEFAULTS_LINE + "' for the allocator's defaults; # starts a comment)");
        }
        if (unlisted > 0) {
            problems.add(file + ": and " + unlisted + " more problem" + (unlisted == 1 ? "" : "s")
                    + " (left out too; the first " + MAX_LISTED_PROBLEMS + " are listed)");
        }
        return new Grid(file.toString(), entries, problems);
    }

    /** Adds {@code problem} to {@code problems} if fewer than {@link #MAX_LISTED_PROBLEMS} are; 1 if it is not. */
    private static int listed(List<String> problems, String problem) {
        if (problems.size() < MAX_LISTED_PROBLEMS) {
            problems.add(problem);
            return 0;
        }
        return 1;
    }

    private static Grid checked(String name, List<String> configs, String origin, ConfigCheck check) {
        List<GridEntry> entries = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (String config : configs) {
            String refusal = check.refusal(config);
            if (refusal != null) {
                problems.add(origin + ": " + (config.isEmpty() ? DEFAULTS_LINE : config) + ": " + refusal);
            } else {
                entries.add(new GridEntry(config, origin));
            }
        }
        return new Grid(name, entries, problems);
    }
}
